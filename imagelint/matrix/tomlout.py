"""Matrix documents as TOML, written by tomli-w: ``[meta]``, then one array of tables per section."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any


def dump_matrix(meta: Mapping[str, Any], sections: Mapping[str, Sequence[Mapping[str, Any]]], header: str = "") -> str:
    import tomli_w

    document: dict[str, Any] = {"meta": dict(meta)}
    document.update({name: [dict(row) for row in rows] for name, rows in sections.items() if rows})
    comment = "".join(f"# {line}".rstrip() + "\n" for line in header.splitlines())
    return comment + ("\n" if comment else "") + tomli_w.dumps(document)


__all__ = ["dump_matrix"]
