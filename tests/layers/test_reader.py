from __future__ import annotations

import gzip
import io
import resource
import tarfile
import threading
import time
import tracemalloc
from dataclasses import replace

import pytest

from imagelint.errors import DigestMismatchError, ImageFormatError, ImagelintError, LimitExceededError
from imagelint.layers.filesystem import ImageFilesystem
from imagelint.layers.limits import ReadLimits
from imagelint.layers.model import DIRECTORY, FILE, HARDLINK, OTHER, SYMLINK, LayerExtract
from imagelint.layers.codec import extract_from_bytes, extract_to_bytes
from imagelint.layers.reader import extract_layer, normalize_member_path, read_image_filesystem
from tests.layers.helpers import (
    VerifyingStream,
    blob_layer,
    built_image,
    file_info,
    gnu_tar,
    image_of,
    make_layer,
    spec_of,
)
from tests.support.imagebuilder import (
    Dir,
    File,
    Hardlink,
    Opaque,
    RawMember,
    Special,
    Symlink,
    Whiteout,
    compress,
    layer_tar,
    sha256,
)

VERSION_JSON = b'{"cuda": {"name": "CUDA SDK", "version": "12.4.1"}, "cuda_cudart": {"version": "12.4.127"}}'
CUDA_SPEC = spec_of(
    ("usr/local/cuda*/version.json", "content", 4096),
    ("**/libcuda.so*", "record"),
    ("**/*.elf", "head", 4),
    ("usr/local/cuda*", "record"),
)


class ByteCounter:
    """A toy scanner: counts bytes and the letter 'A' across chunks."""

    def __init__(self) -> None:
        self.n = 0
        self.a = 0
        self.chunks = 0

    def feed(self, chunk: bytes) -> None:
        self.n += len(chunk)
        self.a += chunk.count(b"A")
        self.chunks += 1

    def result(self) -> dict:
        return {"bytes": self.n, "A": self.a, "chunks": self.chunks}


class Exploding:
    def feed(self, chunk: bytes) -> None:
        raise ValueError("scanner choked\non a second line")

    def result(self) -> None:  # pragma: no cover - never reached
        return None


@pytest.mark.parametrize("compression", ["gzip", "zstd", "none", "unknown"])
def test_extract_every_compression(compression: str) -> None:
    layer = make_layer(0, [File("usr/local/cuda-12.4/version.json", VERSION_JSON), File("usr/bin/x", b"x")], compression)
    x = extract_layer(layer, CUDA_SPEC, ReadLimits())
    assert [e.path for e in x.entries] == ["usr/local/cuda-12.4/version.json"]
    assert dict(x.contents) == {"usr/local/cuda-12.4/version.json": VERSION_JSON}
    assert x.digest == layer.digest and x.index == 0 and x.warnings == ()


def test_entries_kinds_and_directories_only_when_matched() -> None:
    layer = make_layer(3, [
        Dir("usr/local/cuda-12.4"),
        Dir("usr/lib"),
        File("usr/lib/libcuda.so.535.104.05", b"\x7fELF...", mode=0o755),
        Symlink("usr/lib/libcuda.so.1", "libcuda.so.535.104.05"),
        Symlink("etc/unrelated-link", "/nowhere"),
        Hardlink("opt/hard", "usr/lib/libcuda.so.535.104.05"),
        Special("usr/local/cuda-fifo", "fifo"),
        Special("dev/nvidiactl", "chr"),
    ])
    x = extract_layer(layer, CUDA_SPEC, ReadLimits())
    got = {e.path: (e.kind, e.linkname, e.mode, e.layer_index) for e in x.entries}
    assert got == {
        "usr/local/cuda-12.4": (DIRECTORY, None, 0o755, 3),
        "usr/lib/libcuda.so.535.104.05": (FILE, None, 0o755, 3),
        "usr/lib/libcuda.so.1": (SYMLINK, "libcuda.so.535.104.05", 0o777, 3),
        "etc/unrelated-link": (SYMLINK, "/nowhere", 0o777, 3),  # every link is kept, matched or not
        "opt/hard": (HARDLINK, "usr/lib/libcuda.so.535.104.05", 0o644, 3),
        "usr/local/cuda-fifo": (OTHER, None, 0o600, 3),  # matched device/fifo: recorded, never read
    }
    assert "usr/lib" not in got and "dev/nvidiactl" not in got


