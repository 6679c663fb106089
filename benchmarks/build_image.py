"""Build a realistic multi-gigabyte GPU image as an OCI layout, streaming (never whole in memory).

    python3 benchmarks/build_image.py OUT_DIR [--scale 1.0] [--seed 1]

Writes OUT_DIR/layout (an OCI layout with two tags: ``base`` and ``second``, which
share every layer but the top one) and prints a JSON summary (layers, files,
uncompressed and compressed bytes). Content is synthetic but shaped like a real
CUDA + PyTorch image: a CUDA toolkit tree with the official symlinks and
version.json, a compat libcuda, big libraries with fatbin-like payloads, tens of
thousands of small Python files, and app layers with scripts and configs.
Data is semi-compressible (about 2-3x under gzip), like real libraries.
"""

from __future__ import annotations

import argparse
import hashlib
import io
import json
import os
import random
import tarfile
from pathlib import Path
from typing import Iterator

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


def layer_specs(synth: Synth, scale: float, top: str) -> Iterator[tuple[str, Iterator[None]]]:
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


def build(out: Path, scale: float, seed: int) -> dict:
    layout = out / "layout"
    blobs = layout / "blobs" / "sha256"
    blobs.mkdir(parents=True, exist_ok=True)
    (layout / "oci-layout").write_text('{"imageLayoutVersion":"1.0.0"}')
    shared: list[dict] = []
    specs = list(layer_specs(Synth(seed), scale, "base"))
    for created_by, writer in specs[:-1]:
        shared.append(write_layer(blobs, created_by, writer))
    manifests = []
    summary = {"images": {}}
    for tag in ("base", "second"):
        created_by, writer = list(layer_specs(Synth(seed), scale, tag))[-1]
        layers = shared + [write_layer(blobs, created_by, writer)]
        config = {
            "architecture": "amd64", "os": "linux",
            "config": {"Env": ["PATH=/usr/local/nvidia/bin:/usr/local/cuda/bin:/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin",
                               "CUDA_VERSION=12.4.1",
                               "NVIDIA_REQUIRE_CUDA=cuda>=12.4 brand=tesla,driver>=470,driver<471 brand=tesla,driver>=535,driver<536",
                               "NVIDIA_VISIBLE_DEVICES=all", "NVIDIA_DRIVER_CAPABILITIES=compute,utility,video",
                               "LD_LIBRARY_PATH=/usr/local/nvidia/lib:/usr/local/nvidia/lib64"],
                       "Entrypoint": ["/app/entrypoint.sh"]},
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
    ap.add_argument("--scale", type=float, default=1.0)
    ap.add_argument("--seed", type=int, default=1)
    args = ap.parse_args()
    print(json.dumps(build(args.out, args.scale, args.seed), indent=2))


if __name__ == "__main__":
    main()
