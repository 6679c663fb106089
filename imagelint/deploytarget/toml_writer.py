"""Write a Target as a target file (``imagelint target snapshot``).

``dump_target_toml(target)`` is the inverse of :func:`imagelint.deploytarget.file.load_target_file`:
reading its output back gives an equal Target (apart from ``source``).
"""

from __future__ import annotations

from typing import Any

from imagelint.deploytarget.model import GpuSpec, NodePool, Target


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
    import tomli_w

    document: dict[str, Any] = {}
    if target.source.startswith(("cluster:", "dump:")):  # the nodes' own labels, read live or from a dump
        document["snapshot-of"] = target.source
    if target.runtime_classes:
        document["runtime-classes"] = list(target.runtime_classes)
    if target.pools:
        document["pool"] = [_pool_table(pool) for pool in target.pools]
    header = [f"# imagelint target (from {target.source})"] + [f"# warning: {w}" for w in target.warnings]
    # A comment line ends at a line break: one in a source or warning would start a TOML line.
    comment = "".join(" ".join(line.splitlines()) + "\n" for line in header)
    return comment + "\n" + tomli_w.dumps(document)


def _pool_table(pool: NodePool) -> dict[str, Any]:
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
    table: dict[str, Any] = {key: value for key, value in fields if value is not None}
    if pool.gpus:
        table["gpus"] = [_gpu_table(g) for g in pool.gpus]
    if pool.taints:
        table["taints"] = [
            {"key": t.key, **({"value": t.value} if t.value is not None else {}), "effect": t.effect} for t in pool.taints
        ]
    if pool.resources:
        table["resources"] = dict(sorted(pool.resources.items()))
    if pool.shared_resources:
        table["shared-resources"] = dict(sorted(pool.shared_resources.items()))
    if pool.labels:
        table["labels"] = dict(sorted(pool.labels.items()))
    return table


__all__ = ["dump_target_toml"]
