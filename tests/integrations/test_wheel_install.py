"""README's quick start from a built wheel in a fresh virtualenv, offline.

The wheel is built from this checkout (no build isolation: no download); the dependencies
are the ones installed here, packed back into wheels (``tests/support/rewheel.py``) so that
``pip install --no-index --find-links`` resolves them from imagelint's own metadata. A
dependency missing from pyproject, a data file missing from the wheel, or an import of the
Kubernetes client outside ``--cluster`` fails here. Also measured: the lint-only install is
at most half the size of one with the ``cluster`` extra, and ``--cluster`` without it says
how to get it in one line (exit 2).
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import venv
from pathlib import Path

import pytest

from tests.integrations.snippets import ROOT, shell_commands, snippets
from tests.support.rewheel import closure, rewheel, wheel_requires

pytestmark = pytest.mark.slow


def _run(cmd: list[str], cwd: Path, timeout: int = 300, **env: str) -> subprocess.CompletedProcess:
    clean = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "VIRTUAL_ENV", "PIP_INDEX_URL", "PIP_EXTRA_INDEX_URL")}
    clean.update({"PIP_NO_INDEX": "1", "PIP_DISABLE_PIP_VERSION_CHECK": "1", "NO_COLOR": "1", "IMAGELINT_NO_CACHE": "1", **env})
    return subprocess.run(cmd, cwd=cwd, env=clean, capture_output=True, text=True, timeout=timeout)


def _du(path: Path) -> int:
    return sum(p.stat().st_size for p in path.rglob("*") if p.is_file() and not p.is_symlink())


@pytest.fixture(scope="module")
def wheels(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("wheels")
    try:
        import setuptools  # noqa: F401
        import wheel  # noqa: F401
    except ImportError as exc:
        pytest.skip(f"building the wheel offline needs setuptools and wheel (the test extra has them): {exc}")
    built = _run([sys.executable, "-m", "pip", "wheel", "-q", "--no-deps", "--no-build-isolation", "-w", str(out), str(ROOT)],
                 cwd=out)
    assert built.returncode == 0, built.stderr[-2000:]
    [whl] = out.glob("imagelint-*.whl")
    for dist in closure(wheel_requires(whl), ("cluster",)).values():
        rewheel(dist, out)
    return out


@pytest.fixture(scope="module")
def fresh(tmp_path_factory: pytest.TempPathFactory, wheels: Path) -> Path:
    """A virtualenv with ``pip install imagelint`` (no extra), from the wheels only."""
    root = tmp_path_factory.mktemp("venv") / "v"
    venv.EnvBuilder(with_pip=True, clear=True).create(root)  # ensurepip: pip from the interpreter, offline
    done = _run([str(root / "bin" / "python"), "-m", "pip", "install", "-q", "--no-index", "--find-links", str(wheels),
                 "imagelint"], cwd=root)
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-2000:]
    return root


def _site(venv_root: Path) -> Path:
    [site] = (venv_root / "lib").glob("python3*/site-packages")
    return site


def test_quick_start_from_the_wheel(fresh, tmp_path):
    quick = next(s for s in snippets() if s.kind == "shell" and "pip install" in s.body and "examples/cuda-app" in s.body)
    *install, command = shell_commands(quick)
    assert install == [["python3", "-m", "venv", ".venv"], [".", ".venv/bin/activate"], ["pip", "install", "."]], \
        "the fixture does these steps from the wheel"
    work = tmp_path / "clone"
    shutil.copytree(ROOT / "examples", work / "examples")  # the checkout's files, not its code
    bin_dir = fresh / "bin"
    r = _run(command, cwd=work, PATH=f"{bin_dir}{os.pathsep}{os.environ['PATH']}")
    assert r.returncode == 1, r.stdout[-1500:] + r.stderr[-1500:]
    assert "IL302" in r.stdout and "IL304" in r.stdout
    assert str(ROOT) not in _run([str(bin_dir / "python"), "-c", "import imagelint; print(imagelint.__file__)"], cwd=work).stdout
    lint = work / "Dockerfile"
    lint.write_text("FROM nvidia/cuda:13.0.2-runtime-ubuntu24.04\n")
    # CUDA 13.0 on R535 fails on a GeForce GPU (no forward compatibility there, and 535 is below
    # 13.x's floor); on a data-centre GPU the toolkit's compat hook would run it.
    r = _run([str(bin_dir / "imagelint"), "lint", "Dockerfile", "--driver", "535.104.05", "--gpu", "RTX 3090"], cwd=work)
    assert r.returncode == 1 and "IL101" in r.stdout, r.stdout + r.stderr
    for args in (["matrix", "show", "--section", "gpus"], ["rules"], ["explain", "IL101"], ["--version"]):
        r = _run([str(bin_dir / "imagelint"), *args], cwd=work)
        assert r.returncode == 0, (args, r.stderr)


def test_cluster_without_the_extra_says_how_to_get_it(fresh, tmp_path):
    assert not list(_site(fresh).glob("kubernetes*")), "the light install must not carry the Kubernetes client"
    bin_dir = fresh / "bin"
    for args in (["check", f"oci-dir:{ROOT / 'examples' / 'cuda-app'}", "--cluster"], ["target", "snapshot", "--cluster"],
                 ["check", f"oci-dir:{ROOT / 'examples' / 'cuda-app'}", "--matrix", "cluster"]):
        r = _run([str(bin_dir / "imagelint"), *args], cwd=tmp_path)
        assert r.returncode == 2, (args, r.stdout, r.stderr)
        assert r.stderr.strip().splitlines() == [
            "imagelint: error: reading a cluster needs the Kubernetes client, which is not installed: pip install 'imagelint[cluster]'"
        ], r.stderr


def test_lint_only_install_is_at_most_half_of_a_cluster_install(fresh, wheels, tmp_path, record_property):
    light = _du(_site(fresh))
    full_root = tmp_path / "full"
    shutil.copytree(fresh, full_root, symlinks=True)
    done = _run([str(full_root / "bin" / "python"), "-m", "pip", "install", "-q", "--no-index", "--find-links", str(wheels),
                 "imagelint[cluster]"], cwd=tmp_path)
    assert done.returncode == 0, done.stderr[-2000:]
    full = _du(_site(full_root))
    record_property("site_packages_bytes", {"lint-only": light, "with cluster": full})
    print(f"\nsite-packages: lint-only {light / 1e6:.1f} MB, with [cluster] {full / 1e6:.1f} MB ({light / full:.0%})")
    assert light * 2 <= full, f"lint-only {light} bytes is more than half of {full}"
    # with the extra, --cluster gets past the client check (here: to the missing kubeconfig)
    r = _run([str(full_root / "bin" / "python"), "-m", "imagelint", "target", "snapshot", "--cluster",
              "--kubeconfig", str(tmp_path / "none")], cwd=tmp_path)
    assert "imagelint[cluster]" not in r.stderr and r.returncode in (2, 3), r.stderr
