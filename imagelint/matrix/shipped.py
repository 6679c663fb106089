"""One section of the newest shipped matrix, read without parsing the whole file.

Code that needs only a few names (facts reading an image's env and labels, the
cluster reader matching GFD labels, a rule running without a loaded matrix) should
not pay for parsing every table: the shipped file is ~190 KB of TOML, most of it the
official images' ``NVIDIA_REQUIRE_CUDA`` strings. ``shipped_section`` slices the
``[[section]]`` tables out of the file text, parses and validates just those, and
caches the result for the process. The matrix writer (``tomlout``) keeps a section's
tables together, and a file that does not slice cleanly falls back to a full load.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from imagelint.errors import ConfigError
from imagelint.lazyre import lazy_pattern
from imagelint.matrix.answers import NvidiaName, name_from_row

if TYPE_CHECKING:
    from imagelint.matrix.answers.stack import DevicePluginNaming
    from imagelint.matrix.model import Matrix

_HEADER = lazy_pattern(r"^[ \t]*\[", re.MULTILINE)


def _slice(text: str, section: str) -> str:
    """The text of every ``[[section]]`` table (each runs until the next table header).

    Found by the section's name (``str.find``) and confirmed at the start of its line: a
    multi-line regex over the whole ~250 KB file cost more than parsing the slice.
    """
    own = re.compile(r"[ \t]*\[\[[ \t]*" + re.escape(section) + r"[ \t]*\]\]")
    parts = []
    pos = 0
    while (i := text.find(section, pos)) >= 0:
        start = text.rfind("\n", 0, i) + 1
        header = own.match(text, start)
        if header is None or header.end() <= i:
            pos = i + len(section)
            continue
        following = _HEADER.search(text, header.end())
        end = following.start() if following else len(text)
        parts.append(text[start:end])
        pos = end
    return "".join(parts)


@functools.cache
def shipped_section(section: str) -> tuple[Mapping[str, Any], ...]:
    """The validated rows of one section of the newest shipped matrix (cached)."""
    from imagelint.matrix.compiled import compiled_document
    from imagelint.matrix.loader import (
        _read,
        _shipped_files,
        load_matrix,
        parse_text_cached,
    )
    from imagelint.matrix.schema import KIND_OVERLAY, SCHEMA_VERSION, validate_document

    files = _shipped_files()
    if not files:
        raise ConfigError("no shipped matrix found (is the installation complete?)")
    newest = max(files)
    path = files[newest]
    origin = f"matrices/{path.name}"
    whole = _read(path)
    compiled = compiled_document(path, whole, validated=True)
    if compiled is not None:  # an installed package: its build compiled and validated the file
        return tuple(dict(r) for r in compiled.get(section, ()))
    text = _slice(whole, section)
    try:
        doc = parse_text_cached(text, origin)  # no tomllib on a warm cache
    except ConfigError:  # the section did not slice cleanly (hand-edited file): read it all
        return tuple(load_matrix(newest).sections.get(section, ()))
    if set(doc) - {section}:
        return tuple(load_matrix(newest).sections.get(section, ()))
    meta = {"kind": KIND_OVERLAY, "schema_version": SCHEMA_VERSION, "data_version": newest}
    validate_document({"meta": meta, **doc}, origin, text, overlay_ok=True)
    return tuple(dict(r) for r in doc.get(section, ()))


def nvidia_name(name: str) -> NvidiaName:
    """A row of the shipped ``nvidia_names`` table; a missing row is an installation error."""
    for row in shipped_section("nvidia_names"):
        if row["name"] == name:
            return name_from_row(row)
    raise ConfigError(f"the shipped matrix has no nvidia_names row {name!r} (is the installation complete?)")


def device_plugin_naming(matrix: Matrix | None = None) -> DevicePluginNaming:
    """The device plugin's resource naming: from ``matrix`` when it has the table, else shipped."""
    from imagelint.matrix.answers.stack import naming_from_rows

    naming = matrix.device_plugin_naming() if matrix is not None else None
    if naming is None:
        naming = naming_from_rows(shipped_section("device_plugin_resource_names"))
    if naming is None:
        raise ConfigError("the shipped matrix has no complete device_plugin_resource_names table")
    return naming


__all__ = ["device_plugin_naming", "nvidia_name", "shipped_section"]
