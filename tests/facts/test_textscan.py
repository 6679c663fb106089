"""The text-facts scanner: the same result however the stream is cut, and what the whole-text functions find."""

from __future__ import annotations

import os
import random
import re

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from imagelint.facts import gpuindex, textscan
from imagelint.facts.textscan import TextFactsScanner, scan_bytes

SAMPLES = {
    "app/run.sh": b"#!/bin/sh\nexport CUDA_VISIBLE_DEVICES=1\r\n# CUDA_VISIBLE_DEVICES=9\nexec deepstream-app -c x.txt\n",
    "app/cr.sh": b"a=1\rexport CUDA_VISIBLE_DEVICES=2\r\x0bexport NVIDIA_VISIBLE_DEVICES=3\x0c\n",
    "app/u.sh": "x\u2028export CUDA_VISIBLE_DEVICES=4\u0085--gpus 2\n".encode() + b"\xff\xfe\xc3\nCUDA_VISIBLE_DEVICES=5\n",
    "opt/ds/config.txt": b"# comment\n\n[primary-gie]\ngpu-id=1\nconfig-file=pgie.txt\n;gpu-id=7\n" + b"k=v\n" * 3000
                         + b"[sink0]\ngpu_id=2\nll-config-file = \"t.yml\" # x\n",
    "opt/ds/app.yml": b"application:\n  x: 1\n" + b"  k: v\n" * 2000 + b"primary-gie:\n  gpu-id: 3\n  config-file: p.yml\n",
    "workspace/t.py": b"import torch\n" + b"x = 1\n" * 5000 + b"torch.cuda.set_device(1)\nimport pyds\nx.to('cuda:2')\n",
    "app/notes": b"plain text " * 1000 + b"\nCUDA_VISIBLE_DEVICES=6\n",
    "app/noeol.cfg": b"[g]\ngpu-id=4",
}


def _fed(path: str, data: bytes, cuts: list[int]) -> dict:
    scanner = TextFactsScanner()
    scanner.begin(path, len(data))
    pos = 0
    for cut in cuts + [len(data)]:
        if scanner.skippable():
            break
        scanner.feed(data[pos:cut])
        pos = cut
    return scanner.result()


@pytest.mark.parametrize("path", sorted(SAMPLES))
def test_any_cutting_of_the_stream_gives_the_same_result(path: str) -> None:
    data = SAMPLES[path]
    whole = scan_bytes(path, data)
    rng = random.Random(path)
    for step in (1, 3, 511, 4095, 4096, 4097, 65536):
        assert _fed(path, data, list(range(step, len(data), step))) == whole, step
    for _ in range(5):
        cuts = sorted(rng.sample(range(1, len(data)), min(40, len(data) - 1)))
        assert _fed(path, data, cuts) == whole


_WHOLE_CASES = {
    **SAMPLES,
    "app/empty": b"",
    "app/bin.dat": b"\x00" * 10,
    "opt/data.txt": b"k=v\n" * 2000,              # a config extension whose first real line is no group
    "opt/head.cfg": b"# c\n" * 1200 + b"[g]\ngpu-id=1\n",  # the first real line after the sniff
    "app/short.sh": b"#!/bin/sh\nexport CUDA_VISIBLE_DEVICES=0",
    "app/x.yaml": b"---\n%YAML 1.2\nsource0:\n  gpu-id: 1\n",
    # No keyword anywhere: the C pass alone settles these (a header, a source, bad UTF-8)...
    "app/include/ops.h": b"#pragma once\n// export CUDA_VISIBLE=0\nint f(int);\n" * 50,
    "app/model.py": b"import numpy as np\n\ndef f(x):\n    return x + 1\n" * 40,
    "app/bad.py": b"x = '\xe2\x82\xff'\ny = 2",
    # ... but not these: a keyword after bytes that are not UTF-8, a script, a pending config.
    "app/bad2.py": b"x = '\xe2\x82cuda:1'\n",
    "app/start": b"exec python3 main.py\n",
    "opt/late.cfg": b"# c\n" * 1100 + b"k=v\n",
    # Hit lines found in the bytes and decoded alone: settings on the first and the last line (no
    # "\n" after it), bad UTF-8 and other scripts beside a keyword, a "#" inside quotes, an INI id in Python.
    "app/train.py": (b"os.environ['CUDA_VISIBLE_DEVICES'] = '1'  # was 0\n\xff\xfe caf\xc3\xa9\n"
                     b"x = \"a#b\"; torch.cuda.set_device(2)\n" + b"pass\n" * 300 + b"cfg = 'gpu-id=3'\ndev = 'cuda:4'"),
    "app/kernels.h": b"// gpu\n#include <cuda_runtime.h>\n" + "\u00e9\u2013 cuda\n".encode() * 3,
    "app/pipeline.yaml": b"primary-gie:\n  config-file: pgie.txt\n  gpu-id: 1\n",
    # ... and left to the scanner, which cuts lines as str.splitlines() does: other line breaks.
    "app/crlf.py": b"import torch\r\ntorch.cuda.set_device(1)\r\n",
    "app/nel.py": "a = 1\u0085torch.cuda.set_device(1)\n".encode(),
    "app/ls.py": "a = 1\u2028b = 'cuda:2'\n".encode(),
    "app/vt.py": b"a = 1\x0bb = 'cuda:2'\n",
}


