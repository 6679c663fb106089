"""The target as a live cluster shows it: ``target_from_cluster`` (``--cluster``, ``imagelint target snapshot``).

Reads nodes (required: a failure ends the run, exit 3), the device plugin / toolkit
DaemonSets and the ClusterPolicy, and RuntimeClasses (optional: 403/404 become
warnings on the Target), then turns GPU nodes into pools.
"""

from __future__ import annotations

from imagelint.cluster.connection import connect
from imagelint.cluster.nodes import pools_from_nodes, read_nodes
from imagelint.cluster.operator import read_operator_components
from imagelint.cluster.runtime_classes import handler_names, read_runtime_classes
from imagelint.target.model import Target
from imagelint.target.values import TargetMatrix


def target_from_cluster(
    context: str | None,
    kubeconfig: str | None,
    matrix: TargetMatrix | None,
    namespace_hint: str | None = None,
    timeout: tuple[float, float] | None = None,
) -> Target:
    """Read nodes, device plugin / toolkit DaemonSets, RuntimeClasses and the
    ClusterPolicy, and turn GPU nodes into pools."""
    warnings: list[str] = []
    with connect(context, kubeconfig, timeout) as conn:
        source = f"cluster:{conn.context}"
        nodes = read_nodes(conn)
        components = read_operator_components(conn, warnings, namespace_hint)
        runtime_classes = read_runtime_classes(conn, warnings)

    pools = pools_from_nodes(nodes, components, runtime_classes, matrix, source, warnings)
    if not pools:
        warnings.append("no node has NVIDIA GPU labels or nvidia.com/* resources (is GPU Feature Discovery running?)")
    return Target(pools=pools, runtime_classes=handler_names(runtime_classes), source=source, warnings=tuple(dict.fromkeys(warnings)))


__all__ = ["target_from_cluster"]
