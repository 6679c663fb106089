"""An image list (``audit --images images.txt``) as docker compose reads its files (issue 38):
local paths resolve against the list's directory, and what a list cannot know (namespace,
container) is left out of the text, not printed as ``-``."""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
POOL = '[[pool]]\nname = "gpu"\ndriver = "{driver}"\ngpus = [{{ product = "T4" }}]\n'


def audit(cwd: Path, *args: str) -> subprocess.CompletedProcess:
    env = {k: v for k, v in os.environ.items() if not k.startswith("GITHUB_")}
    env.update({"IMAGELINT_NO_CACHE": "1", "NO_COLOR": "1"})
    return subprocess.run(["imagelint", "audit", *args], cwd=cwd, env=env, capture_output=True, text=True, timeout=180)


def test_paths_in_the_list_resolve_against_the_list_and_unknowns_are_left_out(tmp_path):
    ci = tmp_path / "ci"
    shutil.copytree(ROOT / "examples" / "cuda-app", ci / "build" / "app")
    (ci / "images.txt").write_text("# what CI built\noci-dir:build/app\n")
    (tmp_path / "now.toml").write_text(POOL.format(driver="535.104.05"))
    (tmp_path / "next.toml").write_text(POOL.format(driver="580.95.05"))
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    run = audit(elsewhere, "--images", "../ci/images.txt", "--target-file", "../now.toml")
    assert "not a directory" not in run.stdout and "0 not checked" in run.stdout, run.stdout
    assert "oci-dir:../ci/build/app" in run.stdout and run.returncode == 1, run.stdout + run.stderr
    header = next(ln for ln in run.stdout.splitlines() if ln.startswith("VERDICT"))
    assert header.split() == ["VERDICT", "WORKLOAD", "POOL", "IMAGE"], header
    plan = audit(elsewhere, "--images", "../ci/images.txt", "--target-file", "../now.toml", "--plan", "../next.toml")
    assert "oci-dir:../ci/build/app" in plan.stdout, plan.stdout + plan.stderr
    assert "namespace -" not in plan.stdout and "container -" not in plan.stdout, plan.stdout
