"""Turn a layer blob stream into its uncompressed tar stream.

``open_decompressed`` returns a buffered binary stream. Every read goes through
``GuardedStream``, which (1) turns whatever a decompressor raises on corrupt
input into one ``ImageFormatError`` naming the layer, (2) counts inflated
bytes against the per-layer limit and an optional shared per-image budget, so
a gzip bomb stops as soon as it crosses the limit, without ever holding more
than one buffer of it in memory.

gzip goes through ``isal.igzip`` (faster than the stdlib; it releases the GIL,
so layers inflate in parallel) and falls back to the stdlib
``gzip`` module (zlib) when isal is missing. Both read multi-member gzip.
"""

from __future__ import annotations

import io
import sys
import threading
import zlib
from typing import BinaryIO

from imagelint import progress
from imagelint.errors import ImageFormatError, ImagelintError, LimitExceededError

try:  # isal is a declared dependency; the fallback keeps a broken wheel from being fatal
    from isal import igzip as _gzip
    from isal import igzip_lib

    # What isal's inflaters (igzip, isal_zlib) raise on bad input.
    ISAL_ERROR: type[Exception] = igzip_lib.IsalError  # type: ignore[assignment]  # isal's stub calls the class an instance
except ImportError:  # pragma: no cover - exercised only where isal is missing
    import gzip as _gzip  # type: ignore[no-redef]  # the stdlib module isal.igzip mirrors

    ISAL_ERROR = zlib.error

# What decompressors raise on bad input (gzip.BadGzipFile is an OSError).
_DECODE_ERRORS = (OSError, EOFError, ValueError, zlib.error, ISAL_ERROR, MemoryError)


def _decode_errors() -> tuple[type[BaseException], ...]:
    """``_DECODE_ERRORS`` and, once a zstd layer was opened, ``zstandard.ZstdError``.

    zstandard is imported with the first zstd layer, not at start-up (most layers are gzip);
    an ``except`` clause evaluates this only when something was raised.
    """
    zstandard = sys.modules.get("zstandard")
    return _DECODE_ERRORS + (zstandard.ZstdError,) if zstandard is not None else _DECODE_ERRORS

GZIP_MAGIC = b"\x1f\x8b"
ZSTD_MAGIC = b"\x28\xb5\x2f\xfd"
COMPRESSIONS = ("gzip", "zstd", "none", "unknown")
_BUFFER_SIZE = 256 * 1024


class InflatedBudget:
    """Inflated bytes shared by every layer of one image (thread-safe), and cancellation.

    When a layer fails, the layers above it are cancelled at their next read
    instead of inflating gigabytes nobody will look at; the layers below it keep
    going, so the error reported is always that of the lowest failing layer.
    """

    def __init__(self, max_bytes: int) -> None:
        self.max_bytes = max_bytes
        self.used = 0
        self._cancel_above: int | None = None
        self._lock = threading.Lock()

    def take(self, n: int) -> bool:
        """Account ``n`` more bytes; False once the budget is exceeded."""
        progress.inflated(n)
        with self._lock:
            self.used += n
            return self.used <= self.max_bytes

    def cancel_above(self, index: int) -> None:
        """Cancel every layer whose index is greater than ``index`` (-1: all of them)."""
        with self._lock:
            if self._cancel_above is None or index < self._cancel_above:
                self._cancel_above = index

    def is_cancelled(self, index: int) -> bool:
        limit = self._cancel_above
        return limit is not None and index > limit


class LayerCancelled(ImagelintError):
    """Raised inside a worker whose image read was abandoned because another layer failed."""


class GuardedStream(io.RawIOBase):
    """A raw stream over a decompressor: errors become ImageFormatError, bytes are counted."""

    def __init__(
        self,
        inner: BinaryIO,
        layer_name: str,
        compression: str,
        max_bytes: int | None = None,
        budget: InflatedBudget | None = None,
        frames: ZstdFrameTracker | None = None,
        layer_index: int = 0,
    ) -> None:
        super().__init__()
        self._layer_index = layer_index
        self._frames = frames
        self._inner = inner
        self._layer_name = layer_name
        self._compression = compression
        self._max_bytes = max_bytes
        self._budget = budget
        self.inflated = 0
        # GzipFile has no readinto of its own: the inherited one reads a new bytes object and
        # copies it (a 1 MB mmap + page faults + memcpy per read). Its internal BufferedReader
        # over the C inflater fills our buffer directly; same bytes, same errors.
        direct = getattr(inner, "_buffer", None) if compression == "gzip" else None
        self._readinto = direct.readinto if isinstance(direct, io.BufferedReader) else inner.readinto  # type: ignore[attr-defined]  # every inflater here has readinto

    def readable(self) -> bool:
        return True

    def readinto(self, buffer) -> int:
        if self._budget is not None and self._budget.is_cancelled(self._layer_index):
            raise LayerCancelled(f"{self._layer_name}: read cancelled")
        try:
            n = self._readinto(buffer)
        except ImagelintError:
            raise
        except _decode_errors() as exc:
            raise ImageFormatError(
                f"{self._layer_name}: corrupt {self._compression} stream ({_one_line(exc)})"
            ) from None
        n = n or 0
        if not n and self._frames is not None and not self._frames.complete:
            raise ImageFormatError(f"{self._layer_name}: corrupt {self._compression} stream (truncated zstd frame)")
        self.inflated += n
        if self._max_bytes is not None and self.inflated > self._max_bytes:
            raise LimitExceededError(
                f"{self._layer_name}: inflates to more than {self._max_bytes} bytes (per-layer limit)"
            )
        if self._budget is not None and n and not self._budget.take(n):
            raise LimitExceededError(
                f"{self._layer_name}: image inflates to more than {self._budget.max_bytes} bytes (per-image limit)"
            )
        return n

    def close(self) -> None:
        try:
            self._inner.close()
        except Exception:  # closing a broken decompressor must not hide the real error
            pass
        super().close()


