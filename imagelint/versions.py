"""The version values, parsed once where they are written and carried typed: the one home of
``DriverVersion``, ``CudaVersion`` and ``ComputeCapability``, and of the one lenient reading of a
version's numbers (``version_key``, ``major_minor``) for text that is not one of them.

A driver version (``535.104.05``, a bare branch ``R535``), a CUDA version (``12.2``) and a compute
capability (``9.0``) are ``str`` values (the text NVML reports and node labels carry, which
reports, target files and cluster keys use as written) with their parsed parts beside the text:
comparisons use the parts and never read the text again. Invalid text raises ``ValueError``; the
edges (``imagelint.deploytarget.values``) turn that into a one-line usage error naming where it
was written. ``parse`` is the lenient form for values read from data files (None, never an error).
"""

from __future__ import annotations

import re
from typing import TypeVar

from imagelint.lazyre import lazy_pattern
from imagelint.untrusted import is_digits

# NVIDIA driver versions: 535 / 535.104 / 535.104.05 (leading zeros are significant text).
DRIVER_RE = lazy_pattern(r"^\d{3}(?:\.\d{1,3}){0,2}$")
CUDA_RE = lazy_pattern(r"^\d+\.\d+(?:\.\d+)?$")


def _padded(a: tuple[int, ...], b: tuple[int, ...]) -> tuple[tuple[int, ...], tuple[int, ...]]:
    width = max(len(a), len(b))
    return a + (0,) * (width - len(a)), b + (0,) * (width - len(b))


V = TypeVar("V", bound="_ParsedVersion")


class _ParsedVersion(str):
    """A version's text with its numeric parts, parsed once."""

    PATTERN = DRIVER_RE
    STRIP = ""
    WHAT = "version"
    parts: tuple[int, ...]

    def __new__(cls, text: str) -> _ParsedVersion:
        cleaned = str(text).strip().lstrip(cls.STRIP)
        if not cls.PATTERN.match(cleaned):
            raise ValueError(f"not a {cls.WHAT}: {text!r}")
        value = super().__new__(cls, cleaned)
        value.parts = tuple(int(p) for p in cleaned.split("."))
        return value

    @classmethod
    def parse(cls: type[V], text: object) -> V | None:
        """The version ``text`` names, or None (for values read from data files)."""
        if isinstance(text, cls):
            return text
        try:
            return cls(str(text))
        except ValueError:
            return None


class DriverVersion(_ParsedVersion):
    """An NVIDIA driver version, parsed once where it is written: ``535.104.05``, or a bare
    branch (``535``, ``R535``: "some 535.x", judged as the oldest of the branch).

    The value is the driver's text as NVML reports it and node labels carry it (leading zeros
    of the last component are significant text), so reports, target files and cluster keys
    use it as written; ``parts`` / ``branch`` / ``bare`` are its parsed form, which every
    comparison uses instead of reading the text again."""

    PATTERN = DRIVER_RE
    STRIP = "Rr"
    WHAT = "driver version"

    @property
    def branch(self) -> int:
        return self.parts[0]

    @property
    def bare(self) -> bool:
        """Only the branch is known (``R535``)."""
        return len(self.parts) == 1

    @property
    def label(self) -> str:
        return f"R{self.branch} (patch level unknown)" if self.bare else str(self)

    def at_least(self, other: DriverVersion) -> bool:
        """``self >= other`` component by component, a missing component counting as 0 (as
        libnvidia-container compares: ``535 < 535.54.03``, ``470.57 <= 470.57.02``)."""
        mine, theirs = _padded(self.parts, other.parts)
        return mine >= theirs


class CudaVersion(_ParsedVersion):
    """A CUDA version (``12.2``, ``12.4.1``): the one a driver reports, or a toolkit release."""

    PATTERN = CUDA_RE
    STRIP = "vV"
    WHAT = "CUDA version"

    @property
    def major(self) -> int:
        return self.parts[0]

    @property
    def major_minor(self) -> str:
        return f"{self.parts[0]}.{self.parts[1]}"


# 8.0 / 12.1; 9 (= 9.0); nvcc's sm_90, sm_90a, sm_100f, compute_86. ASCII and bounded: int() cannot fail.
_CC_DOTTED = lazy_pattern(r"^([0-9]{1,3})\.([0-9]{1,3})$")
_CC_NVCC = lazy_pattern(r"^(?:sm|compute)_?([0-9]{1,3})([0-9])[af]?$", re.IGNORECASE)


class ComputeCapability(str):
    """A GPU's compute capability, ``MAJOR.MINOR`` (``9.0``). Written also as a bare major (``9``,
    meaning 9.0) or as nvcc names a target (``sm_90``, ``sm_90a``, ``compute_86``); the value is
    always the dotted text, ``parts`` its numbers for comparison."""

    parts: tuple[int, int]

    def __new__(cls, text: str) -> ComputeCapability:
        cleaned = str(text).strip()
        dotted = _CC_DOTTED.match(cleaned) or _CC_NVCC.match(cleaned)
        if dotted:
            major, minor = int(dotted.group(1)), int(dotted.group(2))
        elif is_digits(cleaned, 2):
            major, minor = int(cleaned), 0
        else:
            raise ValueError(f"not a compute capability: {text!r}")
        value = super().__new__(cls, f"{major}.{minor}")
        value.parts = (major, minor)
        return value

    @classmethod
    def parse(cls, text: object) -> ComputeCapability | None:
        """The compute capability ``text`` names, or None (for values read from data files)."""
        if isinstance(text, cls):
            return text
        if text is None:
            return None
        try:
            return cls(str(text))
        except ValueError:
            return None

    @classmethod
    def parts_of(cls, text: object) -> tuple[int, int] | None:
        """``(major, minor)`` of the compute capability ``text`` names, or None."""
        found = cls.parse(text)
        return found.parts if found is not None else None

    @property
    def major(self) -> int:
        return self.parts[0]

    @property
    def minor(self) -> int:
        return self.parts[1]


def version_key(text: str) -> tuple[int, ...]:
    """The numbers of a dotted version, for ordering text that is not a typed version (a library's
    soname version, a PTX ISA, a toolkit release): ``"12.4.1"`` → (12, 4, 1). Parts that are not
    ASCII digits of a bounded length are left out."""
    return tuple(int(p) for p in text.split(".") if is_digits(p))


def major_minor(text: str) -> str | None:
    """``12.4.1`` / ``12.2.2.009`` / ``v12.4`` → ``12.4``; None when the text does not start with
    two numbers (a major alone, ``12``, does not say which minor)."""
    parts = text.strip().lstrip("vV").split(".")
    if len(parts) < 2 or not all(is_digits(p) for p in parts[:2]):
        return None
    return f"{int(parts[0])}.{int(parts[1])}"


def compare_parts(a: object, b: object) -> int | None:
    """-1/0/1 for two parsed versions (missing components count as 0), None unless both are."""
    pa, pb = getattr(a, "parts", None), getattr(b, "parts", None)
    if pa is None or pb is None:
        return None
    x, y = _padded(pa, pb)
    return (x > y) - (x < y)


__all__ = [
    "CUDA_RE", "DRIVER_RE", "ComputeCapability", "CudaVersion", "DriverVersion", "compare_parts", "major_minor",
    "version_key",
]
