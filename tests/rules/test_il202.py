"""IL202: cases that fire and cases that must not."""

from __future__ import annotations

from imagelint.facts.model import DriverLibrary, LoaderFacts, LoaderPathEntry, Provenance

from tests.rules.helpers import facts, of, run


def _stub(*loader_path_dirs: str) -> DriverLibrary:
    """The stub as the facts layer reports it: ``loader_path_dirs`` are the searched directories
    that find it (resolved through the image's symlinks there, not here)."""
    return DriverLibrary("libcuda.so", "usr/local/cuda-12.4/lib64/stubs/libcuda.so", "stub", None, bool(loader_path_dirs),
                         Provenance("file", path="usr/local/cuda-12.4/lib64/stubs/libcuda.so",
                                    via="usr/local/cuda/lib64/stubs/libcuda.so", layer_index=1),
                         loader_path_dirs=loader_path_dirs)


def test_stubs_on_ld_library_path():
    f = facts({"LD_LIBRARY_PATH": "/usr/local/cuda/lib64/stubs:/usr/local/cuda/lib64"},
              driver_libraries=(_stub("usr/local/cuda/lib64/stubs"),))
    [finding] = of(run(f), "IL202")
    assert "/usr/local/cuda/lib64/stubs" in finding.message and finding.extra["origin"] == "LD_LIBRARY_PATH"


def test_stubs_in_ld_so_conf():
    entry = LoaderPathEntry("/usr/local/cuda-12.4/lib64/stubs", "ld.so.conf",
                            Provenance("file", path="etc/ld.so.conf.d/cuda.conf", line=1, layer_index=1))
    f = facts({}, driver_libraries=(_stub("usr/local/cuda-12.4/lib64/stubs"),), loader=LoaderFacts(ld_so_conf=(entry,)))
    [finding] = of(run(f), "IL202")
    assert finding.location.path == "etc/ld.so.conf.d/cuda.conf"


def test_library_path_is_fine():
    f = facts({"LIBRARY_PATH": "/usr/local/cuda/lib64/stubs", "LD_LIBRARY_PATH": "/usr/local/cuda/lib64"},
              driver_libraries=(_stub(),))
    assert not of(run(f), "IL202")


def test_stubs_dir_without_libcuda_is_silent_when_layers_read():
    f = facts({"LD_LIBRARY_PATH": "/opt/other/stubs"}, driver_libraries=(_stub(),))
    assert not of(run(f), "IL202")


# --- through the real facts layer: an image whose stubs directory is reached through symlinks ---

_CUDA = "usr/local/cuda-12.4"


def _devel_image(tmp_path, env: dict[str, str], *extra) -> object:
    """The nvidia/cuda devel layout: cuda -> cuda-12.4, lib64 -> targets/x86_64-linux/lib, the
    stub under targets/x86_64-linux/lib/stubs (so no path text says "lib64/stubs")."""
    from tests.facts.helpers import facts_for
    from tests.support.imagebuilder import File, ImageSpec, Symlink

    layers = [[
        Symlink("usr/local/cuda", "cuda-12.4"),
        Symlink(f"{_CUDA}/lib64", "targets/x86_64-linux/lib"),
        File(f"{_CUDA}/targets/x86_64-linux/lib/libcudart.so.12.4.127", b"x"),
        File(f"{_CUDA}/targets/x86_64-linux/lib/stubs/libcuda.so", b"stub"),
        File("opt/tools/stubs/libtool.so", b"x"),
        *extra,
    ]]
    return facts_for(tmp_path, ImageSpec(layers=layers, env=env))


def test_fires_for_a_stubs_directory_reached_through_symlinks(tmp_path):
    f = _devel_image(tmp_path, {"LD_LIBRARY_PATH": "/usr/local/cuda/lib64/stubs:/usr/local/cuda/lib64"})
    (stub,) = [d for d in f.driver_libraries if d.role == "stub"]
    assert stub.path == f"{_CUDA}/targets/x86_64-linux/lib/stubs/libcuda.so"
    assert stub.loader_path_dirs == ("usr/local/cuda/lib64/stubs",) and stub.on_loader_path
    assert f.loader.ld_library_path[0].resolved == f"{_CUDA}/targets/x86_64-linux/lib/stubs"
    [finding] = of(run(f), "IL202")
    assert finding.extra["directory"] == "/usr/local/cuda/lib64/stubs" and finding.extra["origin"] == "LD_LIBRARY_PATH"


def test_fires_for_ld_so_conf_and_for_a_link_not_named_stubs(tmp_path):
    from tests.support.imagebuilder import File, Symlink

    f = _devel_image(tmp_path, {"LD_LIBRARY_PATH": "/opt/cudastubs"},
                     File("etc/ld.so.conf", b"include /etc/ld.so.conf.d/*.conf\n"),
                     File("etc/ld.so.conf.d/zz-stubs.conf", b"/usr/local/cuda/lib64/stubs\n"),
                     Symlink("opt/cudastubs", "/usr/local/cuda/lib64/stubs"))
    found = {(x.extra["origin"], x.extra["directory"]) for x in of(run(f), "IL202")}
    assert found == {("LD_LIBRARY_PATH", "/opt/cudastubs"), ("ld.so.conf", "/usr/local/cuda/lib64/stubs")}


def test_silent_where_the_stub_is_not_on_the_loader_path(tmp_path):
    f = _devel_image(tmp_path, {"LD_LIBRARY_PATH": "/usr/local/cuda/lib64:/opt/tools/stubs",
                                "LIBRARY_PATH": "/usr/local/cuda/lib64/stubs"})
    (stub,) = [d for d in f.driver_libraries if d.role == "stub"]
    assert stub.loader_path_dirs == () and not stub.on_loader_path
    assert not of(run(f), "IL202")  # /opt/tools/stubs is named stubs but holds no libcuda