@pytest.mark.parametrize("path", sorted(_WHOLE_CASES))
def test_scan_whole_is_the_scanner_fed_the_whole_member(path: str) -> None:
    """The reader's one call for a member it holds whole gives the fed scanner's result and size."""
    data = _WHOLE_CASES[path]
    scanner = TextFactsScanner()
    scanner.begin(path, len(data))
    if data:
        scanner.feed(data)
    expected = (scanner.result(), scanner.held_bytes())
    assert TextFactsScanner.scan_whole(path, len(data), data) == expected
    assert expected[0] == scan_bytes(path, data)


_NAMES = ["run", "x.py", "X.PY", ".py", "..py", "a.b.yml", "c.YAML", ".yaml", "d.txt", "e.Conf", "f.ini", "g.cfg",
          "h.sh", "i.bash", "j.h", "k.cpp", ".hidden", "l.", "m.tar.gz", "n.Py", "o.pyc"]
_HEADS = [b"", b"#!/usr/bin/env python3\n", b"#!/bin/sh\n", b"# comment\n\n", b"[property]\n", b"key=value\n",
          b"application:\n", b"---\n", b"\x00", b"x = 1\n", b"torch.cuda.set_device(1)\n", b"gpu-id=1\n"]


@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.sampled_from(["app/", "app/sub/", "opt/cfg/", "", "app/a.d/"]), st.sampled_from(_NAMES),
       st.lists(st.sampled_from(_HEADS), max_size=4), st.integers(0, 6000))
