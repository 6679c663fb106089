"""The native tar scanner (_tarscan.c) against the Python parser it stands in for.

Every archive here is extracted twice, with the native scanner and with the Python parser
alone (``tarwalk._native_scan = None``), over windows of several sizes so headers and data
straddle window ends: the LayerExtracts (entries, captures, scans, warnings) and the errors
must be identical. The scanner's filter may drop a member only when no capture rule can want
it; that is checked path by path against the matcher.
"""

from __future__ import annotations

import io
import os
import random
import tarfile

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from imagelint.errors import ImagelintError
from imagelint.facts import textscan
from imagelint.facts.capture import CAPTURE_SPEC
from imagelint.layers import reader, tarwalk
from imagelint.layers.reader import extract_layer
from tests.layers.helpers import blob_layer, file_info, gnu_tar, spec_of
from tests.support.imagebuilder import Dir, File, Hardlink, Special, Symlink, layer_tar

needs_native = pytest.mark.skipif(not tarwalk.NATIVE, reason="the native tar scanner is not built")
NATIVE_SCAN = tarwalk._native_scan


@pytest.mark.skipif(not os.environ.get("IMAGELINT_REQUIRE_NATIVE"), reason="only where the build must have it")
def test_ci_builds_the_native_scanner() -> None:
    """.ci/run sets IMAGELINT_REQUIRE_NATIVE: there, a missing extension is a failure, not a skip."""
    assert tarwalk.NATIVE, "imagelint/layers/_tarscan.c was not built (setup.py; a C compiler and Python headers)"


def _outcome(tar: bytes, spec=CAPTURE_SPEC) -> object:
    try:
        x = extract_layer(blob_layer(0, tar, "none"), spec)
    except ImagelintError as exc:
        return ("error", type(exc).__name__, str(exc))
    return (x.entries, sorted(x.contents.items()), sorted(x.heads.items()),
            sorted((k, repr(v)) for k, v in x.scans.items()), x.truncated, x.whiteouts, x.opaque_dirs, x.warnings)


def _both(tar: bytes, monkeypatch, windows=(512, 1536, 4096, 1 << 20), spec=CAPTURE_SPEC) -> object:
    outcomes = []
    for native in (True, False):
        for window in windows:
            with monkeypatch.context() as m:  # undone after each run: every example starts from the real module
                m.setattr(tarwalk, "WINDOW", window)
                m.setattr(tarwalk, "_native_scan", NATIVE_SCAN if native else None)
                outcomes.append(_outcome(tar, spec))
    first = outcomes[0]
    for other in outcomes[1:]:
        assert other == first
    return first


SCRIPT = b"#!/bin/sh\nexport CUDA_VISIBLE_DEVICES=0\nexec python3 /app/main.py\n"
CONFIG = b"[property]\ngpu-id=0\nconfig-file=pgie.txt\n"


def _members(rng: random.Random) -> list:
    names = ["usr/lib/x86_64-linux-gnu/libcuda.so.535.104.05", "usr/local/cuda/lib64/libcudart.so.12",
             "opt/pytorch/src/a.cpp", "opt/pytorch/CMakeLists.txt", "opt/nvidia/nvidia_entrypoint.sh",
             "app/config.txt", "usr/bin/python3", "usr/src/app/main.py", "usr/lib/python3/dist-packages/x.py",
             "etc/ld.so.conf.d/cuda.conf", "workspace/run.sh", "entrypoint.sh", "usr/local/cuda/version.json",
             "opt/data/blob.bin", "home/u/.bashrc", "usr/share/doc/README"]
    out: list = []
    for i in range(rng.randint(1, 40)):
        name = rng.choice(names) if rng.random() < 0.6 else _random_path(rng)
        if rng.random() < 0.2:
            name = name.replace("/", f"/d{i}/", 1)
        kind = rng.random()
        if kind < 0.55:
            body = rng.choice([SCRIPT, CONFIG, os.urandom(rng.randint(0, 3000)), b"x" * rng.randint(0, 5000)])
            out.append(File(("./" if rng.random() < 0.5 else "") + name, body))
        elif kind < 0.7:
            out.append(Symlink(name, rng.choice(["libcuda.so.1", "../x", "/usr/bin/env"])))
        elif kind < 0.8:
            out.append(Hardlink(name, rng.choice(names)))
        elif kind < 0.9:
            out.append(Dir(name.rpartition("/")[0] or name))
        else:
            parent, _, leaf = name.rpartition("/")
            out.append(File(f"{parent}/.wh.{leaf}" if parent else f".wh.{leaf}", b""))
    return out


@needs_native
@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(seed=st.integers(0, 10_000))
def test_random_layers_extract_identically(seed: int, monkeypatch) -> None:
    rng = random.Random(seed)
    _both(layer_tar(_members(rng)), monkeypatch)


