"""Nodes as doctor reads them: every label, taints, capacity / allocatable, Ready, runtime handlers.

``imagelint.cluster.nodes`` collapses GPU nodes into pools for a Target; doctor needs each node
as it is (a selector typo is judged against every label a node carries, Ready per node).
``status.runtimeHandlers`` (Kubernetes 1.30+) lists the RuntimeClass handlers the node's
runtime reports, when the runtime reports them (empty = unknown). 403/404 → ``refused``.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from imagelint.cluster.objects import items, mapping, string_map, text
from imagelint.cluster.resources import NODES
from imagelint.cluster.source import ObjectSource
from imagelint.deploytarget.model import Taint


@dataclass(frozen=True)
class NodeInfo:
    """One node as it is, not merged into a pool: what doctor judges selectors, taints and GPUs against."""

    name: str
    labels: Mapping[str, str]
    taints: tuple[Taint, ...]
    capacity: Mapping[str, str]
    allocatable: Mapping[str, str]
    ready: str  # the Ready condition's status: True | False | Unknown | "" (none reported)
    ready_reason: str
    ready_message: str
    unschedulable: bool
    runtime_handlers: tuple[str, ...]


@dataclass(frozen=True)
class NodeListing:
    """The nodes the cluster listed (parsed, and as served), or the status the list was refused with."""

    nodes: tuple[NodeInfo, ...] = ()
    refused: int | None = None
    objects: tuple[Mapping[str, Any], ...] = ()  # as served, for imagelint.cluster.nodes (pools)

    @property
    def checked(self) -> bool:
        return self.refused is None


def node_from_object(obj: Mapping[str, Any]) -> NodeInfo | None:
    name = text(obj, "metadata", "name", limit=253)
    if not name:
        return None
    status = mapping(obj, "status")
    ready = next((c for c in items(status, "conditions") if c.get("type") == "Ready"), {})
    taints = tuple(
        Taint(key=text(t, "key", limit=317), value=text(t, "value", limit=63) or None, effect=text(t, "effect", limit=20) or "NoSchedule")
        for t in items(obj, "spec", "taints") if text(t, "key")
    )
    return NodeInfo(
        name=name,
        labels=string_map(obj, "metadata", "labels"),
        taints=taints,
        capacity={k: text(status, "capacity", k, limit=40) for k in mapping(status, "capacity") if isinstance(k, str)},
        allocatable={k: text(status, "allocatable", k, limit=40) for k in mapping(status, "allocatable") if isinstance(k, str)},
        ready=text(ready, "status", limit=20),
        ready_reason=text(ready, "reason", limit=200),
        ready_message=text(ready, "message"),
        unschedulable=mapping(obj, "spec").get("unschedulable") is True,
        runtime_handlers=tuple(h for h in (text(r, "name", limit=253) for r in items(status, "runtimeHandlers")) if h),
    )


def read_node_status(conn: ObjectSource) -> NodeListing:
    listing = conn.list_objects(NODES, optional=True)
    if not listing.checked:
        return NodeListing(refused=listing.refused)
    return NodeListing(nodes=tuple(n for n in map(node_from_object, listing.items) if n is not None), objects=listing.items)


__all__ = ["NodeInfo", "NodeListing", "node_from_object", "read_node_status"]
