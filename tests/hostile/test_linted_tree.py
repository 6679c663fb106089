"""A linted tree runs nothing: ``imagelint lint DIR`` reads the tree's ignore files as data and
never starts git (or anything else) inside it, so programs its ``.git`` names never run."""

from __future__ import annotations

import os
import shutil
import stat
import subprocess
from pathlib import Path

from tests.hostile.cli import run_cli

DOCKERFILE = "FROM nvidia/cuda:12.4.1-base-ubuntu22.04\nENV CUDA_VISIBLE_DEVICES=3\n"
HOOKS = ("post-checkout", "post-index-change", "pre-commit", "fsmonitor-watchman", "pre-auto-gc", "reference-transaction")


def _arm(git_dir: Path, markers: Path, label: str) -> None:
    """Every program git could be made to run from this git directory's config and hooks
    writes a marker named after its trigger."""
    def command(name: str) -> str:
        return f"touch {markers / (label + name)}; false"

    hooks = git_dir / "evil-hooks"
    hooks.mkdir()
    for hook in HOOKS:
        for where in (hooks, git_dir / "hooks"):
            where.mkdir(exist_ok=True)
            script = where / hook
            script.write_text(f"#!/bin/sh\n{command('hook-' + hook)}\n")
            script.chmod(script.stat().st_mode | stat.S_IXUSR)
    with open(git_dir / "config", "a") as config:
        config.write(
            "[core]\n"
            f"\tfsmonitor = \"{command('fsmonitor')}\"\n"
            f"\thooksPath = {hooks}\n"
            f"\tpager = \"{command('pager')}\"\n"
            f"\tsshCommand = \"{command('ssh')}\"\n"
            f"\teditor = \"{command('editor')}\"\n"
            "[pager]\n\tcheck-ignore = true\n"
            f"[diff]\n\texternal = \"{command('diff-external')}\"\n"
            f"[credential]\n\thelper = \"!{command('credential')}\"\n"
            f"[gpg]\n\tprogram = \"{command('gpg')}\"\n"
            f"[filter \"x\"]\n\tclean = \"{command('filter-clean')}\"\n\tprocess = \"{command('filter-process')}\"\n")


def test_lint_dir_runs_nothing_the_linted_trees_git_config_names(tmp_path: Path) -> None:
    markers = tmp_path / "markers"
    markers.mkdir()
    # git on PATH is a wrapper that leaves a marker: not even a locked-down git is started.
    wrapper = tmp_path / "bin" / "git"
    wrapper.parent.mkdir()
    real_git = shutil.which("git")
    wrapper.write_text(f"#!/bin/sh\ntouch {markers / 'git-started'}\nexec {real_git} \"$@\"\n")
    wrapper.chmod(0o755)
    git_env = {**os.environ, "HOME": str(tmp_path / "home"), "GIT_CONFIG_NOSYSTEM": "1"}
    env = {"HOME": git_env["HOME"], "GIT_CONFIG_NOSYSTEM": "1", "PATH": f"{wrapper.parent}{os.pathsep}{os.environ['PATH']}"}
    # A work tree with its own .git directory, and one whose .git is a file naming a git
    # directory elsewhere (as worktrees and submodules do).
    plain = tmp_path / "plain"
    subprocess.run(["git", "init", "-q", str(plain)], check=True, env=git_env)
    _arm(plain / ".git", markers, "plain-")
    elsewhere = tmp_path / "elsewhere.git"
    subprocess.run(["git", "init", "-q", "--bare", str(elsewhere)], check=True, env=git_env)
    _arm(elsewhere, markers, "pointed-")
    pointed = tmp_path / "pointed"
    pointed.mkdir()
    (pointed / ".git").write_text(f"gitdir: {elsewhere}\n")
    subprocess.run(["git", "--git-dir", str(elsewhere), "config", "core.bare", "false"], check=True, env=git_env)
    for tree in (plain, pointed):
        (tree / ".gitignore").write_text("generated/\n")
        for rel in ("Dockerfile", "generated/Dockerfile"):
            (tree / rel).parent.mkdir(parents=True, exist_ok=True)
            (tree / rel).write_text(DOCKERFILE)
        (tree / "x.gen.yaml").write_text("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: x}\n")
        (tree / ".gitattributes").write_text("* filter=x diff=x\n")
        run = run_cli("lint", ".", "--format", "json", cwd=tree, env=env, timeout=120)
        assert run.returncode in (0, 1), run.stderr
        assert "generated" not in run.stdout  # the ignore rules still hold
        assert "Dockerfile" in run.stdout
    assert sorted(os.listdir(markers)) == []
