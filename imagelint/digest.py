"""Content digests: parse them, and verify streams and documents against them."""

from __future__ import annotations

import hashlib
from typing import Protocol

from imagelint.errors import DigestMismatchError, ImageFormatError
from imagelint.lazyre import lazy_pattern

_DIGEST_RE = lazy_pattern(r"^(sha256|sha512):([a-f0-9]+)$")
_HEX_LEN = {"sha256": 64, "sha512": 128}


def parse_digest(digest: str) -> tuple[str, str]:
    """Split ``algo:hex``; raise ImageFormatError for anything else."""
    m = _DIGEST_RE.match(digest or "")
    if not m or len(m.group(2)) != _HEX_LEN[m.group(1)]:
        raise ImageFormatError(f"invalid digest {digest[:80]!r}")
    return m.group(1), m.group(2)


def compute_digest(data: bytes, algorithm: str = "sha256") -> str:
    return f"{algorithm}:{hashlib.new(algorithm, data).hexdigest()}"


def verify_bytes(data: bytes, digest: str, what: str) -> bytes:
    """Return ``data`` if it hashes to ``digest``, else raise DigestMismatchError."""
    algo, _ = parse_digest(digest)
    actual = compute_digest(data, algo)
    if actual != digest:
        raise DigestMismatchError(f"{what}: digest mismatch (expected {digest}, got {actual})")
    return data


class ByteSource(Protocol):
    """What ``VerifyingReader`` reads: a file, an HTTP body, a tar member, a raw stream (whose
    ``read`` says None only when non-blocking)."""

    def read(self, n: int = -1, /) -> bytes | None: ...


class VerifyingReader:
    """A read-only binary stream that hashes what passes through it.

    At end of stream it compares the hash (and the byte count, when a size is
    known) with the expected values and raises DigestMismatchError on a
    difference, so a consumer that reads to EOF can never accept a corrupted
    blob. ``what`` names the blob in error messages.
    """

    def __init__(self, raw: ByteSource, digest: str, what: str, size: int | None = None) -> None:
        algo, _ = parse_digest(digest)
        self._raw = raw
        self._digest = digest
        self._hash = hashlib.new(algo)
        self._what = what
        self._size = size
        self._seen = 0
        self._done = False

    def readable(self) -> bool:
        return True

    def read(self, n: int = -1) -> bytes:
        if self._done:
            return b""
        data = self._raw.read() if n is None or n < 0 else self._raw.read(n)
        if data:
            self._hash.update(data)
            self._seen += len(data)
            if self._size is not None and self._seen > self._size:
                raise DigestMismatchError(f"{self._what}: more bytes than the {self._size} declared")
            if n is None or n < 0:
                self._finish()
            return data
        self._finish()
        return b""

    def readinto(self, buf) -> int:
        data = self.read(len(buf))
        buf[: len(data)] = data
        return len(data)

    def _finish(self) -> None:
        if self._done:
            return
        self._done = True
        actual = f"{self._hash.name}:{self._hash.hexdigest()}"
        if self._size is not None and self._seen != self._size:
            raise DigestMismatchError(
                f"{self._what}: truncated or oversized ({self._seen} bytes, {self._size} declared)"
            )
        if actual != self._digest:
            raise DigestMismatchError(f"{self._what}: digest mismatch (expected {self._digest}, got {actual})")

    def close(self) -> None:
        close = getattr(self._raw, "close", None)
        if close:
            close()

    def __enter__(self) -> VerifyingReader:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
