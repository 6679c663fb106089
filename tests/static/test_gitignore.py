"""lint DIR leaves out what git ignores (nested .gitignore files and negations included), by asking git."""

from __future__ import annotations

import subprocess

import pytest
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


# --- The same answers as git, without running git in the linted tree -------------------------

ROOT_IGNORE = """\
# a comment
*.gen.yaml
!keep.gen.yaml
build/
!build/back.yaml
/rootonly.yaml
docs/**/skip.yaml
**/deep/x.yaml
logs/**
a?c.yaml
[ab]x.yaml
[!c]y.yaml
[[:digit:]]*.yaml
\\#hash.yaml
\\!bang.yaml
trailing.yaml   
escaped.yaml\\ 
sub/nested.yaml
foo/*/bar.yaml
**/cache/
*.YAML
"""
NESTED_IGNORE = "*.yaml\n!app.yaml\n/local.yaml\n"
PATHS = [
    "Dockerfile", "x.gen.yaml", "k/x.gen.yaml", "keep.gen.yaml", "k/keep.gen.yaml", "build/Dockerfile",
    "build/back.yaml", "k/build/a.yaml", "rootonly.yaml", "k/rootonly.yaml", "docs/skip.yaml", "docs/a/b/skip.yaml",
    "skip.yaml", "deep/x.yaml", "q/deep/x.yaml", "q/deep/y.yaml", "logs/a.yaml", "logs/a/b.yaml", "abc.yaml",
    "ac.yaml", "a/c.yaml", "ax.yaml", "bx.yaml", "cx.yaml", "cy.yaml", "dy.yaml", "1a.yaml", "z1.yaml",
    "#hash.yaml", "!bang.yaml", "bang.yaml", "trailing.yaml", "escaped.yaml ", "escaped.yaml", "sub/nested.yaml",
    "q/sub/nested.yaml", "foo/x/bar.yaml", "foo/x/y/bar.yaml", "a/cache/p.yaml", "cache", "UP.YAML", "up.yaml",
    "k8s/app.yaml", "k8s/other.yaml", "k8s/local.yaml", "k8s/z/local.yaml", "k8s/z/app.yaml", "k8s/Dockerfile",
    "excluded.yaml", "q/excluded.yaml", "global.yaml", "q/global.yaml", "tracked/t.gen.yaml",
]


def _git_env(tmp_path: Path) -> dict[str, str]:
    import os

    xdg = tmp_path / "xdg"
    return {**os.environ, "HOME": str(tmp_path / "home"), "XDG_CONFIG_HOME": str(xdg), "GIT_CONFIG_NOSYSTEM": "1",
            "GIT_CONFIG_GLOBAL": str(xdg / "git" / "config")}


def _git_ignored(repo: Path, paths: list[str], env: dict[str, str]) -> set[str]:
    proc = subprocess.run(["git", "check-ignore", "--stdin", "-z"], cwd=repo, input="\0".join(paths) + "\0",
                          capture_output=True, text=True, env=env, timeout=60)
    assert proc.returncode in (0, 1), proc.stderr
    return {p for p in proc.stdout.split("\0") if p}


def _build(repo: Path, files: dict[str, str], paths: list[str]) -> None:
    for name, text in files.items():
        (repo / name).parent.mkdir(parents=True, exist_ok=True)
        (repo / name).write_text(text)
    for name in paths:
        (repo / name).parent.mkdir(parents=True, exist_ok=True)
        (repo / name).write_text("x\n")


@pytest.mark.parametrize("index_version", [2, 3, 4])
def test_the_ignored_set_is_gits_own(tmp_path: Path, monkeypatch, index_version: int) -> None:
    """Every rule of gitignore(5) on one tree: what we leave out is what `git check-ignore` names,
    tracked (force-added) files included, for each index format."""
    env = _git_env(tmp_path)
    repo = tmp_path / "repo"
    subprocess.run(["git", "init", "-q", str(repo)], check=True, env=env)
    (tmp_path / "xdg" / "git").mkdir(parents=True)
    (tmp_path / "xdg" / "git" / "ignore").write_text("global.yaml\n")
    _build(repo, {".gitignore": ROOT_IGNORE, "k8s/.gitignore": NESTED_IGNORE, ".git/info/exclude": "excluded.yaml\n"},
           PATHS)
    subprocess.run(["git", "add", "-f", "tracked/t.gen.yaml", "Dockerfile"], cwd=repo, check=True, env=env)
    subprocess.run(["git", "update-index", "--index-version", str(index_version)], cwd=repo, check=True, env=env)
    expected = _git_ignored(repo, PATHS, env)
    assert {"x.gen.yaml", "build/back.yaml", "k8s/other.yaml", "global.yaml", "excluded.yaml"} <= expected
    monkeypatch.setenv("XDG_CONFIG_HOME", env["XDG_CONFIG_HOME"])
    monkeypatch.chdir(repo)
    kept = not_ignored(".", PATHS)
    assert set(PATHS) - set(kept) == expected


def test_random_patterns_agree_with_git(tmp_path: Path, monkeypatch) -> None:
    """Seeded random patterns (wildcards, anchors, negations, directory-only) against git."""
    import random

    rng = random.Random(30)
    names = ["a", "b", "ab", "x.yaml", "y.yml", "Dockerfile", "d"]
    atoms = ["a", "b", "*", "?", "**", "[ab]", "[!a]", "x.yaml", "*.yaml", "d", "*b"]
    env = _git_env(tmp_path)
    monkeypatch.setenv("XDG_CONFIG_HOME", env["XDG_CONFIG_HOME"])
    for round_ in range(60):
        repo = tmp_path / f"r{round_}"
        subprocess.run(["git", "init", "-q", str(repo)], check=True, env=env)
        paths = sorted({"/".join(rng.choice(names) for _ in range(rng.randint(1, 4))) for _ in range(80)})
        # files, not directories (a/ holds a .gitignore)
        paths = [p for p in paths if p != "a" and not any(q.startswith(p + "/") for q in paths)]
        lines = []
        for _ in range(rng.randint(1, 8)):
            body = "/".join(rng.choice(atoms) for _ in range(rng.randint(1, 3)))
            lines.append(rng.choice(["", "", "!"]) + rng.choice(["", "/"]) + body + rng.choice(["", "", "/"]))
        nested = [rng.choice(atoms) + rng.choice(["", "/"]) for _ in range(rng.randint(0, 3))]
        _build(repo, {".gitignore": "\n".join(lines) + "\n", "a/.gitignore": "\n".join(nested) + "\n"}, paths)
        expected = _git_ignored(repo, paths, env)
        monkeypatch.chdir(repo)
        assert set(paths) - set(not_ignored(".", paths)) == expected, (lines, nested)
