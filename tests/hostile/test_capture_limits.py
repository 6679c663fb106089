"""Files past a capture limit are never skipped in silence (issue #14, #16).

Scripts and DeepStream configs are read as streams, so a GPU index hidden behind padding is
still found, at its line. What is still not read (a followed file that is neither a script
nor a config by its first lines, a script's text past 1 MiB) is a visible note and the
result is ``complete: false``. Each test runs the installed ``imagelint check`` on a real
OCI layout, in a child process. (Peak memory is the benchmark's to measure: a child's ru_maxrss
starts from its forking parent's, so a large pytest process would make any bound here flaky.)
"""

from __future__ import annotations

import json

from tests.hostile.cli import run_cli
from tests.support.imagebuilder import File, ImageSpec, LayerSpec, write_oci_layout

MiB = 1 << 20
CHECK = ("--driver", "550.54.15", "--gpu", "T4", "--format", "json", "--no-cache")


def _padding(size: int) -> bytes:
    line = b"# " + b"-" * 77 + b"\n"
    return line * (size // len(line))


def _check(tmp_path, spec: ImageSpec) -> tuple[dict, object]:
    layout = write_oci_layout(tmp_path / "img", {"latest": spec.build()})
    run = run_cli("check", f"oci-dir:{layout}", *CHECK, timeout=120)
    assert "Traceback" not in run.output, run.output
    # (R550 is past end of life: that finding is the target's, on a result of its own)
    [result] = [r for r in json.loads(run.stdout)["results"] if r["image"]["kind"] == "image"]
    return result, run


def _located(result: dict, rule: str) -> list[tuple[str, int]]:
    return [(f["location"].get("path"), f["location"].get("line")) for f in result["findings"] if f["rule"] == rule]


def test_an_entrypoint_padded_past_256_kib_still_shows_its_cuda_visible_devices(tmp_path) -> None:
    pad = _padding(300 * 1024)
    script = b"#!/bin/sh\n" + pad + b"export CUDA_VISIBLE_DEVICES=3\nexec \"$@\"\n"
    line = script[: script.index(b"export CUDA")].count(b"\n") + 1
    spec = ImageSpec(layers=[LayerSpec([File("usr/local/bin/entrypoint.sh", script, 0o755)], "gzip")],
                     entrypoint=["/usr/local/bin/entrypoint.sh"], cmd=["python3"])
    result, run = _check(tmp_path, spec)
    assert run.returncode == 1, run.output
    assert ("usr/local/bin/entrypoint.sh", line) in _located(result, "IL301")
    assert result["complete"] is True


def test_a_deepstream_config_past_128_kib_still_shows_its_gpu_id(tmp_path) -> None:
    config = b"[application]\nenable-perf-measurement=1\n" + _padding(200 * 1024) + b"[primary-gie]\ngpu-id=1\n"
    line = config.count(b"\n")
    unreferenced = b"[sink0]\n" + _padding(150 * 1024) + b"gpu-id=2\n"
    spec = ImageSpec(layers=[LayerSpec([
        File("app/run.sh", b"#!/bin/sh\nexec deepstream-app -c /app/config.txt\n", 0o755),
        File("app/config.txt", config),
        File("opt/other/unused.txt", unreferenced),
    ], "gzip")], entrypoint=["/app/run.sh"])
    result, run = _check(tmp_path, spec)
    assert run.returncode == 1, run.output
    located = _located(result, "IL302")
    assert ("app/config.txt", line) in located
    assert ("opt/other/unused.txt", unreferenced.count(b"\n")) in located
    assert result["complete"] is True


def test_what_is_still_not_read_is_a_note_and_complete_false(tmp_path) -> None:
    # A followed file that is neither a script nor a config by its first 4 KiB is not read on.
    labels = b"person\ncar\n" * 1000 + b"gpu-id=1\n"
    # A script whose text is over 1 MiB: its commands past 1 MiB are not followed (its settings are).
    big = b"#!/bin/sh\n" + _padding(int(1.2 * MiB)) + b"export CUDA_VISIBLE_DEVICES=2\n. /opt/late.sh\n"
    spec = ImageSpec(layers=[LayerSpec([
        File("workspace/train.sh", b"#!/bin/sh\npython3 train.py --labels /opt/data/labels.txt\n. /opt/big.sh\n"),
        File("opt/data/labels.txt", labels),
        File("opt/big.sh", big),
        File("opt/late.sh", b"export NVIDIA_VISIBLE_DEVICES=1\n"),
    ], "gzip")], entrypoint=["/bin/sh", "/workspace/train.sh"])
    result, run = _check(tmp_path, spec)
    assert result["complete"] is False
    notices = "\n".join(result["notices"])
    assert "'/opt/data/labels.txt': not read past byte 4096" in notices, notices
    assert "'/opt/big.sh': script text kept only up to line" in notices, notices
    assert ("opt/big.sh", big.count(b"\n") - 1) in _located(result, "IL301")  # the setting is still found
    text = run_cli("check", f"oci-dir:{tmp_path / 'img'}", *CHECK[:-3], "--no-cache")
    assert "note: '/opt/data/labels.txt': not read past" in text.stdout, text.stdout
    assert "layers were not read" not in text.stdout


def test_a_cuda_version_file_past_its_capture_limit_is_a_note_and_complete_false(tmp_path) -> None:
    padded = b'{"cuda": {"name": "CUDA SDK", "version": "12.4.1"}, "pad": "' + b"x" * (300 * 1024) + b'"}'
    spec = ImageSpec(layers=[LayerSpec([File("usr/local/cuda-12.4/version.json", padded)], "gzip")],
                     entrypoint=["/bin/true"])
    result, run = _check(tmp_path, spec)
    assert result["complete"] is False
    assert "'/usr/local/cuda-12.4/version.json': over its capture limit" in "\n".join(result["notices"])
