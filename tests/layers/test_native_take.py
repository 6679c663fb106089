"""The reader's native window loop (``_tarscan.take``) against ``_LayerCapture._take``, its reference.

Every layer here is extracted with the native loop and without it (``reader._native_take = None``:
each member through ``_take``), over windows of several sizes, so members straddle a window's end:
the extracts must be identical, entry and scan order included (the layer cache's encoding keeps
it). The members are what the loop settles itself (sources holding no keyword, data files with a
NUL in their first 4 KiB, links, directories, files no rule wants) and what it must leave to Python:
a keyword, a shebang, a config extension past the sniff, no extension, a dotfile named like an
extension, a script, a member past what is settled whole, a path seen before, a whiteout.
"""

from __future__ import annotations

import random

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from imagelint.errors import ImagelintError
from imagelint.facts import gpuindex, textscan
from imagelint.facts.capture import CAPTURE_SPEC
from imagelint.layers import reader, tarwalk
from imagelint.layers.reader import extract_layer
from tests.layers.helpers import blob_layer
from tests.support.imagebuilder import Dir, File, Hardlink, Symlink, layer_tar

NATIVE_TAKE = reader._native_take
needs_native = pytest.mark.skipif(NATIVE_TAKE is None or not gpuindex.NATIVE, reason="the native modules are not built")

SNIFF = textscan.SNIFF_BYTES
WHOLE = SNIFF + (1 << 16)  # the largest member the reader settles whole (first read + one scan chunk)
KEYWORD = gpuindex.KEYWORDS[0].encode()
EXTENSIONS = ["py", "PY", "Py", "txt", "TXT", "cfg", "conf", "ini", "yaml", "yml", "YML", "sh", "bash", "json", "md",
              "c", "cu", "h", "gz", "tar.gz", "", "ñ", "PY3"]


