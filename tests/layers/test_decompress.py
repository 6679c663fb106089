from __future__ import annotations

import gzip
import io

import pytest
import zstandard

from imagelint.errors import ImageFormatError, LimitExceededError
from imagelint.layers.decompress import InflatedBudget, open_decompressed, sniff_compression
from tests.support.imagebuilder import File, compress, layer_tar

TAR = layer_tar([File("usr/local/cuda-12.4/version.json", b'{"cuda": {"version": "12.4.1"}}'), File("a", b"x" * 5000)])


@pytest.mark.parametrize("compression", ["gzip", "zstd", "none"])
def test_declared_compression_round_trips(compression: str) -> None:
    blob = compress(TAR, compression)
    assert open_decompressed(io.BytesIO(blob), compression).read() == TAR


@pytest.mark.parametrize("compression", ["gzip", "zstd", "none"])
def test_unknown_compression_is_sniffed(compression: str) -> None:
    blob = compress(TAR, compression)
    assert sniff_compression(blob[:4]) == compression
    assert open_decompressed(io.BytesIO(blob), "unknown").read() == TAR


def test_multi_member_gzip_and_multi_frame_zstd() -> None:
    half = len(TAR) // 2
    two_members = gzip.compress(TAR[:half]) + gzip.compress(TAR[half:])
    assert open_decompressed(io.BytesIO(two_members), "gzip").read() == TAR
    cctx = zstandard.ZstdCompressor()
    two_frames = cctx.compress(TAR[:half]) + cctx.compress(TAR[half:])
    assert open_decompressed(io.BytesIO(two_frames), "zstd").read() == TAR


@pytest.mark.parametrize("compression", ["gzip", "zstd"])
def test_corrupt_stream_is_image_format_error_naming_layer(compression: str) -> None:
    blob = bytearray(compress(TAR, compression))
    for i in range(20, len(blob) - 10, 7):
        blob[i] ^= 0x5A
    with pytest.raises(ImageFormatError, match=r"layer 3 \(sha256:abc\).*corrupt " + compression):
        open_decompressed(io.BytesIO(bytes(blob)), compression, "layer 3 (sha256:abc)").read()


@pytest.mark.parametrize("compression", ["gzip", "zstd"])
def test_truncated_stream_is_image_format_error(compression: str) -> None:
    blob = compress(TAR, compression)[:-20]
    with pytest.raises(ImageFormatError, match="layer 0"):
        open_decompressed(io.BytesIO(blob), compression, "layer 0").read()


def test_unsupported_compression_is_rejected() -> None:
    with pytest.raises(ImageFormatError, match="unsupported layer compression 'lz4'"):
        open_decompressed(io.BytesIO(b""), "lz4", "layer 0")


def test_per_layer_and_per_image_inflated_limits() -> None:
    blob = compress(bytes(1 << 20), "gzip")
    with pytest.raises(LimitExceededError, match="per-layer limit"):
        open_decompressed(io.BytesIO(blob), "gzip", "layer 0", max_bytes=100_000).read()
    budget = InflatedBudget(1_500_000)
    open_decompressed(io.BytesIO(blob), "gzip", "layer 0", budget=budget).read()
    with pytest.raises(LimitExceededError, match="per-image limit"):
        open_decompressed(io.BytesIO(blob), "gzip", "layer 1", budget=budget).read()


def test_every_truncation_of_a_zstd_stream_is_detected() -> None:
    # python-zstandard's stream reader ends quietly mid-frame; the frame tracker must catch it.
    plain = zstandard.ZstdCompressor(level=3).compress(TAR[:3000])
    checked = zstandard.ZstdCompressor(level=1, write_checksum=True, write_content_size=False).compress(TAR[3000:])
    skippable = (0x184D2A53).to_bytes(4, "little") + (5).to_bytes(4, "little") + b"hello"
    blob = plain + skippable + checked
    assert open_decompressed(io.BytesIO(blob), "zstd").read() == TAR
    frame_ends = {len(plain), len(plain) + len(skippable)}  # a shorter but whole stream
    for cut in set(range(1, len(blob))) - frame_ends:
        with pytest.raises(ImageFormatError, match="layer 1"):
            open_decompressed(io.BytesIO(blob[:cut]), "zstd", "layer 1").read()


class _Dripping(io.RawIOBase):
    """A blob that arrives a byte a read (a slow or stalled registry); the image's read is abandoned
    (a sibling layer failed) after the first ``cancel_after`` bytes."""

    def __init__(self, blob: bytes, budget: InflatedBudget, cancel_after: int) -> None:
        super().__init__()
        self.blob, self.budget, self.cancel_after, self.sent = blob, budget, cancel_after, 0

    def readable(self) -> bool:
        return True

    def readinto(self, buffer) -> int:
        if self.sent >= len(self.blob):
            return 0
        buffer[0] = self.blob[self.sent]
        self.sent += 1
        if self.sent == self.cancel_after:
            self.budget.cancel_above(-1)
        return 1


@pytest.mark.parametrize("compression", ["gzip", "zstd", "none", "unknown"])
def test_an_abandoned_read_stops_at_the_next_compressed_read_not_at_the_end_of_the_blob(compression) -> None:
    """An inflater reads input until it has output: checked only on the inflated side, a dripping
    blob was read to its end (minutes, for a stalled registry) before a sibling's failure ended the run."""
    from imagelint.layers.decompress import LayerCancelled

    tar = layer_tar([File(f"etc/f{i}", bytes(range(256)) * 8) for i in range(4)])
    blob = tar if compression in ("none", "unknown") else compress(tar, compression)
    budget = InflatedBudget(1 << 30)
    source = _Dripping(blob, budget, cancel_after=8)
    stream = open_decompressed(source, compression, "layer 1", budget=budget, layer_index=1)
    with pytest.raises(LayerCancelled):
        while stream.read(1 << 20):
            pass
    assert source.sent == 8, (source.sent, len(blob))
