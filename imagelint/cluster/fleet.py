"""What ``imagelint audit --cluster`` reads in one connection: the target, which pool each GPU
node is in, and every container the workloads run (:mod:`imagelint.cluster.workloads`)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import TYPE_CHECKING, Any

from imagelint.cluster.connection import DEFAULT_TIMEOUT, connect
from imagelint.cluster.nodes import pools_and_members, read_nodes
from imagelint.cluster.operator import read_operator_components
from imagelint.cluster.pull_secrets import PullCredential, read_pull_secrets
from imagelint.cluster.resources import MALFORMED
from imagelint.cluster.runtime_classes import handler_names, read_runtime_classes
from imagelint.cluster.workloads import WorkloadContainer, read_workload_containers
from imagelint.deploytarget.model import Taint, Target

if TYPE_CHECKING:
    from imagelint.matrix.model import Matrix


@dataclass(frozen=True)
class GpuNode:
    """A GPU node as scheduling sees it: all its labels and taints (a pool keeps only the GPU ones)."""

    name: str
    pool: str
    labels: Mapping[str, str]
    taints: tuple[Taint, ...]


@dataclass(frozen=True)
class Fleet:
    """What ``audit --cluster`` reads in one connection: the target, each GPU node's pool, the containers."""

    target: Target
    node_pools: Mapping[str, str] = field(default_factory=lambda: MappingProxyType({}))  # node → pool name
    containers: tuple[WorkloadContainer, ...] = ()
    warnings: tuple[str, ...] = ()
    nodes: tuple[GpuNode, ...] = ()
    # (namespace, secret) → registry credentials, read only with use_pull_secrets; in memory only.
    pull_credentials: Mapping[tuple[str, str], tuple[PullCredential, ...]] = field(
        default_factory=lambda: MappingProxyType({}), repr=False
    )


def _gpu_nodes(nodes: list[Mapping[str, Any]], node_pools: Mapping[str, str]) -> tuple[GpuNode, ...]:
    out = []
    for node in nodes:
        try:
            meta = node.get("metadata") or {}
            if not isinstance(name := meta.get("name"), str) or name not in node_pools:
                continue
            labels = {str(k): str(v) for k, v in (meta.get("labels") or {}).items()}
            taints = tuple(Taint(key=str(t["key"]), value=str(t["value"]) if t.get("value") else None,
                                 effect=str(t.get("effect") or "NoSchedule"))
                           for t in (node.get("spec") or {}).get("taints") or () if t.get("key"))
        except MALFORMED:
            continue  # pools_from_nodes has warned about it already
        out.append(GpuNode(name, node_pools[name], MappingProxyType(labels), taints))
    return tuple(out)


def read_fleet(
    context: str | None,
    kubeconfig: str | None,
    matrix: Matrix | None,
    namespace: str | None = None,
    label_selector: str | None = None,
    timeout: tuple[float, float] = DEFAULT_TIMEOUT,
    use_pull_secrets: bool = False,
) -> Fleet:
    """Nodes → pools (as ``target_from_cluster``), plus the workloads' containers (and, with
    ``use_pull_secrets``, the credentials in the pull secrets they name)."""
    warnings: list[str] = []
    with connect(context, kubeconfig, timeout) as conn:
        source = f"cluster:{conn.context}"
        nodes = read_nodes(conn)
        components = read_operator_components(conn, warnings, None)
        runtime_classes = read_runtime_classes(conn, warnings)
        containers = read_workload_containers(conn, namespace, label_selector, warnings)
        credentials = {}
        if use_pull_secrets:
            names = {(c.namespace, s) for c in containers for s in c.pull_secrets}
            credentials = read_pull_secrets(conn, names, warnings)
    pools, node_pools = pools_and_members(nodes, components, runtime_classes, matrix, source, warnings)
    if not pools:
        warnings.append("no node has NVIDIA GPU labels or nvidia.com/* resources (is GPU Feature Discovery running?)")
    unique = tuple(dict.fromkeys(warnings))
    target = Target(pools=pools, runtime_classes=handler_names(runtime_classes), source=source, warnings=unique)
    return Fleet(target=target, node_pools=MappingProxyType(node_pools), containers=containers, warnings=unique,
                 nodes=_gpu_nodes(nodes, node_pools), pull_credentials=MappingProxyType(credentials))


__all__ = ["Fleet", "GpuNode", "read_fleet"]
