"""IL201: cases that fire and cases that must not."""

from __future__ import annotations

from imagelint.facts.model import DriverLibrary

from tests.rules.helpers import compat_lib, facts, file_prov, of, run


def _lib(path: str, role: str, on_path: bool, version: str | None = "535.104.05", symlink: bool = False) -> DriverLibrary:
    name = path.rsplit("/", 1)[1]
    return DriverLibrary(name, path, role, version, on_path, file_prov(path, layer=2), is_symlink=symlink)


def test_real_driver_lib_on_loader_path_names_version_and_layer():
    libs = (
        _lib("usr/lib/x86_64-linux-gnu/libcuda.so.535.104.05", "real", True),
        _lib("usr/lib/x86_64-linux-gnu/libcuda.so.1", "real", True, symlink=True),
    )
    [f] = of(run(facts({}, driver_libraries=libs)), "IL201")
    assert "535.104.05" in f.text and "layer 2" in f.text
    assert f.location.path == "usr/lib/x86_64-linux-gnu/libcuda.so.535.104.05"


def test_stub_compat_and_off_path_are_silent():
    libs = (
        _lib("usr/local/cuda/lib64/stubs/libcuda.so", "stub", False, None),
        compat_lib(),
        _lib("opt/vendor/libcuda.so.535.104.05", "real", False),
    )
    assert not of(run(facts({}, driver_libraries=libs)), "IL201")