def test_scan_whole_settles_as_the_scanner_does_whatever_the_name(directory: str, name: str, heads: list[bytes],
                                                                  filler: int) -> None:
    """The one-pass settling of a whole member (extension, shebang, config verdict, language) gives
    the fed scanner's result for every kind of name: dot files, upper-case and double extensions,
    a config extension past the sniff, a shebang over an extension."""
    path = directory + name
    data = b"".join(heads) + b"y = 2\n" * (filler // 6)
    scanner = TextFactsScanner()
    scanner.begin(path, len(data))
    if data:
        scanner.feed(data)
    assert TextFactsScanner.scan_whole(path, len(data), data) == (scanner.result(), scanner.held_bytes())


def test_a_whole_member_without_a_keyword_reaches_no_python_line_scan(monkeypatch) -> None:
    """A source file holding no keyword is settled by the C pass: nothing decoded, counted or matched."""
    def no_line_scan(*args, **kwargs):
        raise AssertionError("the line scan ran")

    monkeypatch.setattr(textscan.TextFactsScanner, "_lines", no_line_scan)
    data = _WHOLE_CASES["app/model.py"]
    assert TextFactsScanner.scan_whole("app/model.py", len(data), data) == ({"text": 1, "lang": gpuindex.PYTHON}, 0)


def test_a_file_with_a_keyword_has_only_its_hit_lines_decoded(monkeypatch) -> None:
    """Its hit lines are found in its bytes and decoded alone: the whole text is never decoded and
    searched, unless lines break otherwise than at "\n" (then cut as str.splitlines() cuts them)."""
    def no_text_search(*args, **kwargs):
        raise AssertionError("the decoded text was searched")

    monkeypatch.setattr(gpuindex, "hit_lines", no_text_search)
    data = _WHOLE_CASES["app/train.py"]
    result, _ = TextFactsScanner.scan_whole("app/train.py", len(data), data)
    assert [item[1] for item in result["s"]] == ["1", "2", "cuda:4"]
    assert scan_bytes("app/train.py", data) == result  # the same path when the member is fed in chunks
    with pytest.raises(AssertionError, match="the decoded text was searched"):
        TextFactsScanner.scan_whole("app/crlf.py", len(_WHOLE_CASES["app/crlf.py"]), _WHOLE_CASES["app/crlf.py"])


def test_newline_count_is_the_lines_of_bytes_whose_only_break_is_a_newline(monkeypatch) -> None:
    """In C and in Python: the "\\n"s of bytes whose decoded text holds no other break str.splitlines()
    knows, else -1; and the bytes tell that exactly when the decoded text does."""
    rng = random.Random(85)
    pieces = [b"\n", b"a", b" ", b"\r", b"\r\n", b"\x0b", b"\x0c", b"\x1c", b"\x1d", b"\x1e", b"\x1f", b"\x85", b"\xc2",
              b"\xc2\x85", b"\xc2\x84", b"\xe2", b"\xe2\x80", b"\xe2\x80\xa8", b"\xe2\x80\xa9", b"\xe2\x80\xaa",
              b"\xc3\xa9", b"\xff", b"\xf0\x9f\x98", b"x" * 17]
    cases = [b"".join(rng.choice(pieces) for _ in range(rng.randint(0, 30))) for _ in range(4000)]
    for data in cases:
        other = gpuindex.has_other_breaks(data)
        assert other == gpuindex.has_other_breaks(data.decode("utf-8", "replace")), data
    for native in (True, False) if gpuindex.NATIVE else (False,):
        with monkeypatch.context() as m:
            if not native:
                m.setattr(gpuindex, "_native_newlines", None)
            for data in cases:
                expected = -1 if gpuindex.has_other_breaks(data) else data.count(b"\n")
                assert gpuindex.newline_count(data) == expected, data


def test_newlines_are_counted_right_past_many_blocks() -> None:
    """The C counts add up 16-byte blocks in runs of at most 255: texts around and past those sizes."""
    rng = random.Random(255)
    for size in (0, 15, 16, 17, 255 * 16 - 1, 255 * 16, 255 * 16 + 17, 3 * 255 * 16 + 5, 200_000):
        data = bytes(rng.choice(b"ab\n") for _ in range(size))
        assert gpuindex.newline_count(data) == data.count(b"\n"), size
        # The line number of a hit after them (the keyword search counts the newlines before it).
        assert gpuindex.byte_hit_lines(data + b"pyds") == [(data.count(b"\n") + 1, data[data.rfind(b"\n") + 1 :].decode() + "pyds")]


def test_hit_lines_found_in_the_bytes_are_those_of_the_decoded_text(monkeypatch) -> None:
    """Whatever the bytes around them (bad UTF-8, every line break splitlines() knows, quotes and
    comments, the member whole or fed in pieces): the results of the byte search are those of the
    search in the decoded text (what a batch with another line break gets), with the C search and
    with the Python one."""
    rng = random.Random(2712)
    pieces = [b"\n", b"\n", b"\n", b"x = 1", b"# note", b"'#'", b"\"", b"\xff", b"\xe2\x82", b"\xc3\xa9", b"\xc2\x85",
              b"\xe2\x80\xa8", b"\r\n", b"\r", b"\x0c", b" ", b"CUDA_VISIBLE_DEVICES=1", b"torch.cuda.set_device(3)",
              b"'cuda:2'", b"gpu-id=1", b"gpu_id: 2", b"config-file=a.txt", b"import pyds", b"h264_nvenc", b"--gpus 2",
              b"cud", b"gp", b"p" * 70_000]
    paths = ["app/a.py", "app/b.h", "app/c.yaml", "app/d.cc", "app/e.txt", "app/run.sh", "app/f"]
    cases = [(rng.choice(paths), b"".join(rng.choice(pieces) for _ in range(rng.randint(0, 14)))) for _ in range(1500)]

    def results() -> list[object]:
        out: list[object] = []
        for path, data in cases:
            out.append(TextFactsScanner.scan_whole(path, len(data), data))
            out.append(scan_bytes(path, data))
        return out

    for native in (True, False) if gpuindex.NATIVE else (False,):
        with monkeypatch.context() as m:
            if not native:
                m.setattr(gpuindex, "_native_lines", None)
                m.setattr(gpuindex, "_native_newlines", None)
            by_bytes = results()
            m.setattr(gpuindex, "newline_count", lambda data: -1)  # every batch decoded and searched whole
            assert results() == by_bytes


def _text_holds_keyword(text: str) -> bool:
    """The reference: does ``text`` hold one of the keywords (a line without any cannot match)?"""
    return any(keyword in text for keyword in gpuindex.KEYWORDS)


def test_holds_keyword_on_bytes_is_a_keyword_in_their_text(monkeypatch) -> None:
    """Raw bytes hold a keyword exactly when their UTF-8 text (invalid bytes replaced) does, with the C
    search and with the Python one."""
    rng = random.Random(27)
    pieces = [k.encode() for k in gpuindex.KEYWORDS] + [b"\xe2\x82", b"\xff", b"\xc3", b"\xf0\x9f", b"cud", b"gp",
                                                        b"\n", b"x", b"\xc3\xa9", b"\x00"]
    cases = [b"".join(rng.choice(pieces) for _ in range(rng.randint(0, 6))) for _ in range(3000)]
    for native in (True, False) if gpuindex.NATIVE else (False,):
        with monkeypatch.context() as m:
            if not native:
                m.setattr(gpuindex, "_native_lines", None)
            for data in cases:
                assert gpuindex.holds_keyword(data) == _text_holds_keyword(data.decode("utf-8", "replace")), data


@pytest.mark.parametrize("path", sorted(SAMPLES))
def test_the_result_is_what_the_whole_text_functions_find(path: str) -> None:
    data = SAMPLES[path]
    text = data.decode("utf-8", "replace")
    lang = gpuindex.language_of(path, data)
    got = scan_bytes(path, data)
    assert got["text"] == 1 and got["lang"] == lang and "partial" not in got
    assert got.get("s", []) == [[m.kind, m.value, m.text, m.line] for m in gpuindex.find_gpu_settings(text, lang)]
    assert got.get("n", []) == [list(n) for n in gpuindex.find_capability_needs(text, lang)]
    if got.get("sh") is not None:
        assert got["sh"] == text


def test_every_pattern_example_holds_a_keyword() -> None:
    lines = ["export CUDA_VISIBLE_DEVICES=1", "NVIDIA_VISIBLE_DEVICES=2", "os.environ['CUDA_VISIBLE_DEVICES'] = '1'",
             "gpu-id=1", "gpu_id: 2", "--gpu-id 1", "--gpus 2", "--cuda-device 1", "--device-id 3", "--device cuda:1",
             "torch.cuda.set_device(1)", "cuda.set_device(2)", "torch.device('cuda', 1)", "'cuda:3'", "config-file=x",
             "ll-config-file=y", "config-file-path: z", "deepstream-app -c a", "nvv4l2decoder", "h264_nvenc",
             "h264_cuvid", "-hwaccel nvdec", "import PyNvVideoCodec", "import pyds", "__GLX_VENDOR_LIBRARY_NAME=nvidia"]
    for line in lines:
        hit = any(p.regex.search(line) for p in gpuindex.INDEX_PATTERNS) or any(
            p.regex.search(line) for p in gpuindex.CAPABILITY_PATTERNS) or textscan.DEEPSTREAM_FILE_KEYS.match(line)
        assert hit, line
        assert _text_holds_keyword(line), line
        assert gpuindex.hit_lines(line) == [(1, line)], line
    assert not _text_holds_keyword("import numpy as np\nx = [1, 2]\n")
    # What an ML source tree is full of, and no pattern matches: not handed to Python.
    for line in ["x = x.cuda()", "if torch.cuda.is_available():", "gpu_count = 2", "def to(self, device: torch.device):",
                 "# run on the GPU", "#include <cuda_runtime.h>", "device = 'cuda'"]:
        assert not _text_holds_keyword(line), line


_NEEDLED_PATTERNS = [(p.regex, p.needles) for p in gpuindex.INDEX_PATTERNS] + [
    (c.regex, c.needles) for c in gpuindex.CAPABILITY_PATTERNS] + [(textscan.DEEPSTREAM_FILE_KEYS, ("config-file",))]


@pytest.mark.parametrize("index", range(len(_NEEDLED_PATTERNS)))
@settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data())
def test_every_match_of_a_pattern_holds_one_of_its_needles(index: int, data) -> None:
    """Each pattern's needles are in every match of it (a line without them is not searched, and
    they are the keywords that pick the lines Python sees at all): on texts built from the pattern."""
    regex, needles = _NEEDLED_PATTERNS[index]
    compiled = re.compile(regex.pattern, regex.flags)
    text = data.draw(st.from_regex(compiled, fullmatch=False))
    found = list(compiled.finditer(text))
    assert found  # from_regex builds texts the pattern matches
    for m in found:
        assert any(needle in m.group(0) for needle in needles), (compiled.pattern, text)
        assert any(keyword in m.group(0) for keyword in gpuindex.KEYWORDS), (compiled.pattern, text)


