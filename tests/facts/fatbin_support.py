"""Fatbin test material: synthetic containers (the layout imagelint.facts.fatbin documents) and
real shared libraries compiled by the PyPI CUDA 13.0 nvcc (cached under tests/.cache/)."""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
import os
import shutil
import struct
import subprocess
import sys
from pathlib import Path

import pytest

from imagelint.facts.fatbin import FLAG_ARCH_SPECIFIC, FLAG_DEBUG, FLAG_FAMILY_SPECIFIC, KIND_ELF, KIND_PTX

MAGIC = 0xBA55ED50
CACHE = Path(__file__).resolve().parents[1] / ".cache"
NVCC_PACKAGES = (
    "nvidia-cuda-nvcc==13.0.88",
    "nvidia-cuda-crt==13.0.88",
    "nvidia-cuda-runtime==13.0.96",
    "nvidia-cuda-cccl==13.0.85",
    "nvidia-nvvm==13.0.88",
    "nvidia-cuda-culibos==13.0.85",
)
# cuobjdump is not in the 13.0 wheels; 13.2 is the oldest on PyPI and reads 13.0 fatbins.
CUOBJDUMP_PACKAGE = "nvidia-cuda-cuobjdump==13.2.78"

KERNEL = b"""
__global__ void add_one(float *x, int n) { int i = blockIdx.x * blockDim.x + threadIdx.x; if (i < n) x[i] += 1.0f; }
extern "C" void launch(float *x, int n) { add_one<<<(n + 255) / 256, 256>>>(x, n); }
"""


def entry(
    kind: int = KIND_ELF,
    arch: int = 80,
    payload: bytes = b"\xaa" * 40,
    *,
    variant: str = "",
    flags: int = 0x11,
    header_size: int = 64,
    version: tuple[int, int] = (1, 8),
    payload_size: int | None = None,
) -> bytes:
    """One entry: a ``header_size``-byte header (fields at the documented offsets) + payload."""
    if variant == "a":
        flags |= FLAG_ARCH_SPECIFIC
    elif variant == "f":
        flags |= FLAG_FAMILY_SPECIFIC
    size = len(payload) if payload_size is None else payload_size
    head = struct.pack("<HHIQIIHHIIIQQQ", kind, 0x0101, header_size, size, len(payload), 0,
                       version[1], version[0], arch, 0, 0, flags, 0, len(payload))
    assert len(head) == 64
    return head + b"\x00" * (header_size - 64) + payload


def ptx(arch: int, **kw) -> bytes:
    kw.setdefault("version", (9, 0))
    kw.setdefault("flags", 0x8011)
    return entry(KIND_PTX, arch, **kw)


def container(*entries: bytes, fat_size: int | None = None, version: int = 1, header_size: int = 16) -> bytes:
    body = b"".join(entries)
    return struct.pack("<IHHQ", MAGIC, version, header_size, len(body) if fat_size is None else fat_size) + body


DEBUG = FLAG_DEBUG


# --- the real toolchain (network) -----------------------------------------------------------


def _pip_target(name: str, packages: tuple[str, ...]) -> Path:
    """``pip install --target`` once into tests/.cache/NAME (atomic rename, reused afterwards)."""
    dest = CACHE / name
    if dest.is_dir():
        return dest
    CACHE.mkdir(parents=True, exist_ok=True)
    partial = CACHE / f"{name}.partial-{os.getpid()}"
    shutil.rmtree(partial, ignore_errors=True)
    proc = subprocess.run(
        [sys.executable, "-m", "pip", "install", "-q", "--disable-pip-version-check", "--no-deps",
         "--target", str(partial), *packages],
        capture_output=True, text=True, timeout=600,
    )
    if proc.returncode != 0:
        shutil.rmtree(partial, ignore_errors=True)
        pytest.skip(f"pip install {' '.join(packages)} failed: {proc.stderr.strip().splitlines()[-1:]}")
    try:
        partial.rename(dest)
    except OSError:  # another run won the race
        shutil.rmtree(partial, ignore_errors=True)
    return dest


def nvcc_root() -> Path:
    return _pip_target("cuda13", NVCC_PACKAGES) / "nvidia" / "cu13"


def nvcc_root_for(cuda: str) -> Path:
    """The PyPI nvcc of CUDA ``cuda`` ("13.2"): the pinned 13.0 set, else that release's newest wheels."""
    if cuda == "13.0":
        return nvcc_root()
    names = ("nvidia-cuda-nvcc", "nvidia-cuda-crt", "nvidia-nvvm", "nvidia-cuda-runtime", "nvidia-cuda-cccl")
    return _pip_target(f"cuda{cuda}", tuple(f"{n}=={cuda}.*" for n in names)) / "nvidia" / "cu13"


