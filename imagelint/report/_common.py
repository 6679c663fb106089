"""Pieces several report formats share."""

from __future__ import annotations

from typing import Any, Mapping

from imagelint.core.engine import ImageResult
from imagelint.target import NodePool, Target

SEVERITY_ORDER = ("error", "warning", "info")


def image_label(result: ImageResult) -> str:
    parts = [result.subject]
    extra = [p for p in (result.platform, result.digest[:19] + "…" if result.digest else None) if p]
    if extra:
        parts.append(f"({', '.join(extra)})")
    return " ".join(parts)


def _plain(value: Any) -> Any:
    if isinstance(value, Mapping):
        return {str(k): _plain(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_plain(v) for v in value]
    if hasattr(value, "__dataclass_fields__"):
        return {k: _plain(getattr(value, k)) for k in value.__dataclass_fields__}
    return value


def pool_json(pool: NodePool) -> dict[str, Any]:
    return {k: v for k, v in _plain(pool).items() if v not in (None, [], {})}


def target_json(target: Target) -> dict[str, Any]:
    return {
        "source": target.source,
        "pools": [pool_json(p) for p in target.pools],
        "runtime_classes": list(target.runtime_classes),
    }
