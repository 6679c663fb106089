"""IL202: cases that fire and cases that must not."""

from __future__ import annotations

from imagelint.facts.model import DriverLibrary, LoaderFacts, LoaderPathEntry, Provenance

from tests.rules.helpers import facts, of, run


def _stub() -> DriverLibrary:
    return DriverLibrary("libcuda.so", "usr/local/cuda-12.4/lib64/stubs/libcuda.so", "stub", None, True,
                         Provenance("file", path="usr/local/cuda-12.4/lib64/stubs/libcuda.so",
                                    via="usr/local/cuda/lib64/stubs/libcuda.so", layer_index=1))


def test_stubs_on_ld_library_path():
    f = facts({"LD_LIBRARY_PATH": "/usr/local/cuda/lib64/stubs:/usr/local/cuda/lib64"}, driver_libraries=(_stub(),))
    [finding] = of(run(f), "IL202")
    assert "/usr/local/cuda/lib64/stubs" in finding.message and finding.extra["origin"] == "LD_LIBRARY_PATH"


def test_stubs_in_ld_so_conf():
    entry = LoaderPathEntry("/usr/local/cuda-12.4/lib64/stubs", "ld.so.conf",
                            Provenance("file", path="etc/ld.so.conf.d/cuda.conf", line=1, layer_index=1))
    f = facts({}, driver_libraries=(_stub(),), loader=LoaderFacts(ld_so_conf=(entry,)))
    [finding] = of(run(f), "IL202")
    assert finding.location.path == "etc/ld.so.conf.d/cuda.conf"


def test_library_path_is_fine():
    f = facts({"LIBRARY_PATH": "/usr/local/cuda/lib64/stubs", "LD_LIBRARY_PATH": "/usr/local/cuda/lib64"},
              driver_libraries=(_stub(),))
    assert not of(run(f), "IL202")


def test_stubs_dir_without_libcuda_is_silent_when_layers_read():
    f = facts({"LD_LIBRARY_PATH": "/opt/other/stubs"}, driver_libraries=(_stub(),))
    assert not of(run(f), "IL202")
