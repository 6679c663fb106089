"""Fixtures for the integration tests: a committed snapshot of this working tree, pre-commit's home.

The lead commits to the shared repository; tests never touch its git state. A
snapshot (tracked + untracked, not ignored files, exactly as on disk) is
committed into a fresh temp repository that pre-commit can clone at a ``rev``.
"""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

REPO_ROOT = Path(__file__).resolve().parents[2]
_GIT_ID = ["-c", "user.name=imagelint-tests", "-c", "user.email=tests@imagelint.invalid", "-c", "commit.gpgsign=false"]


def git(cwd: Path, *args: str) -> str:
    proc = subprocess.run(["git", *_GIT_ID, *args], cwd=cwd, capture_output=True, text=True, timeout=120)
    if proc.returncode != 0:
        raise RuntimeError(f"git {' '.join(args)} failed: {proc.stderr.strip()[:500]}")
    return proc.stdout


def _working_tree_files() -> list[str]:
    if (REPO_ROOT / ".git").exists():
        # Read-only: lists tracked and untracked-but-not-ignored files; writes nothing.
        out = subprocess.run(["git", "ls-files", "-co", "--exclude-standard", "-z"], cwd=REPO_ROOT,
                             capture_output=True, text=True, timeout=60, check=True).stdout
        return [p for p in out.split("\0") if p]
    ignored = {"__pycache__", ".pytest_cache", ".hypothesis", ".venv", "build", "dist"}
    return [str(p.relative_to(REPO_ROOT)) for p in REPO_ROOT.rglob("*")
            if p.is_file() and not any(part in ignored or part.endswith(".egg-info") for part in p.parts)]


@pytest.fixture(scope="session")
def source_snapshot(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, str]:
    """(path, commit) of a temp git repository holding this working tree as it is now."""
    if shutil.which("git") is None:
        pytest.skip("git is not installed")
    dest = tmp_path_factory.mktemp("imagelint-src")
    for rel in _working_tree_files():
        src = REPO_ROOT / rel
        if src.is_file() and not src.is_symlink():
            target = dest / rel
            target.parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(src, target)
    git(dest, "init", "-q", "-b", "main")
    git(dest, "add", "-A")
    git(dest, "commit", "-q", "-m", "snapshot for tests")
    return dest, git(dest, "rev-parse", "HEAD").strip()


@pytest.fixture(scope="session")
def pre_commit_home(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """One PRE_COMMIT_HOME per session, so the hook's environment is installed once."""
    return tmp_path_factory.mktemp("pre-commit-home")
