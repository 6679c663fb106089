"""``imagelint lint`` end to end: real files on disk, the real CLI, the real engine and reports."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

from typer.testing import CliRunner

import imagelint.cli
from imagelint.cli import app

runner = CliRunner()

TARGET_525 = '[target]\ndriver = ["525.60.13"]\n'
TWO_POOLS = textwrap.dedent("""\
    [[pool]]
    name = "t4"
    driver = "525.60.13"
    taints = [{ key = "nvidia.com/gpu", value = "present", effect = "NoSchedule" }]
    resources = { "nvidia.com/gpu" = 4 }
    [pool.labels]
    "nvidia.com/gpu.product" = "Tesla-T4"

    [[pool]]
    name = "h100"
    driver = "580.95.05"
    taints = [{ key = "dedicated", value = "h100", effect = "NoSchedule" }]
    resources = { "nvidia.com/gpu" = 8 }
    [pool.labels]
    "nvidia.com/gpu.product" = "NVIDIA-H100-80GB-HBM3"
    """)
DEPLOYMENT = textwrap.dedent("""\
    apiVersion: apps/v1
    kind: Deployment
    metadata: {name: infer}
    spec:
      template:
        spec:
          tolerations:
          - {key: nvidia.com/gpu, operator: Exists}
          containers:
          - name: server
            image: app
            resources:
              requests: {nvidia.com/gpu: 1}
              limits: {nvidia.com/gpu: 2}
    """)


def lint(tmp_path: Path, *args: str, env: dict | None = None):
    old = os.getcwd()
    os.chdir(tmp_path)
    try:
        return runner.invoke(app, ["lint", *args], env=env, catch_exceptions=False)
    finally:
        os.chdir(old)


def write(tmp_path: Path, name: str, text: str) -> Path:
    p = tmp_path / name
    p.parent.mkdir(parents=True, exist_ok=True)
    p.write_text(text)
    return p


def json_findings(result) -> list[dict]:
    doc = json.loads(result.stdout)
    return [f for r in doc["results"] for f in r["findings"]]


def test_dockerfile_cuda_too_new_for_the_configured_driver(tmp_path: Path, registry) -> None:
    write(tmp_path, ".imagelint.toml", TARGET_525)
    write(tmp_path, "Dockerfile", "# syntax=docker/dockerfile:1\nFROM nvidia/cuda:13.0.2-runtime-ubuntu24.04\nCMD [\"app\"]\n")
    result = lint(tmp_path, "Dockerfile", "--format", "json")
    assert result.exit_code == 1, result.output
    [f] = [f for f in json_findings(result) if f["rule"] == "IL101"]
    assert f["severity"] == "error" and f["location"]["line"] == 2 and f["location"]["source"] == "Dockerfile"
    # fixed: a base whose floor the driver meets
    write(tmp_path, "Dockerfile", "FROM nvidia/cuda:12.0.0-runtime-ubuntu22.04\nCMD [\"app\"]\n")
    assert lint(tmp_path, "Dockerfile").exit_code == 0


def test_inline_ignore_comment_and_its_refusal(tmp_path: Path, registry) -> None:
    write(tmp_path, "Dockerfile", "FROM ubuntu\n# imagelint ignore=IL302 single-GPU dev box only\nCMD [\"app\", \"--gpu-id\", \"1\"]\n")
    ok = lint(tmp_path, "Dockerfile", "--format", "json")
    doc = json.loads(ok.stdout)
    assert ok.exit_code == 0 and doc["summary"]["suppressed"] == 1
    refused = lint(tmp_path, "Dockerfile", "--no-inline-ignores", "--format", "json")
    assert refused.exit_code == 1 and [f["rule"] for f in json_findings(refused)] == ["IL302"]
    write(tmp_path, "Dockerfile", "FROM ubuntu\n# imagelint ignore=IL302\nCMD [\"app\", \"--gpu-id\", \"1\"]\n")
    no_reason = lint(tmp_path, "Dockerfile")
    assert no_reason.exit_code == 1 and "has no reason" in no_reason.stdout


def test_deployment_github_annotations_and_step_summary(tmp_path: Path, registry) -> None:
    write(tmp_path, "k8s/deploy.yaml", DEPLOYMENT)
    summary = tmp_path / "summary.md"
    result = lint(tmp_path, "k8s/deploy.yaml", env={"GITHUB_ACTIONS": "true", "GITHUB_STEP_SUMMARY": str(summary)})
    assert result.exit_code == 1
    assert "::error file=k8s/deploy.yaml,line=13,title=IL601 gpu-request-limit-mismatch::" in result.stdout
    assert "IL601" in summary.read_text()
    write(tmp_path, "k8s/deploy.yaml", DEPLOYMENT.replace("requests: {nvidia.com/gpu: 1}", "requests: {nvidia.com/gpu: 2}"))
    assert lint(tmp_path, "k8s/deploy.yaml").exit_code == 0


def test_scripts_and_deepstream_configs(tmp_path: Path, registry) -> None:
    write(tmp_path, "configs/deepstream_app.txt", "[application]\nenable-perf-measurement=1\n\n[primary-gie]\n# gpu-id=3\ngpu-id=1\n")
    write(tmp_path, "run.sh", "#!/bin/sh\nexport CUDA_VISIBLE_DEVICES=2\nexec app\n")
    write(tmp_path, "configs/ds.yml", "application:\n  enable-perf-measurement: 1\nprimary-gie:\n  enable: 1\n  gpu-id: 2\n")
    result = lint(tmp_path, "configs/deepstream_app.txt", "run.sh", "configs/ds.yml", "--format", "json")
    assert result.exit_code == 1
    found = {(f["rule"], f["location"]["source"], f["location"]["line"]) for f in json_findings(result)}
    assert ("IL302", "configs/deepstream_app.txt", 6) in found
    assert ("IL301", "run.sh", 2) in found
    assert ("IL302", "configs/ds.yml", 5) in found
    assert not any(src.endswith(".txt") and line == 5 for _, src, line in found)  # the commented-out gpu-id


def test_skipped_files_templates_and_bad_yaml(tmp_path: Path, registry) -> None:
    write(tmp_path, "values.yaml", "replicas: 3\n")
    write(tmp_path, "chart/templates/dep.yaml", "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: {{ .Release.Name }}\n")
    result = lint(tmp_path, "values.yaml", "chart/templates/dep.yaml")
    assert result.exit_code == 0 and "skipped" in result.stdout and "template" in result.stdout
    write(tmp_path, "bad.yaml", "apiVersion: v1\nkind: Pod\nspec: [\n")
    bad = lint(tmp_path, "bad.yaml")
    assert bad.exit_code == 2 and "bad.yaml:4:" in bad.output and "Traceback" not in bad.output
    missing = lint(tmp_path, "nope/Dockerfile")
    assert missing.exit_code == 2 and "no such file" in missing.output


def test_sarif_and_text_outputs_together(tmp_path: Path, registry) -> None:
    write(tmp_path, "Dockerfile", "FROM ubuntu\nENV NVIDIA_VISIBLE_DEVICES=0,1\n")
    result = lint(tmp_path, "Dockerfile", "--format", "sarif", "--output", "out.sarif", "--format", "text")
    assert result.exit_code == 1 and "IL301" in result.stdout
    sarif = json.loads((tmp_path / "out.sarif").read_text())
    [res] = [r for r in sarif["runs"][0]["results"] if r["ruleId"] == "IL301"]
    assert res["locations"][0]["physicalLocation"]["region"]["startLine"] == 2


def test_image_checked_against_the_pools_the_manifest_reaches(tmp_path: Path, registry) -> None:
    from tests.support.imagebuilder import File, ImageSpec, write_oci_layout

    img = ImageSpec(layers=[[File("usr/local/cuda-13.0/version.json", b'{"cuda": {"version": "13.0.2"}}')]],
                    env={"CUDA_VERSION": "13.0.2"}).build()
    layout = write_oci_layout(tmp_path / "layout", {"v1": img})
    write(tmp_path, "target.toml", TWO_POOLS)
    write(tmp_path, "k8s/deploy.yaml", DEPLOYMENT.replace("limits: {nvidia.com/gpu: 2}", "limits: {nvidia.com/gpu: 1}"))
    args = ["k8s/deploy.yaml", "--target-file", "target.toml", "--image", f"oci-dir:{layout}:v1", "--format", "json",
            "--select", "IL101"]
    result = lint(tmp_path, *args)
    doc = json.loads(result.stdout)
    image_results = [r for r in doc["results"] if r["image"]["ref"].startswith("oci-dir:")]
    assert image_results, doc
    pools = {f["pool"] for r in image_results for f in r["findings"] if f["rule"] == "IL101" and f["severity"] == "error"}
    # The Deployment tolerates only the T4 pool's taint: the image is judged against t4 (525), not h100 (580).
    assert pools == {"t4"} and result.exit_code == 1
    # Tolerating the H100 pool's taint instead moves the image there, where CUDA 13.0.2 is fine (580.95.05).
    write(tmp_path, "k8s/deploy.yaml", DEPLOYMENT.replace("limits: {nvidia.com/gpu: 2}", "limits: {nvidia.com/gpu: 1}")
          .replace("{key: nvidia.com/gpu, operator: Exists}", "{key: dedicated, value: h100}"))
    assert lint(tmp_path, *args).exit_code == 0


def test_console_script_subprocess(tmp_path: Path) -> None:
    """Once through the installed console script, as pre-commit runs it."""
    write(tmp_path, ".imagelint.toml", TARGET_525)
    write(tmp_path, "Dockerfile", "FROM nvidia/cuda:13.0.2-runtime-ubuntu24.04\n")
    exe = Path(sys.executable).with_name("imagelint")
    cmd = [str(exe)] if exe.exists() else [sys.executable, "-m", "imagelint"]
    proc = subprocess.run([*cmd, "lint", "Dockerfile"], cwd=tmp_path, capture_output=True, text=True, timeout=60)
    assert proc.returncode == 1, proc.stderr
    assert "IL101" in proc.stdout and "Dockerfile:1" in proc.stdout
