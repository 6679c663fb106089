"""The real ``pre-commit`` running this repository's hooks on a throwaway repository.

pre-commit clones the snapshot at its commit, builds the hook's Python
environment (from PyPI: once per session, shared through PRE_COMMIT_HOME), and
runs ``imagelint lint`` on the staged files, offline apart from that install.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from tests.integrations.conftest import git

pytestmark = [pytest.mark.network, pytest.mark.slow]

BAD_DOCKERFILE = "FROM nvidia/cuda:13.0.2-runtime-ubuntu24.04\nCMD [\"python3\", \"serve.py\"]\n"
GOOD_DOCKERFILE = "FROM nvidia/cuda:12.0.0-runtime-ubuntu22.04\nCMD [\"python3\", \"serve.py\"]\n"
DEPLOYMENT = textwrap.dedent("""\
    apiVersion: apps/v1
    kind: Deployment
    metadata: {name: serve}
    spec:
      selector: {matchLabels: {app: serve}}
      template:
        metadata: {labels: {app: serve}}
        spec:
          containers:
          - name: serve
            image: registry.example/serve:1.0
            resources:
              requests: {nvidia.com/gpu: 1}
              limits: {nvidia.com/gpu: 2}
    """)


def _pre_commit() -> list[str]:
    exe = shutil.which("pre-commit")
    return [exe] if exe else [sys.executable, "-m", "pre_commit"]


def make_repo(tmp_path: Path, source: tuple[Path, str], files: dict[str, str]) -> Path:
    repo = tmp_path / "project"
    repo.mkdir()
    src, rev = source
    (repo / ".pre-commit-config.yaml").write_text(textwrap.dedent(f"""\
        repos:
        - repo: {src}
          rev: {rev}
          hooks:
          - id: imagelint
        """))
    (repo / ".imagelint.toml").write_text('[target]\ndriver = ["525.60.13"]\n')
    for name, text in files.items():
        (repo / name).parent.mkdir(parents=True, exist_ok=True)
        (repo / name).write_text(text)
    git(repo, "init", "-q", "-b", "main")
    git(repo, "add", "-A")
    return repo


def run_hooks(repo: Path, home: Path) -> subprocess.CompletedProcess:
    env = {**os.environ, "PRE_COMMIT_HOME": str(home), "PRE_COMMIT_COLOR": "never"}
    env.pop("GITHUB_ACTIONS", None)
    return subprocess.run([*_pre_commit(), "run", "--all-files"], cwd=repo, env=env, capture_output=True,
                          text=True, timeout=900)


def test_hook_fails_on_cuda_too_new_then_passes_when_fixed(tmp_path: Path, source_snapshot, pre_commit_home) -> None:
    repo = make_repo(tmp_path, source_snapshot, {"Dockerfile": BAD_DOCKERFILE})
    proc = run_hooks(repo, pre_commit_home)
    out = proc.stdout + proc.stderr
    assert proc.returncode == 1, out
    assert "IL101" in out and "Dockerfile:1" in out and "580.95.05" in out
    (repo / "Dockerfile").write_text(GOOD_DOCKERFILE)
    git(repo, "add", "-A")
    fixed = run_hooks(repo, pre_commit_home)
    assert fixed.returncode == 0, fixed.stdout + fixed.stderr
    assert "Passed" in fixed.stdout


def test_hook_fails_on_gpu_request_limit_mismatch_then_passes(tmp_path: Path, source_snapshot, pre_commit_home) -> None:
    repo = make_repo(tmp_path, source_snapshot, {"k8s/deployment.yaml": DEPLOYMENT, "Dockerfile": GOOD_DOCKERFILE})
    proc = run_hooks(repo, pre_commit_home)
    out = proc.stdout + proc.stderr
    assert proc.returncode == 1, out
    assert "IL601" in out and "k8s/deployment.yaml:13" in out
    (repo / "k8s/deployment.yaml").write_text(DEPLOYMENT.replace("requests: {nvidia.com/gpu: 1}", "requests: {nvidia.com/gpu: 2}"))
    git(repo, "add", "-A")
    fixed = run_hooks(repo, pre_commit_home)
    assert fixed.returncode == 0, fixed.stdout + fixed.stderr
