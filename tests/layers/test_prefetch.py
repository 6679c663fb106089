"""PrefetchedStream: same bytes, same errors at the same place, bounded read-ahead, prompt close."""

from __future__ import annotations

import io
import os
import threading
import time

import pytest

from imagelint.digest import VerifyingReader, compute_digest
from imagelint.errors import DigestMismatchError
from imagelint.layers import prefetch
from imagelint.layers.prefetch import PrefetchedStream, prefetched


class CountingSource(io.RawIOBase):
    """Endless (or ``limit``-byte) zeros; counts how many bytes were asked for and handed out."""

    def __init__(self, limit: int | None = None) -> None:
        super().__init__()
        self.limit = limit
        self.handed = 0
        self.closed_by = None

    def readable(self) -> bool:
        return True

    def read(self, n: int = -1) -> bytes:
        left = n if self.limit is None else min(n, self.limit - self.handed)
        self.handed += max(left, 0)
        return bytes(max(left, 0))

    def close(self) -> None:
        self.closed_by = threading.current_thread().name
        super().close()


def wait_until_full(stream: PrefetchedStream) -> None:
    """Until the producer has filled the queue and waits to put (bounded: 10 s at the most)."""
    for _ in range(1000):
        if stream._queue.full():
            return
        time.sleep(0.01)
    raise AssertionError("the producer never filled the queue")


@pytest.mark.parametrize("chunk", [7, 4096, 1 << 20])
@pytest.mark.parametrize("pattern", ["read", "readinto", "all"])
def test_bytes_are_the_source_bytes_in_order(chunk: int, pattern: str) -> None:
    data = os.urandom(100_000)
    stream = PrefetchedStream(io.BytesIO(data), "layer 0", chunk=chunk, depth=3)
    got = bytearray()
    if pattern == "all":
        got += stream.read()
    else:
        buf = bytearray(10_007)
        while True:
            if pattern == "read":
                piece = stream.read(10_007)
                if not piece:
                    break
                got += piece
            else:
                n = stream.readinto(memoryview(buf))
                if not n:
                    break
                got += buf[:n]
    stream.close()
    assert bytes(got) == data
    assert stream.read(10) == b""


def test_a_source_error_is_raised_where_it_happened_with_its_own_type() -> None:
    data = os.urandom(50_000)
    wrong = compute_digest(b"something else")
    stream = PrefetchedStream(VerifyingReader(io.BytesIO(data), wrong, "blob x"), "layer 0", chunk=8192, depth=2)
    got = bytearray()
    with pytest.raises(DigestMismatchError, match="blob x: digest mismatch"):
        while piece := stream.read(1000):
            got += piece
    assert bytes(got) == data  # every byte before the error was delivered first
    stream.close()


def test_read_ahead_is_bounded_by_the_queue() -> None:
    source = CountingSource()
    stream = PrefetchedStream(source, "layer 0", chunk=1000, depth=3)
    wait_until_full(stream)  # the producer fills the queue and waits
    # depth chunks queued, plus at most one read in the producer's hands
    assert source.handed <= 4 * 1000
    stream.close()


def test_close_stops_a_waiting_producer_and_closes_the_source_once() -> None:
    source = CountingSource()
    stream = PrefetchedStream(source, "layer 0", chunk=1000, depth=2)
    wait_until_full(stream)
    stream.close()
    # close() joins the producer for at most _CLOSE_WAIT: had the producer kept waiting to put,
    # the join would have timed out with the thread still alive
    assert not stream._thread.is_alive()
    assert source.closed
    stream.close()  # idempotent


def test_small_layers_are_read_directly() -> None:
    raw = io.BytesIO(b"x" * 10)
    assert prefetched(raw, 10, "layer 0") is raw
    big = prefetched(io.BytesIO(b"x" * 10), prefetch.MIN_PREFETCH_BYTES, "layer 0")
    assert isinstance(big, PrefetchedStream)
    assert big.read() == b"x" * 10
    big.close()
    unknown = prefetched(io.BytesIO(b"y"), None, "layer 0")  # size unknown: prefetched
    assert isinstance(unknown, PrefetchedStream)
    unknown.close()
