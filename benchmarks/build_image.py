"""Build a realistic multi-gigabyte GPU image as an OCI layout, streaming (never whole in memory).

    python3 benchmarks/build_image.py OUT_DIR [--shape gpu|ngc|bulk|torch|app|app2] [--scale 1.0] [--seed 1] [--real DIR]

Writes OUT_DIR/layout (an OCI layout with two tags: ``base`` and ``second``, which
share every layer but the top one) and prints a JSON summary (layers, files,
uncompressed and compressed bytes). Content is synthetic but shaped like real images:

* ``gpu`` (the default): CUDA + PyTorch: a CUDA toolkit tree with the official symlinks and
  version.json, a compat libcuda, big libraries with fatbin-like payloads, tens of
  thousands of small Python files, and app layers with scripts and configs.
* ``ngc``: what NGC PyTorch/TensorFlow images look like: a framework source tree of ~20,000
  small text files under /opt (Python, C++/CUDA sources, CMakeLists.txt, YAML, Markdown,
  scripts), a dist-packages of ~20,000 files with .dist-info metadata, /workspace examples,
  and the /opt/nvidia/nvidia_entrypoint.sh + entrypoint.d script chain; a smaller CUDA toolkit.
  With ``--real DIR`` (``real_content.py``) it also carries real files: NVIDIA's CUDA wheels
  (headers, ``.so`` files, metadata) and a ``pip install --target`` of common ML packages in its
  dist-packages, and PyTorch's real sources beside the synthetic tree under /opt/pytorch.
* ``bulk``: ten layers of thousands of 40 KB files under /opt (text and binary data shards).
* ``torch`` (needs ``--real``): an application image of real content: the PyTorch CPU wheel
  installed in site-packages, and PyTorch's sources (its ``.py``/``.pyi`` files and C++ headers,
  ~12k files, ~90 MB of text that mentions CUDA everywhere) copied under /app, the shape of
  ``COPY . /app`` of an ML repository.
* ``app`` and ``app2`` (need ``--real``; issue 40): what a CI run adds on top of a base it has
  seen: a small CUDA base (an OS layer, the CUDA runtime with its compat driver library, the
  official links) and one application layer of a real repository's sources under /app: PyTorch's
  (``app``, ~11.9k files) or Hugging Face transformers' sdist (``app2``, ~1.9k files). The
  application layer is the top layer, so the ``second`` tag (a new build of /app over the same
  base) reads that whole layer again, as the next CI run does.

Binary data is semi-compressible (about 2-3x under gzip), like real libraries; text is ASCII
words and code-like lines, which compress more.
"""

from __future__ import annotations

import argparse
import hashlib
import io
import json
import random
import tarfile
from collections.abc import Iterator
from pathlib import Path

import real_content
from isal import igzip

MTIME = 1_700_000_000
OCI_INDEX = "application/vnd.oci.image.index.v1+json"
OCI_MANIFEST = "application/vnd.oci.image.manifest.v1+json"
OCI_CONFIG = "application/vnd.oci.image.config.v1+json"
OCI_LAYER_GZ = "application/vnd.oci.image.layer.v1.tar+gzip"


