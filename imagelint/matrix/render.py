"""Matrix presentation for the CLI: readable tables, JSON, diffs and a ConfigMap (no typer here)."""

from __future__ import annotations

import json
from typing import Any

import yaml

from imagelint.errors import UsageError
from imagelint.escape import printable
from imagelint.lazyre import lazy_pattern
from imagelint.matrix.model import Matrix
from imagelint.matrix.schema import SECTIONS, row_key

_HIDDEN = ("source", "note", "confidence")
_CELL_MAX = 48
_DNS_SUBDOMAIN = lazy_pattern(r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$")
_DNS_LABEL = lazy_pattern(r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?$")


def _cell(value: Any) -> str:
    if isinstance(value, bool):
        text = "yes" if value else "no"
    elif isinstance(value, (list, tuple)):
        text = ",".join(str(v) for v in value)
    elif value is None:
        text = ""
    else:
        text = str(value)
    text = printable(text)  # a matrix may come from a cluster's ConfigMap: shown, never interpreted
    return text if len(text) <= _CELL_MAX else text[: _CELL_MAX - 1] + "…"


def render_text(matrix: Matrix, section: str | None = None) -> str:
    """Plain tables, one per section; rows marked ``?`` are uncertain (see their source)."""
    check_section(section)
    out = [printable(f"matrix {matrix.version} (schema {matrix.schema_version}) from {matrix.origin}"), "? = uncertain row"]
    for name, rows in matrix.rows().items():
        if section and name != section:
            continue
        columns = [c for c in SECTIONS[name].fields if c not in _HIDDEN and any(c in r for r in rows)]
        table = [["", *columns]] + [
            ["?" if r.get("confidence") == "uncertain" else "", *(_cell(r.get(c)) for c in columns)] for r in rows
        ]
        widths = [max(len(row[i]) for row in table) for i in range(len(table[0]))]
        out += ["", f"[{name}] {len(rows)} rows"]
        for row in table:
            out.append("  ".join(cell.ljust(widths[i]) for i, cell in enumerate(row)).rstrip())
    return "\n".join(out)


def check_section(section: str | None) -> None:
    if section is not None and section not in SECTIONS:
        raise UsageError(f"unknown section {section!r} (known: {', '.join(SECTIONS)})")


def render_json(matrix: Matrix, section: str | None = None) -> str:
    """The matrix as JSON (``meta`` and every section, or ``meta`` and just ``section``)."""
    check_section(section)
    return json.dumps(matrix.to_json_document(section), indent=2, ensure_ascii=False)


def diff_matrices(a: Matrix, b: Matrix) -> list[str]:
    """``+``/``-``/``~`` lines per section, keyed by each section's identifying fields."""
    lines: list[str] = []
    if a.version != b.version:
        lines.append(f"~ meta.data_version: {a.version} -> {b.version}")
    rows_a, rows_b = a.rows(), b.rows()
    for name in SECTIONS:
        old = {row_key(name, r): r for r in rows_a.get(name, [])}
        new = {row_key(name, r): r for r in rows_b.get(name, [])}
        for key in old.keys() - new.keys():
            lines.append(f"- {name} {'/'.join(map(str, key))}")
        for key in new.keys() - old.keys():
            lines.append(f"+ {name} {'/'.join(map(str, key))}")
        for key in old.keys() & new.keys():
            if old[key] != new[key]:
                fields = sorted(k for k in old[key].keys() | new[key].keys() if old[key].get(k) != new[key].get(k))
                changes = "; ".join(f"{f}: {old[key].get(f)!r} -> {new[key].get(f)!r}" for f in fields)
                lines.append(f"~ {name} {'/'.join(map(str, key))}: {changes}")
    return sorted((printable(line) for line in lines), key=lambda line: (line[2:], line[0]))


def configmap_yaml(matrix: Matrix, name: str = "imagelint-matrix", namespace: str | None = None) -> str:
    """A ConfigMap manifest whose ``matrix.toml`` key holds the matrix (``kubectl apply -f -``)."""
    if len(name) > 253 or not _DNS_SUBDOMAIN.match(name):
        raise UsageError(f"--name {name!r} is not a valid ConfigMap name (lowercase DNS subdomain)")
    if namespace is not None and (len(namespace) > 63 or not _DNS_LABEL.match(namespace)):
        raise UsageError(f"--namespace {namespace!r} is not a valid namespace name (lowercase DNS label)")
    metadata: dict[str, Any] = {
        "name": name,
        "labels": {"app.kubernetes.io/name": "imagelint", "app.kubernetes.io/component": "matrix"},
        "annotations": {"imagelint.dev/matrix-version": matrix.version},
    }
    if namespace:
        metadata["namespace"] = namespace
    doc = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": metadata, "data": {"matrix.toml": matrix.to_toml()}}
    return yaml.dump(doc, Dumper=_BlockDumper, sort_keys=False, allow_unicode=True, width=1000)


class _BlockDumper(yaml.SafeDumper):
    """Safe dumper that writes multi-line strings as ``|`` blocks, so the ConfigMap stays readable."""


def _str_representer(dumper: yaml.SafeDumper, value: str) -> yaml.ScalarNode:
    style = "|" if "\n" in value else None
    return dumper.represent_scalar("tag:yaml.org,2002:str", value, style=style)


_BlockDumper.add_representer(str, _str_representer)


__all__ = ["configmap_yaml", "diff_matrices", "render_json", "render_text"]
