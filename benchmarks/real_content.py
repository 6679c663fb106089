"""Real framework files for the benchmark images, fetched at benchmark time (never committed).

    python3 benchmarks/real_content.py WORK/real      # fetch (idempotent) and print what is there

Synthetic text (random words, repeated code lines) hides what real sources cost a scanner: lines
that mention ``cuda`` everywhere, comments with quotes, long and short lines. The images that
``build_image.py`` makes with ``--real DIR`` carry files from packages this machine installs with
pip, into DIR:

* ``wheels/``: the PyTorch CPU wheel (``torch==2.13.0``: pip takes the machine's local copy; never
  a CUDA build) and a few of NVIDIA's CUDA wheels that are not huge (headers, ``.so`` files with
  real fatbins, metadata);
* ``dist/``: ``pip install --target`` of a few dozen common, small ML packages (their ``.py``,
  ``.so`` and ``.dist-info``), as a ``dist-packages`` holds them;
* ``sdist/``: a second real source tree for the application-layer images (issue 40): the source
  distribution of Hugging Face transformers (``pip download --no-binary :all:``), ~1,900 files,
  46 MB, a repository's sources as ``COPY . /app`` puts them in an image.
"""

from __future__ import annotations

import json
import subprocess
import sys
import zipfile
from collections.abc import Callable, Iterator
from pathlib import Path

TORCH = "torch==2.13.0"
CUDA_WHEELS = ("nvidia-cuda-runtime-cu12", "nvidia-cuda-cupti-cu12", "nvidia-nvtx-cu12", "nvidia-nvjitlink-cu12",
               "nvidia-curand-cu12")
DIST_PACKAGES = ("requests", "urllib3", "idna", "charset-normalizer", "certifi", "six", "packaging", "pyyaml", "tqdm",
                 "filelock", "fsspec", "jinja2", "markupsafe", "networkx", "typing-extensions", "mpmath", "sympy",
                 "pillow", "regex", "safetensors", "huggingface-hub", "attrs", "click", "protobuf", "psutil",
                 "tabulate", "termcolor", "absl-py", "wrapt", "einops", "numpy", "python-dateutil", "pytz")
SECOND_TREE = "transformers==4.46.3"
# What the PyTorch wheel holds as sources: Python, type stubs, C/C++/CUDA headers.
SOURCE_EXTS = (".py", ".pyi", ".h", ".hpp", ".cuh")


def fetch(real: Path) -> dict:
    """Download the wheels and install the dist-packages into ``real`` unless a finished fetch is there."""
    done = real / "fetched.json"
    if done.exists():
        summary = json.loads(done.read_text())
        if summary.get("sdists"):
            return summary  # else a fetch from before the sdist was part of it: fetch that too
    wheels, dist = real / "wheels", real / "dist"
    pip = [sys.executable, "-m", "pip", "--disable-pip-version-check", "-q"]
    subprocess.run([*pip, "download", "--no-deps", "-d", str(wheels), TORCH, *CUDA_WHEELS], check=True)
    subprocess.run([*pip, "install", "--no-deps", "--no-compile", "--target", str(dist), *DIST_PACKAGES], check=True)
    subprocess.run([*pip, "download", "--no-deps", "--no-binary", ":all:", "-d", str(real / "sdist"), SECOND_TREE], check=True)
    summary = {"wheels": sorted(p.name for p in wheels.glob("*.whl")), "dist_packages": sorted(DIST_PACKAGES),
               "sdists": sorted(p.name for p in (real / "sdist").glob("*.tar.gz"))}
    done.write_text(json.dumps(summary, indent=2))
    return summary


def torch_wheel(real: Path) -> Path:
    found = sorted((real / "wheels").glob("torch-*.whl"))
    if not found:
        raise SystemExit(f"no torch wheel in {real / 'wheels'}: run benchmarks/real_content.py {real} first")
    return found[0]


def second_tree(real: Path) -> Path:
    found = sorted((real / "sdist").glob("*.tar.gz"))
    if not found:
        raise SystemExit(f"no sdist in {real / 'sdist'}: run benchmarks/real_content.py {real} first")
    return found[0]


def sdist_members(sdist: Path) -> Iterator[tuple[str, bytes, int]]:
    """(path below the sdist's top directory, bytes, mode) of each regular file, in the archive's order."""
    import tarfile

    with tarfile.open(sdist) as tf:
        for info in tf:
            if not info.isfile() or "/" not in info.name:
                continue
            data = tf.extractfile(info)
            yield info.name.split("/", 1)[1], data.read() if data else b"", info.mode & 0o777


def cuda_wheels(real: Path) -> list[Path]:
    return sorted(p for p in (real / "wheels").glob("nvidia_*.whl"))


def wheel_members(wheel: Path, keep: Callable[[str], bool] = lambda name: True) -> Iterator[tuple[str, bytes, int]]:
    """(path inside the wheel, bytes, mode) of each file ``keep`` accepts, in the wheel's order."""
    with zipfile.ZipFile(wheel) as z:
        for info in z.infolist():
            if info.is_dir() or not keep(info.filename):
                continue
            mode = (info.external_attr >> 16) & 0o777 or 0o644
            yield info.filename, z.read(info), mode


def tree_members(root: Path) -> Iterator[tuple[str, bytes, int]]:
    """(path under ``root``, bytes, mode) of each regular file, in sorted order."""
    for path in sorted(p for p in root.rglob("*") if p.is_file() and not p.is_symlink()):
        if "__pycache__" in path.parts:
            continue
        yield path.relative_to(root).as_posix(), path.read_bytes(), path.stat().st_mode & 0o777


def is_source(name: str) -> bool:
    return name.endswith(SOURCE_EXTS)


if __name__ == "__main__":
    if len(sys.argv) != 2:
        raise SystemExit(__doc__)
    print(json.dumps(fetch(Path(sys.argv[1])), indent=2))
