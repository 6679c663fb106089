"""A small TOML writer for matrix documents (the standard library only reads TOML).

Only what matrix files contain: a ``[meta]`` table and arrays of flat tables whose values are
strings, integers, booleans or arrays of those. Output is deterministic so ``diff`` and
``export`` are stable.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any


def _value(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, str):
        # A JSON string literal is a valid TOML basic string for everything we write; \u escapes too.
        return json.dumps(value, ensure_ascii=False)
    if isinstance(value, (list, tuple)):
        return "[" + ", ".join(_value(v) for v in value) + "]"
    raise TypeError(f"cannot write {type(value).__name__} to a matrix file")


def _table(rows: Mapping[str, Any]) -> list[str]:
    return [f"{key} = {_value(val)}" for key, val in rows.items()]


def dump_matrix(meta: Mapping[str, Any], sections: Mapping[str, Sequence[Mapping[str, Any]]], header: str = "") -> str:
    lines: list[str] = []
    if header:
        lines += [f"# {line}".rstrip() for line in header.splitlines()] + [""]
    lines += ["[meta]", *_table(meta)]
    for name, rows in sections.items():
        for row in rows:
            lines += ["", f"[[{name}]]", *_table(row)]
    return "\n".join(lines) + "\n"


__all__ = ["dump_matrix"]