def test_binary_partial_and_config_decisions() -> None:
    assert scan_bytes("app/model.bin", b"\x7fELF\x00\x01" + b"gpu-id=1\n" * 10) == {"text": 0}
    cmake = b"cmake_minimum_required(VERSION 3.18)\n" * 200 + b"[x]\ngpu-id=1\n"
    got = scan_bytes("opt/src/CMakeLists.txt", cmake)
    assert got is textscan.NOT_A_CONFIG  # one shared value: thousands of data files cost next to nothing
    assert textscan.unread_note(got).startswith("not read past byte 4096: not a script or DeepStream config")
    padded = b"# c\n" * 3000 + b"; semicolon comment\n\n[property]\n" + b"x=1\n" * 2000 + b"gpu-id=2\n"
    got = scan_bytes("opt/ds/pgie.txt", padded)
    assert "partial" not in got and got["u"] == [["2", "gpu-id=2", padded.count(b"\n")]]
    small = b"key=1\n[g]\ngpu-id=3\n"  # no group first, but the whole file is within the sniff
    assert scan_bytes("opt/x.conf", small)["u"] == [["3", "gpu-id=3", 3]]
    yml = b"foo: 1\n" * 10 + b"property:\n" + b"  k: v\n" * 1000 + b"  gpu-id: 1\n"
    assert scan_bytes("opt/x.yml", yml)["s"][0][:2] == ["gpu-id", "1"]
    assert scan_bytes("opt/y.yml", b"foo: 1\n" * 1000) is textscan.NOT_A_CONFIG
    assert textscan.unread_note(scan_bytes("opt/x.yml", yml)) is None