@needs_native
@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(seed=st.integers(0, 10_000), data=st.data())
def test_corrupted_layers_fail_or_extract_identically(seed: int, data, monkeypatch) -> None:
    rng = random.Random(seed)
    tar = bytearray(layer_tar(_members(rng)))
    for _ in range(data.draw(st.integers(1, 6))):
        at = data.draw(st.integers(0, len(tar) - 1))
        tar[at] = data.draw(st.integers(0, 255))
    cut = data.draw(st.integers(0, len(tar)))
    _both(bytes(tar[:cut] if data.draw(st.booleans()) else tar), monkeypatch, windows=(512, 1536, 1 << 20))


@needs_native
def test_unusual_headers_go_to_the_python_parser_and_agree(monkeypatch) -> None:
    long_name = "usr/local/" + "/".join(f"dir-{i:03d}" for i in range(40)) + "/libcudart.so.12"
    pax = io.BytesIO()
    with tarfile.open(fileobj=pax, mode="w", format=tarfile.PAX_FORMAT) as tf:
        for name, body in ((long_name, b"x" * 700), ("usr/bin/t\u00e9st", SCRIPT), ("etc/ld.so.conf", b"/opt/lib\n")):
            ti = tarfile.TarInfo(name)
            ti.size = len(body)
            tf.addfile(ti, io.BytesIO(body))
    for tar in (
        pax.getvalue(),
        gnu_tar([(file_info(long_name, 3), b"abc"), (file_info("opt/nvidia/x_entrypoint", len(SCRIPT)), SCRIPT)]),
        _latin1_tar([("usr/bin/\xff\xfe", b"#!/bin/sh\n"), ("opt/nvidia/\xe9_entrypoint", SCRIPT)]),
        layer_tar([File("/etc/ld.so.conf", b"/x\n"), File("a/../etc/ld.so.conf.d/z.conf", b"/y\n"),
                   File("../escape.sh", SCRIPT), File("./", b""), Special("dev/nvidia0", "chr")]),
    ):
        _both(tar, monkeypatch)


def _latin1_tar(files: list[tuple[str, bytes]]) -> bytes:
    """Names that are not UTF-8 on the wire."""
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w", format=tarfile.GNU_FORMAT, encoding="latin-1") as tf:
        for name, body in files:
            ti = tarfile.TarInfo(name)
            ti.size = len(body)
            tf.addfile(ti, io.BytesIO(body))
    return buf.getvalue()


@needs_native
def test_a_member_replaced_later_in_the_same_window_is_seen(monkeypatch) -> None:
    """A symlink (always handed back) then a plain file at the same path that no rule wants:
    the file must replace the link, as in the Python walk."""
    tar = layer_tar([Symlink("opt/data/x.bin", "y"), File("opt/data/x.bin", b"data")])
    entries = _both(tar, monkeypatch)[0]
    assert [e.path for e in entries] == []


_PARTS = ["usr", "opt", "app", "lib", "bin", "local", "cuda", "nvidia", "src", "workspace", "etc", "ld.so.conf.d",
          "python3", "dist-packages", "home", "x", "cuda-12.4", "torch"]
_LEAVES = ["libcuda.so.1", "libcudart.so.12.4.1", "a.so", "b.txt", "c.py", "d.yaml", "e.sh", "version.json",
           "nvidia_entrypoint.sh", "METADATA", "CMakeLists.txt", "f.cpp", "g", "libnvidia-ml.so.1", "h.fatbin",
           "version.py", "x.conf", "run.bash", "k.cfg", "l.ini", "m.yml"]


def _random_path(rng: random.Random) -> str:
    return "/".join([*(rng.choice(_PARTS) for _ in range(rng.randint(0, 4))), rng.choice(_LEAVES)])


@needs_native
def test_the_filter_drops_only_paths_no_rule_wants() -> None:
    matcher = reader._matcher(CAPTURE_SPEC.rules)
    prefilter = matcher.prefilter
    rng = random.Random(7)
    dropped = kept = 0
    for _ in range(3000):
        path = _random_path(rng)
        tar = layer_tar([File(path, b"z")])
        members, _, headers, _, _ = tarwalk._native_scan(tar, 0, 0, 10, prefilter, set())
        assert headers == 1
        if members:
            kept += 1
        else:
            dropped += 1
            assert matcher.match(path) is None, path
    assert dropped and kept  # the test covers both sides


class _Choosy(textscan.TextFactsScanner):
    """The text-facts scanner, failing on any member whose content says "boom"."""

    @classmethod
    def scan_whole(cls, path: str, size: int, data: bytes):  # type: ignore[override]
        if b"boom" in data:
            raise ValueError("cannot scan\nsecond line")
        return textscan.TextFactsScanner.scan_whole.__func__(textscan.TextFactsScanner, path, size, data)


