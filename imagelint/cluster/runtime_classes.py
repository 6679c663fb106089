"""RuntimeClasses: the handlers pods use to pick the NVIDIA runtime, and which one a node's pods get."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from imagelint.cluster.resources import RUNTIME_CLASSES
from imagelint.cluster.source import ObjectSource


def read_runtime_classes(conn: ObjectSource, warnings: list[str]) -> list[Mapping[str, Any]]:
    """Every RuntimeClass; a 403 is a warning (runtime classes unknown), a 404 says nothing."""
    listing = conn.list_objects(RUNTIME_CLASSES, optional=True)
    if listing.refused == 403:
        warnings.append("cannot list RuntimeClasses (403 Forbidden); runtime classes unknown")
    kept = []
    for rc in listing.items:
        if _well_formed(rc):
            kept.append(rc)
        else:  # cluster objects are untrusted: one that does not fit the API is left out, said so
            name = (rc.get("metadata") or {}).get("name") if isinstance(rc.get("metadata"), Mapping) else None
            warnings.append(f"RuntimeClass {name or '?'}: not an object imagelint understands; ignored")
    return kept


def _well_formed(rc: Mapping[str, Any]) -> bool:
    """handler a string; scheduling.nodeSelector, if any, a map of strings; metadata a table."""
    scheduling = rc.get("scheduling") or {}
    selector = scheduling.get("nodeSelector") or {} if isinstance(scheduling, Mapping) else None
    return (
        isinstance(rc.get("handler") or "", str)
        and isinstance(rc.get("metadata") or {}, Mapping)
        and isinstance(selector, Mapping)
        and all(isinstance(k, str) and isinstance(v, str) for k, v in selector.items())
    )


def handler_names(runtime_classes: Sequence[Mapping[str, Any]]) -> tuple[str, ...]:
    return tuple(sorted({str(rc.get("handler")) for rc in runtime_classes if rc.get("handler")}))


def runtime_class_for(labels: Mapping[str, str], runtime_classes: Sequence[Mapping[str, Any]]) -> str | None:
    """The NVIDIA RuntimeClass a pod on this node would use: handler mentions nvidia and
    its scheduling.nodeSelector (if any) matches; "nvidia" itself preferred."""
    candidates = []
    for rc in runtime_classes:
        handler = str(rc.get("handler") or "")
        selector = ((rc.get("scheduling") or {}).get("nodeSelector")) or {}
        if "nvidia" in handler and all(labels.get(k) == v for k, v in selector.items()):
            candidates.append(str((rc.get("metadata") or {}).get("name") or handler))
    if not candidates:
        return None
    return "nvidia" if "nvidia" in candidates else sorted(candidates)[0]


__all__ = ["handler_names", "read_runtime_classes", "runtime_class_for"]