def test_caps_are_notes_not_silence(monkeypatch) -> None:
    monkeypatch.setattr(textscan, "MAX_SCRIPT_TEXT", 1000)
    monkeypatch.setattr(textscan, "MAX_LINE", 5000)
    script = b"#!/bin/sh\n" + b"echo hi\n" * 200 + b"export CUDA_VISIBLE_DEVICES=1\n"
    got = scan_bytes("app/s.sh", script)
    assert got["partial"] is True and len(got["sh"]) <= 1000 and "commands after it are not followed" in got["notes"][0]
    assert got["s"] == [["cuda-visible-devices", "1", "CUDA_VISIBLE_DEVICES=1", 202]]
    monkeypatch.setattr(textscan, "MAX_SCRIPT_TEXT", 1 << 20)
    long_line = b"#!/bin/sh\nx=" + b"y" * 12000 + b" CUDA_VISIBLE_DEVICES=2\nCUDA_VISIBLE_DEVICES=3\n"
    got = _fed("app/l.sh", long_line, list(range(4096, len(long_line), 1000)))
    assert got["partial"] is True and [n for n in got["notes"] if "longer than" in n] == got["notes"]
    assert [s[1:] for s in got["s"]] == [["2", "CUDA_VISIBLE_DEVICES=2", 2], ["3", "CUDA_VISIBLE_DEVICES=3", 3]]
    monkeypatch.setattr(textscan, "MAX_SCAN_BYTES", 3000)
    got = _fed("app/big.sh", b"#!/bin/sh\n" + b"#\n" * 4000 + b"CUDA_VISIBLE_DEVICES=1\n", [4096, 8192])
    assert got["partial"] is True and "scan limit" in got["notes"][-1]


_LINE_PIECES = [b"", b"   ", b"# comment", b"; note", b"[property]", b"  [sink0]  ", b"[]", b"[a]b", b"gpu-id=1",
                b"alpha beta", b"primary-gie:", b"---", b"%YAML 1.2", b"\xff\xfe", "caf\u00e9".encode(), b"\x85x",
                "a\u2028[g]".encode(), b"x\ry", b"\x0b", b"\x1c[g]", b"\x1f", b"\t", b"[g]\r", b"#!/bin/sh",
                b"[prop", b"  [si", b"[", b"[a]"]


def _random_head(rng: random.Random) -> bytes:
    lines = [rng.choice(_LINE_PIECES) for _ in range(rng.randint(0, 8))]
    return b"\n".join(lines) + rng.choice([b"", b"\n", b"\r\n"])


@pytest.mark.parametrize("ext", ["txt", "cfg", "ini", "conf", "yml", "yaml"])
def test_the_head_verdict_decoding_line_by_line_is_the_whole_heads_verdict(ext: str) -> None:
    rng = random.Random(ext)
    for _ in range(3000):
        head = _random_head(rng)
        want = textscan._config_verdict(head.decode("utf-8", "replace"), ext, cut=True)
        assert textscan._head_config_verdict(head, ext) == want, head


def test_decide_head_gives_the_scanners_result_or_leaves_it_to_the_scanner() -> None:
    """Whatever the head: a result from ``decide_head`` is the scanner's on the whole file, and
    None only when the scanner reads on (its result is then neither BINARY nor NOT_A_CONFIG)."""
    rng = random.Random(16)
    tail = b"more words here\n" * 400
    for i in range(4000):
        path = f"opt/d/{i}." + rng.choice(["txt", "cfg", "yaml", "yml", "ini", "conf", "sh", "py", "json", ""])
        head = _random_head(rng)
        if rng.random() < 0.1:
            head = head[: rng.randint(0, len(head))] + b"\x00" + head
        data = head + (tail if rng.random() < 0.7 else b"")
        first = data[: textscan.SNIFF_BYTES]
        got = textscan.decide_head(path, len(data), first)
        whole = scan_bytes(path, data)
        if got is not None:
            assert got is whole or got == whole, (path, data[:200])
            assert got is textscan.BINARY or got is textscan.NOT_A_CONFIG
        else:
            assert whole != textscan.BINARY and whole != textscan.NOT_A_CONFIG, (path, data[:200])
    # Not the whole sniff (and not the whole member): never decided on.
    assert textscan.decide_head("opt/x.txt", 10_000, b"\x00" * 100) is None


