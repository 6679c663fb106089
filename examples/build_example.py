#!/usr/bin/env python3
"""Build ``examples/cuda-app``: a tiny OCI layout shaped like a CUDA 12.4.1 DeepStream app.

    python3 examples/build_example.py [OUT_DIR]      # default: examples/cuda-app

Reproducible: the same bytes on every run (fixed mtimes, sorted JSON, uncompressed
layers so no compressor version can change a digest). No NVIDIA binary is in it:
``libcudart`` and the compat ``libcuda`` are synthesized, inert ELF files
(``examples/synth_elf.py``); the compat one carries a forward-compat note like
the real ``cuda-compat-12-4`` library. The env is the official 12.4.1 image's
(``/work/shared/reference/cuda-image-env.json``). The app's entrypoint runs
``deepstream-app -c /app/config.txt`` and that config pins ``gpu-id=1``: the bug
``imagelint`` exists to catch.
"""

from __future__ import annotations

import json
import shutil
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from examples.synth_elf import build_elf, compat_libcuda  # noqa: E402
from tests.support.imagebuilder import (  # noqa: E402
    Dir,
    File,
    ImageSpec,
    LayerSpec,
    Symlink,
    write_oci_layout,
)

CUDA = "cuda-12.4"
LIB = f"usr/local/{CUDA}/targets/x86_64-linux/lib"

# Official nvidia/cuda:12.4.1-base-ubuntu22.04 (amd64) env, verbatim from cuda-image-env.json.
REQUIRE_CUDA_12_4_1 = " ".join(
    ["cuda>=12.4"]
    + [
        f"brand={brand},driver>={branch},driver<{branch + 1}"
        for branch in (470, 525, 535)
        for brand in ("tesla", "unknown", "nvidia", "nvidiartx", "geforce", "geforcertx", "quadro", "quadrortx", "titan", "titanrtx")
    ]
)
ENV = [
    ("PATH", "/usr/local/nvidia/bin:/usr/local/cuda/bin:/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"),
    ("NVARCH", "x86_64"),
    ("NVIDIA_REQUIRE_CUDA", REQUIRE_CUDA_12_4_1),
    ("NV_CUDA_CUDART_VERSION", "12.4.127-1"),
    ("NV_CUDA_COMPAT_PACKAGE", "cuda-compat-12-4"),
    ("CUDA_VERSION", "12.4.1"),
    ("LD_LIBRARY_PATH", "/usr/local/nvidia/lib:/usr/local/nvidia/lib64"),
    ("NVIDIA_VISIBLE_DEVICES", "all"),
    ("NVIDIA_DRIVER_CAPABILITIES", "compute,utility"),
]

VERSION_JSON = {
    "cuda": {"name": "CUDA SDK", "version": "12.4.1"},
    "cuda_cudart": {"name": "CUDA Runtime (cudart)", "version": "12.4.127"},
    "cuda_compat": {"name": "CUDA compat L4T", "version": "12.4.35753180"},
}

ENTRYPOINT_SH = b"""#!/bin/bash
# Start the analytics pipeline.
set -e
CONFIG=/app/config.txt
exec deepstream-app -c "$CONFIG"
"""

CONFIG_TXT = b"""[application]
enable-perf-measurement=1
perf-measurement-interval-sec=5

[source0]
enable=1
type=3
uri=file:///app/sample.mp4
# gpu-id=0 was the default; the host index below was copied from a dev box
gpu-id=1

[streammux]
batch-size=1
width=1280
height=720

[primary-gie]
enable=1
config-file=pgie.txt
"""

PGIE_TXT = b"""[property]
net-scale-factor=0.0039215697906911373
model-engine-file=model.engine
batch-size=1
gpu-id=0
"""


def build_image() -> ImageSpec:
    base = [
        Dir("etc/ld.so.conf.d"),
        File("etc/ld.so.conf", b"include /etc/ld.so.conf.d/*.conf\n"),
        File("etc/ld.so.conf.d/000_cuda.conf", b"/usr/local/cuda/targets/x86_64-linux/lib\n"),
        File("etc/ld.so.conf.d/x86_64-linux-gnu.conf", b"# Multiarch support\n/usr/local/lib/x86_64-linux-gnu\n/lib/x86_64-linux-gnu\n/usr/lib/x86_64-linux-gnu\n"),
        Dir(f"usr/local/{CUDA}"),
        File(f"usr/local/{CUDA}/version.json", (json.dumps(VERSION_JSON, indent=3) + "\n").encode()),
        Symlink("usr/local/cuda", CUDA),
        Symlink(f"usr/local/{CUDA}/lib64", "targets/x86_64-linux/lib"),
        File(f"{LIB}/libcudart.so.12.4.127", build_elf(soname_text=b"libcudart.so.12\x00"), 0o755),
        Symlink(f"{LIB}/libcudart.so.12", "libcudart.so.12.4.127"),
        File(f"usr/local/{CUDA}/compat/libcuda.so.550.54.15",
             compat_libcuda("12.4", [470, 525, 535, 545, 550], [1, 2, 7, 8, 9, 10, 11, 12, 13, 14]), 0o755),
        Symlink(f"usr/local/{CUDA}/compat/libcuda.so.1", "libcuda.so.550.54.15"),
        Symlink(f"usr/local/{CUDA}/compat/libcuda.so", "libcuda.so.1"),
    ]
    app = [
        Dir("app"),
        File("app/entrypoint.sh", ENTRYPOINT_SH, 0o755),
        File("app/config.txt", CONFIG_TXT),
        File("app/pgie.txt", PGIE_TXT),
    ]
    return ImageSpec(
        layers=[
            LayerSpec(base, compression="none", created_by="COPY cuda-12.4-runtime / # synthesized, no NVIDIA binaries"),
            LayerSpec(app, compression="none", created_by="COPY app /app"),
        ],
        env=ENV,
        entrypoint=["/app/entrypoint.sh"],
        working_dir="/app",
        labels={"maintainer": "NVIDIA CORPORATION <cudatools@nvidia.com>", "org.opencontainers.image.title": "imagelint example"},
        annotations={"org.opencontainers.image.base.name": "docker.io/nvidia/cuda:12.4.1-base-ubuntu22.04"},
    )


def build(out: Path) -> Path:
    if out.exists():
        if not (out / "oci-layout").is_file():
            raise SystemExit(f"{out} exists and is not an OCI layout; refusing to replace it")
        shutil.rmtree(out)
    return write_oci_layout(out, {"latest": build_image().build()})


if __name__ == "__main__":
    target = Path(sys.argv[1]) if len(sys.argv) > 1 else Path(__file__).resolve().parent / "cuda-app"
    print(build(target))
