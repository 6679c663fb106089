"""lint DIR leaves out what git ignores (nested .gitignore files and negations included), by asking git."""

from __future__ import annotations

import subprocess
from pathlib import Path

from imagelint.static.gitignore import not_ignored


def test_git_decides_what_is_ignored(tmp_path: Path, monkeypatch) -> None:
    subprocess.run(["git", "init", "-q", str(tmp_path)], check=True)
    (tmp_path / ".gitignore").write_text("build/\n*.gen.yaml\n!keep.gen.yaml\n")
    (tmp_path / "k8s").mkdir()
    (tmp_path / "k8s" / ".gitignore").write_text("scratch.yaml\n")
    files = {"Dockerfile": "", "build/Dockerfile": "", "k8s/app.yaml": "", "k8s/scratch.yaml": "",
             "k8s/x.gen.yaml": "", "k8s/keep.gen.yaml": ""}
    for name in files:
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text("x\n")
    monkeypatch.chdir(tmp_path)
    got = not_ignored(".", list(files))
    assert got == ("Dockerfile", "k8s/app.yaml", "k8s/keep.gen.yaml")


def test_outside_a_work_tree_nothing_is_filtered(tmp_path: Path) -> None:
    (tmp_path / "build").mkdir()
    (tmp_path / ".gitignore").write_text("build/\n")
    paths = [str(tmp_path / "build" / "Dockerfile")]
    assert not_ignored(str(tmp_path), paths) == tuple(paths)
    assert not_ignored(str(tmp_path), []) == ()


def test_lint_dir_leaves_out_what_git_ignores(tmp_path: Path, monkeypatch) -> None:
    """`imagelint lint DIR` walks the directory and drops what .gitignore names (nested ones too)."""
    import os
    import sys

    subprocess.run(["git", "init", "-q", str(tmp_path)], check=True)
    (tmp_path / ".gitignore").write_text("generated/\n")
    bad = "FROM nvidia/cuda:12.4.1-base-ubuntu22.04\nENV CUDA_VISIBLE_DEVICES=3\n"
    for rel in ("Dockerfile", "generated/Dockerfile"):
        (tmp_path / rel).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / rel).write_text(bad)
    env = {**os.environ, "NO_COLOR": "1"}
    proc = subprocess.run([sys.executable, "-m", "imagelint", "lint", ".", "--format", "json"], cwd=tmp_path,
                          capture_output=True, text=True, timeout=120, env=env)
    assert proc.returncode in (0, 1), proc.stderr
    import json

    linted = {r["image"]["ref"] for r in json.loads(proc.stdout)["results"]}
    assert any(name.endswith("Dockerfile") and "generated" not in name for name in linted), linted
    assert not any("generated" in name for name in linted), linted
