"""What is being read right now, for the CLI's progress line (``imagelint.cli.progress``).

The core only counts: ``reading(subject)`` when an image is started, ``inflated(n)`` as layer
bytes are decompressed. Nothing here prints; counting costs one addition per chunk.
"""

from __future__ import annotations

import threading
import time

_lock = threading.Lock()
_subject: str | None = None
_started = 0.0
_bytes = 0
_waiting: str | None = None  # the request a read is waiting on: "registry.example, attempt 2 of 5"


def reading(subject: str | None) -> None:
    """Start counting for ``subject`` (None: nothing is being read)."""
    global _subject, _started, _bytes
    with _lock:
        _subject, _started, _bytes = subject, time.monotonic(), 0


def waiting(what: str | None) -> None:
    """What the read waits for now (a server's answer), or None when it is not waiting."""
    global _waiting
    _waiting = what


def waiting_for() -> str | None:
    return _waiting


def inflated(n: int) -> None:
    global _bytes
    _bytes += n  # a racy += between layer threads only under-counts a progress figure


def snapshot() -> tuple[str | None, float, int]:
    """(subject, seconds since it started, bytes inflated so far)."""
    with _lock:
        return _subject, (time.monotonic() - _started) if _subject else 0.0, _bytes
