"""Nodes from ``kubectl describe nodes`` text (the GPU Operator's must-gather ``gpu_nodes.descr``).

The must-gather keeps the GPU nodes only as ``kubectl describe`` prints them, so their
labels, taints, Ready condition, capacity and allocatable are read back from that layout into
Node-shaped objects (what :mod:`imagelint.cluster.node_status` reads). A section it cannot read
is left out of the object: a node without ``Allocatable:`` has no allocatable, which doctor
reports as it would for a live node — so only sections really printed are filled in.
"""

from __future__ import annotations

from typing import Any

from imagelint.lazyre import lazy_pattern

_FIELD = lazy_pattern(r"^([A-Z][A-Za-z ]*):\s*(.*)$")
_TAINT = lazy_pattern(r"^([^=:\s]+)(?:=([^:\s]*))?:(NoSchedule|PreferNoSchedule|NoExecute)$")
_COLUMNS = lazy_pattern(r"\s{2,}")


def nodes_from_describe(text: str) -> list[dict[str, Any]]:
    nodes: list[list[str]] = []
    current: list[str] | None = None
    for line in text.splitlines():
        if line.startswith("Name:"):
            current = []
            nodes.append(current)
        if current is not None:
            current.append(line.rstrip())
    return [n for n in (_node(block) for block in nodes) if n is not None]


def _sections(block: list[str]) -> dict[str, list[str]]:
    """``Field:  value`` with its indented continuation lines → field → values."""
    out: dict[str, list[str]] = {}
    field = ""
    for line in block:
        match = _FIELD.match(line) if line and not line[0].isspace() else None
        if match:
            field = match.group(1)
            out[field] = [match.group(2).strip()] if match.group(2).strip() else []
        elif field and line.strip():
            out[field].append(line.strip())
    return out


def _pairs(values: list[str], sep: str) -> dict[str, str]:
    found = {}
    for value in values:
        key, _, rest = value.partition(sep)
        if key and rest is not None and value != "<none>":
            found[key.strip()] = rest.strip()
    return found


def _node(block: list[str]) -> dict[str, Any] | None:
    sections = _sections(block)
    name = (sections.get("Name") or [""])[0]
    if not name:
        return None
    labels = _pairs([v for v in sections.get("Labels", []) if "=" in v], "=")
    taints = []
    for value in sections.get("Taints", []):
        match = _TAINT.match(value)
        if match:
            taint = {"key": match.group(1), "effect": match.group(3)}
            if match.group(2):
                taint["value"] = match.group(2)
            taints.append(taint)
    status: dict[str, Any] = {}
    for section, key in (("Capacity", "capacity"), ("Allocatable", "allocatable")):
        if section in sections:
            status[key] = _pairs(sections[section], ":")
    conditions = []
    for row in sections.get("Conditions", []):
        cols = _COLUMNS.split(row)
        if len(cols) >= 2 and cols[0] not in ("Type", "----") and cols[1] in ("True", "False", "Unknown"):
            conditions.append({"type": cols[0], "status": cols[1], "reason": cols[4] if len(cols) > 4 else "",
                               "message": cols[5] if len(cols) > 5 else ""})
    if conditions:
        status["conditions"] = conditions
    spec: dict[str, Any] = {"taints": taints} if taints else {}
    if (sections.get("Unschedulable") or [""])[0] == "true":
        spec["unschedulable"] = True
    return {"apiVersion": "v1", "kind": "Node", "metadata": {"name": name, "labels": labels}, "spec": spec, "status": status}


__all__ = ["nodes_from_describe"]