def _body(rng: random.Random) -> bytes:
    pick = rng.randrange(12)
    if pick == 0:
        return b"import os\n" * rng.randint(1, 50) + KEYWORD + b" = 1\n"  # a keyword: the scanner reads it
    if pick == 1:
        return b"a" * rng.randint(0, SNIFF - 1) + b"\0" + b"b" * rng.randint(0, 9000)  # a NUL in the sniff
    if pick == 2:
        return b"a" * SNIFF + b"\0" + b"x = 1\n" * rng.randint(0, 900)  # a NUL just past it
    if pick == 3:
        return rng.choice([b"#!/bin/sh\necho hi\n", b"#!/usr/bin/env python3\nprint(1)\n"]) * rng.randint(1, 400)
    if pick == 4:
        return b"[property]\nbatch-size=1\n" * rng.randint(1, 400)  # an INI group line first
    if pick == 5:
        return b"# c\n" * rng.randint(0, 2000) + b"k = v\n"  # comments, then a line (up to or past the sniff)
    if pick == 6:
        size = rng.choice([SNIFF - 1, SNIFF, SNIFF + 1, WHOLE - 1, WHOLE, WHOLE + 1])
        return (b"y = 2\n" * (size // 6 + 1))[:size]  # around the sniff and what is settled whole
    if pick == 7:
        return bytes(rng.randrange(1, 256) for _ in range(rng.randint(0, 3000)))  # no NUL, not UTF-8
    if pick == 8:
        return b""
    return b"x = 1\n" * rng.randint(0, 3000)  # a source holding no keyword: the common member


def _path(rng: random.Random, i: int) -> str:
    top = rng.choice(["app", "opt/nvidia", "usr/src/app", "workspace", "usr/lib/python3/dist-packages", "etc",
                      "usr/lib/x86_64-linux-gnu", "usr/local/cuda", "srv", "bin"])
    if rng.random() < 0.15:  # names a rule singles out by a prefix, suffix or infix of the base name
        leaf = rng.choice(["libcuda.so.1", "version.json", "METADATA", "libnvidia-ml.so.535.104", "x.so.2", "libcudart.so",
                           "libcudadebugger.so", "nvidia_cuda_runtime.py", "ld.so.conf", "libvdpau_nvidia.so"])
        return f"{top}/d{rng.randrange(4)}/{leaf}"
    ext = rng.choice(EXTENSIONS)
    leaf = rng.choice(["m", "run", "config", ".hidden", ".py", "x.", "ünï", "README", "lib"]) + f"{i}"
    return f"{top}/d{rng.randrange(4)}/{leaf}{'.' + ext if ext else ''}"


def _members(rng: random.Random) -> list:
    out: list = []
    paths: list[str] = []
    for i in range(rng.randint(1, 60)):
        kind = rng.random()
        path = rng.choice(paths) if paths and rng.random() < 0.08 else _path(rng, i)  # a path seen before
        if kind < 0.7:
            out.append(File(path, _body(rng)))
            paths.append(path)
        elif kind < 0.8:
            out.append(Symlink(path, rng.choice(["m0.py", "../x", "/usr/bin/env"])))
        elif kind < 0.85 and paths:
            out.append(Hardlink(path, rng.choice(paths)))
        elif kind < 0.93:
            out.append(Dir(path.rpartition("/")[0]))
        elif paths:
            parent, _, leaf = rng.choice(paths).rpartition("/")
            out.append(File(f"{parent}/.wh.{leaf}", b""))  # a whiteout of an earlier member
    return out


def _outcome(tar: bytes) -> object:
    try:
        x = extract_layer(blob_layer(0, tar, "none"), CAPTURE_SPEC)
    except ImagelintError as exc:
        return ("error", type(exc).__name__, str(exc))
    return (x.entries, list(x.scans.items()), sorted(x.contents.items()), sorted(x.heads.items()), x.truncated,
            x.whiteouts, x.opaque_dirs, x.warnings)


def _both(tar: bytes, monkeypatch, windows=(512, 4096, 9216, 1 << 20)) -> tuple[object, int]:
    """The outcome, the same with and without the native loop; and how many members the loop took."""
    took = 0

    def counting(*args):  # type: ignore[no-untyped-def]
        nonlocal took
        k = NATIVE_TAKE(*args)
        took += k
        return k

    outcomes = []
    for native in (True, False):
        for window in windows:
            with monkeypatch.context() as m:
                m.setattr(tarwalk, "WINDOW", window)
                m.setattr(reader, "_native_take", counting if native else None)
                outcomes.append(_outcome(tar))
    first = outcomes[0]
    for other in outcomes[1:]:
        assert other == first
    return first, took


@needs_native
@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(seed=st.integers(0, 100_000))
def test_random_layers_extract_identically_with_the_native_loop(seed: int, monkeypatch) -> None:
    _both(layer_tar(_members(random.Random(seed))), monkeypatch)


@needs_native
def test_an_application_tree_is_settled_by_the_native_loop_as_the_scanner_settles_it(monkeypatch) -> None:
    """Sources with no keyword are settled in C, each with the result the scanner gives it whole;
    the one with a keyword, the script and the config past the sniff go to the scanner."""
    files = [File(f"app/pkg{i % 5}/m{i}.py", b"x = %d\n" % i * (i * 53 % 700)) for i in range(300)]
    files += [File("app/pkg0/gpu.py", b'import os\nos.environ["CUDA_VISIBLE_DEVICES"] = "0"\n'), File("app/run.sh", b"#!/bin/sh\nexec x\n"),
              File("app/configs/big.txt", b"# c\n" * 2000 + b"[property]\ngpu-id=1\n"),
              File("app/data/blob.bin", b"\x7fELF\0\0" + b"z" * 9000), File("app/notes.TXT", b"hello\n")]
    # Names whose extension is not the text after their last dot (the scanner's own reading of them),
    # each a plain source: a dotfile named like an extension, a trailing dot, none, several, not ASCII.
    files += [File(f"app/edge/{name}", b"x = 1\n" * 40) for name in
              ("noext", ".py", ".hidden", ".profile", "..py", "x.", ".bashrc.d", "a.b.TXT", "ünï.PY", "dir.d/y.Yml", ".sh", "...")]
    (entries, scans, *_), took = _both(layer_tar(files), monkeypatch)
    assert took >= 300  # (with each window size: the sources, less the first of each window, which Python takes)
    data = {f.path: f.data for f in files}
    assert dict(scans) == {path: textscan.scan_bytes(path, data[path]) for path in data}
    assert dict(scans)["app/pkg0/gpu.py"]["s"][0][:2] == ["cuda-visible-devices", "0"]
    assert dict(scans)["app/data/blob.bin"] is textscan.BINARY and len(entries) == len(files)


@needs_native
def test_the_extensions_the_native_loop_remembers_are_bounded(monkeypatch) -> None:
    """A layer of thousands of distinct extensions (a hostile one) is read the same; the loop
    remembers at most 1,024 of them and leaves the members of the rest to Python."""
    tar = layer_tar([File(f"app/f{i}.e{i}", b"x\n") for i in range(1_500)])
    tables: list[dict] = []

    def keeping(items, first, window, base, context):  # type: ignore[no-untyped-def]
        settled = next(part for part in context if isinstance(part, list))  # [(rule, policy), ...]
        tables.extend(policy[5] for _, policy in settled)
        return NATIVE_TAKE(items, first, window, base, context)

    outcome, _ = _both(tar, monkeypatch, windows=(1 << 20,))
    with monkeypatch.context() as m:
        m.setattr(reader, "_native_take", keeping)
        assert _outcome(tar) == outcome
    assert tables and max(len(t) for t in tables) == 1_024


@needs_native
def test_the_native_loop_takes_nothing_it_cannot_read_and_fails_only_with_a_type_error() -> None:
    """Hostile arguments: members that are not scan() tuples, offsets outside the window or
    negative, a first index past the end or below zero; a context of the wrong shape."""
    entries: dict = {}
    scans: dict = {}
    context = (entries, scans, lambda path: None, None, [], reader.Entry, "file", "dir", "symlink", 0, "sha256:x", 1 << 20)
    window = memoryview(bytearray(4096))
    good = ("a/b.py", "a/b.py", "0", 10, 0o644, "", 0)
    assert NATIVE_TAKE([good], 0, window, 0, context) == 1 and entries == {} and scans == {}
    for bad in ([("a",)], [None], [("n", "a/c.py", "0", 10, 0o644, "", -512)], [("n", "a/c.py", "0", 10, 0o644, "", 1 << 40)],
                [("n", "a/c.py", "0", 1 << 62, 0o644, "", 0)], [("n", "a/c.py", "00", 1, 0, "", 0)],
                [("n", "a/c.py", "0", -1, 0, "", 0)], [("n", "a/c.py", "0", "1", 0, "", 0)], [("n", "", "0", 1, 0, "", 0)]):
        assert NATIVE_TAKE(bad, 0, window, 0, context) == 0, bad
    assert NATIVE_TAKE([good], 5, window, 0, context) == 0
    assert NATIVE_TAKE([good], -1, window, 0, context) == 0
    assert NATIVE_TAKE([good], 0, window, 1 << 20, context) == 0  # the window starts past the member
    with pytest.raises(TypeError):
        NATIVE_TAKE([good], 0, window, 0, context[:5])
    with pytest.raises(TypeError):
        NATIVE_TAKE([good], 0, window, 0, (None,) + context[1:])


@needs_native
def test_names_the_tar_scan_leaves_to_the_parser_are_settled_the_scanners_way_too(monkeypatch) -> None:
    """The native tar scan hands a name holding "/." to the parser, so dotfiles never reach the loop
    from a layer; handed to it anyway, each is settled as ``_take`` settles it (its extension is
    not the text after a leading dot)."""
    from imagelint.layers.limits import DEFAULT_LIMITS

    names = ["app/edge/noext", "app/edge/.hidden", "app/edge/.profile", "app/edge/..py", "app/edge/.x.TXT",
             "app/edge/...", "app/.bashrc", "app/edge/x."]
    body = b"x = 1\n" * 40
    window = bytearray()
    items = []
    for name in names:
        items.append((name, name, tarwalk.REGULAR, len(body), 0o644, "", len(window)))
        window += bytes(512) + body + bytes(-len(body) % 512)
    outcomes = []
    for native in (True, False):
        with monkeypatch.context() as m:
            m.setattr(reader, "_native_take", NATIVE_TAKE if native else None)
            capture = reader._LayerCapture(blob_layer(0, b"", "none"), CAPTURE_SPEC, DEFAULT_LIMITS, "layer 1")
            assert capture.add_in_window(items, 0, memoryview(window), 0) == len(names)
            outcomes.append((capture.entries, list(capture.scans.items())))
    assert outcomes[0] == outcomes[1]
    assert dict(outcomes[0][1]) == {name: textscan.scan_bytes(name, body) for name in names}


@needs_native
def test_the_native_loop_matches_by_shape_as_the_matcher_does(monkeypatch) -> None:
    """Once the matcher has decided a shape (top directory, extension), the loop decides a path of
    that shape by it without asking the matcher, except for a base name a rule singles out (a
    prefix, suffix or infix: libcuda.so*, version.json, *.so.*) or a shape the matcher cannot
    decide by shape: those are the matcher's. Each path comes after one of its shape."""
    from imagelint.layers import match as match_module

    members: list = []
    for top in ("usr/local/cuda", "usr/lib/x86_64-linux-gnu", "app", "opt/nvidia", "etc", "srv", "workspace"):
        for ext in ("json", "so", "2", "py", "txt", "sh", "conf", "cfg"):
            members.append(File(f"{top}/d/m.{ext}", b"x = 1\n"))
        members += [File(f"{top}/d/{name}", b"x = 1\n") for name in
                    ("version.json", "libcuda.so", "x.so.2", "libnvidia-ml.so", "ld.so.conf", "METADATA", "run", "libz.so")]
        members += [Dir(f"{top}/d/sub.{ext}") for ext in ("json", "so", "2", "py")] + [Dir(f"{top}/d/libcuda.so.d")]
    _both(layer_tar(members), monkeypatch)
    # A tree of sources, one shape: the matcher is asked for the first of them, the loop decides the rest.
    asked = 0
    plain_match = match_module.RuleMatcher.match

    def counting(self, path):  # type: ignore[no-untyped-def]
        nonlocal asked
        asked += 1
        return plain_match(self, path)

    monkeypatch.setattr(match_module.RuleMatcher, "match", counting)
    tree = layer_tar([File(f"app/pkg/m{i}.py", b"x = 1\n") for i in range(200)])
    asked = 0
    entries = _outcome(tree)[0]
    assert len(entries) == 200 and asked <= 4  # (the walker's first member, the loop's first of the shape)


@needs_native
def test_a_name_a_rule_singles_out_and_a_shape_the_matcher_cannot_decide_are_the_matchers(monkeypatch) -> None:
    """Rules of another spec: a prefix rule beside a catch-all text rule of the same top directory (its
    shape is decided; the name the prefix singles out is not of it), and a rule whose lead is deeper
    than its top directory (the shape is not decided: a directory of that shape is the matcher's)."""
    from tests.layers.helpers import spec_of

    spec = spec_of(("opt/**/special*", "record", 0), ("opt/**/*", "scan", 0, "t"),
                   ("usr/x/*/deep/**/*.txt", "record", 0), scanners={"t": textscan.TextFactsScanner})
    members = [File("opt/a/m.txt", b"x\n"), File("opt/a/n.txt", b"x\n"), File("opt/a/special.txt", b"x\n"),
               File("usr/x/a/deep/b/a.txt", b"x\n"), Dir("usr/x/a/sub.txt"), Dir("usr/x/a/deep/sub.txt"),
               File("usr/x/c.txt", b"x\n"), Dir("usr/x/b/more.txt")]
    tar = layer_tar(members)
    outcomes = []
    for native in (True, False):
        with monkeypatch.context() as m:
            m.setattr(reader, "_native_take", NATIVE_TAKE if native else None)
            x = extract_layer(blob_layer(0, tar, "none"), spec)
            outcomes.append((x.entries, list(x.scans.items())))
    assert outcomes[0] == outcomes[1]
    entries, scans = outcomes[0]
    paths = {e.path for e in entries}
    assert "opt/a/special.txt" not in dict(scans) and paths >= {"opt/a/special.txt", "usr/x/a/deep/sub.txt"}
    assert not {"usr/x/a/sub.txt", "usr/x/b/more.txt"} & paths
