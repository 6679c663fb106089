"""The text-facts scanner: the same result however the stream is cut, and what the whole-text functions find."""

from __future__ import annotations

import random

import pytest

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
            r.search(line) for _, r in gpuindex.CAPABILITY_PATTERNS) or textscan.DEEPSTREAM_FILE_KEYS.match(line)
        assert hit, line
        assert gpuindex.may_match(line), line
    assert not gpuindex.may_match("import numpy as np\nx = [1, 2]\n")


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
