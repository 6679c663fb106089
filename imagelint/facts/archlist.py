"""GPU architecture lists named by build settings: secondary evidence of an image's GPU code.

Where no library's fatbin can be read (a Dockerfile, an image whose layers were not
read, an image whose code is JIT-built at start), the settings the build used say what
it compiled for: ``TORCH_CUDA_ARCH_LIST`` (PyTorch and its extensions), ``CUDA_ARCH_LIST``,
CMake's ``CMAKE_CUDA_ARCHITECTURES`` / ``CUDAARCHS``, and nvcc's own ``-gencode`` /
``-arch`` flags. They are found in env, in Dockerfile ``ENV``/``ARG``/``RUN`` lines, in the
image's build history and in its shell scripts (``settings_in_text``), kept as written
(``ArchListSetting``), and expanded to SASS/PTX targets only when judged
(``arch_targets``), because names such as ``Ampere`` come from the matrix.

Syntax (each tool's documentation):

* PyTorch (``torch.utils.cpp_extension``): items split by ``;`` or space; ``8.6`` is
  ``sm_86``, ``8.6+PTX`` adds ``compute_86``, ``9.0a`` is ``sm_90a``; names
  (``Ampere`` -> ``8.0;8.6+PTX``) are replaced as text first, combined names first.
* CMake (``CMAKE_CUDA_ARCHITECTURES``): ``86`` is SASS and PTX (real and virtual),
  ``86-real`` SASS only, ``86-virtual`` PTX only; ``all``/``all-major``/``native``
  depend on the toolkit or the build machine: not judged.
* nvcc: ``-gencode arch=compute_80,code=[sm_80,compute_80]``; ``-arch=sm_80`` alone is
  ``sm_80`` + ``compute_80``; ``-arch=compute_80`` alone is PTX only;
  ``-arch=native``/``all``/``all-major``: not judged.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass
from typing import TYPE_CHECKING

from imagelint.facts.model import ArchListSetting, EnvSetting, Provenance
from imagelint.lazyre import lazy_pattern

if TYPE_CHECKING:
    from imagelint.facts.fsview import FilesystemView

TORCH = "TORCH_CUDA_ARCH_LIST"
CUDA_ARCH_LIST = "CUDA_ARCH_LIST"
CMAKE = "CMAKE_CUDA_ARCHITECTURES"
CUDAARCHS = "CUDAARCHS"  # CMake's env var that initialises CMAKE_CUDA_ARCHITECTURES
NVCC = "nvcc"
ENV_SETTINGS = (TORCH, CUDA_ARCH_LIST, CMAKE, CUDAARCHS)

MAX_VALUE = 512  # a longer value is not an arch list
_PRINTABLE = lazy_pattern(r"^[\x20-\x7e]*$")  # an arch list is plain ASCII; anything else is not one (and is not printed)


def _plausible(value: str) -> bool:
    return bool(value.strip()) and len(value) <= MAX_VALUE and "$" not in value and bool(_PRINTABLE.match(value))
MAX_SETTINGS = 64  # per text

_ASSIGN = lazy_pattern(
    r"""(?:^|[\s;&|(`])(?:export\s+|-D)?(TORCH_CUDA_ARCH_LIST|CUDA_ARCH_LIST|CMAKE_CUDA_ARCHITECTURES|CUDAARCHS)"""
    r"""(?::STRING)?=(?:"([^"\n]*)"|'([^'\n]*)'|([^\s;&|`'"]+))"""
)
_GENCODE = lazy_pattern(r"""(?:-gencode|--generate-code)[=\s]+["']?(arch=[^\s"']+)""")
_ARCH_FLAG = lazy_pattern(r"""(?:^|\s)(?:-arch|--gpu-architecture)[=\s]+["']?([A-Za-z0-9_,-]+)""")
_CODE_FLAG = lazy_pattern(r"""(?:^|\s)(?:-code|--gpu-code)[=\s]+["']?([A-Za-z0-9_,]+)""")
_TARGET = lazy_pattern(r"^(sm|compute)_(\d{2,3}[af]?)$")
_TORCH_ITEM = lazy_pattern(r"^(\d{1,2})\.(\d)([af]?)(\+PTX)?$", re.IGNORECASE)
_CMAKE_ITEM = lazy_pattern(r"^(\d{2,3})([af]?)(-real|-virtual)?$")


@dataclass(frozen=True)
class ArchTargets:
    """An arch list as targets: ``8.0 8.6+PTX`` -> sm_80, sm_86 + compute_86."""

    sass: tuple[str, ...]
    ptx: tuple[str, ...]
    unknown: tuple[str, ...]  # items not understood or not judgeable ("native", "All")


# --- finding settings ------------------------------------------------------------------


def settings_in_env(env: Iterable[EnvSetting]) -> list[ArchListSetting]:
    return [ArchListSetting(e.name, e.value, e.provenance) for e in env
            if e.name in ENV_SETTINGS and _plausible(e.value)]


def settings_in_text(text: str, provenance: Provenance) -> list[ArchListSetting]:
    """Arch-list assignments and nvcc arch flags in a shell command or script (never run)."""
    out: list[ArchListSetting] = []
    for m in _ASSIGN.finditer(text):
        value = next(g for g in m.groups()[1:] if g is not None)
        if _plausible(value):
            out.append(ArchListSetting(m.group(1), value, provenance))
        if len(out) >= MAX_SETTINGS:
            return out
    for line in _logical_lines(text):
        if "nvcc" not in line and "-gencode" not in line and "--generate-code" not in line:
            continue
        flags = _nvcc_flags(line)
        if flags and _plausible(flags):
            out.append(ArchListSetting(NVCC, flags, provenance))
        if len(out) >= MAX_SETTINGS:
            break
    return out


_HISTORY_DECL = lazy_pattern(r"^\s*(?:/bin/sh -c #\(nop\)\s+)?(?:ARG|ENV)\s+(.*)$", re.DOTALL)
_HISTORY_RUN_ARGS = lazy_pattern(r"^\s*RUN \|(\d+) (.*)$", re.DOTALL)
_SHELL_START = lazy_pattern(r" (?:/bin/(?:ba)?sh -c |\[)")
_NEXT_ASSIGNMENT = lazy_pattern(r"\s(?=[A-Za-z_][A-Za-z0-9_]*=)")


def settings_in_history(created_by: str, provenance: Provenance) -> list[ArchListSetting]:
    """Arch lists in one build-history entry. BuildKit writes ``ARG NAME=a b`` and
    ``RUN |2 NAME=a b OTHER=c /bin/sh -c cmd`` with values unquoted (spaces and all):
    those assignments are split at the next ``NAME=``; the command is read as shell text."""
    decl = _HISTORY_DECL.match(created_by)
    if decl is not None:
        return _assignments(decl.group(1), provenance)
    run = _HISTORY_RUN_ARGS.match(created_by)
    if run is None:
        return settings_in_text(created_by, provenance)
    rest = run.group(2)
    shell = _SHELL_START.search(rest)
    if shell is None:
        return []  # cannot tell where the build args end
    return _assignments(rest[: shell.start()], provenance) + settings_in_text(rest[shell.start():], provenance)


def _assignments(text: str, provenance: Provenance) -> list[ArchListSetting]:
    out = []
    for part in _NEXT_ASSIGNMENT.split(text.strip()):
        name, eq, value = part.partition("=")
        value = value.strip().strip("\"'")
        if eq and name in ENV_SETTINGS and _plausible(value):
            out.append(ArchListSetting(name, value, provenance))
    return out


def _logical_lines(text: str) -> list[str]:
    return text.replace("\\\r\n", " ").replace("\\\n", " ").splitlines()


def _nvcc_flags(line: str) -> str:
    """The arch flags of one nvcc command line, normalised (``-gencode arch=...,code=...``)."""
    parts = [f"-gencode {m.group(1)}" for m in _GENCODE.finditer(line)]
    parts += [f"-arch={m.group(1)}" for m in _ARCH_FLAG.finditer(line) if _is_gpu_arch(m.group(1))]
    parts += [f"-code={m.group(1)}" for m in _CODE_FLAG.finditer(line) if _is_gpu_arch(m.group(1))]
    return " ".join(parts)


def _is_gpu_arch(value: str) -> bool:
    return value.startswith(("sm_", "compute_")) or value in ("native", "all", "all-major")


# --- expanding to targets ----------------------------------------------------------------


def arch_targets(setting: ArchListSetting, names: Iterable[tuple[str, str]] = ()) -> ArchTargets:
    """The SASS/PTX targets a setting names; ``names`` is the matrix's (name, expansion) for PyTorch."""
    if setting.setting == NVCC:
        return _nvcc_targets(setting.value)
    if setting.setting in (CMAKE, CUDAARCHS):
        return _cmake_targets(setting.value)
    if setting.setting == CUDA_ARCH_LIST and not re.search(r"\d\.\d", setting.value):
        return _cmake_targets(setting.value)  # CUDA_ARCH_LIST="80;86" is read the CMake way
    return _torch_targets(setting.value, names)


def _torch_targets(value: str, names: Iterable[tuple[str, str]]) -> ArchTargets:
    text = value.strip().replace(" ", ";")
    for name, expansion in names:  # as PyTorch does it: text replacement, combined names first
        text = text.replace(name, expansion)
    sass: list[str] = []
    ptx: list[str] = []
    unknown: list[str] = []
    for item in re.split(r"[;,\s]+", text):
        if not item:
            continue
        m = _TORCH_ITEM.match(item)
        if m is None:
            unknown.append(item)
            continue
        arch = f"{int(m.group(1))}{m.group(2)}{m.group(3).lower()}"
        sass.append(f"sm_{arch}")
        if m.group(4):
            ptx.append(f"compute_{arch}")
    return _targets(sass, ptx, unknown)


def _cmake_targets(value: str) -> ArchTargets:
    sass: list[str] = []
    ptx: list[str] = []
    unknown: list[str] = []
    for item in re.split(r"[;,\s]+", value.strip()):
        if not item:
            continue
        m = _CMAKE_ITEM.match(item)
        if m is None:
            unknown.append(item)  # all, all-major, native, OFF
            continue
        arch = f"{int(m.group(1))}{m.group(2)}"
        if m.group(3) != "-virtual":
            sass.append(f"sm_{arch}")
        if m.group(3) != "-real":
            ptx.append(f"compute_{arch}")
    return _targets(sass, ptx, unknown)


def _nvcc_targets(value: str) -> ArchTargets:
    sass: list[str] = []
    ptx: list[str] = []
    unknown: list[str] = []

    def add(code: str) -> None:
        m = _TARGET.match(code)
        if m is None:
            unknown.append(code)
        elif m.group(1) == "sm":
            sass.append(code)
        else:
            ptx.append(code)

    codes = [c for part in re.findall(r"-code=(\S+)", value) for c in part.split(",") if c]
    for m in re.finditer(r"-gencode arch=(\S+?),code=\[?([^\]\s]+)\]?", value):
        for code in m.group(2).split(","):
            add(code.strip("[]\"'"))
    for m in re.finditer(r"-arch=(\S+)", value):
        arch = m.group(1)
        if arch in ("native", "all", "all-major"):
            unknown.append(arch)
        elif codes:
            continue  # -code decides what is embedded
        elif arch.startswith("sm_"):
            add(arch)
            add("compute_" + arch[3:])
        else:
            add(arch)
    for code in codes:
        add(code)
    return _targets(sass, ptx, unknown)


def _targets(sass: list[str], ptx: list[str], unknown: list[str]) -> ArchTargets:
    return ArchTargets(tuple(dict.fromkeys(sass)), tuple(dict.fromkeys(ptx)), tuple(dict.fromkeys(unknown)))


# --- from an image ---------------------------------------------------------------------

MAX_SCRIPTS = 256  # shell scripts read for arch flags, per image


def image_arch_lists(env: Iterable[EnvSetting], history: Iterable[object], fs: FilesystemView | None) -> tuple[
        ArchListSetting, ...]:
    """Arch lists in an image: its env, the ``created_by`` of its build history (RUN lines,
    ARG defaults as BuildKit records them), and the shell scripts the capture kept."""
    out = settings_in_env(env)
    for i, entry in enumerate(history):
        text = getattr(entry, "created_by", "") or ""
        if text:
            out += settings_in_history(text, Provenance(kind="history", line=i))
    if fs is not None:
        from imagelint.facts.fsview import file_provenance
        from imagelint.facts.scripts import script_text

        scripts = [e for e in fs.glob("**/*.sh") if e.kind == "file"][:MAX_SCRIPTS]
        for entry in scripts:
            text = script_text(fs, entry.path)
            if text and ("ARCH" in text or "nvcc" in text or "-gencode" in text):
                out += settings_in_text(text, file_provenance(fs, entry.path))
    return unique_settings(out)


def unique_settings(settings: list[ArchListSetting]) -> tuple[ArchListSetting, ...]:
    seen: set[tuple[str, str]] = set()
    out = []
    for s in settings:
        if (s.setting, s.value) not in seen:
            seen.add((s.setting, s.value))
            out.append(s)
    return tuple(out)
