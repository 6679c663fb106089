"""IL201: cases that fire and cases that must not."""

from __future__ import annotations

from imagelint.facts.model import DriverLibrary

from tests.rules.helpers import compat_lib, facts, file_prov, of, pool, run, target


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


def test_a_library_that_matches_every_pools_driver_works_today_and_warns_of_the_next_driver_change():
    libs = (_lib("usr/lib/x86_64-linux-gnu/libnvidia-ml.so.535.104.05", "real", True),)
    [same] = of(run(facts({}, driver_libraries=libs), target(pool("a", "535.104.05"), pool("b", "535.104.05"))), "IL201")
    assert same.severity == "warning" and "breaks on the next driver change" in same.message
    assert "a, b" in same.text
    # Any pool on another driver (or one whose driver is not known) fails today: an error, as without a target.
    for pools in ((pool("a", "535.104.05"), pool("b", "535.129.03")), (pool("a", None),), (pool("a", "535"),)):
        [other] = of(run(facts({}, driver_libraries=libs), target(*pools)), "IL201")
        assert other.severity == "error", pools
    [alone] = of(run(facts({}, driver_libraries=libs)), "IL201")
    assert alone.severity == "error"
