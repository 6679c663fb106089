"""Read a layer blob ahead on a thread of its own, so fetching and hashing overlap inflating.

A worker that reads one layer does three things in turn for every chunk: receive it (socket or
file), hash it (the digest check every source does) and inflate it. For an image whose time is
one big layer (NGC's framework images: one layer holds most of the bytes) that chain is the
critical path, and the other core idles once the small layers are done. ``PrefetchedStream``
moves receive + hash to a producer thread: the worker only inflates and walks the tar.

Bounded: at most ``depth`` chunks of ``chunk`` bytes wait in the queue (4 x 1 MiB per layer
being read), whatever the source sends. Order and errors are kept: the consumer sees the
same bytes in the same order, and an error of the source (a digest mismatch at EOF, a dropped
connection, the deadline) is raised by the consumer's read at the point where it happened,
with its own type. ``close()`` stops the producer (it finishes at most the read it is in,
which the source's own timeout bounds) and closes the source.
"""

from __future__ import annotations

import queue
import threading
from typing import BinaryIO

CHUNK = 1 << 20
DEPTH = 4
# Below this, a layer is read directly: starting a thread would cost more than it overlaps.
MIN_PREFETCH_BYTES = 4 << 20
_CLOSE_WAIT = 1.0  # seconds close() waits for a producer in a read before closing the source under it

_EOF = b""


class _Failed:
    __slots__ = ("error",)

    def __init__(self, error: BaseException) -> None:
        self.error = error


class PrefetchedStream:
    """A read-only binary stream over ``raw``, filled by a producer thread."""

    def __init__(self, raw: BinaryIO, name: str = "layer", chunk: int = CHUNK, depth: int = DEPTH) -> None:
        self._raw = raw
        self._chunk = chunk
        self._queue: queue.Queue[bytes | _Failed] = queue.Queue(maxsize=depth)
        self._stop = threading.Event()
        self._buffer = memoryview(b"")
        self._ended = False
        self.closed = False
        self._thread = threading.Thread(target=self._produce, name=f"imagelint-fetch {name}", daemon=True)
        self._thread.start()

    # -- producer ------------------------------------------------------------------------

    def _produce(self) -> None:
        try:
            while not self._stop.is_set():
                data = self._raw.read(self._chunk)
                if not self._put(data):
                    return
                if not data:
                    return
        except BaseException as exc:  # handed to the consumer, raised there with its own type
            if not self._stop.is_set():
                self._put(_Failed(exc))

    def _put(self, item: bytes | _Failed) -> bool:
        while not self._stop.is_set():
            try:
                self._queue.put(item, timeout=0.1)
                return True
            except queue.Full:
                continue
        return False

    # -- consumer ------------------------------------------------------------------------

    def readable(self) -> bool:
        return True

    def _next(self) -> bool:
        """Take the next chunk into the buffer; False at the end of the stream."""
        if self._ended:
            return False
        item = self._queue.get()
        if isinstance(item, _Failed):
            self._ended = True
            raise item.error
        if not item:
            self._ended = True
            return False
        self._buffer = memoryview(item)
        return True

    def read(self, n: int | None = -1) -> bytes:
        if n is None or n < 0:
            parts = [bytes(self._buffer)]
            self._buffer = memoryview(b"")
            while self._next():
                parts.append(bytes(self._buffer))
                self._buffer = memoryview(b"")
            return b"".join(parts)
        if not self._buffer and not self._next():
            return b""
        if n >= len(self._buffer) and isinstance(whole := self._buffer.obj, bytes) and len(self._buffer) == len(whole):
            self._buffer = memoryview(b"")
            return whole  # the whole chunk: hand over the bytes object itself, no copy
        out = bytes(self._buffer[:n])
        self._buffer = self._buffer[n:]
        return out

    def readinto(self, view) -> int:
        if not self._buffer and not self._next():
            return 0
        n = min(len(view), len(self._buffer))
        view[:n] = self._buffer[:n]
        self._buffer = self._buffer[n:]
        return n

    def close(self) -> None:
        if self.closed:
            return
        self.closed = True
        self._stop.set()
        try:
            while True:  # unblock a producer waiting to put
                self._queue.get_nowait()
        except queue.Empty:
            pass
        self._thread.join(_CLOSE_WAIT)
        try:
            self._raw.close()
        except Exception:  # closing a broken source must not hide the real error
            pass


def prefetched(raw: BinaryIO, size: int | None, name: str) -> BinaryIO:
    """``raw`` read ahead on a thread when the layer is big enough for that to pay."""
    if size is not None and size < MIN_PREFETCH_BYTES:
        return raw
    return PrefetchedStream(raw, name)  # type: ignore[return-value]  # read and closed like a BinaryIO; not all of one
