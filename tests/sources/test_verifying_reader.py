"""VerifyingReader: every way of reading hashes every byte, and a wrong digest or size fails at the end."""

from __future__ import annotations

import io
import os

import pytest

from imagelint.digest import VerifyingReader, compute_digest
from imagelint.errors import DigestMismatchError

DATA = os.urandom(300_000)


class ReadOnly:
    """A source with read() only (no readinto): the reader must still work."""

    def __init__(self, data: bytes) -> None:
        self._f = io.BytesIO(data)

    def read(self, n: int = -1) -> bytes:
        return self._f.read(n)


def _drain_readinto(r: VerifyingReader, size: int = 65536) -> bytes:
    out = bytearray()
    buf = bytearray(size)
    while n := r.readinto(memoryview(buf)):
        out += buf[:n]
    return bytes(out)


@pytest.mark.parametrize("source", [io.BytesIO, ReadOnly, lambda d: io.BufferedReader(io.BytesIO(d), 4096)])
def test_readinto_hashes_in_place_and_verifies(source) -> None:  # type: ignore[no-untyped-def]
    r = VerifyingReader(source(DATA), compute_digest(DATA), "blob", size=len(DATA))
    assert _drain_readinto(r) == DATA
    assert r.readinto(bytearray(10)) == 0  # and again after EOF: still nothing, no error


@pytest.mark.parametrize("source", [io.BytesIO, ReadOnly])
def test_a_wrong_digest_fails_at_eof_whichever_way_it_is_read(source) -> None:  # type: ignore[no-untyped-def]
    tampered = DATA[:-1] + bytes([DATA[-1] ^ 1])
    with pytest.raises(DigestMismatchError, match="digest mismatch"):
        _drain_readinto(VerifyingReader(source(tampered), compute_digest(DATA), "blob", size=len(DATA)))
    mixed = VerifyingReader(source(tampered), compute_digest(DATA), "blob")
    mixed.read(1000)
    with pytest.raises(DigestMismatchError):
        _drain_readinto(mixed)


def test_more_bytes_than_declared_fail_at_once() -> None:
    r = VerifyingReader(io.BytesIO(DATA), compute_digest(DATA), "blob", size=1000)
    with pytest.raises(DigestMismatchError, match="more bytes than the 1000 declared"):
        _drain_readinto(r)


def test_fewer_bytes_than_declared_fail_at_eof() -> None:
    short = DATA[:1000]
    with pytest.raises(DigestMismatchError, match="truncated or oversized"):
        _drain_readinto(VerifyingReader(io.BytesIO(short), compute_digest(short), "blob", size=len(DATA)))
