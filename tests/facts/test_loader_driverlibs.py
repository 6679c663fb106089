from __future__ import annotations

from pathlib import Path

import pytest

from examples.synth_elf import build_elf, compat_libcuda
from imagelint.errors import ConfigError
from imagelint.facts.driverlibs import driver_library_table, parse_driver_library_table, version_from_name
from imagelint.facts.loader import default_dirs, parse_ld_so_conf
from imagelint.image import Platform
from tests.facts.helpers import facts_for
from tests.support.imagebuilder import File, ImageSpec, Symlink

ML = "usr/lib/x86_64-linux-gnu"


def test_ld_so_conf_parser() -> None:
    text = b"# comment\ninclude /etc/ld.so.conf.d/*.conf\n/opt/a/lib  # trailing\n\nhwcap 0 x\n/opt/b/lib=libc5\n/x,/y\n"
    assert parse_ld_so_conf(text) == [("include", "/etc/ld.so.conf.d/*.conf", 2), ("dir", "/opt/a/lib", 3),
                                     ("dir", "/opt/b/lib", 6), ("dir", "/x", 7), ("dir", "/y", 7)]


def test_default_dirs_per_arch() -> None:
    assert default_dirs(Platform("linux", "amd64"))[:2] == ("lib/x86_64-linux-gnu", "usr/lib/x86_64-linux-gnu")
    assert default_dirs(Platform("linux", "arm64"))[:2] == ("lib/aarch64-linux-gnu", "usr/lib/aarch64-linux-gnu")
    assert default_dirs(Platform("linux", "arm64"))[2:] == ("lib64", "usr/lib64", "lib", "usr/lib")


def test_version_from_name() -> None:
    assert version_from_name("libcuda.so.535.104.05") == "535.104.05"
    assert version_from_name("libnvidia-ml.so.550.54.15") == "550.54.15"
    assert version_from_name("libcuda.so.1") is None and version_from_name("libcuda.so") is None


def test_table_has_a_source_per_row_and_rejects_bad_data() -> None:
    table = driver_library_table()
    assert all(p.source for p in table.libraries)
    assert table.match("libcuda.so.535.1.2").capability == "compute"
    assert table.match("libnvidia-ml.so.1").capability == "utility"
    assert table.match("libcudart.so.12") is None
    with pytest.raises(ConfigError):
        parse_driver_library_table("[[library]]\npattern='x'\n")
    with pytest.raises(ConfigError):
        parse_driver_library_table("not toml [")


def test_roles_versions_loader_and_note(tmp_path: Path) -> None:
    layers = [
        [
            File("etc/ld.so.conf", b"include ld.so.conf.d/*.conf\n"),
            File("etc/ld.so.conf.d/nvidia.conf", b"/opt/nv/lib\n"),
            Symlink("lib", "usr/lib"),  # merged /usr: /lib/x86_64-linux-gnu is /usr/lib/x86_64-linux-gnu
            File(f"{ML}/libcuda.so.535.104.05", build_elf()),
            Symlink(f"{ML}/libcuda.so.1", "libcuda.so.535.104.05"),
            File("opt/nv/lib/libnvidia-ml.so.535.104.05", b"x"),
            File("opt/elsewhere/libnvidia-encode.so.535.104.05", b"x"),
            Symlink(f"{ML}/libnvidia-encode.so.1", "/opt/elsewhere/libnvidia-encode.so.535.104.05"),
            File("usr/local/cuda-12.4/lib64/stubs/libcuda.so", b"stub"),
            File("usr/local/cuda-12.9/compat/libcuda.so.575.57.08",
                 compat_libcuda("12.9", [535, 550, 560, 565, 570, 575], note_in_segment=False, padding=2 << 20)),
            File("usr/local/cuda/compat/lib/libcuda.so.580.65.06", compat_libcuda("13.0", [535, 570])),
            File("opt/not-driver/libcudart.so.12", b"x"),
        ],
    ]
    spec = ImageSpec(layers=layers, env={"LD_LIBRARY_PATH": "/usr/local/cuda/compat/lib:/usr/local/nvidia/lib64::relative"})
    facts = facts_for(tmp_path, spec)
    libs = {d.path: d for d in facts.driver_libraries}
    real = libs[f"{ML}/libcuda.so.535.104.05"]
    assert (real.role, real.version, real.on_loader_path, real.is_symlink, real.fwd_compat) == ("real", "535.104.05", True, False, None)
    assert real.provenance.layer_index == 0 and real.provenance.layer_digest
    assert libs[f"{ML}/libcuda.so.1"].is_symlink and libs[f"{ML}/libcuda.so.1"].on_loader_path
    assert libs["opt/nv/lib/libnvidia-ml.so.535.104.05"].on_loader_path  # via ld.so.conf include (relative glob)
    # Not in a searched dir itself, but a symlink to it is:
    assert libs["opt/elsewhere/libnvidia-encode.so.535.104.05"].on_loader_path
    stub = libs["usr/local/cuda-12.4/lib64/stubs/libcuda.so"]
    assert (stub.role, stub.version, stub.on_loader_path) == ("stub", None, False)
    compat = libs["usr/local/cuda-12.9/compat/libcuda.so.575.57.08"]
    assert compat.role == "compat" and not compat.on_loader_path
    assert compat.fwd_compat.cuda_version == "12.9" and compat.fwd_compat.driver_branches == (535, 550, 560, 565, 570, 575)
    ngc = libs["usr/local/cuda/compat/lib/libcuda.so.580.65.06"]
    assert ngc.role == "compat" and ngc.on_loader_path and ngc.fwd_compat.cuda_version == "13.0"
    assert "opt/not-driver/libcudart.so.12" not in libs
    assert [e.directory for e in facts.loader.ld_library_path] == ["usr/local/cuda/compat/lib", "usr/local/nvidia/lib64"]
    [conf] = facts.loader.ld_so_conf
    assert conf.directory == "opt/nv/lib" and conf.provenance.path == "etc/ld.so.conf.d/nvidia.conf" and conf.provenance.line == 1
    assert facts.loader.directories[:3] == ("usr/local/cuda/compat/lib", "usr/local/nvidia/lib64", "opt/nv/lib")


def test_arm64_defaults_decide_on_loader_path(tmp_path: Path) -> None:
    lib = [File("usr/lib/aarch64-linux-gnu/libcuda.so.535.104.05", b"x"), File(f"{ML}/libcuda.so.535.104.05", b"x")]
    facts = facts_for(tmp_path, ImageSpec(layers=[lib], architecture="arm64"))
    got = {d.path: d.on_loader_path for d in facts.driver_libraries}
    assert got == {"usr/lib/aarch64-linux-gnu/libcuda.so.535.104.05": True, f"{ML}/libcuda.so.535.104.05": False}