def ptx_isa_written_by(cuda: str) -> str:
    """The ``.version`` directive the PyPI nvcc of CUDA ``cuda`` writes (``nvcc -ptx``)."""
    root = nvcc_root_for(cuda)
    work = CACHE / f"ptx-{cuda}"
    work.mkdir(parents=True, exist_ok=True)
    (work / "k.cu").write_bytes(KERNEL)
    env = {**os.environ, "PATH": f"{root / 'bin'}:/usr/bin:/bin"}
    env.pop("CUDA_HOME", None)
    env.pop("CUDA_PATH", None)
    proc = subprocess.run([str(root / "bin" / "nvcc"), "-ptx", "-arch=compute_80", "-o", "k.ptx", "k.cu"], cwd=work,
                          capture_output=True, text=True, timeout=300, env=env)
    assert proc.returncode == 0, proc.stderr[-2000:]
    for line in (work / "k.ptx").read_text().splitlines():
        if line.startswith(".version "):
            return line.split()[1]
    raise AssertionError("no .version directive")


def cuobjdump() -> Path:
    return _pip_target("cuobjdump13", (CUOBJDUMP_PACKAGE,)) / "nvidia" / "cu13" / "bin" / "cuobjdump"


def compile_library(gencodes: tuple[str, ...], extra: tuple[str, ...] = ()) -> Path:
    """``libk.so`` built from KERNEL with these ``-gencode`` values and ``extra`` nvcc flags
    (``-rdc=true``), cached by source and flags."""
    root = nvcc_root()
    key = hashlib.sha256(KERNEL + "\0".join((*gencodes, *extra)).encode()).hexdigest()[:16]
    out = CACHE / "fatbin-libs" / key / "libk.so"
    if out.is_file():
        return out
    work = out.parent.with_name(f"{key}.partial-{os.getpid()}")
    shutil.rmtree(work, ignore_errors=True)
    work.mkdir(parents=True)
    (work / "k.cu").write_bytes(KERNEL)
    args = [str(root / "bin" / "nvcc"), "-shared", "-Xcompiler", "-fPIC", "-L", str(root / "lib"), *extra]
    for g in gencodes:
        args += ["-gencode", g]
    # The wheel's nvcc finds its own include/ and nvvm; PATH keeps the host's /usr/local/cuda out.
    env = {**os.environ, "PATH": f"{root / 'bin'}:/usr/bin:/bin"}
    env.pop("CUDA_HOME", None)
    env.pop("CUDA_PATH", None)
    proc = subprocess.run([*args, "-o", str(work / "libk.so"), "k.cu"], cwd=work, capture_output=True,
                          text=True, timeout=300, env=env)
    assert proc.returncode == 0, proc.stderr[-2000:]
    try:
        work.rename(out.parent)
    except OSError:
        shutil.rmtree(work, ignore_errors=True)
    return out


# Architectures to ask cuobjdump about one by one when it refuses a whole file: cuobjdump 13
# stops with "Support for 'sm_35' has been removed" on CUDA 11 libraries that carry Kepler code.
ORACLE_ARCHES = tuple(f"sm_{a}" for a in (35, 37, 50, 52, 53, 60, 61, 62, 70, 72, 75, 80, 86, 87, 88, 89, 90, 100,
                                            101, 103, 110, 120, 121)) + tuple(
    f"sm_{a}{v}" for a in (90, 100, 101, 103, 110, 120, 121) for v in "af")


def _listing(path: Path, arch: str | None) -> tuple[int, str, str]:
    args = [str(cuobjdump()), "--list-elf", "--list-ptx", *(["-arch", arch] if arch else []), str(path)]
    proc = subprocess.run(args, capture_output=True, text=True, timeout=600)
    return proc.returncode, proc.stdout, proc.stderr


def _parse_listing(stdout: str, sass: set[str], ptx_: set[str]) -> None:
    for line in stdout.splitlines():
        name = line.rsplit(":", 1)[-1].strip()
        arch = name.rsplit(".", 2)[-2] if name.count(".") >= 2 else ""
        if line.startswith("ELF file"):
            sass.add(arch)
        elif line.startswith("PTX file"):
            ptx_.add(arch.replace("sm_", "compute_"))


@dataclass(frozen=True)
class OracleListing:
    sass: set[str]
    ptx: set[str]
    unchecked: set[str]  # architectures this cuobjdump refused (not verified)
    error: str | None  # cuobjdump stopped on the file ("Invalid ELF"): the listing is partial


