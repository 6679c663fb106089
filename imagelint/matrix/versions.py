"""Version comparison helpers that follow NVIDIA's own code, not PEP 440 or semver.

Two comparison flavours exist because NVIDIA's two requirement evaluators differ:

* ``compare_versions`` / ``dsl_compare`` mirror libnvidia-container's ``dsl_compare_version``
  (``src/cli/dsl.c``): digits and dots only, numeric component-by-component compare, and when one
  side runs out the rest of the other side only counts if it holds something other than ``.``/``0``
  ("rest must be zeros": ``12.0 == 12.0.0``, ``470.57.02 > 470``). This is also the right order for
  driver versions (``535.104.05``) and compute capabilities (``8.6``).
* ``GoSemver`` mirrors Masterminds semver v3 ``NewVersion`` (coercing: optional ``v``, 1-3 numeric
  components, leading zeros allowed, pre-release/build suffixes), which the container toolkit's Go
  code uses for ``CUDA_VERSION`` and the csv-mode (Tegra) requirement check.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from imagelint.lazyre import lazy_pattern
from imagelint.untrusted import is_digits
from imagelint.versions import compare_parts

# strtoumax() returns UINTMAX_MAX on overflow and dsl.c treats that value itself as invalid.
_UINTMAX_MAX = 2**64 - 1
_VERSION_CHARS = frozenset("0123456789.")


class VersionSyntaxError(ValueError):
    """A version string that the NVIDIA comparison it was given to cannot read."""


def _c_components_compare(v1: str, v2: str) -> int | None:
    """Three-way compare with dsl_compare_version's walk; None when the C code returns -1."""
    if not set(v1) <= _VERSION_CHARS or not set(v2) <= _VERSION_CHARS:
        return None
    i = j = 0
    while i < len(v1) and j < len(v2):
        n1, i2 = _strtoumax(v1, i)
        n2, j2 = _strtoumax(v2, j)
        if n1 is None or n2 is None:
            return None
        if n1 != n2:
            return -1 if n1 < n2 else 1
        i, j = _skip(v1, i2, "."), _skip(v2, j2, ".")
    rest1 = v1[_skip(v1, i, ".0"):]
    rest2 = v2[_skip(v2, j, ".0"):]
    if rest1 and not rest2:
        return 1
    if rest2 and not rest1:
        return -1
    # Both exhausted (equal) or, impossible after the loop, both non-empty: dsl.c calls that equal
    # for >=/<= only through the "both empty" branch; both non-empty cannot happen here.
    return 0


def _strtoumax(text: str, start: int) -> tuple[int | None, int]:
    end = start
    while end < len(text) and text[end] in "0123456789":  # strtoumax reads ASCII digits only
        end += 1
    if end == start:  # "v == ptr": no digits where a number must start (".5", "1..")
        return None, start
    value = int(text[start:end]) if end - start <= 20 else _UINTMAX_MAX  # more than 20 digits overflow
    if value >= _UINTMAX_MAX:
        return None, end
    return value, end


def _skip(text: str, pos: int, chars: str) -> int:
    while pos < len(text) and text[pos] in chars:
        pos += 1
    return pos


def dsl_compare(v1: str, op: str, v2: str) -> bool | None:
    """``v1 <op> v2`` exactly as libnvidia-container evaluates it; None means "invalid expression".

    ``op`` is one of ``= != < <= > >=``.
    """
    order = _c_components_compare(v1, v2)
    if order is None:
        return None
    if op == "=":
        return order == 0
    if op == "!=":
        return order != 0
    if op == "<":
        return order < 0
    if op == "<=":
        return order <= 0
    if op == ">":
        return order > 0
    if op == ">=":
        return order >= 0
    raise ValueError(f"unknown comparison operator {op!r}")


def compare_versions(a: str, b: str) -> int:
    """-1, 0 or 1 comparing two numeric versions like libnvidia-container's dsl_compare_version.

    Raises ``VersionSyntaxError`` for anything that is not digits and dots in dsl.c's sense.
    """
    parsed = compare_parts(a, b)  # both already parsed where they were written
    if parsed is not None:
        return parsed
    order = _c_components_compare(a, b)
    if order is None:
        raise VersionSyntaxError(f"not a numeric version: {a!r} / {b!r}")
    return order


