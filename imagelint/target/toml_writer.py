"""Write a Target as a target file (``imagelint target snapshot``).

``dump_target_toml(target)`` is the inverse of :func:`imagelint.target.file.load_target_file`:
reading its output back gives an equal Target (apart from ``source``).
"""

from __future__ import annotations

import json
from typing import Any, Mapping

from imagelint.lazyre import lazy_pattern
from imagelint.target.model import GpuSpec, Target


_BARE_KEY = lazy_pattern(r"^[A-Za-z0-9_-]+$")


def _toml_str(value: str) -> str:
    # JSON string escapes are a subset of TOML basic-string escapes; JSON leaves DEL raw, which
    # TOML does not allow in a string (a cluster's label value may hold one).
    return json.dumps(value, ensure_ascii=False).replace("\x7f", "\\u007f")


def _toml_key(key: str) -> str:
    return key if _BARE_KEY.match(key) else _toml_str(key)


def _toml_value(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, str):
        return _toml_str(value)
    if isinstance(value, (list, tuple)):
        return "[" + ", ".join(_toml_value(v) for v in value) + "]"
    if isinstance(value, Mapping):
        return "{ " + ", ".join(f"{_toml_key(k)} = {_toml_value(v)}" for k, v in value.items()) + " }" if value else "{}"
    raise TypeError(f"cannot write {type(value).__name__} to TOML")


def _gpu_table(gpu: GpuSpec) -> dict[str, Any]:
    table: dict[str, Any] = {}
    for key, value in (
        ("product", gpu.product),
        ("compute-capability", gpu.compute_capability),
        ("brand", gpu.brand),
        ("family", gpu.family),
        ("count", gpu.count),
    ):
        if value is not None:
            table[key] = value
    if gpu.mig_profiles:
        table["mig-profiles"] = list(gpu.mig_profiles)
    return table


def dump_target_toml(target: Target) -> str:
    """The target as a target file; ``load_target_file`` reads it back to an equal Target
    (apart from ``source``)."""
    out = [f"# imagelint target (from {target.source})"]
    for warning in target.warnings:
        out.append(f"# warning: {warning}")
    if target.source.startswith("cluster:"):
        out.append(f"snapshot-of = {_toml_str(target.source)}")
    if target.runtime_classes:
        out.append(f"runtime-classes = {_toml_value(list(target.runtime_classes))}")
    for pool in target.pools:
        out.append("")
        out.append("[[pool]]")
        fields: list[tuple[str, Any]] = [
            ("name", pool.name),
            ("driver", pool.driver),
            ("cuda-driver-version", pool.cuda_driver_version),
            ("arch", pool.arch),
            ("toolkit", pool.toolkit),
            ("runtime-mode", pool.runtime_mode),
            ("accept-envvar-unprivileged", pool.accept_envvar_unprivileged),
            ("device-plugin", pool.device_plugin),
            ("device-list-strategy", list(pool.device_list_strategy) or None),
            ("mig-strategy", pool.mig_strategy),
            ("runtime-class", pool.runtime_class),
            ("nvidia-runtime-default", pool.nvidia_runtime_default),
            ("fail-requests-greater-than-one", pool.fail_requests_greater_than_one),
            ("node-count", pool.node_count),
        ]
        for key, value in fields:
            if value is not None:
                out.append(f"{key} = {_toml_value(value)}")
        if pool.gpus:
            out.append("gpus = [")
            out.extend(f"  {_toml_value(_gpu_table(g))}," for g in pool.gpus)
            out.append("]")
        if pool.taints:
            out.append("taints = [")
            for taint in pool.taints:
                table = {"key": taint.key, **({"value": taint.value} if taint.value is not None else {}), "effect": taint.effect}
                out.append(f"  {_toml_value(table)},")
            out.append("]")
        if pool.resources:
            out.append(f"resources = {_toml_value(dict(sorted(pool.resources.items())))}")
        if pool.shared_resources:
            out.append(f"shared-resources = {_toml_value(dict(sorted(pool.shared_resources.items())))}")
        if pool.labels:  # a sub-table: GFD label sets are long for one inline line
            out.append("")
            out.append("[pool.labels]")
            out.extend(f"{_toml_key(k)} = {_toml_str(v)}" for k, v in sorted(pool.labels.items()))
    return "\n".join(out) + "\n"


__all__ = ["dump_target_toml"]
