"""The layer cache: a second read of the same layers comes from the cache, entries are
atomic and self-checking, the size bound holds, and `imagelint cache` reports and cleans."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

from imagelint.cachedir import default_cache_dir
from imagelint.layers.cache import LayerCache, caching_extractor
from imagelint.layers.reader import extract_layer, read_image_filesystem
from tests.layers.helpers import built_image, spec_of
from tests.support.imagebuilder import File, Symlink

SPEC = spec_of(("**/version.json", "content", 4096), ("**/lib*.so*", "record"))


def _image(extra: bytes = b"top"):
    return built_image(
        [
            [File("usr/local/cuda-12.4/version.json", b'{"cuda":{"version":"12.4.1"}}'), Symlink("usr/local/cuda", "cuda-12.4")],
            [File("usr/lib/x86_64-linux-gnu/libcuda.so.535.104.05", b"\x7fELF")],
            [File("app/top.txt", extra)],
        ]
    )


class CountingExtract:
    def __init__(self) -> None:
        self.digests: list[str] = []

    def __call__(self, layer, spec, limits):  # type: ignore[no-untyped-def]
        self.digests.append(layer.digest)
        return extract_layer(layer, spec, limits)


def test_second_read_comes_from_cache_and_is_identical(tmp_path) -> None:
    cache = LayerCache(tmp_path / "cache")
    inner = CountingExtract()
    image = _image()
    cold = read_image_filesystem(image, SPEC, extract=caching_extractor(cache, inner), workers=1)
    assert len(inner.digests) == 3
    warm = read_image_filesystem(image, SPEC, extract=caching_extractor(cache, inner), workers=1)
    assert len(inner.digests) == 3, "warm read must not extract any layer again"
    assert cache.hits == 3
    assert warm.read("usr/local/cuda/version.json") == cold.read("usr/local/cuda/version.json")
    assert [e.path for e in warm.entries()] == [e.path for e in cold.entries()]
    assert [e.layer_digest for e in warm.entries()] == [e.layer_digest for e in cold.entries()]


def test_an_image_on_the_same_base_reads_only_its_new_layer(tmp_path) -> None:
    cache = LayerCache(tmp_path / "cache")
    inner = CountingExtract()
    read_image_filesystem(_image(b"one"), SPEC, extract=caching_extractor(cache, inner), workers=2)
    inner.digests.clear()
    second = _image(b"two")
    read_image_filesystem(second, SPEC, extract=caching_extractor(cache, inner), workers=2)
    assert inner.digests == [second.layers[2].digest]


def test_a_different_capture_spec_is_a_different_key(tmp_path) -> None:
    cache = LayerCache(tmp_path / "cache")
    inner = CountingExtract()
    image = _image()
    read_image_filesystem(image, SPEC, extract=caching_extractor(cache, inner), workers=1)
    other = spec_of(("**/version.json", "content", 8192))
    read_image_filesystem(image, other, extract=caching_extractor(cache, inner), workers=1)
    assert len(inner.digests) == 6


def test_corrupt_or_torn_entries_are_misses_not_errors(tmp_path) -> None:
    cache = LayerCache(tmp_path / "cache")
    inner = CountingExtract()
    image = _image()
    read_image_filesystem(image, SPEC, extract=caching_extractor(cache, inner), workers=1)
    files = sorted((tmp_path / "cache").rglob("*.ilx"))
    assert len(files) == 3
    files[0].write_bytes(files[0].read_bytes()[:-7])  # torn
    files[1].write_bytes(b"ILX1" + b"\0" * 32 + b"garbage")  # checksum mismatch
    fs = read_image_filesystem(image, SPEC, extract=caching_extractor(cache, inner), workers=1)
    assert len(inner.digests) == 5
    assert fs.read("usr/local/cuda/version.json")
    damaged = bytearray(files[2].read_bytes())  # right magic and key, one payload bit flipped
    damaged[len(damaged) // 2] ^= 0x10
    files[2].write_bytes(bytes(damaged))
    assert cache.get(files[2].stem) is None
    read_image_filesystem(image, SPEC, extract=caching_extractor(cache, inner), workers=1)
    assert len(inner.digests) == 6


def test_size_bound_evicts_least_recently_used(tmp_path) -> None:
    cache = LayerCache(tmp_path / "cache", max_bytes=10_000)
    for i in range(30):
        cache.put(f"{i:064x}", os.urandom(1000))
        os.utime(cache._path(f"{i:064x}"), (1_000_000 + i, 1_000_000 + i))
    info = cache.info()
    assert info.total_bytes <= 10_000
    assert cache.get(f"{29:064x}") is not None, "the newest entry survives"
    assert cache.get(f"{0:064x}") is None, "the oldest entry was evicted"


def test_writes_walk_the_cache_once_until_it_may_be_over_its_bound(tmp_path, monkeypatch) -> None:
    """A run writes an entry per layer: a large cache is walked at the first write, not at every one."""
    cache = LayerCache(tmp_path / "cache", max_bytes=100_000)
    walks: list[int] = []
    walk = cache._files
    monkeypatch.setattr(cache, "_files", lambda: walks.append(1) or walk())
    for i in range(60):  # ~62 KB: under the bound
        cache.put(f"{i:064x}", os.urandom(1000))
    assert len(walks) == 1
    for i in range(60, 200):  # past it: walked again to evict, whenever the total may be over
        cache.put(f"{i:064x}", os.urandom(1000))
        assert sum(f.stat().st_size for f in (tmp_path / "cache").rglob("*.ilx")) <= 100_000
    assert 1 < len(walks) < 200 - 60
    assert cache.get(f"{199:064x}") is not None


def test_entries_another_process_wrote_are_seen_at_the_next_walk(tmp_path) -> None:
    """What the docstring says: another process's writes are not counted by this one until a walk,
    so they may pass the bound meanwhile; the next walk (here a later run's first write) evicts."""
    mine, other = LayerCache(tmp_path / "cache", max_bytes=50_000), LayerCache(tmp_path / "cache", max_bytes=50_000)
    mine.put(f"{0:064x}", os.urandom(1000))  # walked: ~1 KB
    for i in range(1, 45):
        other.put(f"{i:064x}", os.urandom(1000))
    for i in range(45, 60):
        mine.put(f"{i:064x}", os.urandom(1000))
    assert mine.info().total_bytes > 50_000
    LayerCache(tmp_path / "cache", max_bytes=50_000).put(f"{60:064x}", os.urandom(1000))
    assert mine.info().total_bytes <= 50_000


def test_writes_stay_inside_the_cache_dir(tmp_path) -> None:
    root = tmp_path / "cache"
    cache = LayerCache(root)
    read_image_filesystem(_image(), SPEC, extract=caching_extractor(cache, extract_layer), workers=1)
    outside = [p for p in tmp_path.rglob("*") if not str(p).startswith(str(root))]
    assert outside == [root] or outside == []
    assert not list(root.rglob(".tmp-*")), "no temp files left behind"


def test_default_dir_honours_env(monkeypatch, tmp_path) -> None:
    monkeypatch.setenv("IMAGELINT_CACHE_DIR", str(tmp_path / "x"))
    assert default_cache_dir() == tmp_path / "x"
    monkeypatch.delenv("IMAGELINT_CACHE_DIR")
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    assert default_cache_dir() == tmp_path / "xdg" / "imagelint"


def test_cache_cli_info_and_clean(tmp_path) -> None:
    cache = LayerCache(tmp_path / "c")
    read_image_filesystem(_image(), SPEC, extract=caching_extractor(cache, extract_layer), workers=1)
    run = lambda *a: subprocess.run([sys.executable, "-m", "imagelint", "cache", *a, "--cache-dir", str(tmp_path / "c")],
                                    capture_output=True, text=True)
    out = run("info")
    assert out.returncode == 0, out.stderr
    assert "entries:   3 layer extract(s)" in out.stdout
    matrix_dir = tmp_path / "c" / "matrix"
    (matrix_dir / "ab").mkdir(parents=True)
    (matrix_dir / "matrix-0123abcd-1f.ilm").write_bytes(b"ILM1....")  # a parsed matrix
    (matrix_dir / "ab" / ("ab" * 32 + ".ilx")).write_bytes(b"ILX1")  # what older versions wrote there
    assert "matrices:  2 parsed matrices" in run("info").stdout  # what clean will remove, counted the same way
    out = run("clean")
    assert out.returncode == 0 and out.stdout.startswith("removed 3 layer extract(s) and image facts and 2 parsed matrices"), out.stdout
    assert LayerCache(tmp_path / "c").info().entries == 0 and not list(matrix_dir.rglob("*.il?"))


def test_an_entry_is_written_whole_private_and_never_through_a_link(tmp_path) -> None:
    """cachedir.write_entry, under both caches: 0600, a link at the entry's path is replaced
    (its target untouched), and a failed write leaves neither a temp file nor the entry."""
    from imagelint.cachedir import write_entry

    target = tmp_path / "elsewhere"
    target.write_bytes(b"keep")
    path = tmp_path / "cache" / "ab" / "entry.ilx"
    path.parent.mkdir(parents=True)
    path.symlink_to(target)
    write_entry(path, b"payload")
    assert path.read_bytes() == b"payload" and not path.is_symlink() and target.read_bytes() == b"keep"
    assert path.stat().st_mode & 0o777 == 0o600
    assert sorted(p.name for p in path.parent.iterdir()) == ["entry.ilx"]

    blocked = tmp_path / "cache" / "cd" / "entry.ilx"
    with pytest.raises(TypeError):
        write_entry(blocked, None)  # type: ignore[arg-type]  # the write itself fails
    assert list(blocked.parent.iterdir()) == []
    (tmp_path / "file").write_bytes(b"")
    with pytest.raises(OSError):
        write_entry(tmp_path / "file" / "entry.ilx", b"x")  # the directory cannot be made
