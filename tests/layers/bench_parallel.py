"""Measure read_image_filesystem with 1 vs 2 workers (and tarwalk vs tarfile); not a test.

    python3 -m tests.layers.bench_parallel [MB per layer] [layers]

Builds gzip and zstd layers of many mid-sized, moderately compressible files in
memory, then times full reads. Used to pick reader.DEFAULT_WORKERS.
"""

from __future__ import annotations

import io
import os
import random
import sys
import tarfile
import time

from imagelint.image import Image, ImageConfig, Layer, Platform
from imagelint.layers.decompress import open_decompressed
from imagelint.layers.model import CaptureRule, CaptureSpec
from imagelint.layers.reader import read_image_filesystem
from tests.support.imagebuilder import OCI_LAYER, File, compress, layer_tar, sha256


def _payload(rng: random.Random, n: int) -> bytes:
    words = [os.urandom(rng.randint(2, 12)).hex().encode() for _ in range(512)]
    out = bytearray()
    while len(out) < n:
        out += rng.choice(words) + b" "
    return bytes(out[:n])


def build_layers(mb: int, count: int, compression: str) -> list[Layer]:
    rng = random.Random(1)
    layers = []
    for i in range(count):
        members = []
        total = 0
        j = 0
        while total < mb << 20:
            size = rng.choice([200, 4000, 60000, 900000])
            members.append(File(f"usr/lib/pkg{i}/f{j}.so", _payload(rng, size)))
            total += size
            j += 1
        blob = compress(layer_tar(members), compression)
        layers.append(Layer(i, sha256(blob), len(blob), OCI_LAYER[compression], None, lambda b=blob: io.BytesIO(b)))
    return layers


def main() -> None:
    mb = int(sys.argv[1]) if len(sys.argv) > 1 else 64
    count = int(sys.argv[2]) if len(sys.argv) > 2 else 4
    spec = CaptureSpec((CaptureRule("**/*.json", "content"),))
    for compression in ("gzip", "zstd"):
        layers = build_layers(mb, count, compression)
        image = Image("bench", "test", Platform("linux", "amd64"), ImageConfig(), tuple(layers))
        for workers in (1, 2, 3):
            best = min(_timed(lambda: read_image_filesystem(image, spec, workers=workers)) for _ in range(3))
            print(f"{compression} {count}x{mb}MB workers={workers}: {best:.3f}s ({count * mb / best:.0f} MB/s)")
        t_tarfile = min(_timed(lambda: _tarfile_walk(layers)) for _ in range(2))
        print(f"{compression} tarfile serial walk: {t_tarfile:.3f}s ({count * mb / t_tarfile:.0f} MB/s)")


def _tarfile_walk(layers: list[Layer]) -> None:
    for layer in layers:
        with tarfile.open(fileobj=open_decompressed(layer.open(), layer.compression), mode="r|") as tf:
            for _ in tf:
                pass


def _timed(fn) -> float:  # type: ignore[no-untyped-def]
    t = time.perf_counter()
    fn()
    return time.perf_counter() - t


if __name__ == "__main__":
    main()