def cuobjdump_oracle(path: Path) -> OracleListing:
    """What cuobjdump lists for ``path`` (``ELF file 1: x.1.sm_80.cubin``).

    When cuobjdump refuses the file because of an architecture it no longer supports, it is
    asked arch by arch. cuobjdump 13 also stops on some cubins older toolkits wrote
    ("Invalid ELF"): ``error`` says so, and the listing is only what came before it."""
    sass: set[str] = set()
    ptx_: set[str] = set()
    rc, out, err = _listing(path, None)
    if rc == 0 or "has been removed" not in err:
        _parse_listing(out, sass, ptx_)
        fatal = next((line for line in err.splitlines() if "fatal" in line), None) if rc else None
        return OracleListing(sass, ptx_, set(), fatal)
    unchecked: set[str] = set()
    errors = []
    for arch in ORACLE_ARCHES:
        rc, out, err = _listing(path, arch)
        if "has been removed" in err or "is not defined for option" in err:
            unchecked.add(arch)  # an arch this cuobjdump no longer knows
        elif rc and "fatal" in err:
            errors.append(f"{arch}: {err.strip().splitlines()[-1]}")
        _parse_listing(out, sass, ptx_)
    return OracleListing(sass, ptx_, unchecked, "; ".join(errors) or None)


def cuobjdump_listing(path: Path) -> tuple[set[str], set[str], set[str]]:
    o = cuobjdump_oracle(path)
    assert o.error is None, o.error
    return o.sass, o.ptx, o.unchecked


def cuobjdump_targets(path: Path) -> tuple[set[str], set[str]]:
    sass, ptx_, _ = cuobjdump_listing(path)
    return sass, ptx_


def as_cuobjdump_names(sass: list[str]) -> set[str]:
    """cuobjdump names a family-specific cubin by its plain arch (``sm_100f`` -> ``sm_100.cubin``;
    the fatbin header's family flag is what says ``f``), and keeps ``a``."""
    return {t[:-1] if t.endswith("f") else t for t in sass}


# --- synthetic ELF files holding fatbins in named sections ----------------------------------


def elf_with_sections(sections: list[tuple[str, bytes]], *, strtab_after: int = 0, section_table: bool = True,
                      elf32: bool = False) -> bytes:
    """An inert little-endian ELF: a file header, the ``sections`` back to back (8-aligned), a
    ``.shstrtab``, then ``strtab_after`` bytes of a ``.strtab`` (lld writes it after ``.shstrtab``,
    so the names are far from the section table), then the section header table at the end,
    as linkers write it. Without ``section_table`` the header says there is none (``sstrip``)."""
    ehsize, shentsize = (52, 40) if elf32 else (64, 64)
    names = [n for n, _ in sections] + [".shstrtab"] + ([".strtab"] if strtab_after else [])
    shstr = b"\x00" + b"".join(n.encode() + b"\x00" for n in names)
    body, rows, off = bytearray(), [], ehsize

    def place(name: str, data: bytes, sh_type: int = 1, flags: int = 2) -> None:
        nonlocal off
        pad = -off % 8
        body.extend(b"\x00" * pad)
        off += pad
        rows.append((shstr.index(b"\x00" + name.encode() + b"\x00") + 1, sh_type, flags, off, len(data)))
        body.extend(data)
        off += len(data)

    for name, data in sections:
        place(name, data)
    place(".shstrtab", shstr, 3, 0)
    if strtab_after:
        place(".strtab", b"\x00" + b"s" * (strtab_after - 1), 3, 0)
    body.extend(b"\x00" * (-off % 8))
    off += -off % 8
    fmt = "<IIIIIIIIII" if elf32 else "<IIQQQQIIQQ"
    table = struct.pack(fmt, *([0] * 10)) + b"".join(
        struct.pack(fmt, n, t, f, 0, o, s, 0, 0, 8, 0) for n, t, f, o, s in rows)
    shnum = len(rows) + 1
    shoff = off if section_table else 0
    ident = b"\x7fELF" + bytes([1 if elf32 else 2, 1, 1, 0]) + b"\x00" * 8
    hdr = struct.pack("<HHIIIIIHHHHHH" if elf32 else "<HHIQQQIHHHHHH", 3, 62, 1, 0, 0, shoff, 0, ehsize, 0, 0,
                      shentsize, shnum if section_table else 0, len(sections) + 1 if section_table else 0)
    return ident + hdr + bytes(body) + (table if section_table else b"")
