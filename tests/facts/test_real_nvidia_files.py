"""Real NVIDIA files (fetched at test time into tests/.cache/, never committed) inside test images."""

from __future__ import annotations

import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

from tests.facts.helpers import facts_for
from tests.support.imagebuilder import File, ImageSpec, Symlink

CACHE = Path(__file__).resolve().parents[1] / ".cache" / "nvidia"
WHEELS = [("nvidia-cuda-runtime-cu12", "12"), ("nvidia-cuda-runtime-cu11", "11"), ("nvidia-cuda-runtime", "13")]
SP = "usr/local/lib/python3.10/dist-packages"
pytestmark = pytest.mark.network


def _wheel(project: str) -> Path:
    dest = CACHE / "wheels" / project
    found = sorted(dest.glob("*.whl")) if dest.is_dir() else []
    if not found:
        dest.mkdir(parents=True, exist_ok=True)
        r = subprocess.run([sys.executable, "-m", "pip", "download", "--no-deps", "--only-binary=:all:", "-q",
                            "--platform", "manylinux2014_x86_64", "--python-version", "3.10", "-d", str(dest), project],
                           capture_output=True, text=True, timeout=300)
        found = sorted(dest.glob("*.whl"))
        if r.returncode != 0 or not found:
            pytest.skip(f"pip download {project} failed: {r.stderr.strip().splitlines()[-1:] }")
    return found[-1]


@pytest.mark.parametrize("project,major", WHEELS)
def test_real_wheel_in_an_image(tmp_path: Path, project: str, major: str) -> None:
    whl = _wheel(project)
    members = []
    dist_info = None
    with zipfile.ZipFile(whl) as z:
        for name in z.namelist():
            if "/libcudart.so" in name or name.endswith(".dist-info/METADATA"):
                members.append(File(f"{SP}/{name}", z.read(name), 0o755))
                if name.endswith("METADATA"):
                    dist_info = name.split("/")[0]
    assert dist_info, "wheel without dist-info"
    wheel_version = dist_info.removesuffix(".dist-info").split("-")[1]
    facts = facts_for(tmp_path, ImageSpec(layers=[members]))
    wheels = [v for v in facts.cuda.versions if v.source == "pip-wheel"]
    assert [(v.version, v.component) for v in wheels] == [(wheel_version, "cudart")]
    assert wheel_version.split(".")[0] == major
    assert wheels[0].provenance.path == f"{SP}/{dist_info}"
    # The real library is named by its SONAME (libcudart.so.12, libcudart.so.11.0 for every 11.x): the major only.
    assert [(v.version, v.precision) for v in facts.cuda.versions if v.source == "libcudart"] == [(major, "major")]


def _debian_libcuda(tmp: Path) -> Path:
    dest = CACHE / "debian"
    found = sorted(dest.rglob("libcuda.so.535.*")) if dest.is_dir() else []
    if found:
        return found[0]
    apt = tmp / "apt"
    (apt / "lists" / "partial").mkdir(parents=True)
    (apt / "cache" / "archives" / "partial").mkdir(parents=True)
    (apt / "x.sources").write_text(
        "Types: deb\nURIs: http://deb.debian.org/debian\nSuites: bookworm bookworm-updates\n"
        "Components: main contrib non-free non-free-firmware\nSigned-By: /usr/share/keyrings/debian-archive-keyring.gpg\n")
    opts = ["-o", "Dir::Etc::SourceList=/dev/null", "-o", f"Dir::Etc::SourceParts={apt}", "-o", f"Dir::State::Lists={apt}/lists",
            "-o", f"Dir::Cache={apt}/cache", "-qq"]
    dl = tmp / "dl"
    dl.mkdir()
    for cmd in (["apt-get", *opts, "update"], ["apt-get", *opts, "download", "libcuda1"]):
        r = subprocess.run(cmd, capture_output=True, text=True, cwd=dl, timeout=300)
        if r.returncode != 0:
            pytest.skip(f"{' '.join(cmd[:1] + cmd[-2:])} failed: {r.stderr.strip()[-200:]}")
    debs = sorted(dl.glob("libcuda1_*.deb"))
    if not debs:
        pytest.skip("libcuda1 .deb not downloaded")
    dest.mkdir(parents=True, exist_ok=True)
    subprocess.run(["dpkg-deb", "-x", str(debs[0]), str(dest)], check=True)
    found = sorted(dest.rglob("libcuda.so.535.*"))
    if not found:
        pytest.skip("no libcuda.so.535.* in the package")
    return found[0]


def test_real_libcuda_bundled_and_as_compat(tmp_path: Path) -> None:
    lib = _debian_libcuda(tmp_path)
    data = lib.read_bytes()
    name = lib.name
    version = name.removeprefix("libcuda.so.")
    ml = "usr/lib/x86_64-linux-gnu"
    spec = ImageSpec(layers=[[
        File(f"{ml}/{name}", data, 0o755),
        Symlink(f"{ml}/libcuda.so.1", name),
        File(f"usr/local/cuda-12.2/compat/{name}", data, 0o755),
        Symlink("usr/local/cuda", "cuda-12.2"),
    ]])
    facts = facts_for(tmp_path / "img", spec)
    libs = {d.path: d for d in facts.driver_libraries}
    real = libs[f"{ml}/{name}"]
    assert (real.role, real.version, real.on_loader_path, real.is_symlink) == ("real", version, True, False)
    compat = libs[f"usr/local/cuda-12.2/compat/{name}"]
    assert (compat.role, compat.version, compat.on_loader_path) == ("compat", version, False)
    # Debian's driver build is not a cuda-compat package: whatever its notes say, scanning the
    # real 30 MB library must neither fail nor invent a note the file does not carry.
    from imagelint.facts.elf import scan_elf_notes

    result = scan_elf_notes(data, 1 << 20)
    assert result["elf"] is True
    has_note = any(n["owner"] == "NVIDIA Corporation" and "CUDA Version" in n["desc"] for n in result["notes"])
    assert (compat.fwd_compat is not None) == has_note
