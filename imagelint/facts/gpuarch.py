"""Which compiled GPU code runs on which GPU: SASS and PTX targets against a compute capability.

The targets come from fatbin headers (``imagelint.facts.fatbin``) or, as secondary
evidence, from PyTorch's ``TORCH_CUDA_ARCH_LIST``.

Compatibility (CUDA Programming Guide, "Compute Capabilities"; nvidia-facts.md §9):
SASS ``sm_XY`` runs on compute capability X.Z when the major matches and Z >= Y;
``sm_XYa`` only on exactly X.Y; ``sm_XYf`` on the same major with Z >= Y. PTX
``compute_XY`` is JIT-compiled by the driver for any CC >= X.Y (a driver new enough for
its PTX ISA version); ``compute_XYa`` only for exactly X.Y; ``compute_XYf`` for the same
major with Z >= Y. These are ISA rules, not product data, so they live here.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Iterable

# --- what runs where ---------------------------------------------------------------------

_TARGET = re.compile(r"^(sm|compute)_(\d{2,3})([af]?)$")
_CC = re.compile(r"^(\d{1,2})\.(\d)$")


@dataclass(frozen=True, order=True)
class GpuTarget:
    """A compiled target: ``sm_86`` (SASS) or ``compute_90a`` (PTX)."""

    major: int
    minor: int
    variant: str  # "", "a" (arch-specific), "f" (family-specific)
    ptx: bool

    @classmethod
    def parse(cls, name: str) -> "GpuTarget | None":
        m = _TARGET.match(name.strip())
        if m is None:
            return None
        arch = int(m.group(2))
        return cls(arch // 10, arch % 10, m.group(3), m.group(1) == "compute")

    def __str__(self) -> str:
        return f"{'compute' if self.ptx else 'sm'}_{self.major}{self.minor}{self.variant}"

    def runs_on(self, cc: tuple[int, int]) -> bool:
        """Whether this SASS runs, or this PTX can be JIT-compiled, on compute capability ``cc``."""
        major, minor = cc
        if self.variant == "a":
            return (major, minor) == (self.major, self.minor)
        if self.ptx and self.variant == "":
            return (major, minor) >= (self.major, self.minor)
        return major == self.major and minor >= self.minor  # SASS, and "f" PTX: the same family


def parse_compute_capability(text: str | None) -> tuple[int, int] | None:
    """``9.0`` -> (9, 0); ``12.1`` -> (12, 1); None when not ``X.Y``."""
    if not text:
        return None
    m = _CC.match(text.strip())
    return (int(m.group(1)), int(m.group(2))) if m else None


@dataclass(frozen=True)
class CodeFit:
    """How a set of compiled targets meets one compute capability."""

    sass: tuple[str, ...]  # SASS that runs as is
    ptx: tuple[str, ...]  # PTX the driver can JIT-compile

    @property
    def runs(self) -> bool:
        return bool(self.sass or self.ptx)

    @property
    def needs_jit(self) -> bool:
        return not self.sass and bool(self.ptx)


def code_fit(sass: Iterable[str], ptx: Iterable[str], cc: tuple[int, int]) -> CodeFit:
    def fitting(names: Iterable[str]) -> tuple[str, ...]:
        out = []
        for name in names:
            t = GpuTarget.parse(name)
            if t is not None and t.runs_on(cc):
                out.append(name)
        return tuple(out)

    return CodeFit(fitting(sass), fitting(ptx))


def needed_for(cc: tuple[int, int]) -> str:
    """What would run on ``cc``: ``sm_90 SASS or PTX <= compute_90``; ``sm_80..sm_86 SASS or ...``."""
    major, minor = cc
    sass = f"sm_{major}{minor}" if minor == 0 else f"sm_{major}0..sm_{major}{minor}"
    return f"{sass} SASS or PTX <= compute_{major}{minor}"


# --- PyTorch's arch list (secondary evidence) ---------------------------------------------

_TORCH_ENTRY = re.compile(r"^(\d{1,2})\.(\d)([af]?)(\+PTX)?$", re.IGNORECASE)


@dataclass(frozen=True)
class TorchArchList:
    """``TORCH_CUDA_ARCH_LIST`` as targets: ``8.0 8.6 9.0+PTX`` -> sm_80, sm_86, sm_90 + compute_90."""

    sass: tuple[str, ...]
    ptx: tuple[str, ...]
    unknown: tuple[str, ...]  # names such as "Ampere" that PyTorch expands itself


def parse_torch_arch_list(value: str) -> TorchArchList:
    sass: list[str] = []
    ptx: list[str] = []
    unknown: list[str] = []
    for item in re.split(r"[\s;,]+", value.strip()):
        if not item:
            continue
        m = _TORCH_ENTRY.match(item)
        if m is None:
            unknown.append(item)
            continue
        arch = f"{int(m.group(1))}{m.group(2)}{m.group(3).lower()}"
        sass.append(f"sm_{arch}")
        if m.group(4):
            ptx.append(f"compute_{arch}")
    return TorchArchList(tuple(dict.fromkeys(sass)), tuple(dict.fromkeys(ptx)), tuple(unknown))