class ZstdFrameTracker:
    """Follows zstd frame structure (RFC 8878) over the compressed bytes, without decompressing.

    ``zstandard``'s stream reader returns a clean EOF when the input stops in the
    middle of a frame; this tracker tells whether the input ended on a frame
    boundary, so a truncated zstd layer is an error like a truncated gzip one.
    Malformed frames are left for the decompressor to reject.
    """

    _MAGIC = 0xFD2FB528

    def __init__(self) -> None:
        self._pending = bytearray()
        self._need = 4  # bytes of the next header to collect
        self._state = "magic"
        self._skip = 0
        self._checksum = False
        self._gave_up = False
        self.frames = 0

    @property
    def complete(self) -> bool:
        """True if the bytes seen so far end exactly after a whole frame (or the tracker gave up)."""
        return self._gave_up or (self._state == "magic" and not self._pending and not self._skip and self.frames > 0)

    def feed(self, data: memoryview | bytes) -> None:
        pos, end = 0, len(data)
        while pos < end and not self._gave_up:
            if self._skip:
                n = min(self._skip, end - pos)
                self._skip -= n
                pos += n
                if not self._skip:
                    self._after_payload()
                continue
            take = min(self._need - len(self._pending), end - pos)
            self._pending += data[pos : pos + take]
            pos += take
            if len(self._pending) == self._need:
                header = bytes(self._pending)
                self._pending.clear()
                self._on_header(header)

    def _on_header(self, h: bytes) -> None:
        state = self._state
        if state == "magic":
            magic = int.from_bytes(h, "little")
            if magic == self._MAGIC:
                self._state, self._need = "descriptor", 1
            elif magic & 0xFFFFFFF0 == 0x184D2A50:
                self._state, self._need = "skippable", 4
            else:
                self._gave_up = True
        elif state == "descriptor":
            d = h[0]
            single_segment = bool(d & 0x20)
            fcs = (0, 2, 4, 8)[d >> 6] or (1 if single_segment else 0)
            rest = (0 if single_segment else 1) + (0, 1, 2, 4)[d & 0x03] + fcs
            self._checksum = bool(d & 0x04)
            self._state, self._need = "header_rest", rest
            if rest == 0:
                self._state, self._need = "block", 3
        elif state == "header_rest":
            self._state, self._need = "block", 3
        elif state == "block":
            value = int.from_bytes(h, "little")
            last, block_type, size = value & 1, (value >> 1) & 3, value >> 3
            self._state = "last_block" if last else "block"
            if block_type == 3:
                self._gave_up = True
                return
            self._skip = 1 if block_type == 1 else size
            if not self._skip:
                self._after_payload()
        elif state == "skippable":
            self._skip = int.from_bytes(h, "little")
            self._state = "skippable_payload"
            if not self._skip:
                self._after_payload()
        elif state == "checksum":
            self._end_frame()

    def _after_payload(self) -> None:
        if self._state == "block":
            self._need = 3
        elif self._state == "last_block":
            if self._checksum:
                self._state, self._need = "checksum", 4
            else:
                self._end_frame()
        elif self._state == "skippable_payload":
            self._state, self._need = "magic", 4

    def _end_frame(self) -> None:
        self.frames += 1
        self._state, self._need = "magic", 4


def _pass_through(raw: BinaryIO, buffer) -> int:
    """``raw.readinto(buffer)``, or a read copied into ``buffer`` for a stream that has only ``read``."""
    read_into = getattr(raw, "readinto", None)
    if read_into is not None:
        return read_into(buffer) or 0
    data = raw.read(len(buffer))
    buffer[: len(data)] = data
    return len(data)


class _Tracked(io.RawIOBase):
    """Passes reads through, feeding every byte to a ZstdFrameTracker."""

    def __init__(self, raw: BinaryIO, tracker: ZstdFrameTracker) -> None:
        super().__init__()
        self._raw = raw
        self._tracker = tracker

    def readable(self) -> bool:
        return True

    def readinto(self, buffer) -> int:
        n = _pass_through(self._raw, buffer)
        if n:
            self._tracker.feed(memoryview(buffer)[:n])
        return n

    def close(self) -> None:
        self._raw.close()
        super().close()


