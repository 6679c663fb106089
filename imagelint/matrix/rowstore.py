"""The rows of one matrix, and the readings of a row's values every query shares.

``RowStore`` is the base of ``Matrix``: the validated rows by section (``sections``), raw access
for ``imagelint matrix show`` and the refresh tool, and ``_section`` for the queries
(``imagelint.matrix.queries``), which answer with the typed values of ``imagelint.matrix.answers``.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from imagelint.lazyre import lazy_pattern
from imagelint.matrix.versions import is_numeric_version


def _strip_v(version: str) -> str:
    version = version.strip()
    return version[1:] if version[:1] in ("v", "V") else version


_ARCH_ALIASES = {"amd64": "amd64", "x86_64": "amd64", "arm64": "arm64", "aarch64": "arm64", "sbsa": "arm64"}


def _image_arch(arch: str) -> str | None:
    """``amd64``, ``x86_64``, ``linux/arm64/v8`` ... -> amd64 | arm64 (None for anything else)."""
    parts = arch.strip().lower().split("/")
    if len(parts) > 1 and parts[0] == "linux":
        parts = parts[1:]
    return _ARCH_ALIASES.get(parts[0])


def _env_map(entries: list[str] | tuple[str, ...]) -> dict[str, str]:
    return dict(e.split("=", 1) for e in entries)


Rows = Mapping[str, tuple[Mapping[str, Any], ...]]


_GFD_MIG_SUFFIX = lazy_pattern(r"(?i)-MIG-.*$")
_GFD_SHARED_SUFFIX = lazy_pattern(r"(?i)-SHARED$")
_NOT_ALNUM = lazy_pattern(r"[^0-9a-z]")


def _gpu_key(name: str) -> str:
    """Case- and separator-insensitive key; GFD suffixes (-SHARED, -MIG-...) dropped."""
    text = _GFD_SHARED_SUFFIX.sub("", _GFD_MIG_SUFFIX.sub("", name.strip()))
    return _NOT_ALNUM.sub("", text.lower())


def _tool_key(version: str) -> tuple[int, ...] | None:
    text = _strip_v(version)
    if not is_numeric_version(text):
        return None
    parts = [int(p) for p in text.split(".") if p != ""]
    while len(parts) > 1 and parts[-1] == 0:
        parts.pop()
    return tuple(parts)


def _cuda_parts(version: str) -> str | None:
    """Normalise a CUDA version to at most major.minor.patch ("v12.2.2.009" -> "12.2.2")."""
    text = _strip_v(version)
    if not is_numeric_version(text):
        return None
    return ".".join(text.split(".")[:3])


class RowStore:
    """The validated rows of one matrix by section; the dataclass ``Matrix`` holds the fields."""

    version: str
    sections: Rows
    meta: Mapping[str, Any]

    def rows(self, section: str | None = None) -> Any:
        """All rows by section (``{section: [row, ...]}``), or one section's rows as a list."""
        if section is not None:
            return [dict(r) for r in self.sections.get(section, ())]
        return {name: [dict(r) for r in rows] for name, rows in self.sections.items()}

    def to_toml(self, section: str | None = None) -> str:
        """The matrix as TOML; with ``section``, ``[meta]`` and that section only."""
        from imagelint.matrix.tomlout import dump_matrix

        return dump_matrix(dict(self.meta), self._rows_of(section))

    def to_json_document(self, section: str | None = None) -> dict[str, Any]:
        return {"meta": dict(self.meta), **self._rows_of(section)}

    def _rows_of(self, section: str | None) -> dict[str, Any]:
        rows = self.rows()
        return rows if section is None else {section: rows.get(section, [])}

    def names_in(self, section: str) -> frozenset[str]:
        """The ``name`` of every row of ``section`` (the features a requirement may name)."""
        return frozenset(r["name"] for r in self._section(section))

    def _section(self, name: str) -> tuple[Mapping[str, Any], ...]:
        return self.sections.get(name, ())