@needs_native
@pytest.mark.parametrize("captured", [256 << 20, 2_000])
def test_members_the_reader_takes_from_the_window_agree_with_the_parser(captured: int, monkeypatch) -> None:
    """The native batch's usual candidates are taken from the window in one step
    (``_LayerCapture.add_in_window``); every other member goes through ``add``. Both must give
    what the Python parser's walk gives, member by member: whiteouts, a path seen before, a
    scanner failing, a text kept (held bytes, against the per-layer bound), a rule that is not a
    scan, a member too big to settle whole, data that straddles the window's end, and directories,
    symlinks and hard links with a rule that records them and without one."""
    from imagelint.layers.limits import ReadLimits

    spec = spec_of(("app/**/*.txt", "content", 100), ("app/lib/**", "record", 0), ("app/**", "scan", 0, "t"),
                   scanners={"t": _Choosy})
    members: list = [Dir("app"), Dir("app/lib"), Dir("opt"), Dir("opt/tools")]
    for i in range(24):
        members.append(Symlink(f"app/lib/libx{i}.so" if i % 2 else f"opt/tools/t{i}", f"libx{i}.so.1"))
        if i % 5 == 0:
            members.append(Dir(f"app/lib/d{i}" if i % 2 else f"opt/d{i}"))  # recorded, and not
            members.append(Hardlink(f"opt/h{i}", f"opt/tools/t{i}"))
    for i in range(60):
        members.append(File(f"app/pkg{i % 7}/m{i}.py", b"import os\n" * (i * 37 % 400)))
        if i % 9 == 0 and i:
            members.append(File(f"app/pkg{(i - 9) % 7}/.wh.m{i - 9}.py", b""))  # a whiteout of a source
        if i % 11 == 0:
            members.append(File(f"app/pkg{i % 7}/m{i}.py", b"# replaced\n" + SCRIPT))  # the same path again
        if i % 13 == 0:
            members.append(File(f"app/run{i}.sh", SCRIPT * (i + 1)))  # a script: its text is kept
        if i % 17 == 0:
            members.append(File(f"app/bad{i}.py", b"boom\n"))
        if i % 19 == 0:
            members.append(File(f"app/notes{i}.txt", b"gpu-id=0\n"))
    members.append(File("app/big.py", b"x = 1\n" * 13_000))  # past the head and one scan chunk
    tar = layer_tar(members)

    def outcome() -> object:
        try:
            x = extract_layer(blob_layer(0, tar, "none"), spec, ReadLimits(max_captured_bytes_per_layer=captured))
        except ImagelintError as exc:
            return ("error", type(exc).__name__, str(exc))
        return (x.entries, sorted(x.contents.items()), sorted((k, repr(v)) for k, v in x.scans.items()),
                x.whiteouts, x.warnings)

    outcomes = []
    for native in (True, False):
        for window in (512, 4096, 1 << 20):
            with monkeypatch.context() as m:
                m.setattr(tarwalk, "WINDOW", window)
                m.setattr(tarwalk, "_native_scan", NATIVE_SCAN if native else None)
                outcomes.append(outcome())
    assert all(other == outcomes[0] for other in outcomes[1:])
    if captured < 1 << 20:
        assert outcomes[0][:2] == ("error", "LimitExceededError")
    else:
        entries, _, scans, whiteouts, warnings = outcomes[0]
        assert "app/pkg0/m0.py" in whiteouts and len([w for w in warnings if "cannot scan" in w]) == 4
        assert sum("app/pkg" in e.path for e in entries) == 60 and "app/big.py" in dict(scans)
        kinds = {e.path: e.kind for e in entries}
        assert kinds["app/lib/libx1.so"] == kinds["opt/tools/t0"] == "symlink" and kinds["app/lib/d5"] == "dir"
        assert "opt/d0" not in kinds and kinds["opt/h0"] == "hardlink"


@needs_native
def test_a_stream_that_ends_in_the_padding_after_a_member_taken_from_the_window_names_it(monkeypatch) -> None:
    """The window ends where the second source's data ends; the stream ends inside the padding after it.
    Taken from the window or walked, the truncation names that member."""
    tar = layer_tar([File("app/a.py", b"a = 1\n" * 10), File("app/b.py", b"b = 2\n" * 100)])
    second = tar.index(b"app/b.py")
    assert second == 1024  # (the first member: its header and one padded block of data)
    window = second + 512 + 600  # the window's end: the end of b.py's data
    cut = tar[: window + 100]  # inside the padding that follows
    outcome = _both(cut, monkeypatch, windows=(window,), spec=spec_of(("app/**", "scan", 0, "t"), scanners={"t": _Choosy}))
    assert outcome[:2] == ("error", "ImageFormatError") and "'app/b.py' claims more data" in outcome[2], outcome
