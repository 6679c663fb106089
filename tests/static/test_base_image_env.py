"""A Dockerfile ``FROM nvidia/cuda:<version>-...`` inherits the official image's env from the matrix.

So the requirement the built image will carry (``NVIDIA_REQUIRE_CUDA``, with its per-branch
forward-compat terms) is checked against the target's pools by IL102 before anything is built.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
from typer.testing import CliRunner

import imagelint.cli
from imagelint.cli import app
from imagelint.core.config import Config
from imagelint.core.engine import run_rules
from imagelint.static.dockerfile import parse_dockerfile
from imagelint.static.dockerfile_facts import dockerfile_facts
from imagelint.deploytarget import GpuSpec, NodePool, Target


RUNTIME_1241 = "FROM nvidia/cuda:12.4.1-runtime-ubuntu22.04\nCMD [\"python3\", \"app.py\"]\n"


def facts_of(text: str, matrix):
    return dockerfile_facts(parse_dockerfile(text, "Dockerfile"), matrix)


def il102(text: str, matrix, driver: str, gpu: str = "T4", mode: str = "legacy") -> tuple:
    pool = NodePool("p", driver=driver, gpus=(GpuSpec(product=gpu),), runtime_mode=mode)
    result = run_rules(facts_of(text, matrix), Target(pools=(pool,), source="flags"), matrix, Config(select=("IL102",)))
    return result.findings


def test_from_official_image_yields_its_require_string(matrix) -> None:
    facts = facts_of(RUNTIME_1241, matrix)
    env = {e.name: e for e in facts.env}
    expected = matrix.cuda_image_env("12.4.1", "amd64")
    assert env["NVIDIA_REQUIRE_CUDA"].value == expected["NVIDIA_REQUIRE_CUDA"]
    assert env["NVIDIA_REQUIRE_CUDA"].value.startswith("cuda>=12.4 brand=tesla,driver>=470,driver<471")
    assert env["CUDA_VERSION"].value == "12.4.1"
    # provenance points at the FROM line, and says the value comes from the base image
    prov = env["NVIDIA_REQUIRE_CUDA"].provenance
    assert prov.line == 1 and "from base image nvidia/cuda:12.4.1-runtime-ubuntu22.04" in prov.key
    assert [r.value for r in facts.cuda.requires] == [expected["NVIDIA_REQUIRE_CUDA"]]


def test_il102_fires_when_the_pool_driver_does_not_satisfy_the_base_image(matrix) -> None:
    # 545 reports CUDA 12.3 and is none of 12.4.1's forward-compat branches (470, 525, 535).
    [finding] = il102(RUNTIME_1241, matrix, "545.23.08")
    # The 31-term official requirement is shortened in the message, kept whole in the data.
    assert "cuda>=12.4 ... (+30 more OR terms)" in finding.message and len(finding.message) < 600
    assert finding.extra["requirement"].count(" ") == 30
    assert "unsatisfied condition: cuda>=12.4" in finding.text
    assert finding.location.line == 1
    # ... and stays quiet where the driver meets it: directly, or through a brand/branch term.
    assert il102(RUNTIME_1241, matrix, "550.54.15") == ()
    assert il102(RUNTIME_1241, matrix, "535.104.05") == ()  # brand=tesla,driver>=535,driver<536


def test_the_real_string_matters_geforce_was_dropped_from_12_5(matrix) -> None:
    """12.4.1 admits GeForce on a 535 driver through its brand terms; 12.6.3 lists no GeForce."""
    old = "FROM nvidia/cuda:12.4.1-base-ubuntu22.04\n"
    new = "FROM nvidia/cuda:12.6.3-base-ubuntu24.04\n"
    assert il102(old, matrix, "535.104.05", gpu="RTX 4090") == ()
    [finding] = il102(new, matrix, "535.104.05", gpu="RTX 4090")
    assert "cuda>=12.6" in finding.text
    assert il102(new, matrix, "535.104.05", gpu="T4") == ()  # a Tesla still passes via brand=tesla


def test_a_later_env_in_the_dockerfile_overrides_the_base(matrix) -> None:
    text = "FROM nvidia/cuda:12.4.1-runtime-ubuntu22.04\nENV NVIDIA_REQUIRE_CUDA=cuda>=12.0\n"
    assert il102(text, matrix, "545.23.08") == ()


def test_unknown_version_gets_a_note_not_a_guess(matrix) -> None:
    facts = facts_of("FROM nvidia/cuda:12.7.0-runtime-ubuntu22.04\n", matrix)  # no such image in the table
    assert not any(e.name == "NVIDIA_REQUIRE_CUDA" for e in facts.env)
    assert any("no env for official CUDA image 12.7.0" in w for w in facts.warnings)


@pytest.fixture
def project(tmp_path: Path):
    (tmp_path / "Dockerfile").write_text(RUNTIME_1241)
    old = os.getcwd()
    os.chdir(tmp_path)
    yield tmp_path
    os.chdir(old)


def test_lint_cli_end_to_end(project: Path) -> None:
    runner = CliRunner()
    bad = runner.invoke(app, ["lint", "Dockerfile", "--driver", "545.23.08", "--gpu", "T4", "--runtime-mode", "legacy",
                              "--format", "json"], catch_exceptions=False)
    assert bad.exit_code == 1, bad.output
    rules = [f["rule"] for r in json.loads(bad.stdout)["results"] for f in r["findings"]]
    assert "IL102" in rules
    good = runner.invoke(app, ["lint", "Dockerfile", "--driver", "550.54.15", "--gpu", "T4", "--runtime-mode", "legacy",
                               "--format", "json"], catch_exceptions=False)
    rules = [f["rule"] for r in json.loads(good.stdout)["results"] for f in r["findings"]]
    assert "IL102" not in rules


def test_devel_flavour_and_platform_pick_their_own_env(matrix) -> None:
    """`-devel` tags add the link-time stubs path; `FROM --platform=linux/arm64` takes the sbsa env."""
    devel = {e.name: e.value for e in facts_of("FROM nvidia/cuda:12.4.1-devel-ubuntu22.04\n", matrix).env}
    runtime = {e.name: e.value for e in facts_of(RUNTIME_1241, matrix).env}
    assert devel["LIBRARY_PATH"] == "/usr/local/cuda/lib64/stubs"
    assert "LIBRARY_PATH" not in runtime
    arm = {e.name: e.value for e in facts_of("FROM --platform=linux/arm64 nvidia/cuda:12.2.2-runtime-ubuntu22.04\n", matrix).env}
    amd = {e.name: e.value for e in facts_of("FROM nvidia/cuda:12.2.2-runtime-ubuntu22.04\n", matrix).env}
    expected_arm = matrix.cuda_image_env("12.2.2", "arm64", "runtime")
    assert expected_arm is not None and arm["NVIDIA_REQUIRE_CUDA"] == expected_arm["NVIDIA_REQUIRE_CUDA"]
    assert arm["NVIDIA_REQUIRE_CUDA"] != amd["NVIDIA_REQUIRE_CUDA"], "arm64 images carry only cuda>=X.Y"
