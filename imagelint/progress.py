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


def reading(subject: str | None) -> None:
    """Start counting for ``subject`` (None: nothing is being read)."""
    global _subject, _started, _bytes
    with _lock:
        _subject, _started, _bytes = subject, time.monotonic(), 0


def inflated(n: int) -> None:
    global _bytes
    _bytes += n  # a racy += between layer threads only under-counts a progress figure


def snapshot() -> tuple[str | None, float, int]:
    """(subject, seconds since it started, bytes inflated so far)."""
    with _lock:
        return _subject, (time.monotonic() - _started) if _subject else 0.0, _bytes