class _Cancellable(io.RawIOBase):
    """Passes reads of a compressed blob through, each after checking that the image's read was not
    abandoned. The inflated side checks too, but one of its reads may take the whole blob: an
    inflater reads input until it has output, so a source that drips bytes (or sends a small
    layer slowly) would be read to its end before a sibling's failure ends the run."""

    def __init__(self, raw: BinaryIO, budget: InflatedBudget, layer_index: int, layer_name: str) -> None:
        super().__init__()
        self._raw = raw
        self._budget = budget
        self._layer_index = layer_index
        self._layer_name = layer_name

    def readable(self) -> bool:
        return True

    def readinto(self, buffer) -> int:
        if self._budget.is_cancelled(self._layer_index):
            raise LayerCancelled(f"{self._layer_name}: read cancelled")
        return _pass_through(self._raw, buffer)

    def close(self) -> None:
        self._raw.close()
        super().close()


class _Prefixed(io.RawIOBase):
    """``prefix`` then the rest of ``raw``: sniffing magic bytes without needing seek()."""

    def __init__(self, prefix: bytes, raw: BinaryIO) -> None:
        super().__init__()
        self._prefix = memoryview(prefix)
        self._raw = raw

    def readable(self) -> bool:
        return True

    def readinto(self, buffer) -> int:
        if self._prefix:
            n = min(len(buffer), len(self._prefix))
            buffer[:n] = self._prefix[:n]
            self._prefix = self._prefix[n:]
            return n
        return _pass_through(self._raw, buffer)

    def close(self) -> None:
        self._raw.close()
        super().close()


def sniff_compression(head: bytes) -> str:
    """``gzip``, ``zstd`` or ``none`` from a blob's first bytes."""
    if head.startswith(GZIP_MAGIC):
        return "gzip"
    if head.startswith(ZSTD_MAGIC):
        return "zstd"
    return "none"


def _read_upto(raw: BinaryIO, n: int) -> bytes:
    out = b""
    while len(out) < n:
        chunk = raw.read(n - len(out))
        if not chunk:
            break
        out += chunk
    return out


def open_decompressed(
    raw: BinaryIO,
    compression: str,
    layer_name: str = "layer",
    max_bytes: int | None = None,
    budget: InflatedBudget | None = None,
    layer_index: int = 0,
) -> BinaryIO:
    """The uncompressed tar stream of a layer blob.

    ``compression`` is ``gzip``, ``zstd``, ``none`` or ``unknown`` (sniffed from
    the magic bytes: 1f8b gzip, 28b52ffd zstd, anything else a plain tar).
    ``layer_name`` goes into error messages. ``max_bytes``/``budget`` bound the
    inflated size (``LimitExceededError``); ``budget`` may also cancel the read
    (``layer_index`` says which layer this is). The caller closes ``raw`` (a gzip
    reader does not).
    """
    if compression not in COMPRESSIONS:
        raise ImageFormatError(f"{layer_name}: unsupported layer compression {compression!r}")
    source: BinaryIO = raw if budget is None else _Cancellable(raw, budget, layer_index, layer_name)  # type: ignore[assignment]  # reads like the BinaryIO it stands in for
    at_eof: ZstdFrameTracker | None = None
    if compression == "unknown":
        try:
            head = _read_upto(source, 4)
        except ImagelintError:
            raise
        except (OSError, ValueError) as exc:
            raise ImageFormatError(f"{layer_name}: cannot read layer ({_one_line(exc)})") from None
        compression = sniff_compression(head)
        source = _Prefixed(head, source)  # type: ignore[assignment]  # reads like the BinaryIO it stands in for
    inner: BinaryIO
    try:
        if compression == "gzip":
            inner = _gzip.GzipFile(fileobj=source, mode="rb")  # type: ignore[assignment]  # GzipFile reads like a BinaryIO
        elif compression == "zstd":
            # read_across_frames: a layer may be several concatenated zstd frames.
            # The decompressor's default window limit (128 MiB) bounds its memory.
            import zstandard

            tracker = ZstdFrameTracker()
            inner = zstandard.ZstdDecompressor().stream_reader(
                _Tracked(source, tracker),  # type: ignore[arg-type]  # the stub asks for IO[bytes]; the reader calls read() and close()
                read_size=_BUFFER_SIZE, read_across_frames=True, closefd=True,
            )
            at_eof = tracker
        else:
            inner = source if hasattr(source, "readinto") else _Prefixed(b"", source)  # type: ignore[assignment]  # a raw stream: read, readinto and close
    except _decode_errors() as exc:
        raise ImageFormatError(f"{layer_name}: cannot open {compression} stream ({_one_line(exc)})") from None
    guarded = GuardedStream(inner, layer_name, compression, max_bytes, budget, at_eof, layer_index)
    return io.BufferedReader(guarded, _BUFFER_SIZE)


def _one_line(exc: BaseException) -> str:
    text = str(exc).strip().splitlines()
    return (text[0] if text else type(exc).__name__)[:200]
