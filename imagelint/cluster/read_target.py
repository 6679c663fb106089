"""The target as a live cluster shows it: ``target_from_cluster`` (``--cluster``, ``imagelint target snapshot``).

Reads nodes (required: a failure ends the run, exit 3), the device plugin / toolkit
DaemonSets and the ClusterPolicy, and RuntimeClasses (optional: 403/404 become
warnings on the Target), then turns GPU nodes into pools.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from imagelint.cluster.connection import connect
from imagelint.cluster.nodes import pools_from_nodes, read_nodes
from imagelint.cluster.operator import read_operator_components
from imagelint.cluster.runtime_classes import handler_names, read_runtime_classes
from imagelint.cluster.source import ObjectSource
from imagelint.deploytarget.model import Target
from imagelint.errors import UsageError

if TYPE_CHECKING:
    from imagelint.matrix.model import Matrix


def target_from_cluster(
    context: str | None,
    kubeconfig: str | None,
    matrix: Matrix | None,
    namespace_hint: str | None = None,
    timeout: tuple[float, float] | None = None,
) -> Target:
    """Read nodes, device plugin / toolkit DaemonSets, RuntimeClasses and the
    ClusterPolicy, and turn GPU nodes into pools."""
    with connect(context, kubeconfig, timeout) as conn:
        return target_from_source(conn, matrix, f"cluster:{conn.context}", namespace_hint)


def target_from_source(conn: ObjectSource, matrix: Matrix | None, source: str, namespace_hint: str | None = None,
                       warnings: list[str] | None = None) -> Target:
    """The pools of whatever ``conn`` reads: the live cluster, or a dump (``target snapshot --from``)."""
    warnings = list(warnings or [])
    nodes = read_nodes(conn)
    components = read_operator_components(conn, warnings, namespace_hint)
    runtime_classes = read_runtime_classes(conn, warnings)
    pools = pools_from_nodes(nodes, components, runtime_classes, matrix, source, warnings)
    if not pools:
        warnings.append("no node has NVIDIA GPU labels or nvidia.com/* resources (is GPU Feature Discovery running?)")
    return Target(pools=pools, runtime_classes=handler_names(runtime_classes), source=source, warnings=tuple(dict.fromkeys(warnings)))


def target_from_dump(path: str, matrix: Matrix | None) -> Target:
    """``target snapshot --from PATH``: the pools of a dump (imagelint.cluster.dump_formats), and
    a warning for each kind a pool is built from that the dump does not hold."""
    from imagelint.cluster.dump_formats import read_dump
    from imagelint.cluster.resources import (
        CLUSTER_POLICIES,
        DAEMON_SETS,
        NODES,
        RUNTIME_CLASSES,
    )

    dump = read_dump(path)
    if not dump.holds(NODES):
        raise UsageError(f"--from {path}: no nodes in the dump; pools are built from nodes "
                         "(kubectl get nodes -o yaml, or kubectl cluster-info dump)")
    warnings = [w for w in dump.warnings]
    lacking = [r.kinds for r in (DAEMON_SETS, CLUSTER_POLICIES, RUNTIME_CLASSES) if not dump.holds(r)]
    if lacking:
        warnings.append(f"{', '.join(lacking)} not in the dump: device plugin / toolkit versions and runtime classes "
                        "come only from what it holds")
    return target_from_source(dump, matrix, f"dump:{path}", warnings=warnings)


__all__ = ["target_from_cluster", "target_from_dump", "target_from_source"]