@pytest.mark.parametrize("pad, first, sep", [
    (4093, b"[application]", b"\n"),  # the group line starts 3 bytes before the sniff's end
    (4095, b"[application]", b"\n"),  # ... and 1 byte before it
    (4000, b"   [property]", b"\n"),  # indented, cut inside
    (4093, b"[application]", b"\r\n"),  # the whole-head path (another line break in the head)
])
def test_a_first_real_line_cut_by_the_sniff_is_decided_whole(pad: int, first: bytes, sep: bytes) -> None:
    """A config whose header comments run up to the 4 KiB sniff: its [group] line, cut there, is
    not judged on its first bytes (it was: "[a" is no group, and the gpu-id was never found)."""
    data = b"#" * pad + sep + first + sep + b"gpu-id=2" + sep + b"batch-size=1" + sep + b"#" * 5000 + sep
    whole = scan_bytes("/opt/app/config.txt", data)
    assert whole.get("u") == [["2", "gpu-id=2", 3]] and "unread_from" not in whole, whole
    assert textscan.decide_head("/opt/app/config.txt", len(data), data[: textscan.SNIFF_BYTES]) is None
    for cut in (1, 7, 4096, 4097, 65536):
        scanner = TextFactsScanner()
        scanner.begin("/opt/app/config.txt", len(data))
        for i in range(0, len(data), cut):
            scanner.feed(data[i : i + cut])
        assert scanner.result() == whole, cut


@pytest.mark.parametrize("cut_line", [b"batch-size=1", b"gpu-id=", b"[x] trailing"])
def test_a_cut_first_line_that_cannot_become_a_group_still_decides_at_once(cut_line: bytes) -> None:
    data = b"#" * (4096 - 5) + b"\n" + cut_line + b"\n" + b"x" * 5000
    assert textscan.decide_head("/opt/data/d.txt", len(data), data[: textscan.SNIFF_BYTES]) is textscan.NOT_A_CONFIG \
        or cut_line.startswith(b"[")


# Where a setting sits at an edge of the text: the facts are the same as line by line.
EDGE_SAMPLES = {
    # the last line, with no line break after it
    "app/last.sh": (b"#!/bin/sh\necho start\nexport CUDA_VISIBLE_DEVICES=3",
                    [["cuda-visible-devices", "3", "CUDA_VISIBLE_DEVICES=3", 3]]),
    # after a comment of 200,000 characters on one line, and after 5,000 comment lines
    "app/after-comment.sh": (b"#!/bin/sh\n# " + b"gpu " * 50_000 + b"\n" + b"# CUDA_VISIBLE_DEVICES=9\n" * 5000
                             + b"export CUDA_VISIBLE_DEVICES=1 # not 2\n",
                             [["cuda-visible-devices", "1", "CUDA_VISIBLE_DEVICES=1", 5003]]),
    # a "#" inside quotes is not a comment; one after them is
    "app/quotes.py": (b"x = 'a # b'; torch.cuda.set_device(2)  # torch.cuda.set_device(7)\n"
                      b"y = \"#\" + 'cuda:4'\nz = 'unclosed # \"cuda:5\"\n",
                      [["code", "2", "torch.cuda.set_device(2)", 1], ["code", "cuda:4", "'cuda:4'", 2],
                       ["code", "cuda:5", '"cuda:5"', 3]]),
    # CRLF line ends, and a lone CR inside the file
    "app/crlf.sh": (b"#!/bin/sh\r\necho a\r\nexport CUDA_VISIBLE_DEVICES=0\r\necho b\rexport NVIDIA_VISIBLE_DEVICES=1\r\n",
                    [["cuda-visible-devices", "0", "CUDA_VISIBLE_DEVICES=0", 3],
                     ["nvidia-visible-devices", "1", "NVIDIA_VISIBLE_DEVICES=1", 5]]),
    "opt/ds/crlf.txt": (b"[primary-gie]\r\nenable=1\r\ngpu-id=2\r\nconfig-file=pgie.txt\r\n",
                        [["gpu-id", "2", "gpu-id=2", 3]]),
    # very long lines around and holding a setting
    "app/long.sh": (b"#!/bin/sh\nx=" + b"y" * 300_000 + b"\nz=" + b"w" * 200_000 + b" CUDA_VISIBLE_DEVICES=4\n"
                    + b"a" * 100_000 + b"\n",
                    [["cuda-visible-devices", "4", "CUDA_VISIBLE_DEVICES=4", 3]]),
}