def is_numeric_version(text: str) -> bool:
    """True when ``text`` is something dsl_compare_version can compare (e.g. ``535.104.05``)."""
    return bool(text) and _c_components_compare(text, "0") is not None


def driver_branch(driver: str) -> int:
    """``"535.104.05" -> 535``: the driver branch is its first numeric component."""
    branch = getattr(driver, "branch", None)
    if isinstance(branch, int):
        return branch
    head = driver.strip().split(".", 1)[0]
    if not is_digits(head):
        raise VersionSyntaxError(f"not a driver version: {driver!r}")
    return int(head)


def cuda_series(version: str) -> str:
    """The matrix's key for the CUDA series a version belongs to: ``"12.4.1" -> "12.4"``, and a
    bare major ``"12" -> "12.0"`` (the rows name series ``X.Y``); raises ``VersionSyntaxError`` for
    text that is not numeric. For evidence, where a bare major says no minor at all, use
    ``imagelint.versions.major_minor``."""
    parts = version.strip().split(".")
    if not parts or not all(is_digits(p) for p in parts[:2]):
        raise VersionSyntaxError(f"not a numeric version: {version!r}")
    minor = parts[1] if len(parts) > 1 else "0"
    return f"{int(parts[0])}.{int(minor)}"


# --- Go: Masterminds semver v3 NewVersion -------------------------------------------------------

_GO_SEMVER = lazy_pattern(
    r"v?([0-9]+)(\.[0-9]+)?(\.[0-9]+)?"
    r"(-([0-9A-Za-z\-]+(\.[0-9A-Za-z\-]+)*))?"
    r"(\+([0-9A-Za-z\-]+(\.[0-9A-Za-z\-]+)*))?",
    re.ASCII,
)


@dataclass(frozen=True)
class GoSemver:
    """A version as Masterminds semver v3 ``NewVersion`` reads it."""

    major: int
    minor: int
    patch: int
    prerelease: str
    original: str

    @classmethod
    def parse(cls, text: str) -> GoSemver:
        match = _GO_SEMVER.fullmatch(text)
        if match is None:
            raise VersionSyntaxError(f"invalid semantic version: {text!r}")
        numbers = []
        for group in (match.group(1), match.group(2), match.group(3)):
            value = (int(group.lstrip(".")) if len(group) <= 21 else 2**64) if group else 0  # 21: "." + 20 digits
            if value > 2**64 - 1:  # strconv.ParseUint(..., 64) overflow
                raise VersionSyntaxError(f"invalid semantic version: {text!r}")
            numbers.append(value)
        pre = match.group(5) or ""
        for ident in pre.split(".") if pre else ():
            # validatePrerelease: numeric identifiers must not have leading zeros
            if ident.isascii() and ident.isdigit() and len(ident) > 1 and ident[0] == "0":
                raise VersionSyntaxError(f"invalid semantic version: {text!r}")
        return cls(numbers[0], numbers[1], numbers[2], pre, text)

    def compare(self, other: GoSemver) -> int:
        for mine, theirs in ((self.major, other.major), (self.minor, other.minor), (self.patch, other.patch)):
            if mine != theirs:
                return -1 if mine < theirs else 1
        return _compare_prerelease(self.prerelease, other.prerelease)


def _compare_prerelease(a: str, b: str) -> int:
    if a == b:
        return 0
    if not a:
        return 1  # a release sorts after any pre-release
    if not b:
        return -1
    left, right = a.split("."), b.split(".")
    for x, y in zip(left, right):
        if x == y:
            continue
        xd, yd = x.isascii() and x.isdigit(), y.isascii() and y.isdigit()
        if xd and yd:  # no leading zeros (checked on parsing): the shorter is the smaller, without int()
            return -1 if (len(x), x) < (len(y), y) else 1
        if xd != yd:
            return -1 if xd else 1  # numeric identifiers sort before alphanumeric ones
        return -1 if x < y else 1
    if len(left) == len(right):
        return 0
    return -1 if len(left) < len(right) else 1


__all__ = [
    "GoSemver",
    "VersionSyntaxError",
    "compare_versions",
    "driver_branch",
    "dsl_compare",
    "is_numeric_version",
    "cuda_series",
]
