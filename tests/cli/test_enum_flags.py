"""Every enumerated flag value is read without regard to case, in every command (``--format JSON``,
``--fail-on ERROR``, ``audit -f JSON``, ``doctor --format JSON``); a wrong one is one line and exit 2."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.cli.test_check import imagelint, official_image
from tests.doctor.clusters import clone, healthy_state
from tests.support.fakekube import FakeKube
from tests.support.imagebuilder import write_oci_layout

DOCKERFILE = 'FROM nvidia/cuda:12.4.1-runtime-ubuntu22.04\nENV NVIDIA_VISIBLE_DEVICES=all\nCMD ["python3"]\n'
POOLS = '[[pool]]\nname = "t4"\ndriver = "550.54.15"\ngpus = ["T4"]\narch = "amd64"\n'


@pytest.fixture(scope="module")
def layout(tmp_path_factory) -> Path:
    work = tmp_path_factory.mktemp("enum-flags")
    write_oci_layout(work / "image", {"latest": official_image("12.4.1", "12.4.127")})
    (work / "Dockerfile").write_text(DOCKERFILE)
    (work / "pools.toml").write_text(POOLS)
    (work / "images.txt").write_text(f"oci-dir:{work / 'image'}\n")
    return work


@pytest.mark.parametrize("args", [
    ["lint", "Dockerfile", "--format", "JSON", "--fail-on", "INFO", "--color", "Never"],
    ["lint", "Dockerfile", "--format", "Json=out.json", "--fail-on", "Warning"],
    ["check", "oci-dir:image", "--target-file", "pools.toml", "--format", "JSON", "--fail-on", "ERROR", "--color", "NEVER"],
    ["inspect", "oci-dir:image", "--format", "JSON", "--config-only"],
    ["rules", "--format", "JSON"],
    ["explain", "IL101", "--format", "Markdown"],
    ["gpus", "T4", "--format", "JSON"],
    ["drivers", "550", "--format", "JSON"],
    ["matrix", "show", "--format", "JSON", "--section", "driver_branches"],
    ["cache", "info", "--format", "JSON"],
    ["audit", "--images", "images.txt", "--target-file", "pools.toml", "-f", "JSON"],
    ["audit", "--images", "images.txt", "--target-file", "pools.toml", "--format", "SARIF"],
], ids=lambda a: " ".join(a[:1] + [v for v in a if v.isupper() or v[:1].isupper()]))
def test_an_enumerated_value_in_any_case_is_accepted(layout, args) -> None:
    out = imagelint(*args, cwd=layout, env={"IMAGELINT_CACHE_DIR": str(layout / "cache")})
    assert out.returncode in (0, 1), (args, out.stderr)
    assert "must be one of" not in out.stderr and "must be" not in out.stderr


def test_audit_json_in_capitals_is_the_json_report_and_merges(layout, tmp_path) -> None:
    part = tmp_path / "part.json"
    out = imagelint("audit", "--images", "images.txt", "--target-file", "pools.toml", "-f", "JSON", "-o", str(part), "--shard", "0/1",
                    cwd=layout)
    assert out.returncode == 0, out.stderr
    assert json.loads(part.read_text())["schema"].startswith("imagelint")
    merged = imagelint("audit", "merge", str(part), "--format", "Text", cwd=layout)
    assert merged.returncode == 0, merged.stderr
    assert "t4" in merged.stdout


def test_doctor_format_in_capitals_is_the_json_report(tmp_path) -> None:
    kube = FakeKube(clone(healthy_state()), tmp_path, "enum-flags-bearer-token-0123456789").start()
    try:
        config = kube.write_kubeconfig(tmp_path / "kubeconfig")
        out = imagelint("doctor", "--cluster", "--kubeconfig", str(config), "--format", "JSON")
    finally:
        kube.stop()
    assert out.returncode == 0, out.stderr
    assert json.loads(out.stdout)["healthy"] is True


@pytest.mark.parametrize("args,flag", [
    (["lint", "Dockerfile", "--format", "yaml"], "--format"),
    (["lint", "Dockerfile", "--fail-on", "sometimes"], "--fail-on"),
    (["lint", "Dockerfile", "--color", "rainbow"], "--color"),
    (["audit", "--images", "images.txt", "--target-file", "pools.toml", "-f", "yaml"], "--format"),
    (["rules", "--format", "yaml"], "--format"),
])
def test_a_value_that_is_no_choice_is_one_line_and_exit_2(layout, args, flag) -> None:
    out = imagelint(*args, cwd=layout)
    assert out.returncode == 2
    assert out.stderr.startswith(f"imagelint: error: {flag} must be one of") and out.stderr.count("\n") == 1, out.stderr
