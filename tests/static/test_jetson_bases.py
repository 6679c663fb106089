"""Jetson's L4T bases and DeepStream's homes in the base-image table: a ``FROM`` of an arm64-only
Jetson image aimed at an amd64 pool is IL402, not a silent pass, and the CUDA each carries comes
from its L4T release (or its tag)."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
from typer.testing import CliRunner

import imagelint.cli
from imagelint.cli import app
from imagelint.matrix import load_matrix
from imagelint.facts.known_images import image_cuda, image_platform
from tests.static.test_lint_cli import DEPLOYMENT

runner = CliRunner()


def lint_dockerfile(tmp_path: Path, text: str, *args: str) -> list[dict]:
    (tmp_path / "Dockerfile").write_text(text)
    old = os.getcwd()
    os.chdir(tmp_path)
    try:
        result = runner.invoke(app, ["lint", "Dockerfile", "--format", "json", *args], catch_exceptions=False)
    finally:
        os.chdir(old)
    assert result.exit_code in (0, 1), result.output
    return [f for r in json.loads(result.output)["results"] for f in r["findings"]]


@pytest.mark.parametrize("base", [
    "nvcr.io/nvidia/l4t-jetpack:r36.4.0",
    "nvcr.io/nvidia/l4t-base:r32.7.1",
    "nvcr.io/nvidia/l4t-pytorch:r35.2.1-pth2.0-py3",
    "nvcr.io/nvidia/l4t-cuda:12.2.12-runtime",
])
def test_a_jetson_base_on_an_amd64_pool_is_a_platform_mismatch(tmp_path: Path, base: str) -> None:
    dockerfile = f"FROM {base}\nRUN echo build\nCMD [\"python3\", \"app.py\"]\n"
    findings = lint_dockerfile(tmp_path, dockerfile, "--driver", "580.95.05", "--arch", "amd64")
    il402 = [f for f in findings if f["rule"] == "IL402"]
    assert len(il402) == 1 and "linux/arm64" in il402[0]["message"]
    assert not [f for f in lint_dockerfile(tmp_path, dockerfile, "--driver", "580.95.05", "--arch", "arm64")
                if f["rule"] == "IL402"]


def test_an_explicit_platform_and_other_bases_keep_their_own_answer(tmp_path: Path) -> None:
    pinned = "FROM --platform=linux/amd64 nvcr.io/nvidia/l4t-jetpack:r36.4.0\n"
    assert not [f for f in lint_dockerfile(tmp_path, pinned, "--driver", "580.95.05", "--arch", "amd64")
                if f["rule"] == "IL402"]
    multi_arch = "FROM nvidia/cuda:12.4.1-runtime-ubuntu22.04\n"
    assert not [f for f in lint_dockerfile(tmp_path, multi_arch, "--driver", "580.95.05", "--arch", "arm64")
                if f["rule"] == "IL402"]


def test_the_cuda_of_each_l4t_release_and_deepstreams_homes() -> None:
    m = load_matrix()
    cases = {
        "nvcr.io/nvidia/l4t-jetpack:r36.4.0": "12.6",
        "nvcr.io/nvidia/l4t-jetpack:r36.3.0": "12.2",
        "nvcr.io/nvidia/l4t-pytorch:r35.2.1-pth2.0-py3": "11.4",
        "nvcr.io/nvidia/l4t-jetpack:r38.2.1": "13.0",
        "nvcr.io/nvidia/l4t-cuda:12.2.12-runtime": "12.2",
        "nvcr.io/nvidia/deepstream:9.1-triton-multiarch": "13.2",
        "ghcr.io/nvidia/deepstream:9.2-triton-multiarch": "13.2",
    }
    for image, cuda in cases.items():
        found = image_cuda(image, m)
        assert found is not None and found.version == cuda, image
    assert image_cuda("nvcr.io/nvidia/l4t-base:r36.2.0", m) is None  # carries no CUDA of its own
    assert image_cuda("nvcr.io/nvidia/l4t-jetpack:r99.1.0", m) is None  # an L4T release the table lacks
    assert image_cuda("ghcr.io/nvidia/deepstream:9.2-triton-multiarch", m).uncertain
    assert image_platform("nvcr.io/nvidia/l4t-jetpack:r36.4.0", m) == "linux/arm64"
    assert image_platform("ghcr.io/nvidia/deepstream:9.2-triton-multiarch", m) is None
    assert image_platform("nvidia/cuda:12.4.1-base-ubuntu22.04", m) is None




@pytest.mark.parametrize("image,fires", [
    ("nvcr.io/nvidia/l4t-jetpack:r36.4.0", True),
    ("nvcr.io/nvidia/pytorch:24.05-py3", False),
])
def test_a_gpu_container_of_a_jetson_image_on_an_amd64_pool(tmp_path: Path, image: str, fires: bool) -> None:
    (tmp_path / "deploy.yaml").write_text(DEPLOYMENT.replace("image: app", f"image: {image}"))
    old = os.getcwd()
    os.chdir(tmp_path)
    try:
        result = runner.invoke(app, ["lint", "deploy.yaml", "--format", "json", "--driver", "580.95.05", "--arch", "amd64"],
                               catch_exceptions=False)
    finally:
        os.chdir(old)
    findings = [f for r in json.loads(result.output)["results"] for f in r["findings"]]
    assert bool([f for f in findings if f["rule"] == "IL402"]) is fires, findings


@pytest.mark.parametrize("tag,uncertain", [("24.05-py3", True), ("23.10-py3", False)])
def test_a_cuda_read_from_an_uncertain_row_says_so_in_the_finding(tmp_path: Path, tag: str, uncertain: bool) -> None:
    (tmp_path / "Dockerfile").write_text(f"FROM nvcr.io/nvidia/pytorch:{tag}\nCMD [\"python\"]\n")
    old = os.getcwd()
    os.chdir(tmp_path)
    try:
        result = runner.invoke(app, ["lint", "Dockerfile", "--driver", "470.82.01", "--gpu", "T4"], catch_exceptions=False)
    finally:
        os.chdir(old)
    assert "IL101" in result.output
    assert ("uncertain matrix row" in result.output) is uncertain


JETSON_BASES = [
    "nvcr.io/nvidia/l4t-base:r36.2.0",
    "nvcr.io/nvidia/l4t-pytorch:r35.2.1-pth2.0-py3",
    "nvcr.io/nvidia/l4t-ml:r35.2.1-py3",
    "nvcr.io/nvidia/l4t-jetpack:r36.4.0",
    "nvcr.io/nvidia/l4t-tensorrt:r8.5.2-runtime",
    "nvcr.io/nvidia/deepstream-l4t:6.2-samples",
    "nvcr.io/nvidia/pytorch:24.05-py3-igpu",
    "dustynv/ros:humble-ros-base-l4t-r35.4.1",
    "dustynv/pytorch:2.1-r36.2.0",
]


def gpu_class(findings: list[dict]) -> list[dict]:
    return [f for f in findings if f["rule"] == "IL402"]


@pytest.mark.parametrize("base", JETSON_BASES)
def test_a_jetson_image_cannot_run_on_a_discrete_gpu_pool_whatever_the_arch(tmp_path: Path, base: str) -> None:
    dockerfile = f"FROM {base}\nCMD [\"python3\", \"app.py\"]\n"
    for gpu, arch in (("H100", "arm64"), ("A100", "amd64"), ("L4", "amd64")):
        [f] = gpu_class(lint_dockerfile(tmp_path, dockerfile, "--driver", "570.124.06", "--gpu", gpu, "--arch", arch))
        assert f["severity"] == "error" and "Jetson image" in f["message"] and gpu in f["message"], f
        assert f["remediation"] and any("whatever the CPU architecture" in d for d in f["details"])
    assert not gpu_class(lint_dockerfile(tmp_path, dockerfile, "--driver", "540.4.0", "--gpu", "Orin", "--arch", "arm64"))


@pytest.mark.parametrize("base", ["nvidia/cuda:12.4.1-runtime-ubuntu22.04", "nvcr.io/nvidia/pytorch:24.05-py3"])
def test_a_discrete_gpu_image_cannot_run_on_a_jetson_orin_pool(tmp_path: Path, base: str) -> None:
    dockerfile = f"FROM {base}\n"
    [f] = gpu_class(lint_dockerfile(tmp_path, dockerfile, "--driver", "540.4.0", "--gpu", "Orin", "--arch", "arm64"))
    assert f["severity"] == "error" and "discrete GPUs" in f["message"] and "Jetson" in f["message"]
    # a driver past the Jetson Linux the catalogue describes (or none given): not certain, said as a warning
    [w] = gpu_class(lint_dockerfile(tmp_path, dockerfile, "--driver", "590.44.01", "--gpu", "Orin", "--arch", "arm64"))
    assert w["severity"] == "warning" and "not known here" in w["message"]
    assert not gpu_class(lint_dockerfile(tmp_path, dockerfile, "--driver", "570.124.06", "--gpu", "H100", "--arch", "arm64"))


def test_images_that_cannot_be_told_and_pools_that_are_not_known_stay_quiet(tmp_path: Path) -> None:
    for base in ("python:3.12-slim", "nvcr.io/nvidia/deepstream:7.0-triton-multiarch", "dustynv/pytorch:2.6-cu126"):
        assert not gpu_class(lint_dockerfile(tmp_path, f"FROM {base}\n", "--driver", "570.124.06", "--gpu", "H100",
                                             "--arch", "arm64"))
    # Thor's stack is not read here: no certain verdict either way
    assert not gpu_class(lint_dockerfile(tmp_path, "FROM nvidia/cuda:13.0.1-runtime-ubuntu24.04\n", "--driver",
                                         "580.00", "--gpu", "Thor", "--arch", "arm64"))


def test_manifest_and_compose_image_references_are_judged_too(tmp_path: Path) -> None:
    (tmp_path / "pod.yaml").write_text(
        "apiVersion: v1\nkind: Pod\nmetadata: {name: infer}\nspec:\n  containers:\n"
        "  - name: app\n    image: nvcr.io/nvidia/l4t-jetpack:r36.4.0\n"
        "    resources: {limits: {nvidia.com/gpu: 1}}\n")
    (tmp_path / "compose.yaml").write_text(
        "services:\n  app:\n    image: dustynv/pytorch:2.1-r36.2.0\n    runtime: nvidia\n")
    old = os.getcwd()
    os.chdir(tmp_path)
    try:
        result = runner.invoke(app, ["lint", "pod.yaml", "compose.yaml", "--format", "json", "--driver", "570.124.06",
                                     "--gpu", "GH200", "--arch", "arm64"], catch_exceptions=False)
    finally:
        os.chdir(old)
    found = [(Path(f["location"]["source"]).name, f["location"]["line"]) for r in json.loads(result.output)["results"]
             for f in r["findings"] if f["rule"] == "IL402"]
    assert sorted(found) == [("compose.yaml", 3), ("pod.yaml", 7)], result.output
