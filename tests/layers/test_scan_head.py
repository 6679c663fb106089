"""The reader's tight path for a scanner whose class decides on a member's head (``decide_head``).

A candidate the text-facts scanner settles by its first 4 KiB (binary, or a config-extension
data file) is read once, decided once and skipped, with no scanner built. These tests hold that
path to what the scanner itself gives fed the whole member, with the native tar scanner and
with the Python parser alone, over windows that cut the head at every kind of boundary; and to
the reader's promises (the per-member read limit, truncation errors, a failing decision costs
one file).
"""

from __future__ import annotations

import os

import pytest

from imagelint.errors import ImageFormatError, ImagelintError, LimitExceededError
from imagelint.facts import textscan
from imagelint.facts.capture import CAPTURE_SPEC
from imagelint.layers import tarwalk
from imagelint.layers.limits import ReadLimits
from imagelint.layers.reader import extract_layer
from tests.layers.helpers import blob_layer, make_layer, spec_of
from tests.support.imagebuilder import File, layer_tar

NATIVE_SCAN = tarwalk._native_scan
SNIFF = textscan.SNIFF_BYTES
WORDS = b"alpha beta gamma delta epsilon zeta eta theta\n"


def _words(n: int) -> bytes:
    return (WORDS * (n // len(WORDS) + 1))[:n]


def _outcome(tar: bytes, spec=CAPTURE_SPEC, limits: ReadLimits | None = None) -> object:
    try:
        x = extract_layer(blob_layer(0, tar, "none"), spec, limits)
    except ImagelintError as exc:
        return ("error", type(exc).__name__, str(exc))
    return (x.entries, dict(x.scans), x.warnings)


def _every_walk(tar: bytes, monkeypatch, spec=CAPTURE_SPEC, limits: ReadLimits | None = None) -> object:
    """The outcome with the native scanner and the Python parser, over windows that put the
    head's end, the member's end and the next header on either side of a window's edge."""
    outcomes = []
    for native in ((True, False) if NATIVE_SCAN is not None else (False,)):
        for window in (512, 1024, 4096, 4608, 8192, 1 << 20):
            with monkeypatch.context() as m:
                m.setattr(tarwalk, "WINDOW", window)
                m.setattr(tarwalk, "_native_scan", NATIVE_SCAN if native else None)
                outcomes.append(_outcome(tar, spec, limits))
    assert all(o == outcomes[0] for o in outcomes[1:])
    return outcomes[0]


# Candidates around the sniff: shorter than it, exactly it, one byte over; a NUL just inside and
# just outside it; a first real line that crosses it (the scanner reads on); comments up to it.
EDGE_FILES = {
    "opt/data/short.txt": _words(100),
    "opt/data/exact.txt": _words(SNIFF),
    "opt/data/over.txt": _words(SNIFF + 1),
    "opt/data/big.cfg": _words(40_000),
    "opt/data/nul-inside.yaml": _words(SNIFF - 1) + b"\x00" + _words(5000),
    "opt/data/nul-outside.txt": _words(SNIFF) + b"\x00" + _words(5000),
    "opt/data/short-binary.cfg": b"\x00\x01\x02",
    "opt/data/empty.txt": b"",
    "opt/data/comments-then-group.txt": b"# c\n" * (SNIFF // 4 + 200) + b"\n\n[property]\ngpu-id=1\n" + _words(5000),
    "opt/data/line-across-sniff.cfg": b"#" * (SNIFF - 3) + b"\n[application]\ngpu-id=2\n" + _words(3000),
    "opt/data/group-at-sniff.cfg": b"#" * (SNIFF - 1) + b"\n[application]\ngpu-id=2\n" + _words(3000),
    "opt/data/comments-then-data.ini": b"; x\n" * (SNIFF // 4 + 10) + _words(5000),
    "opt/data/group.txt": b"[sink0]\ngpu-id=3\n" + _words(9000),
    "opt/data/deepstream.yaml": _words(300) + b"primary-gie:\n  gpu-id: 1\n" + _words(9000),
    "opt/data/cr-breaks.txt": b"first line\rsecond\r[g]\n" + _words(9000),
    "opt/data/not-utf8.txt": b"\xff\xfe caf\xe9\n" + _words(9000),
    "opt/data/script-like.sh": b"#!/bin/sh\nexport CUDA_VISIBLE_DEVICES=0\n" + _words(9000),
    "opt/data/random.cfg": os.urandom(9000),
}


def test_every_candidate_gets_the_result_the_scanner_gives_on_the_whole_file(monkeypatch) -> None:
    tar = layer_tar([File(path, data) for path, data in EDGE_FILES.items()])
    entries, scans, warnings = _every_walk(tar, monkeypatch)
    assert warnings == ()
    assert scans == {path: textscan.scan_bytes(path, data) for path, data in EDGE_FILES.items()}
    assert scans["opt/data/big.cfg"] is textscan.NOT_A_CONFIG and scans["opt/data/nul-inside.yaml"] == textscan.BINARY
    assert scans["opt/data/nul-outside.txt"] is textscan.NOT_A_CONFIG  # the NUL is past what is read
    assert scans["opt/data/comments-then-group.txt"]["s"]  # only comments in the head: read on, gpu-id found
    assert scans["opt/data/group-at-sniff.cfg"]["s"]  # the group line starts at the sniff's last byte


class CountingScanner(textscan.TextFactsScanner):
    """The text-facts scanner, counting how many are built and what the head decision is given."""

    built = 0
    heads: list[tuple[str, int, int]] = []
    wholes: list[tuple[str, int]] = []

    def __init__(self) -> None:
        super().__init__()
        type(self).built += 1

    @staticmethod
    def decide_head(path: str, size: int, head: bytes):  # type: ignore[override]
        CountingScanner.heads.append((path, size, len(head)))
        return textscan.decide_head(path, size, head)

    @classmethod
    def scan_whole(cls, path: str, size: int, data: bytes):  # type: ignore[override]
        CountingScanner.wholes.append((path, len(data)))
        return super().scan_whole(path, size, data)


def _counting_spec():
    CountingScanner.built = 0
    CountingScanner.heads = []
    CountingScanner.wholes = []
    return spec_of(("opt/**", "scan", 0, "t"), scanners={"t": CountingScanner})


def test_a_file_settled_by_its_head_builds_no_scanner_and_is_read_no_further() -> None:
    files = [File(f"opt/d/{i}.txt", _words(40_000)) for i in range(5)] + [File("opt/d/x.bin", b"\x7fELF\x02\x01\x00" + os.urandom(7000))]
    files += [File("opt/d/short.txt", b"k=v\n"), File("opt/d/g.cfg", b"[g]\ngpu-id=1\n" + _words(20_000))]
    for native in ((True, False) if NATIVE_SCAN is not None else (False,)):
        with pytest.MonkeyPatch.context() as m:
            m.setattr(tarwalk, "_native_scan", NATIVE_SCAN if native else None)
            spec = _counting_spec()
            x = extract_layer(make_layer(0, files), spec)
        # Only the config, which holds a keyword, builds a scanner (the short file, whole in hand and
        # holding none, is settled by scan_whole's C pass).
        assert CountingScanner.built == 1
        # A member the walker hands over (every one without the native scan; with it, the first,
        # read before the scan has a window) is decided on its first 4 KiB and its rest skipped; one
        # its first read holds whole (the short file) goes to scan_whole alone, as does the config
        # once its rest is read. A member the tar window holds whole is in hand already: it goes to
        # scan_whole alone, which settles what the head decision would have.
        walked = files[:1] if native else files
        assert CountingScanner.heads == [(f.path, len(f.data), SNIFF) for f in walked if f.path != "opt/d/short.txt"]
        whole = files if native else [f for f in files if f.path in ("opt/d/short.txt", "opt/d/g.cfg")]
        assert CountingScanner.wholes == [(f.path, len(f.data)) for f in whole if f not in files[:1]]
        assert x.scans == {f.path: textscan.scan_bytes(f.path, f.data) for f in files}
        assert x.scans["opt/d/g.cfg"]["s"][0][1] == "1"


def test_the_per_member_read_limit_still_applies_before_the_head_is_read() -> None:
    layer = make_layer(0, [File("opt/d/a.txt", _words(40_000))])
    spec = _counting_spec()
    with pytest.raises(LimitExceededError, match=r"member 'opt/d/a.txt' is 40000 bytes, over the per-member read limit"):
        extract_layer(layer, spec, ReadLimits(max_member_read_bytes=30_000))
    assert CountingScanner.heads == []
    # A member larger than the limit but not than what the scanner reads at most is fine.
    extract_layer(layer, spec, ReadLimits(max_member_read_bytes=40_000))


def test_a_truncated_candidate_is_the_layers_error_named_after_it(monkeypatch) -> None:
    tar = layer_tar([File("opt/data/a.txt", _words(100)), File("opt/data/cut.txt", _words(40_000))])
    at = tar.index(b"opt/data/cut.txt") + 512
    for cut in (at + 10, at + SNIFF - 1, at + SNIFF + 100):  # inside the head, at its end, past it
        outcome = _every_walk(tar[:cut], monkeypatch)
        assert outcome[:2] == ("error", "ImageFormatError"), cut
        assert "'opt/data/cut.txt' claims more data than the stream holds" in outcome[2]


class Choking(textscan.TextFactsScanner):
    @staticmethod
    def decide_head(path: str, size: int, head: bytes):  # type: ignore[override]
        if b"boom" in head:
            raise ValueError("cannot decide\nsecond line")
        return textscan.decide_head(path, size, head)


def test_a_head_decision_that_fails_costs_one_file_with_a_warning() -> None:
    spec = spec_of(("opt/**", "scan", 0, "t"), scanners={"t": Choking})
    layer = make_layer(0, [File("opt/a.txt", b"boom " + _words(9000)), File("opt/b.txt", _words(9000))])
    x = extract_layer(layer, spec)
    assert set(x.scans) == {"opt/b.txt"} and [e.path for e in x.entries] == ["opt/a.txt", "opt/b.txt"]
    assert len(x.warnings) == 1 and "scanner 't' failed on 'opt/a.txt' (ValueError: cannot decide)" in x.warnings[0]


def test_scanners_without_a_head_decision_are_fed_as_before() -> None:
    class Plain:
        def __init__(self) -> None:
            self.chunks: list[int] = []

        def feed(self, chunk: bytes) -> None:
            self.chunks.append(len(chunk))

        def result(self) -> list[int]:
            return self.chunks

    class SmallFirst(Plain):
        def __init__(self) -> None:
            super().__init__()
            self.first_read = 100  # on the instance: read from the scanner built, as always

    spec = spec_of(("opt/a*", "scan", 0, "p"), ("opt/b*", "scan", 0, "s"), scanners={"p": Plain, "s": SmallFirst})
    x = extract_layer(make_layer(0, [File("opt/a", b"x" * 70_000), File("opt/b", b"x" * 70_000)]), spec)
    assert x.scans["opt/a"] == [1 << 16, 70_000 - (1 << 16)]
    assert x.scans["opt/b"] == [100, 1 << 16, 70_000 - 100 - (1 << 16)]


def test_truncated_stream_error_is_an_image_format_error() -> None:
    tar = layer_tar([File("opt/data/cut.txt", _words(40_000))])
    with pytest.raises(ImageFormatError, match="truncated layer"):
        extract_layer(blob_layer(0, tar[:2000], "none"), CAPTURE_SPEC)


class FeedCounting(textscan.TextFactsScanner):
    """The text-facts scanner, recording the size of every chunk it is fed (a member handed over
    whole, through ``scan_whole``, counts as one chunk of its size)."""

    fed: dict[str, list[int]] = {}

    @classmethod
    def scan_whole(cls, path: str, size: int, data: bytes):  # type: ignore[override]
        FeedCounting.fed[path] = [len(data)]
        return textscan.TextFactsScanner.scan_whole.__func__(textscan.TextFactsScanner, path, size, data)

    def begin(self, path: str, size: int) -> None:
        super().begin(path, size)
        FeedCounting.fed[path] = []

    def feed(self, chunk: bytes) -> None:
        FeedCounting.fed[self.path].append(len(chunk))
        super().feed(chunk)


def test_a_file_read_on_that_fits_in_one_chunk_is_fed_in_one_piece() -> None:
    """A small source reaches the scanner whole, in one call (``scan_whole``), not as its head and its rest;
    a larger file still streams in bounded chunks after its head. Results are the whole-file scanner's."""
    chunk = 1 << 16
    files = {"opt/s/small.py": b"import torch\n" + _words(9000), "opt/s/edge.py": _words(SNIFF + chunk),
             "opt/s/big.py": _words(SNIFF + chunk + 1), "opt/s/tiny.sh": b"#!/bin/sh\nexec x\n"}
    FeedCounting.fed = {}
    spec = spec_of(("opt/**", "scan", 0, "t"), scanners={"t": FeedCounting})
    x = extract_layer(make_layer(0, [File(p, d) for p, d in files.items()]), spec)
    assert FeedCounting.fed == {"opt/s/small.py": [13 + 9000], "opt/s/edge.py": [SNIFF + chunk],
                                "opt/s/big.py": [SNIFF, chunk, 1], "opt/s/tiny.sh": [17]}
    assert dict(x.scans) == {p: textscan.scan_bytes(p, d) for p, d in files.items()}
