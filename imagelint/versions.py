"""Version values of the target, parsed once where they are written and carried typed.

A driver version (``535.104.05``, a bare branch ``R535``) and a CUDA version (``12.2``) are
``str`` values (the text NVML reports and node labels carry, which reports, target files and
cluster keys use as written) with their parsed parts beside the text: comparisons use the parts
and never read the text again. Invalid text raises ``ValueError``; the edges
(``imagelint.deploytarget.values``) turn that into a one-line usage error naming where it was written.
"""

from __future__ import annotations

from typing import TypeVar

from imagelint.lazyre import lazy_pattern

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


def compare_parts(a: object, b: object) -> int | None:
    """-1/0/1 for two parsed versions (missing components count as 0), None unless both are."""
    pa, pb = getattr(a, "parts", None), getattr(b, "parts", None)
    if pa is None or pb is None:
        return None
    x, y = _padded(pa, pb)
    return (x > y) - (x < y)


__all__ = ["CUDA_RE", "DRIVER_RE", "CudaVersion", "DriverVersion", "compare_parts"]
