"""Run a helper program (``docker-credential-*``, a kubeconfig exec plugin) with bounds.

A helper is a program the user's config names, but its answer may come from anywhere
(a keychain, a cloud CLI that waits for a browser, a wrapper that floods): it gets a
wall-clock timeout and its stdout is read only up to a cap; past either it is killed,
and the caller gets one ``HelperFailure`` to turn into its own one-line error. stderr
is read up to a small cap too (for a message), never echoed raw.
"""

from __future__ import annotations

import os
import selectors
import subprocess
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

MAX_HELPER_OUTPUT = 1 << 20  # a credential is a small JSON document
_STDERR_CAP = 4096


@dataclass(frozen=True)
class HelperResult:
    """How a helper that finished within its timeout and output cap exited; ``stderr`` is cut to a few KiB."""

    returncode: int
    stdout: bytes
    stderr: bytes


class HelperFailure(Exception):
    """``kind``: ``missing`` (not found / not executable), ``timeout``, ``output`` (over the cap)."""

    def __init__(self, kind: str, detail: str) -> None:
        super().__init__(detail)
        self.kind = kind
        self.detail = detail


def run_bounded(argv: Sequence[str], stdin: bytes = b"", *, timeout: float, max_output: int = MAX_HELPER_OUTPUT,
                env: Mapping[str, str] | None = None, cwd: str | None = None) -> HelperResult:
    """Run ``argv`` to completion within ``timeout`` seconds, reading at most ``max_output`` bytes of stdout."""
    try:
        proc = subprocess.Popen(list(argv), stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                env=dict(env) if env is not None else None, cwd=cwd, start_new_session=True)
    except OSError as exc:
        raise HelperFailure("missing", exc.strerror or type(exc).__name__) from None
    deadline = time.monotonic() + timeout
    out, err = bytearray(), bytearray()
    try:
        _feed(proc, stdin)
        with selectors.DefaultSelector() as sel:
            assert proc.stdout is not None and proc.stderr is not None
            sel.register(proc.stdout, selectors.EVENT_READ, out)
            sel.register(proc.stderr, selectors.EVENT_READ, err)
            while sel.get_map():
                left = deadline - time.monotonic()
                if left <= 0:
                    raise HelperFailure("timeout", f"no answer within {timeout:g} s")
                for key, _ in sel.select(left):
                    chunk = os.read(key.fd, 65536)
                    if not chunk:
                        sel.unregister(key.fileobj)
                        continue
                    buf: bytearray = key.data
                    buf += chunk
                    if buf is out and len(out) > max_output:
                        raise HelperFailure("output", f"more than {max_output} bytes of output")
                    if buf is err and len(err) > _STDERR_CAP:
                        del err[_STDERR_CAP:]
        left = max(0.0, deadline - time.monotonic())
        try:
            code = proc.wait(left)
        except subprocess.TimeoutExpired:
            raise HelperFailure("timeout", f"no answer within {timeout:g} s") from None
        return HelperResult(code, bytes(out), bytes(err))
    finally:
        if proc.poll() is None:
            _kill(proc)
        for f in (proc.stdin, proc.stdout, proc.stderr):
            if f is not None:
                try:
                    f.close()
                except OSError:
                    pass


def _feed(proc: subprocess.Popen[bytes], data: bytes) -> None:
    assert proc.stdin is not None
    try:
        if data:
            proc.stdin.write(data)  # small (a server name): fits the pipe buffer, never blocks
        proc.stdin.close()
    except OSError:  # the helper exited without reading: its exit status tells
        pass


def _kill(proc: subprocess.Popen[bytes]) -> None:
    try:
        os.killpg(proc.pid, 9)  # the helper and anything it started (a shell wrapper's children)
    except OSError:
        proc.kill()
    try:
        proc.wait(5)
    except subprocess.TimeoutExpired:
        pass


def one_line(data: bytes, limit: int = 160) -> str:
    """A helper's stderr as one short printable line (for an error message)."""
    text = data.decode("utf-8", "replace")
    text = "".join(c if c.isprintable() else " " for c in text)
    return " ".join(text.split())[:limit]