@pytest.mark.parametrize("path", sorted(EDGE_SAMPLES))
def test_settings_at_the_edges_of_a_text(path: str) -> None:
    data, want = EDGE_SAMPLES[path]
    got = scan_bytes(path, data)
    assert got.get("s", []) == want and "partial" not in got
    rng = random.Random(path)
    for _ in range(3):
        cuts = sorted(rng.sample(range(1, len(data)), min(30, len(data) - 1)))
        assert _fed(path, data, cuts) == got
    if path.endswith(".txt"):
        assert got["u"] == [["2", "gpu-id=2", 3]] and got["r"] == ["pgie.txt"]


def _reference_strip(line: str, language: str) -> str:
    """strip_comment's rule, character by character."""
    if language == gpuindex.INI and line.lstrip().startswith((";", "#")):
        return ""
    quote = None
    for i, ch in enumerate(line):
        if quote:
            if ch == quote:
                quote = None
        elif ch in "\"'":
            quote = ch
        elif ch == "#" and (i == 0 or line[i - 1].isspace()):
            return line[:i]
    return line


def test_comment_stripping_is_the_character_rule() -> None:
    rng = random.Random(27)
    alphabet = ["#", "'", '"', " ", "\t", "\u00a0", "a", ";", "x=1", "cuda:1"]
    for _ in range(20_000):
        line = "".join(rng.choice(alphabet) for _ in range(rng.randint(0, 12)))
        for language in (gpuindex.SHELL, gpuindex.INI):
            assert gpuindex.strip_comment(line, language) == _reference_strip(line, language), repr(line)


@pytest.mark.parametrize("search", ["native", "str.find"])
def test_hit_lines_give_what_every_line_gives(search: str, monkeypatch) -> None:
    """Searching only the lines that hold a keyword finds what matching every line does, numbered
    as str.splitlines() numbers lines, whatever the line breaks; in C and in Python alike."""
    if search == "str.find":
        monkeypatch.setattr(gpuindex, "_native_lines", None)
    elif not gpuindex.NATIVE:
        pytest.skip("the native keyword search is not built")
    rng = random.Random(2727)
    pieces = ["export CUDA_VISIBLE_DEVICES=1", "gpu-id=2", "x = 'cuda:3'  # cuda:9", "plain words", "",
              "--gpus 2", "import pyds", "# gpu-id=5", "a = \"#\"; torch.cuda.set_device(4)", "deepstream-app -c x"]
    breaks = ["\n", "\r\n", "\r", "\x0b", "\u2028", "\x85"]
    for _ in range(2000):
        text = "".join(rng.choice(pieces) + rng.choice(breaks) for _ in range(rng.randint(0, 8)))
        if rng.random() < 0.5:
            text += rng.choice(pieces)
        for language in (gpuindex.SHELL, gpuindex.PYTHON, gpuindex.INI, gpuindex.YAML):
            every = []
            for number, raw in enumerate(text.splitlines(), 7):
                every += gpuindex.settings_in_line(_reference_strip(raw, language), language, number)
            assert gpuindex.find_gpu_settings(text, language, 7) == every, repr(text)


def test_python_sees_only_the_lines_that_hold_a_keyword(monkeypatch) -> None:
    """The scanner hands Python (comment stripping, the patterns) only the lines that hold a
    keyword: a file of 30,000 lines with two such lines costs two lines of Python, not 30,000."""
    lines = [b"value_%d = compute(%d)  # a comment with 'quotes' and # signs\n" % (i, i) for i in range(30_000)]
    lines[12_000] = b"torch.cuda.set_device(1)\n"
    data = b"import torch\n" + b"".join(lines) + b"dev = 'cuda:2'\nif gpu_count > 1:\n    x = x.cuda()\n"
    calls = []
    real = gpuindex.strip_comment
    monkeypatch.setattr(gpuindex, "strip_comment", lambda line, language: calls.append(line) or real(line, language))
    scanner = TextFactsScanner()
    scanner.begin("app/train.py", len(data))
    for i in range(0, len(data), 1 << 16):
        scanner.feed(data[i : i + (1 << 16)])
    got = scanner.result()
    assert [s[:2] for s in got["s"]] == [["code", "1"], ["code", "cuda:2"]]
    keyword_lines = [line for line in data.decode().splitlines() if any(k in line for k in gpuindex.KEYWORDS)]
    assert len(keyword_lines) == 2  # not "gpu_count" nor "x.cuda()": no pattern can match them
    assert calls == keyword_lines and scanner.lines_matched == 2