class Synth:
    """Semi-compressible bytes: slices of a random pool interleaved with structured runs."""

    def __init__(self, seed: int) -> None:
        self.rng = random.Random(seed)
        self.pool = self.rng.randbytes(1 << 20)
        words = [self.rng.randbytes(self.rng.randint(2, 12)) for _ in range(512)]
        self.text = b"".join(self.rng.choice(words) for _ in range(1 << 16))[: 1 << 20]

    def blob(self, size: int) -> bytes:
        out = bytearray()
        while len(out) < size:
            n = min(size - len(out), self.rng.randint(256, 8192))
            choice = self.rng.random()
            if choice < 0.45:
                off = self.rng.randrange(0, len(self.pool) - n)
                out += self.pool[off : off + n]
            elif choice < 0.9:
                off = self.rng.randrange(0, len(self.text) - n)
                out += self.text[off : off + n]
            else:
                out += bytes(n)
        return bytes(out)

    def source(self, size: int) -> bytes:
        line = b"    value = compute(x, y)  # synthetic python line\n"
        return (b"import os\n" + line * (size // len(line) + 1))[:size]

    def words(self, size: int) -> bytes:
        """ASCII text of about ``size`` bytes: lines of words, never a NUL."""
        if not hasattr(self, "_words"):
            vocab = [bytes(self.rng.choice(b"abcdefghijklmnopqrstuvwxyz_") for _ in range(self.rng.randint(2, 10)))
                     for _ in range(2000)]
            lines = []
            for _ in range(20000):
                lines.append(b" ".join(self.rng.choice(vocab) for _ in range(self.rng.randint(3, 14))) + b"\n")
            self._words = b"".join(lines)
        off = self.rng.randrange(0, len(self._words) - size) if size < len(self._words) else 0
        start = self._words.find(b"\n", off) + 1
        return (self._words[start:] + self._words)[:size]


def _add(tf: tarfile.TarFile, name: str, data: bytes | None = None, *, link: str | None = None, mode: int = 0o644) -> None:
    ti = tarfile.TarInfo(name)
    ti.mtime = MTIME
    ti.uname = ti.gname = "root"
    if link is not None:
        ti.type = tarfile.SYMTYPE
        ti.linkname = link
        ti.mode = 0o777
        tf.addfile(ti)
        return
    ti.mode = mode
    ti.size = len(data or b"")
    tf.addfile(ti, io.BytesIO(data or b""))


def fatbin_like(synth: Synth, size: int, archs: list[int]) -> bytes:
    """A library-sized payload with fatbin headers (magic 0xBA55ED50) for ``archs`` embedded."""
    import struct

    parts = [b"\x7fELF" + bytes(60)]
    per = max(4096, size // (len(archs) + 1))
    for arch in archs:
        body = synth.blob(per - 64)
        # A fatbin ELF entry header (64 bytes): kind 2 (ELF), version 0x0101, header size, payload size,
        # ..., SM arch at offset 28 (the layout imagelint/facts/fatbin.py documents).
        entry = struct.pack("<HHIQIIHHIIIQQQ", 2, 0x0101, 64, len(body), 0, 0, 8, 1, arch, 0, 0, 0x11, 0, 0)[:64]
        parts.append(struct.pack("<IHHQ", 0xBA55ED50, 1, 16, len(entry) + len(body)) + entry + body)
    blob = b"".join(parts)
    return blob + synth.blob(max(0, size - len(blob)))


def layer_specs(synth: Synth, scale: float, top: str, shape: str = "gpu",
                real: Path | None = None) -> Iterator[tuple[str, Iterator[None]]]:
    """Yield (created_by, writer) for each layer; writer(tf) adds members."""
    rng = random.Random(7)

    def base_os(tf):
        for i in range(int(9000 * scale)):
            _add(tf, f"usr/share/doc/pkg{i % 700}/file{i}.txt", synth.blob(rng.randint(200, 12000)))
        _add(tf, "etc/ld.so.conf", b"include /etc/ld.so.conf.d/*.conf\n")
        _add(tf, "etc/ld.so.conf.d/x86_64-linux-gnu.conf", b"/usr/local/lib/x86_64-linux-gnu\n/lib/x86_64-linux-gnu\n/usr/lib/x86_64-linux-gnu\n")

    def system_libs(tf):
        for i in range(int(2500 * scale)):
            _add(tf, f"usr/lib/x86_64-linux-gnu/libsys{i}.so.1", synth.blob(rng.randint(10_000, 120_000)), mode=0o755)

    def cuda_toolkit(tf):
        root = "usr/local/cuda-12.4"
        _add(tf, f"{root}/version.json", json.dumps({"cuda": {"name": "CUDA SDK", "version": "12.4.1"},
                                                   "cuda_cudart": {"name": "CUDA Runtime (cudart)", "version": "12.4.127"}}).encode())
        lib = f"{root}/targets/x86_64-linux/lib"
        _add(tf, f"{lib}/libcudart.so.12.4.127", synth.blob(700_000), mode=0o755)
        _add(tf, f"{lib}/libcudart.so.12", link="libcudart.so.12.4.127")
        _add(tf, f"{lib}/libcudart.so", link="libcudart.so.12")
        for name, mb in (("libcublasLt", 420), ("libcublas", 90), ("libcufft", 220), ("libcusparse", 250), ("libcurand", 90)):
            size = int(mb * 1_000_000 * scale)
            _add(tf, f"{lib}/{name}.so.12.4.5.8", fatbin_like(synth, size, [70, 75, 80, 86, 90]), mode=0o755)
            _add(tf, f"{lib}/{name}.so.12", link=f"{name}.so.12.4.5.8")
        _add(tf, f"{root}/lib64", link="targets/x86_64-linux/lib")
        _add(tf, f"{root}/compat/libcuda.so.550.54.15", synth.blob(2_000_000), mode=0o755)
        _add(tf, f"{root}/compat/libcuda.so.1", link="libcuda.so.550.54.15")
        for i in range(int(3000 * scale)):
            _add(tf, f"{root}/include/hdr{i}.h", synth.source(rng.randint(500, 20000)))

    def cuda_links(tf):
        _add(tf, "etc/alternatives/cuda", link="/usr/local/cuda-12.4")
        _add(tf, "usr/local/cuda", link="/etc/alternatives/cuda")
        _add(tf, "etc/ld.so.conf.d/000_cuda.conf", b"/usr/local/cuda/targets/x86_64-linux/lib\n")

    def python_pkgs(n, prefix):
        def w(tf):
            sp = "usr/local/lib/python3.10/dist-packages"
            for i in range(int(n * scale)):
                _add(tf, f"{sp}/{prefix}{i % 300}/mod{i}.py", synth.source(rng.randint(300, 9000)))
        return w

    def torch(tf):
        sp = "usr/local/lib/python3.10/dist-packages"
        _add(tf, f"{sp}/torch/version.py", b"__version__ = '2.3.0'\ncuda = '12.4'\ngit_version = 'x'\n")
        _add(tf, f"{sp}/torch/lib/libtorch_cuda.so", fatbin_like(synth, int(500_000_000 * scale), [70, 75, 80, 86, 90]), mode=0o755)
        _add(tf, f"{sp}/torch/lib/libtorch_cpu.so", synth.blob(int(250_000_000 * scale)), mode=0o755)
        _add(tf, f"{sp}/nvidia_cuda_runtime_cu12-12.4.127.dist-info/METADATA", b"Name: nvidia-cuda-runtime-cu12\nVersion: 12.4.127\n")
        for i in range(int(5000 * scale)):
            _add(tf, f"{sp}/torch/sub{i % 200}/m{i}.py", synth.source(rng.randint(300, 15000)))

    def app(tf):
        _add(tf, "app/entrypoint.sh", b"#!/bin/sh\nexec deepstream-app -c /app/config.txt\n", mode=0o755)
        _add(tf, "app/config.txt", b"[application]\nenable-perf-measurement=1\n\n[primary-gie]\nenable=1\ngpu-id=0\nconfig-file=infer.txt\n")
        _add(tf, "app/infer.txt", b"[property]\ngpu-id=0\nnet-scale-factor=1\n")
        for i in range(int(800 * scale)):
            _add(tf, f"app/assets/a{i}.json", synth.blob(rng.randint(100, 4000)))

    def top_layer(tf):
        _add(tf, "app/build-info.txt", f"build {top}\n".encode())
        for i in range(200):
            _add(tf, f"app/top/{top}/f{i}.py", synth.source(2000 + i))

    if shape == "ngc":
        yield from ngc_layers(synth, scale, top, rng, base_os, cuda_toolkit_small(synth, scale), cuda_links, real)
        return
    if shape == "torch":
        if real is None:
            raise SystemExit("--shape torch needs --real DIR (benchmarks/real_content.py)")
        yield from torch_layers(top, base_os, real)
        return
    if shape == "bulk":
        yield from bulk_layers(synth, scale, top, rng, base_os, app)
        return
    if shape in ("app", "app2"):
        if real is None:
            raise SystemExit(f"--shape {shape} needs --real DIR (benchmarks/real_content.py)")
        yield from app_layers(synth, scale, top, rng, real, shape)
        return
    yield "debootstrap", base_os
    yield "apt-get install system libs", system_libs
    yield "cuda toolkit", cuda_toolkit
    yield "cuda alternatives", cuda_links
    yield "pip install numpy-like", python_pkgs(9000, "numpy")
    yield "pip install scipy-like", python_pkgs(9000, "scipy")
    yield "pip install torch", torch
    yield "pip install more", python_pkgs(8000, "transformers")
    yield "pip install more 2", python_pkgs(7000, "pandas")
    yield "pip install more 3", python_pkgs(3000, "nvidia_dali")
    yield "COPY app", app
    yield "COPY scripts", python_pkgs(500, "scripts")
    yield f"COPY top {top}", top_layer


def cuda_toolkit_small(synth: Synth, scale: float):
    """The CUDA toolkit of an NGC image, at a third of the gpu shape's library sizes."""
    rng = random.Random(11)

    def w(tf):
        root = "usr/local/cuda-12.4"
        _add(tf, f"{root}/version.json", json.dumps({"cuda": {"name": "CUDA SDK", "version": "12.4.1"},
                                                   "cuda_cudart": {"name": "CUDA Runtime (cudart)", "version": "12.4.127"}}).encode())
        lib = f"{root}/targets/x86_64-linux/lib"
        _add(tf, f"{lib}/libcudart.so.12.4.127", synth.blob(700_000), mode=0o755)
        _add(tf, f"{lib}/libcudart.so.12", link="libcudart.so.12.4.127")
        for name, mb in (("libcublasLt", 140), ("libcublas", 30), ("libcufft", 70), ("libcusparse", 80)):
            _add(tf, f"{lib}/{name}.so.12.4.5.8", fatbin_like(synth, int(mb * 1_000_000 * scale), [70, 80, 90]), mode=0o755)
        _add(tf, f"{root}/lib64", link="targets/x86_64-linux/lib")
        _add(tf, f"{root}/compat/libcuda.so.550.54.15", synth.blob(2_000_000), mode=0o755)
        _add(tf, f"{root}/compat/libcuda.so.1", link="libcuda.so.550.54.15")
        for i in range(int(2000 * scale)):
            _add(tf, f"{root}/include/hdr{i}.h", synth.source(rng.randint(500, 20000)))
    return w


# Extensions of a framework source tree (PyTorch-like), by share of files.
_SOURCE_TREE = (("py", 40), ("h", 14), ("cpp", 14), ("cu", 5), ("txt", 6), ("yaml", 5), ("md", 5), ("json", 3),
                ("sh", 2), ("cfg", 1), ("in", 1), ("cmake", 2), ("rst", 2))
_ENTRYPOINT_D = (
    ("10-banner.sh", b"cat /opt/nvidia/entrypoint.d/banner.txt\necho \"Container image Copyright (c)\"\n"),
    ("15-container-copyright.txt", b"NVIDIA Release 24.04 (build 1)\n"),
    ("30-cuda-check.sh", b"if [ -z \"$CUDA_VERSION\" ]; then echo 'no CUDA'; fi\n"),
    ("50-gpu-driver-check.sh", b"if ! nvidia-smi -L >/dev/null 2>&1; then\n  echo 'WARNING: The NVIDIA Driver was not detected.'\nfi\n"),
    ("70-shm-check.sh", b"SHM=$(df -k /dev/shm | awk 'NR==2{print $2}')\n[ \"$SHM\" -lt 1048576 ] && echo 'shm is small'\n"),
    ("80-set-visible.sh", b"export CUDA_DEVICE_ORDER=PCI_BUS_ID\n"),
)


def torch_layers(top: str, base_os, real: Path):
    wheel = real_content.torch_wheel(real)
    site = "usr/local/lib/python3.11/site-packages"

    def installed(tf):
        for name, data, mode in real_content.wheel_members(wheel):
            _add(tf, f"{site}/{name}", data, mode=mode)

    def sources(tf):
        for name, data, _mode in real_content.wheel_members(wheel, real_content.is_source):
            _add(tf, f"app/{name}", data)

    def entrypoint(tf):
        _add(tf, "app/entrypoint.sh", b"#!/bin/sh\nset -e\nexec python3 /app/train.py \"$@\"\n", mode=0o755)
        _add(tf, "app/train.py", b"import torch\n\ndevice = torch.device('cuda' if torch.cuda.is_available() else 'cpu')\n"
             b"model = torch.nn.Linear(8, 2).to(device)\nprint(model(torch.zeros(1, 8, device=device)))\n")

    def top_layer(tf):
        _add(tf, "app/build-info.txt", f"build {top}\n".encode())

    yield "debootstrap", base_os
    yield "pip install torch (the CPU wheel)", installed
    yield "COPY . /app (PyTorch's sources)", sources
    yield "COPY entrypoint", entrypoint
    yield f"COPY top {top}", top_layer


def app_layers(synth: Synth, scale: float, top: str, rng: random.Random, real: Path, shape: str):
    """A small CUDA base (as nvidia/cuda:*-base is) and one layer of a real repository under /app."""

    def os_layer(tf):
        for i in range(int(3000 * scale)):
            _add(tf, f"usr/share/doc/pkg{i % 300}/file{i}.txt", synth.blob(rng.randint(200, 8000)))
        _add(tf, "etc/ld.so.conf", b"include /etc/ld.so.conf.d/*.conf\n")

    def cuda_base(tf):
        root = "usr/local/cuda-12.4"
        _add(tf, f"{root}/version.json", json.dumps({"cuda": {"name": "CUDA SDK", "version": "12.4.1"},
                                                   "cuda_cudart": {"name": "CUDA Runtime (cudart)", "version": "12.4.127"}}).encode())
        lib = f"{root}/targets/x86_64-linux/lib"
        _add(tf, f"{lib}/libcudart.so.12.4.127", synth.blob(700_000), mode=0o755)
        _add(tf, f"{lib}/libcudart.so.12", link="libcudart.so.12.4.127")
        _add(tf, f"{root}/lib64", link="targets/x86_64-linux/lib")
        _add(tf, f"{root}/compat/libcuda.so.550.54.15", synth.blob(2_000_000), mode=0o755)
        _add(tf, f"{root}/compat/libcuda.so.1", link="libcuda.so.550.54.15")
        _add(tf, "etc/alternatives/cuda", link="/usr/local/cuda-12.4")
        _add(tf, "usr/local/cuda", link="/etc/alternatives/cuda")
        _add(tf, "etc/ld.so.conf.d/000_cuda.conf", b"/usr/local/cuda/targets/x86_64-linux/lib\n")

    def application(tf):
        if shape == "app":
            members = real_content.wheel_members(real_content.torch_wheel(real), real_content.is_source)
        else:
            members = real_content.sdist_members(real_content.second_tree(real))
        for name, data, mode in members:
            _add(tf, f"app/{name}", data, mode=mode)
        _add(tf, "app/entrypoint.sh", b"#!/bin/sh\nset -e\nexec python3 /app/train.py \"$@\"\n", mode=0o755)
        _add(tf, "app/build-info.txt", f"build {top}\n".encode())

    yield "ubuntu base", os_layer
    yield "cuda base (runtime, compat)", cuda_base
    yield f"COPY . /app ({'PyTorch' if shape == 'app' else 'transformers'} sources, build {top})", application


def real_ngc_layers(real: Path):
    """The NGC image's real files: NVIDIA's CUDA wheels and common packages in dist-packages, PyTorch's sources."""
    sp = "usr/local/lib/python3.10/dist-packages"

    def cuda_wheels(tf):
        for wheel in real_content.cuda_wheels(real):
            for name, data, mode in real_content.wheel_members(wheel):
                _add(tf, f"{sp}/{name}", data, mode=mode)

    def dist_packages(tf):
        for name, data, mode in real_content.tree_members(real / "dist"):
            _add(tf, f"{sp}/{name}", data, mode=mode)

    def sources(tf):
        for name, data, _mode in real_content.wheel_members(real_content.torch_wheel(real), real_content.is_source):
            _add(tf, f"opt/pytorch/pytorch/{name}", data)

    yield "pip install nvidia-*-cu12 (real wheels)", cuda_wheels
    yield "pip install (real packages)", dist_packages
    yield "PyTorch sources (real)", sources


def ngc_layers(synth: Synth, scale: float, top: str, rng: random.Random, base_os, cuda_toolkit, cuda_links,
               real: Path | None = None):
    exts = [e for e, n in _SOURCE_TREE for _ in range(n)]

    def source_tree(tf):
        for i in range(int(20000 * scale)):
            ext = exts[i % len(exts)]
            d = f"opt/pytorch/pytorch/{('torch', 'aten/src/ATen', 'caffe2', 'test', 'tools', 'third_party/x')[i % 6]}/d{i % 400}"
            name = "CMakeLists.txt" if ext == "txt" and i % 3 == 0 else f"f{i}.{ext}"
            body = synth.source(rng.randint(200, 12000)) if ext == "py" else synth.words(rng.randint(200, 12000))
            _add(tf, f"{d}/{name}" if name != "CMakeLists.txt" else f"{d}/s{i}/{name}", body)

    def dist_packages(tf):
        sp = "usr/local/lib/python3.10/dist-packages"
        n_pkgs = int(1000 * scale)
        for p in range(n_pkgs):
            di = f"{sp}/pkg{p}-1.{p % 10}.0.dist-info"
            _add(tf, f"{di}/METADATA", b"Metadata-Version: 2.1\nName: pkg%d\nVersion: 1.0\n\n" % p + synth.words(rng.randint(500, 6000)))
            _add(tf, f"{di}/RECORD", synth.words(rng.randint(300, 4000)))
            _add(tf, f"{di}/WHEEL", b"Wheel-Version: 1.0\nGenerator: bdist_wheel\nRoot-Is-Purelib: true\nTag: py3-none-any\n")
            _add(tf, f"{di}/top_level.txt", b"pkg%d\n" % p)
            _add(tf, f"{di}/INSTALLER", b"pip\n")
            _add(tf, f"{di}/LICENSE.txt", synth.words(1200))
            _add(tf, f"{di}/entry_points.txt", b"[console_scripts]\npkg%d = pkg%d.cli:main\n" % (p, p))
            for j in range(13):
                _add(tf, f"{sp}/pkg{p}/m{j}.py", synth.source(rng.randint(300, 9000)))

    def workspace(tf):
        _add(tf, "workspace/README.md", synth.words(4000))
        for i in range(int(500 * scale)):
            ex = f"workspace/examples/ex{i % 50}"
            kind = i % 5
            if kind == 0:
                _add(tf, f"{ex}/README.md", synth.words(rng.randint(500, 8000)))
            elif kind == 1:
                _add(tf, f"{ex}/main{i}.py", synth.source(rng.randint(500, 8000)))
            elif kind == 2:
                _add(tf, f"{ex}/nb{i}.ipynb", b'{"cells": [' + synth.words(rng.randint(500, 20000)).replace(b"\n", b" ") + b"]}")
            elif kind == 3:
                _add(tf, f"{ex}/run{i}.sh", b"#!/bin/bash\npython main%d.py --epochs 1 \"$@\"\n" % (i - 2), mode=0o755)
            else:
                _add(tf, f"{ex}/config{i}.yaml", b"trainer:\n  max_epochs: 1\n" + synth.words(rng.randint(200, 3000)).replace(b"\n", b"\n# "))

    def entrypoint(tf):
        _add(tf, "opt/nvidia/nvidia_entrypoint.sh", b"#!/bin/bash\nset -e\nfor _s in /opt/nvidia/entrypoint.d/*.sh; do\n"
             b"  source \"$_s\"\ndone\nif [[ $# -eq 0 ]]; then exec /bin/bash; else exec \"$@\"; fi\n", mode=0o755)
        for name, body in _ENTRYPOINT_D:
            _add(tf, f"opt/nvidia/entrypoint.d/{name}", body, mode=0o755)
        _add(tf, "opt/nvidia/entrypoint.d/banner.txt", b"== PyTorch ==\n")
        _add(tf, "usr/local/bin/nvidia_entrypoint.sh", link="/opt/nvidia/nvidia_entrypoint.sh")

    def top_layer(tf):
        _add(tf, "workspace/build-info.txt", f"build {top}\n".encode())
        for i in range(200):
            _add(tf, f"workspace/top/{top}/f{i}.py", synth.source(2000 + i))

    yield "debootstrap", base_os
    yield "cuda toolkit", cuda_toolkit
    yield "cuda alternatives", cuda_links
    yield "framework source tree", source_tree
    yield "pip install (dist-packages)", dist_packages
    yield "COPY workspace examples", workspace
    if real is not None:
        yield from real_ngc_layers(real)
    yield "entrypoint.d", entrypoint
    yield f"COPY top {top}", top_layer


def bulk_layers(synth: Synth, scale: float, top: str, rng: random.Random, base_os, app):
    kinds = ("txt", "txt", "json", "bin", "bin", "yaml", "cfg", "txt", "json", "bin")

    def shard(n: int):
        def w(tf):
            for i in range(int(3000 * scale)):
                ext = kinds[i % len(kinds)]
                size = 40_000 + rng.randint(-2000, 2000)
                body = synth.blob(size) if ext == "bin" else synth.words(size)
                _add(tf, f"opt/data/shard{n}/part{i // 100}/item{i}.{ext}", body)
        return w

    def top_layer(tf):
        _add(tf, "app/build-info.txt", f"build {top}\n".encode())

    yield "debootstrap", base_os
    for n in range(10):
        yield f"COPY data shard {n}", shard(n)
    yield "COPY app", app
    yield f"COPY top {top}", top_layer


class _HashingWriter(io.RawIOBase):
    def __init__(self, raw):
        self.raw = raw
        self.hash = hashlib.sha256()
        self.size = 0

    def writable(self):
        return True

    def write(self, b):
        self.hash.update(b)
        self.size += len(b)
        return self.raw.write(b)


def write_layer(blobs: Path, created_by: str, writer) -> dict:
    tmp = blobs / ".tmp-layer"
    with open(tmp, "wb") as fh:
        comp = _HashingWriter(fh)
        with igzip.IGzipFile(fileobj=comp, mode="wb", compresslevel=2, mtime=0) as gz:
            tarh = _HashingWriter(gz)
            counter = {"files": 0}
            with tarfile.open(fileobj=tarh, mode="w|", format=tarfile.PAX_FORMAT) as tf:
                orig = tf.addfile

                def addfile(ti, f=None):
                    counter["files"] += 1
                    return orig(ti, f)

                tf.addfile = addfile  # type: ignore[method-assign]
                writer(tf)
    digest = "sha256:" + comp.hash.hexdigest()
    tmp.rename(blobs / comp.hash.hexdigest())
    return {"digest": digest, "diff_id": "sha256:" + tarh.hash.hexdigest(), "size": comp.size,
            "uncompressed": tarh.size, "files": counter["files"], "created_by": created_by}


def write_json_blob(blobs: Path, obj) -> tuple[str, int]:
    data = json.dumps(obj, sort_keys=True, separators=(",", ":")).encode()
    h = hashlib.sha256(data).hexdigest()
    (blobs / h).write_bytes(data)
    return "sha256:" + h, len(data)


def build(out: Path, scale: float, seed: int, shape: str = "gpu", real: Path | None = None) -> dict:
    layout = out / "layout"
    blobs = layout / "blobs" / "sha256"
    blobs.mkdir(parents=True, exist_ok=True)
    (layout / "oci-layout").write_text('{"imageLayoutVersion":"1.0.0"}')
    shared: list[dict] = []
    synth = Synth(seed)
    specs = list(layer_specs(synth, scale, "base", shape, real))
    for created_by, writer in specs[:-1]:
        shared.append(write_layer(blobs, created_by, writer))
    manifests = []
    summary = {"images": {}}
    for tag in ("base", "second"):
        created_by, writer = list(layer_specs(Synth(seed), scale, tag, shape, real))[-1]
        layers = shared + [write_layer(blobs, created_by, writer)]
        config = {
            "architecture": "amd64", "os": "linux",
            "config": {"Env": ["PATH=/usr/local/nvidia/bin:/usr/local/cuda/bin:/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin",
                               "CUDA_VERSION=12.4.1",
                               "NVIDIA_REQUIRE_CUDA=cuda>=12.4 brand=tesla,driver>=470,driver<471 brand=tesla,driver>=535,driver<536",
                               "NVIDIA_VISIBLE_DEVICES=all", "NVIDIA_DRIVER_CAPABILITIES=compute,utility,video",
                               "LD_LIBRARY_PATH=/usr/local/nvidia/lib:/usr/local/nvidia/lib64"],
                       "Entrypoint": ["/opt/nvidia/nvidia_entrypoint.sh"] if shape == "ngc" else ["/app/entrypoint.sh"]},
            "rootfs": {"type": "layers", "diff_ids": [l["diff_id"] for l in layers]},
            "history": [{"created_by": l["created_by"]} for l in layers],
        }
        cdigest, csize = write_json_blob(blobs, config)
        manifest = {"schemaVersion": 2, "mediaType": OCI_MANIFEST,
                    "config": {"mediaType": OCI_CONFIG, "digest": cdigest, "size": csize},
                    "layers": [{"mediaType": OCI_LAYER_GZ, "digest": l["digest"], "size": l["size"]} for l in layers]}
        mdigest, msize = write_json_blob(blobs, manifest)
        manifests.append({"mediaType": OCI_MANIFEST, "digest": mdigest, "size": msize,
                          "annotations": {"org.opencontainers.image.ref.name": tag}})
        summary["images"][tag] = {
            "manifest": mdigest, "layers": len(layers),
            "files": sum(l["files"] for l in layers),
            "uncompressed_bytes": sum(l["uncompressed"] for l in layers),
            "compressed_bytes": sum(l["size"] for l in layers),
        }
    (layout / "index.json").write_text(json.dumps({"schemaVersion": 2, "mediaType": OCI_INDEX, "manifests": manifests}))
    summary["layout"] = str(layout)
    return summary


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("out", type=Path)
    ap.add_argument("--shape", choices=("gpu", "ngc", "bulk", "torch", "app", "app2"), default="gpu")
    ap.add_argument("--scale", type=float, default=1.0)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--real", type=Path, help="real files fetched by real_content.py (shapes ngc and torch)")
    args = ap.parse_args()
    print(json.dumps(build(args.out, args.scale, args.seed, args.shape, args.real), indent=2))


if __name__ == "__main__":
    main()