def test_content_head_truncated_and_record() -> None:
    big = b"{" + b" " * 5000 + b"}"
    layer = make_layer(0, [
        File("usr/local/cuda-12.4/version.json", VERSION_JSON),
        File("usr/local/cuda-11.8/version.json", big),
        File("opt/a.elf", b"\x7fELF\x02\x01\x01rest-is-not-kept"),
        File("opt/tiny.elf", b"\x7f"),
    ])
    x = extract_layer(layer, CUDA_SPEC, ReadLimits())
    assert dict(x.contents) == {"usr/local/cuda-12.4/version.json": VERSION_JSON}
    assert x.truncated == ("usr/local/cuda-11.8/version.json",)
    assert dict(x.heads) == {"opt/a.elf": b"\x7fELF", "opt/tiny.elf": b"\x7f"}
    sizes = {e.path: e.size for e in x.entries}
    assert sizes["usr/local/cuda-11.8/version.json"] == len(big)


def test_scan_action_streams_chunks_to_the_scanner() -> None:
    data = b"A" * (3 << 20) + b"B" * 123
    spec = spec_of(("**/libcublas*.so*", "scan", 0, "count"), ("**/bad*", "scan", 0, "boom"),
                   scanners={"count": ByteCounter, "boom": Exploding})
    layer = make_layer(0, [File("usr/lib/libcublasLt.so.12", data), File("bad.so", b"zz"), File("after", b"")])
    x = extract_layer(layer, spec, ReadLimits())
    from imagelint.layers.reader import _SCAN_CHUNK

    chunks = -(-len(data) // _SCAN_CHUNK)  # streamed in bounded chunks, never whole
    assert dict(x.scans) == {"usr/lib/libcublasLt.so.12": {"bytes": len(data), "A": 3 << 20, "chunks": chunks}}
    assert chunks > 1
    assert [e.path for e in x.entries] == ["usr/lib/libcublasLt.so.12", "bad.so"]
    assert len(x.warnings) == 1 and "scanner 'boom' failed on 'bad.so' (ValueError: scanner choked)" in x.warnings[0]
    with pytest.raises(ValueError, match="no scanner named 'missing'"):
        extract_layer(layer, spec_of(("x", "scan", 0, "missing")), ReadLimits())


def test_whiteouts_and_opaque_markers_are_recorded_not_entries() -> None:
    layer = make_layer(1, [
        Whiteout("usr/lib/x86_64-linux-gnu/libcuda.so.1"),
        Whiteout("top"),
        Opaque("usr/local/cuda-12.4"),
        Opaque("/"),
        RawMember(file_info("usr/.wh..wh.plnk/123.456")),  # aufs hardlink dir: ignored metadata
        File("usr/local/cuda-12.4/version.json", VERSION_JSON),
    ])
    x = extract_layer(layer, CUDA_SPEC, ReadLimits())
    assert x.whiteouts == ("usr/lib/x86_64-linux-gnu/libcuda.so.1", "top")
    assert x.opaque_dirs == ("usr/local/cuda-12.4", "")
    assert [e.path for e in x.entries] == ["usr/local/cuda-12.4/version.json"]


def test_member_paths_are_normalised_and_escapes_skipped() -> None:
    assert normalize_member_path("./usr//lib/./x") == "usr/lib/x"
    assert normalize_member_path("/etc/passwd") == "etc/passwd"
    assert normalize_member_path("a/../b") == "b"
    assert normalize_member_path("../etc/passwd") is None
    assert normalize_member_path("a/../../b") is None
    assert normalize_member_path("./") == ""
    layer = make_layer(0, [
        RawMember(file_info("./usr/local/cuda-12.4/version.json", len(VERSION_JSON)), VERSION_JSON),
        RawMember(file_info("/usr/local/cuda-13.0/version.json", 2), b"{}"),
        RawMember(file_info("../../../../usr/local/cuda-99/version.json", 2), b"{}"),
        RawMember(file_info("usr/local/cuda-1/../cuda-2/version.json", 2), b"[]"),
        RawMember(file_info("usr/lib/libcuda.so.1", type_=b"1", linkname="../../../../etc/shadow")),
    ])
    x = extract_layer(layer, CUDA_SPEC, ReadLimits())
    assert dict(x.contents) == {
        "usr/local/cuda-12.4/version.json": VERSION_JSON,
        "usr/local/cuda-13.0/version.json": b"{}",
        "usr/local/cuda-2/version.json": b"[]",
    }
    assert any("absolute member name '/usr/local/cuda-13.0/version.json'" in w for w in x.warnings)
    assert any("skipped member '../../../../usr/local/cuda-99/version.json': path escapes the root" in w
               for w in x.warnings)
    assert any("skipped hardlink 'usr/lib/libcuda.so.1'" in w for w in x.warnings)
    assert all(w.startswith(f"layer 0 ({layer.digest[:19]})") for w in x.warnings)


def test_duplicate_members_later_wins_even_when_not_recorded() -> None:
    layer = make_layer(0, [
        File("usr/local/cuda-12.4/version.json", b"old"),
        File("usr/local/cuda-12.4/version.json", b"new"),
        Symlink("usr/lib/libcuda.so.1", "libcuda.so.1.old"),
        File("usr/bin/tool", b"1"),
        Symlink("usr/bin/tool", "tool.real"),  # a file replaced by a link
        Symlink("etc/link", "x"),
        Dir("etc/link"),  # a link replaced by an unmatched directory: the link is gone
    ])
    x = extract_layer(layer, CUDA_SPEC, ReadLimits())
    assert dict(x.contents) == {"usr/local/cuda-12.4/version.json": b"new"}
    got = {e.path: e.linkname for e in x.entries}
    assert got == {"usr/local/cuda-12.4/version.json": None, "usr/lib/libcuda.so.1": "libcuda.so.1.old",
                   "usr/bin/tool": "tool.real"}


def test_invalid_utf8_names_are_warned_and_usable() -> None:
    info = file_info("usr/local/cuda-\udcff/version.json", 2)
    tar = io.BytesIO()
    with tarfile.open(fileobj=tar, mode="w", format=tarfile.GNU_FORMAT, encoding="utf-8",
                      errors="surrogateescape") as tf:
        tf.addfile(info, io.BytesIO(b"{}"))
    layer = blob_layer(0, tar.getvalue(), "none")
    x = extract_layer(layer, CUDA_SPEC, ReadLimits())
    assert dict(x.contents) == {"usr/local/cuda-\ufffd/version.json": b"{}"}
    assert any("not UTF-8" in w for w in x.warnings)
    extract_from_bytes(extract_to_bytes(x))


def test_gnu_and_pax_long_names_through_the_reader() -> None:
    long_dir = "usr/local/cuda-12.4/" + "d" * 120
    pax = make_layer(0, [File(long_dir + "/version.json", b"pax"), Symlink("usr/local/cuda", "cuda-12.4")])
    gnu = blob_layer(1, gnu_tar([(file_info(long_dir.replace("12.4", "12.5") + "/x.elf", 4), b"ELF!")]), "none")
    spec = spec_of(("usr/local/*/**/version.json", "content"), ("**/*.elf", "head", 2))
    fs = read_image_filesystem(image_of([pax, gnu]), spec)
    assert fs.read("/usr/local/cuda/" + "d" * 120 + "/version.json") == b"pax"
    assert fs.head(long_dir.replace("12.4", "12.5") + "/x.elf") == b"EL"


def test_truncated_and_non_tar_layers_are_image_format_errors() -> None:
    tar = layer_tar([File("usr/local/cuda-12.4/version.json", VERSION_JSON * 100)])
    with pytest.raises(ImageFormatError, match=r"layer 2 \(sha256:[0-9a-f]{12}\): truncated layer"):
        extract_layer(blob_layer(2, compress(tar[:2000], "gzip"), "gzip"), CUDA_SPEC, ReadLimits())
    with pytest.raises(ImageFormatError, match=r"layer 2 .*: corrupt gzip stream"):
        extract_layer(blob_layer(2, compress(tar, "gzip")[: len(compress(tar, "gzip")) // 2], "gzip"), CUDA_SPEC, ReadLimits())
    with pytest.raises(ImageFormatError, match=r"layer 0 .*: not a tar archive"):
        extract_layer(blob_layer(0, gzip.compress(b"<html>not a layer</html>" * 40), "gzip"), CUDA_SPEC, ReadLimits())
    with pytest.raises(ImageFormatError, match=r"not a tar archive"):
        extract_layer(blob_layer(0, b"\x00\x01garbage" * 100, "unknown"), CUDA_SPEC, ReadLimits())


def test_gzip_bomb_stops_quickly_with_bounded_memory() -> None:
    # 1 GiB of zeros inside one member compresses to ~1 MB; the layer limit must stop it early.
    # Built as a multi-member gzip (header, then 128 members of 8 MiB of zeros each) so the
    # test compresses 8 MiB once instead of 1 GiB.
    header = gzip.compress(file_info("usr/lib/bomb", 1 << 30).tobuf(tarfile.GNU_FORMAT), mtime=0)
    blob = header + gzip.compress(bytes(8 << 20), 9, mtime=0) * 128
    assert len(blob) < 2 << 20
    layer = blob_layer(0, blob, "gzip")
    limits = ReadLimits(max_layer_inflated_bytes=64 << 20)
    spec = spec_of(("usr/lib/bomb", "scan", 0, "count"), scanners={"count": ByteCounter})
    rss_before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    tracemalloc.start()
    started = time.perf_counter()
    try:
        with pytest.raises(LimitExceededError, match=r"layer 0 .*inflates to more than 67108864 bytes"):
            extract_layer(layer, spec, limits)
        elapsed = time.perf_counter() - started
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    rss_growth_kib = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - rss_before
    assert elapsed < 5
    assert peak < 16 << 20  # Python-level allocations: buffers only, never the 1 GiB
    assert rss_growth_kib < 64 << 10  # 64 MiB, generous: C-level inflate buffers included


def test_per_member_read_and_captured_bytes_limits() -> None:
    layer = make_layer(0, [File(f"usr/local/cuda-{i}/version.json", b"x" * 3000) for i in range(5)])
    assert len(extract_layer(layer, CUDA_SPEC, ReadLimits(max_captured_bytes_per_layer=15000)).contents) == 5
    with pytest.raises(LimitExceededError, match=r"captured content exceeds 10000 bytes .*'usr/local/cuda-3/version.json'"):
        extract_layer(layer, CUDA_SPEC, ReadLimits(max_captured_bytes_per_layer=10000))
    with pytest.raises(LimitExceededError, match="per-member read limit of 1000"):
        extract_layer(layer, CUDA_SPEC, ReadLimits(max_member_read_bytes=1000))
    with pytest.raises(LimitExceededError, match="more than 3 tar members"):
        extract_layer(layer, CUDA_SPEC, ReadLimits(max_members_per_layer=3))
    with pytest.raises(ValueError):
        ReadLimits(max_members_per_layer=0)


def test_per_image_inflated_limit_spans_layers() -> None:
    layers = [make_layer(i, [File(f"f{i}", b"z" * 300_000)]) for i in range(4)]
    spec = spec_of(("none", "record"))
    read_image_filesystem(image_of(layers), spec, ReadLimits(max_image_inflated_bytes=4 * 320_000))
    for workers in (1, 2):
        with pytest.raises(LimitExceededError, match="per-image limit"):
            read_image_filesystem(image_of(layers), spec, ReadLimits(max_image_inflated_bytes=700_000), workers=workers)


@pytest.mark.parametrize("compression", ["gzip", "zstd", "none"])
def test_stream_is_read_to_eof_so_the_source_verifies_the_digest(compression: str) -> None:
    tar = layer_tar([File("usr/local/cuda-12.4/version.json", VERSION_JSON)]) + bytes(10240)  # tar record padding
    blob = compress(tar, compression)
    streams: list[VerifyingStream] = []

    def opener(digest: str):
        def open_():
            streams.append(VerifyingStream(blob, digest))
            return streams[-1]
        return open_

    good = replace(blob_layer(0, blob, compression), opener=opener(sha256(blob)))
    extract_layer(good, CUDA_SPEC, ReadLimits())
    assert streams[-1].reached_eof
    bad = replace(good, opener=opener("sha256:" + "0" * 64))
    with pytest.raises(DigestMismatchError):
        extract_layer(bad, CUDA_SPEC, ReadLimits())


def test_parallel_equals_serial_and_errors_come_from_the_first_failing_layer() -> None:
    layers = [
        [File("usr/local/cuda-12.4/version.json", VERSION_JSON), Symlink("usr/local/cuda", "cuda-12.4")],
        [File(f"usr/lib/libcuda.so.{i}", b"x" * i) for i in range(50)],
        [Whiteout("usr/lib/libcuda.so.7"), File("a.elf", b"\x7fELF...")],
        [Opaque("usr/lib"), File("usr/lib/libcuda.so.1", b"new")],
    ]
    image = built_image(layers, compression="zstd")
    serial = read_image_filesystem(image, CUDA_SPEC, workers=1)
    parallel = read_image_filesystem(image, CUDA_SPEC, workers=2)
    assert list(serial.entries()) == list(parallel.entries())
    assert [serial.read(e.path) for e in serial.entries()] == [parallel.read(e.path) for e in parallel.entries()]
    assert [e.path for e in parallel.entries()] == [
        "a.elf", "usr/lib/libcuda.so.1", "usr/local/cuda", "usr/local/cuda-12.4/version.json"]

    ok = make_layer(0, [File("x", b"1")])
    broken_1 = blob_layer(1, b"\x1f\x8b\x08\x00garbage", "gzip")
    broken_2 = blob_layer(2, b"not a tar at all" * 64, "none")
    for workers in (1, 2, 3):
        with pytest.raises(ImageFormatError, match=r"^layer 1 "):
            read_image_filesystem(image_of([ok, broken_1, broken_2]), CUDA_SPEC, workers=workers)


def test_extract_is_injectable() -> None:
    image = built_image([[File("usr/local/cuda-12.4/version.json", VERSION_JSON)]])
    calls: list[int] = []

    def extract(layer, spec, limits):
        calls.append(layer.index)
        return extract_layer(layer, spec, limits)

    fs = read_image_filesystem(image, CUDA_SPEC, extract=extract)
    assert calls == [0] and fs.read("usr/local/cuda-12.4/version.json") == VERSION_JSON


def test_serialisation_round_trips_exactly_and_checks_version() -> None:
    spec = spec_of(("usr/local/cuda*/version.json", "content", 64), ("**/*.elf", "head", 4),
                   ("**/*.so", "scan", 0, "count"), scanners={"count": ByteCounter})
    layer = make_layer(5, [
        File("usr/local/cuda-12.4/version.json", b"\x00\xff binary \n" * 3),
        File("usr/local/cuda-11.0/version.json", b"x" * 100),
        File("b.elf", b"\x7fELF\x02"),
        File("lib.so", b"AAA"),
        File("empty.elf", b""),
        Symlink("s", "/ü/ñ"),
        Hardlink("h", "lib.so"),
        Whiteout("gone"),
        Opaque("opq"),
        RawMember(file_info("../escape")),
    ])
    x = extract_layer(layer, spec, ReadLimits())
    blob = extract_to_bytes(x)
    y = extract_from_bytes(blob)
    assert y == x
    assert y.heads["empty.elf"] == b"" and y.truncated == ("usr/local/cuda-11.0/version.json",)
    assert isinstance(y.contents, type(x.contents))
    with pytest.raises(ImageFormatError, match="version"):
        extract_from_bytes(blob[:4] + (99).to_bytes(4, "big") + blob[8:])
    for broken in (b"", b"XXXX" + blob[4:], blob[:-1], blob + b"!", blob[:20]):
        with pytest.raises(ImageFormatError):
            extract_from_bytes(broken)
    empty = LayerExtract(0, "sha256:e", ())
    assert extract_from_bytes(extract_to_bytes(empty)) == empty


def test_empty_image_and_empty_layer() -> None:
    assert list(read_image_filesystem(image_of([]), CUDA_SPEC).entries()) == []
    x = extract_layer(make_layer(0, []), CUDA_SPEC, ReadLimits())
    assert x.entries == () and x.warnings == ()
    assert isinstance(ImageFilesystem.from_extracts([x]), ImageFilesystem)


def test_errors_are_imagelint_errors_with_one_line() -> None:
    with pytest.raises(ImagelintError) as info:
        extract_layer(blob_layer(0, b"\x28\xb5\x2f\xfd" + b"\xff" * 50, "unknown"), CUDA_SPEC, ReadLimits())
    assert "\n" not in str(info.value) and info.value.exit_code == 3


def test_lowest_failing_layer_wins_and_layers_above_a_failure_are_cancelled() -> None:
    # Layer 0 fails only at its end (after inflating 64 MiB); layer 1 fails at once.
    slow_tar = layer_tar([File("usr/lib/big", bytes(64 << 20))])
    slow_broken = blob_layer(0, compress(slow_tar[: len(slow_tar) - 5000], "zstd"), "zstd")
    fast_broken = blob_layer(1, b"not a tar" * 100, "none")
    with pytest.raises(ImageFormatError, match=r"^layer 0 .*truncated layer"):
        read_image_filesystem(image_of([slow_broken, fast_broken]), CUDA_SPEC, workers=2)
    # Layer 0 fails as soon as layer 1 (1 GiB of zeros, ~0.6 s to inflate) is reading;
    # layer 1 must then be abandoned at its next read, not inflated to the end.
    header = gzip.compress(file_info("usr/lib/huge", 1 << 30).tobuf(tarfile.GNU_FORMAT), mtime=0)
    huge_blob = header + gzip.compress(bytes(8 << 20), 9, mtime=0) * 128
    consumed: list[int] = []
    huge_started = threading.Event()

    class CountingStream(io.BytesIO):
        def read(self, n: int | None = -1) -> bytes:
            data = super().read(n)
            consumed.append(len(data))
            huge_started.set()
            return data

        def readinto(self, buffer) -> int:  # type: ignore[no-untyped-def,override]
            n = super().readinto(buffer)
            consumed.append(n)
            huge_started.set()
            return n

    def open_junk() -> io.BytesIO:
        assert huge_started.wait(10)
        return io.BytesIO(b"junk" * 200)

    junk = replace(blob_layer(0, b"junk" * 200, "none"), opener=open_junk)
    huge = replace(blob_layer(1, huge_blob, "gzip"), opener=lambda: CountingStream(huge_blob))
    with pytest.raises(ImageFormatError, match=r"^layer 0 .*not a tar archive"):
        read_image_filesystem(image_of([junk, huge]), CUDA_SPEC, workers=2)
    assert 0 < sum(consumed) < len(huge_blob)  # isal reads 512 KiB at a time: one read, then cancelled


@pytest.mark.parametrize("compression", ["gzip", "zstd", "none", "unknown"])
def test_layer_stream_is_closed_on_success_and_on_error(compression: str) -> None:
    opened: list[io.BytesIO] = []
    good = compress(layer_tar([File("a", b"1")]), "gzip" if compression == "unknown" else compression)

    def opener(blob: bytes):
        def open_() -> io.BytesIO:
            opened.append(io.BytesIO(blob))
            return opened[-1]
        return open_

    layer = replace(blob_layer(0, good, compression), opener=opener(good))
    extract_layer(layer, CUDA_SPEC, ReadLimits())
    with pytest.raises(ImageFormatError):
        extract_layer(replace(layer, opener=opener(good[: min(700, len(good) // 2)])), CUDA_SPEC, ReadLimits())
    assert len(opened) == 2 and all(s.closed for s in opened)


def test_a_cache_entry_that_inflates_past_what_it_declares_is_corrupt_not_allocated() -> None:
    import struct
    import zlib

    from imagelint.layers.model import EXTRACTOR_VERSION

    bomb = zlib.compress(b"\0" * (64 << 20), 9)  # 64 MiB of zeros in ~64 KB
    for declared in (100, 1 << 40):
        entry = struct.pack(">4sIIQ", b"ILXE", EXTRACTOR_VERSION, 10, declared) + bomb
        with pytest.raises(ImageFormatError, match="corrupt"):
            extract_from_bytes(entry)


def test_long_scan_strings_travel_with_the_blobs_and_come_back_in_place() -> None:
    """A script's text is stored with the blobs (UTF-8), not JSON-escaped: the same extract comes back,
    key order included, and a placeholder that does not fit is a corrupt entry."""
    import json
    import struct
    import zlib

    from types import MappingProxyType

    script = "#!/bin/sh\n" + "export CUDA_VISIBLE_DEVICES=0 # ü \"q\" \\ \n" * 40 + "\udc80 lone surrogate"
    scans = {"a.sh": {"lang": "sh", "sh": script, "text": 1}, "b.txt": {"text": 1, "unread_from": 4096},
             "c.so": [1, 2, "x" * 300], "d.sh": {"sh": "short", "also": script[:300]}}
    x = LayerExtract(0, "sha256:s", (), scans=MappingProxyType(scans), contents=MappingProxyType({"f": b"data"}))
    blob = extract_to_bytes(x)
    y = extract_from_bytes(blob)
    assert y == x and [list(r) for r in y.scans.values() if isinstance(r, dict)] == \
        [list(r) for r in scans.values() if isinstance(r, dict)]
    body = zlib.decompress(blob[struct.calcsize(">4sIIQ"):])
    meta_len = struct.unpack_from(">4sIIQ", blob)[2]
    assert script.encode("utf-8", "surrogatepass") in body[meta_len:]  # with the blobs, not in the JSON
    meta = json.loads(body[:meta_len])
    header = struct.unpack_from(">4sIIQ", blob)
    for tamper in ("not a placeholder", "unknown key"):
        bad = json.loads(body[:meta_len])
        entry = next(item for item in bad["scans"] if len(item) == 3)
        if tamper == "not a placeholder":
            bad["results"][entry[1]]["sh"] = "already here"
        else:
            entry[2][0][0] = "nope"
        text = json.dumps(bad, separators=(",", ":")).encode()
        rebuilt = text + body[meta_len:]
        forged = struct.pack(">4sIIQ", header[0], header[1], len(text), len(rebuilt)) + zlib.compress(rebuilt)
        with pytest.raises(ImageFormatError, match="corrupt"):
            extract_from_bytes(forged)
    assert meta["scans"][1] == ["b.txt", 1] and meta["results"][1] == {"text": 1, "unread_from": 4096}
