"""The reader's cheap paths: uninteresting member data is skipped with readinto into one reused
buffer (never materialised), memory stays bounded by what is captured, and the indexed glob
finds exactly what a full scan finds."""

from __future__ import annotations

import random
import subprocess
import sys

from imagelint.layers.filesystem import ImageFilesystem
from imagelint.layers.match import compile_glob
from imagelint.layers.model import FILE, Entry, LayerExtract
from imagelint.layers.reader import extract_layer
from tests.layers.helpers import blob_layer, spec_of
from tests.support.imagebuilder import File, layer_tar


def test_skipped_member_data_is_never_materialised(monkeypatch) -> None:
    big = bytes(range(256)) * (48 * 1024)  # 12 MB nobody asked for
    tar = layer_tar([File("usr/share/big.bin", big), File("etc/ld.so.conf", b"/usr/lib\n")])
    layer = blob_layer(0, tar, "none")
    from imagelint.layers import tarwalk

    read_sizes: list[int] = []
    skip_buffers: set[int] = set()
    real_read_exact, real_fill = tarwalk.TarWalker._read_exact, tarwalk.TarWalker._fill

    def read_exact(self, n, what):  # type: ignore[no-untyped-def]
        read_sizes.append(n)
        return real_read_exact(self, n, what)

    def fill(self, view):  # type: ignore[no-untyped-def]
        skip_buffers.add(id(view.obj))
        return real_fill(self, view)

    monkeypatch.setattr(tarwalk.TarWalker, "_read_exact", read_exact)
    monkeypatch.setattr(tarwalk.TarWalker, "_fill", fill)
    x = extract_layer(layer, spec_of(("etc/ld.so.conf", "content", 4096), ("usr/share/*", "record")))
    assert x.contents["etc/ld.so.conf"] == b"/usr/lib\n"
    assert sum(read_sizes) < 64 * 1024, "only headers and the captured file were read as bytes objects"
    # Two buffers, each reused: the header window and the skip buffer (data past the window).
    assert len(skip_buffers) == 2, "skipping reuses the walker's two buffers"


def test_peak_memory_is_bounded_by_what_is_captured(tmp_path) -> None:
    """A 600 MB layer (one huge uninteresting file plus a scanned library) is read in a child
    whose peak RSS grows by far less than the layer: nothing is held whole."""
    big = tmp_path / "layer.tar.gz"
    probe = r"""
import io, os, resource, sys, tarfile
from isal import igzip
path = sys.argv[1]
chunk = os.urandom(1 << 16) * 16  # 1 MB, compresses ~16x
with igzip.open(path, "wb", compresslevel=0) as gz, tarfile.open(fileobj=gz, mode="w|") as tf:
    for name, mb in (("usr/share/huge.bin", 500), ("usr/lib/libbig.so.1", 100)):
        ti = tarfile.TarInfo(name); ti.size = mb << 20
        class R:
            left = ti.size
            def read(self, n):
                n = min(n, self.left, len(chunk)); self.left -= n; return chunk[:n]
        tf.addfile(ti, R())
before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
from imagelint.facts.capture import CAPTURE_SPEC
from imagelint.image import Layer
from imagelint.layers.reader import extract_layer
layer = Layer(0, "sha256:" + "0" * 64, None, "application/vnd.oci.image.layer.v1.tar+gzip", None, lambda: open(path, "rb"))
x = extract_layer(layer, CAPTURE_SPEC)
after = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
print(before, after, len(x.entries), "usr/lib/libbig.so.1" in x.scans)
"""
    done = subprocess.run([sys.executable, "-c", probe, str(big)], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr[-2000:]
    before, after, entries, scanned = done.stdout.split()
    assert scanned == "True", "the library was really streamed through its scanner"
    grown_mb = (int(after) - int(before)) / 1024
    assert grown_mb < 48, f"peak RSS grew by {grown_mb:.0f} MB while reading a 600 MB layer"


def _fs(paths: list[str]) -> ImageFilesystem:
    entries = tuple(Entry(p, FILE, 1, 0o644, None, 0, "sha256:" + "1" * 64) for p in paths)
    return ImageFilesystem.from_extracts([LayerExtract(0, "sha256:" + "1" * 64, entries)])


def test_indexed_glob_matches_a_full_scan() -> None:
    rng = random.Random(6)
    dirs = ["usr/lib", "usr/lib/x86_64-linux-gnu", "usr/local/cuda-12.4/lib64", "usr/local/cuda/compat", "opt/app",
            "usr/local/lib/python3.10/dist-packages/torch/lib", "lib", ""]
    names = ["libcuda.so", "libcuda.so.1", "libcuda.so.550.54.15", "libnvidia-ml.so.1", "libcudart.so.12", "version.json",
             "run.sh", "a.py", "[x].so", "lib*.so", "libc.so.6", "nvidia-smi"]
    paths = sorted({f"{d}/{n}".lstrip("/") for d in dirs for n in names if rng.random() < 0.8})
    fs = _fs(paths)
    patterns = ["**/libcuda.so*", "**/lib*.so.[0-9]*", "**/*.so", "usr/local/cuda*/**/*", "usr/lib/*", "**/version.json",
                "*", "**/[[]x].so", "**/lib[*].so", "opt/**", "**/nvidia-smi", "usr/local/cuda-12.4/lib64/libcudart.so.12",
                "/usr/lib/libcuda.so.1", "**/*/libcuda.so", "**/**/run.sh", "lib?/*", "**/lib*"]
    for pattern in patterns:
        regex = compile_glob(pattern)
        expected = [p for p in paths if regex.fullmatch(p)]
        assert [e.path for e in fs.glob(pattern)] == expected, pattern
