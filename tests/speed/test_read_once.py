"""Base layers are read once: through the real registry, a second image on the same base
fetches only its own new layer blobs; check and inspect get the cache by default."""

from __future__ import annotations

import uuid

from imagelint.core.inspect import inspect_reference, layer_cache_for
from imagelint.layers.cache import LayerCache
from imagelint.sources import SourceOptions
from tests.support.imagebuilder import File, ImageSpec, Symlink

BASE_LAYERS = [
    [File("usr/local/cuda-12.4/version.json", b'{"cuda":{"version":"12.4.1"}}'), Symlink("usr/local/cuda", "cuda-12.4")],
    [File("usr/local/cuda-12.4/compat/libcuda.so.550.54.15", b"\x7fELF" + bytes(60)),
     File("etc/ld.so.conf.d/cuda.conf", b"/usr/local/cuda/lib64\n")],
    [File("usr/share/doc/big.txt", bytes(300_000))],
]


def _pair() -> tuple[object, object]:
    marker = uuid.uuid4().hex.encode()  # blobs no other test shares
    base = [[*BASE_LAYERS[0], File("etc/marker", marker)], *BASE_LAYERS[1:]]
    one = ImageSpec(layers=[*base, [File("app/run.sh", b"#!/bin/sh\necho one\n")]], env={"CUDA_VERSION": "12.4.1"}).build()
    two = ImageSpec(layers=[*base, [File("app/run.sh", b"#!/bin/sh\necho two\n")]], env={"CUDA_VERSION": "12.4.1"}).build()
    return one, two


def _blob_gets(proxy, built) -> list[str]:  # type: ignore[no-untyped-def]
    layer_digests = {d for d, *_ in built.layers}
    return [s.path.rsplit("/", 1)[-1] for s in proxy.seen("/blobs/") if s.method == "GET"
            and s.path.rsplit("/", 1)[-1] in layer_digests]


def test_second_image_on_the_same_base_fetches_only_its_new_layer(plain_registry, counting_proxy, tmp_path) -> None:
    one, two = _pair()
    repo = f"speed/{uuid.uuid4().hex[:8]}"
    plain_registry.push(repo, "one", one)
    plain_registry.push(repo, "two", two)
    options = SourceOptions(insecure_registries=(counting_proxy.host,), docker_config=str(tmp_path / "no-docker"),
                            cache_dir=str(tmp_path / "cache"))

    [first] = inspect_reference(f"registry:{counting_proxy.host}/{repo}:one", options)
    assert sorted(_blob_gets(counting_proxy, one)) == sorted(d for d, *_ in one.layers), "cold: every layer once"
    counting_proxy.clear()

    [second] = inspect_reference(f"registry:{counting_proxy.host}/{repo}:two", options)
    assert _blob_gets(counting_proxy, two) == [two.layers[-1][0]], "only the new top layer is fetched"
    assert [v.version for v in second.cuda.versions] == [v.version for v in first.cuda.versions]
    assert [d.path for d in second.driver_libraries] == [d.path for d in first.driver_libraries]
    assert second.driver_libraries, "facts from cached layers are still there"
    counting_proxy.clear()

    [again] = inspect_reference(f"registry:{counting_proxy.host}/{repo}:two", options)
    assert _blob_gets(counting_proxy, two) == [], "warm: no layer blob at all"
    assert again.driver_libraries == second.driver_libraries


def test_no_cache_reads_every_layer_and_writes_nothing(plain_registry, counting_proxy, tmp_path) -> None:
    one, _ = _pair()
    repo = f"speed/{uuid.uuid4().hex[:8]}"
    plain_registry.push(repo, "one", one)
    cache_dir = tmp_path / "cache"
    options = SourceOptions(insecure_registries=(counting_proxy.host,), docker_config=str(tmp_path / "no-docker"),
                            cache_dir=str(cache_dir), no_cache=True)
    for _ in range(2):
        counting_proxy.clear()
        inspect_reference(f"registry:{counting_proxy.host}/{repo}:one", options)
        assert len(_blob_gets(counting_proxy, one)) == len(one.layers)
    assert not cache_dir.exists()


def test_cache_choice_follows_options_and_environment(tmp_path, monkeypatch) -> None:
    monkeypatch.setenv("IMAGELINT_CACHE_DIR", str(tmp_path / "env"))
    monkeypatch.delenv("IMAGELINT_NO_CACHE", raising=False)
    default = layer_cache_for(SourceOptions())
    assert isinstance(default, LayerCache) and default.directory == tmp_path / "env"
    assert layer_cache_for(SourceOptions(cache_dir=str(tmp_path / "flag"))).directory == tmp_path / "flag"
    assert layer_cache_for(SourceOptions(no_cache=True)) is None
    monkeypatch.setenv("IMAGELINT_NO_CACHE", "1")
    assert layer_cache_for(SourceOptions()) is None


def test_cli_flags_reach_the_options(tmp_path) -> None:
    from imagelint.cli.source_options import source_options_from

    assert source_options_from(cache_dir=str(tmp_path / "c")).cache_dir == str(tmp_path / "c")
    assert source_options_from(no_cache=True).no_cache is True
    assert source_options_from().cache_dir is None and source_options_from().no_cache is False


def test_size_limits_are_flags(tmp_path) -> None:
    """--max-layer-size / --max-image-size bound what reading may inflate: a layer that inflates
    past them stops with exit 3 and one line naming the layer; the defaults read it."""
    import subprocess
    import sys

    from imagelint.cli.source_options import parse_size
    from tests.support.imagebuilder import File, ImageSpec, write_oci_layout

    assert parse_size("--x", "64G") == 64 << 30 and parse_size("--x", "512MiB") == 512 << 20
    assert parse_size("--x", "1.5K") == 1536 and parse_size("--x", "4096") == 4096
    layout = write_oci_layout(tmp_path / "img", {"v": ImageSpec(layers=[[File("zeros.bin", bytes(64 << 20))]]).build()})

    def inspect(*flags):
        return subprocess.run([sys.executable, "-m", "imagelint", "inspect", f"oci-dir:{layout}", "--no-cache", *flags],
                              capture_output=True, text=True)

    assert inspect().returncode == 0
    for flag in ("--max-layer-size", "--max-image-size"):
        run = inspect(flag, "16M")
        assert run.returncode == 3, run.stderr
        assert len(run.stderr.strip().splitlines()) == 1 and "layer 0" in run.stderr, run.stderr
    bad = inspect("--max-layer-size", "lots")
    assert bad.returncode == 2 and "expected a size" in bad.stderr