def test_the_native_keyword_search_finds_what_the_python_search_finds() -> None:
    """``_hitscan.c`` against the ``str.find`` passes it stands in for, on strings of one, two
    and four bytes a character."""
    if os.environ.get("IMAGELINT_REQUIRE_NATIVE"):
        assert gpuindex.NATIVE, "imagelint/facts/_hitscan.c was not built (setup.py; a C compiler and Python headers)"
    if not gpuindex.NATIVE:
        pytest.skip("the native keyword search is not built")
    from imagelint.facts._hitscan import lines

    rng = random.Random(64)
    words = [*gpuindex.KEYWORDS, "gp", "cud", "--devic", "'cud", "gpu", "cuda", "x", " ", "é", "\xff", "#", "'", "\n", "\n", "\n",
             "\u2603", "\u0163", "\U0001f600", "\ufffd"]
    for _ in range(5000):
        text = "".join(rng.choice(words) for _ in range(rng.randint(0, 30)))
        flat = lines(text, gpuindex.KEYWORDS)
        native = [(1 + flat[i], text[flat[i + 1] : flat[i + 2]]) for i in range(0, len(flat), 3)]
        assert native == gpuindex._hit_lines_by_find(text, 1), repr(text)
    assert gpuindex.hit_lines("a\n\u2603 pyds\n") == [(2, "\u2603 pyds")]
    assert gpuindex.hit_lines("\U0001f600\ngpu-id\U0001f600") == [(2, "gpu-id\U0001f600")]
    assert gpuindex.hit_lines("\u0167pu-id \u0163yds") == []  # wide characters never start a match
    with pytest.raises(ValueError):
        lines("cuda", ())
    with pytest.raises(ValueError):
        lines("cuda", ("",))


def test_the_native_keyword_search_with_any_keywords_finds_the_lines_that_hold_one() -> None:
    """Keyword sets of every shape: one-character keywords and keywords whose rarest character is
    their last (the search then tries every anchor), and keywords with a character after it (one
    lookup of the pair that starts at each position rules most positions out first)."""
    if not gpuindex.NATIVE:
        pytest.skip("the native keyword search is not built")
    from imagelint.facts._hitscan import lines

    rng = random.Random(27)
    alphabet = "abqzXQ_-\n é\u2603"
    for _ in range(3000):
        keywords = tuple(dict.fromkeys("".join(rng.choice("abqzXQ_-") for _ in range(rng.randint(1, 4)))
                                       for _ in range(rng.randint(1, 4))))
        text = "".join(rng.choice(alphabet) for _ in range(rng.randint(0, 60)))
        flat = lines(text, keywords)
        found = [(flat[i], text[flat[i + 1] : flat[i + 2]]) for i in range(0, len(flat), 3)]
        expected = [(i, line) for i, line in enumerate(text.split("\n")) if any(k in line for k in keywords)]
        assert found == expected, (keywords, text)
        assert lines(text, keywords, True) == flat[:3], (keywords, text)  # the first hit line alone


def test_the_native_keyword_search_reads_bytes_and_many_anchors_as_one_byte_text() -> None:
    """One-byte text is searched 16 characters at a time (SSE2) with up to 16 distinct anchors, one at
    a time with more: both, on str and on bytes, over texts long enough for many blocks and a tail."""
    if not gpuindex.NATIVE:
        pytest.skip("the native keyword search is not built")
    from imagelint.facts._hitscan import lines

    rng = random.Random(16)
    letters = "abcdefghijklmnopqrstuvwxyzQX_-"
    for _ in range(1500):
        many = rng.random() < 0.5  # more than 16 distinct anchors: single characters of 20 kinds
        keywords = (tuple(rng.sample(letters, 20)) if many else
                    tuple(dict.fromkeys("".join(rng.choice(letters) for _ in range(rng.randint(1, 4)))
                                        for _ in range(rng.randint(1, 6)))))
        text = "".join(rng.choice(letters + "\n\n  ") for _ in range(rng.randint(0, 200)))
        expected = [(i, line) for i, line in enumerate(text.split("\n")) if any(k in line for k in keywords)]
        for given in (text, text.encode("ascii")):
            flat = lines(given, keywords)
            assert [(flat[i], text[flat[i + 1] : flat[i + 2]]) for i in range(0, len(flat), 3)] == expected, (keywords, text)
            assert lines(given, keywords, True) == flat[:3], (keywords, text)
