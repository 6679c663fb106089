"""Nodes → node pools: GPU Feature Discovery labels, allocatable ``nvidia.com/*`` resources, taints.

Nodes without GPU labels or resources are ignored; nodes with the same stack collapse
into one pool (``node_count``), named after their cloud node group when they share
one. The device plugin / toolkit running on a node (``imagelint.cluster.operator``)
and the RuntimeClass its pods get (``imagelint.cluster.runtime_classes``) complete the
pool. Label names are NVIDIA's, from the matrix (``imagelint.cluster.nvidia_names``).
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Mapping, Sequence
from types import MappingProxyType
from typing import TYPE_CHECKING, Any

from imagelint.cluster.nvidia_names import nvidia_names
from imagelint.cluster.operator import OperatorComponent
from imagelint.cluster.resources import MALFORMED, NODES
from imagelint.cluster.runtime_classes import runtime_class_for
from imagelint.cluster.source import ObjectSource
from imagelint.deploytarget.model import GpuSpec, NodePool, Taint, Target, merge_targets
from imagelint.deploytarget.values import (
    cuda_for,
    parse_driver_version,
    resolve_gpu,
)
from imagelint.errors import UsageError
from imagelint.untrusted import int_or_none
from imagelint.versions import CudaVersion

if TYPE_CHECKING:
    from imagelint.matrix.model import Matrix

# Kubernetes' and clouds' own label names (NVIDIA's come from the matrix).
LABEL_ARCH = ("kubernetes.io/arch", "beta.kubernetes.io/arch")

# Labels kept on a pool: what a rule or a human may match on. Everything else
# (hostname, zone, per-node ids) would stop identical nodes from collapsing.
# (The NVIDIA ones, GFD's and NFD's PCI label, come from the matrix: NvidiaNames.kept_labels.)
_KEPT_LABELS = ("kubernetes.io/arch", "kubernetes.io/os", "node.kubernetes.io/instance-type")
# Taints the control plane sets and lifts on its own (not-ready, cordon...): not part of a pool.
_TRANSIENT_TAINT_PREFIXES = ("node.kubernetes.io/", "node.cloudprovider.kubernetes.io/", "ToBeDeletedByClusterAutoscaler")
# Cloud node-group labels: a pool takes its name from one when all its nodes share it.
_NODE_GROUP_LABELS = (
    "cloud.google.com/gke-nodepool",
    "eks.amazonaws.com/nodegroup",
    "karpenter.sh/nodepool",
    "kubernetes.azure.com/agentpool",
    "agentpool",
    "node.kubernetes.io/pool",
)

def _label_version(labels: Mapping[str, str], parts: Sequence[str]) -> str | None:
    values = [labels.get(p) for p in parts]
    if not values[0] or not values[1]:
        return None
    return ".".join(v for v in values if v)  # an empty third part means a 2-component version


def _node_is_gpu(labels: Mapping[str, str], allocatable: Mapping[str, Any]) -> bool:
    names = nvidia_names()
    if any(names.gpu_node_labels.match(k) for k in labels):
        return True
    return any(k.startswith(names.resource_prefix) and _int(v) for k, v in allocatable.items())


def _int(value: Any) -> int | None:
    return int_or_none(str(value).strip())  # ASCII digits only: a node's "²" is no count


def _node_gpus(labels: Mapping[str, str], matrix: Matrix | None) -> tuple[GpuSpec, ...]:
    names = nvidia_names()
    product = labels.get(names.product)
    major, minor = labels.get(names.compute_capability[0]), labels.get(names.compute_capability[1])
    mig_profiles: list[str] = []
    if product:
        product = names.product_shared.sub("", product)
        mig = names.product_mig.search(product)
        if mig:
            mig_profiles.append(mig.group(1))
            product = product[: mig.start()]
    for key in sorted(labels):
        mixed = names.mig_mixed_count.match(key)
        if mixed:
            mig_profiles.append(mixed.group(1))
    if not product and not major:
        return ()
    spec = GpuSpec(
        product=product or None,
        compute_capability=f"{major}.{minor}" if major and minor else None,
        family=labels.get(names.family) or None,
        count=_int(labels.get(names.count, "")) if labels.get(names.count) else None,
        mig_profiles=tuple(mig_profiles),
    )
    return (resolve_gpu(spec, matrix)[0],)


def _pool_for_node(
    node: Mapping[str, Any],
    workloads: Sequence[OperatorComponent],
    runtime_classes: Sequence[Mapping[str, Any]],
    matrix: Matrix | None,
    source: str,
    warnings: list[str],
) -> NodePool | None:
    meta = node.get("metadata") or {}
    labels: Mapping[str, str] = meta.get("labels") or {}
    allocatable: Mapping[str, Any] = (node.get("status") or {}).get("allocatable") or {}
    if not _node_is_gpu(labels, allocatable):
        return None
    node_name = meta.get("name", "?")

    names = nvidia_names()
    driver_text = labels.get(names.driver_full) or _label_version(labels, names.driver_parts) or _label_version(
        labels, names.driver_parts_deprecated
    )
    driver = None
    if driver_text:
        try:
            driver = parse_driver_version(driver_text, f"node {node_name} label {names.driver_full}")
        except UsageError as exc:
            warnings.append(exc.message)
    cuda = labels.get(names.cuda_full) or _label_version(labels, names.cuda_parts) or _label_version(labels, names.cuda_parts_deprecated)

    def pick(kind: str) -> OperatorComponent | None:
        running = [w for w in workloads if w.kind == kind and not w.where.startswith("clusterpolicy/") and w.runs_on(labels)]
        if len(running) > 1 and len({w.version for w in running}) > 1:
            warnings.append(f"node {node_name}: several {kind} DaemonSets ({', '.join(w.where for w in running)}); using {running[0].where}")
        if running:
            return running[0]
        return next((w for w in workloads if w.kind == kind and w.where.startswith("clusterpolicy/")), None)

    plugin, toolkit = pick("device-plugin"), pick("toolkit")
    strategies: tuple[str, ...] = ()
    mig_strategy = labels.get(names.mig_strategy)
    if plugin:
        raw = plugin.setting("--device-list-strategy", "DEVICE_LIST_STRATEGY")
        if raw:
            strategies = tuple(s.strip() for s in raw.strip("[]").replace('"', "").split(",") if s.strip())
        mig_strategy = mig_strategy or plugin.setting("--mig-strategy", "MIG_STRATEGY")
    runtime_mode = accept = runtime_default = None
    if toolkit:
        mode = toolkit.env.get("NVIDIA_CONTAINER_RUNTIME_MODE")
        runtime_mode = mode if mode and mode != "auto" else None
        accept_text = toolkit.env.get("ACCEPT_NVIDIA_VISIBLE_DEVICES_ENVVAR_WHEN_UNPRIVILEGED")
        if accept_text:
            accept = accept_text.strip().lower() in ("1", "t", "true", "yes")
        # The toolkit container makes the NVIDIA runtime the default handler unless told not to
        # (GPU Operator >= 25.10 with CDI sets NVIDIA_RUNTIME_SET_AS_DEFAULT=false).
        for key in ("NVIDIA_RUNTIME_SET_AS_DEFAULT", "CONTAINERD_SET_AS_DEFAULT", "CRIO_SET_AS_DEFAULT"):
            text = toolkit.env.get(key)
            if text:
                runtime_default = text.strip().lower() in ("1", "t", "true", "yes")
                break

    taints = tuple(
        Taint(key=t["key"], value=t.get("value") or None, effect=t.get("effect") or "NoSchedule")
        for t in (node.get("spec") or {}).get("taints") or ()
        if t.get("key") and not str(t["key"]).startswith(_TRANSIENT_TAINT_PREFIXES)
    )
    resources = {k: n for k, v in allocatable.items() if k.startswith(names.resource_prefix) and (n := _int(v)) is not None}
    kept = {
        k: v
        for k, v in labels.items()
        if (names.kept_labels.match(k) or k in _KEPT_LABELS) and not names.volatile_labels.match(k)
    }
    runtime_class = runtime_class_for(labels, runtime_classes)
    return NodePool(
        name="",
        driver=driver,
        # A label that is no CUDA version raises ValueError, as NodePool does for any such text.
        cuda_driver_version=CudaVersion(cuda) if cuda else cuda_for(driver, matrix),
        gpus=_node_gpus(labels, matrix),
        arch=next((labels[k] for k in LABEL_ARCH if labels.get(k)), None),
        toolkit=toolkit.version if toolkit else None,
        runtime_mode=runtime_mode,
        accept_envvar_unprivileged=accept,
        nvidia_runtime_default=runtime_default,
        device_plugin=plugin.version if plugin else None,
        device_list_strategy=strategies,
        mig_strategy=mig_strategy or None,
        resources=MappingProxyType(dict(sorted(resources.items()))),
        taints=taints,
        labels=MappingProxyType(dict(sorted(kept.items()))),
        runtime_class=runtime_class,
        node_count=1,
        source=source,
    )


def _pool_key(pool: NodePool, with_labels: bool = True) -> tuple[Any, ...]:
    return (
        pool.driver,
        pool.cuda_driver_version,
        pool.gpus,
        pool.arch,
        pool.toolkit,
        pool.runtime_mode,
        pool.accept_envvar_unprivileged,
        pool.device_plugin,
        pool.device_list_strategy,
        pool.mig_strategy,
        tuple(pool.resources.items()),
        pool.taints,
        tuple(pool.labels.items()) if with_labels else (),
        pool.runtime_class,
        pool.nvidia_runtime_default,
    )


def _common_labels(pool: NodePool, other: NodePool, group: str, warnings: list[str]) -> NodePool:
    """``pool`` with only the labels ``other`` has too, with the same value; a warning names the rest."""
    shared = {k: v for k, v in pool.labels.items() if other.labels.get(k) == v}
    differing = sorted(set(pool.labels) ^ set(other.labels) | {k for k in pool.labels if k in other.labels and other.labels[k] != pool.labels[k]})
    note = f"node group {group}: nodes differ in label(s) {', '.join(differing)}; left out of the pool (one pool, not several)"
    if note not in warnings:
        warnings.append(note)
    return dataclasses.replace(pool, labels=MappingProxyType(shared))


def _pool_name(pool: NodePool, group_names: set[str]) -> str:
    if len(group_names) == 1:
        return next(iter(group_names))
    gpu = pool.gpus[0].product if pool.gpus and pool.gpus[0].product else "gpu"
    name = f"{gpu}-{pool.driver}" if pool.driver else gpu
    return re.sub(r"[^A-Za-z0-9._-]+", "-", name)


def pools_from_nodes(
    nodes: Sequence[Mapping[str, Any]],
    workloads: Sequence[OperatorComponent],
    runtime_classes: Sequence[Mapping[str, Any]],
    matrix: Matrix | None,
    source: str,
    warnings: list[str],
) -> tuple[NodePool, ...]:
    """GPU nodes → pools, nodes with the same stack collapsed (``node_count``).

    Nodes of one cloud node group whose stacks differ only in labels (a GPU Operator state
    label mid-rollout, a label set by hand on some nodes) are one pool, not several that
    would repeat every finding: the pool keeps the labels all its nodes share, and a warning
    names the ones left out (a selector on them would match only some nodes).
    """
    return pools_and_members(nodes, workloads, runtime_classes, matrix, source, warnings)[0]


def pools_and_members(
    nodes: Sequence[Mapping[str, Any]],
    workloads: Sequence[OperatorComponent],
    runtime_classes: Sequence[Mapping[str, Any]],
    matrix: Matrix | None,
    source: str,
    warnings: list[str],
) -> tuple[tuple[NodePool, ...], dict[str, str]]:
    """``pools_from_nodes``, and which pool each GPU node is in (node name → pool name):
    ``audit`` checks a running pod's images against its own node's pool."""
    groups: dict[tuple[Any, ...], tuple[NodePool, int, set[str]]] = {}
    members: dict[tuple[Any, ...], list[str]] = {}
    for node in nodes:
        try:
            pool = _pool_for_node(node, workloads, runtime_classes, matrix, source, warnings)
            if pool is None:
                continue
            labels = (node.get("metadata") or {}).get("labels") or {}
            group = next((str(labels[k]) for k in _NODE_GROUP_LABELS if labels.get(k)), None)
        except MALFORMED as exc:
            # Cluster objects are untrusted: a node that does not fit the API is left out, said so.
            meta = node.get("metadata")
            name = meta.get("name") if isinstance(meta, Mapping) else None
            warnings.append(f"node {name or '?'}: not an object imagelint understands ({exc.__class__.__name__}); ignored")
            continue
        key = (group, _pool_key(pool, with_labels=False)) if group else (None, _pool_key(pool))
        first, count, names = groups.get(key, (pool, 0, set()))
        if group and first is not pool and first.labels != pool.labels:
            first = _common_labels(first, pool, group, warnings)
        names.add(group or "")
        groups[key] = (first, count + 1, names)
        node_name = (node.get("metadata") or {}).get("name")
        if isinstance(node_name, str):
            members.setdefault(key, []).append(node_name)
    named = [
        # A node without a node-group label makes the group label no name for the pool.
        (dataclasses.replace(first, node_count=count, name=_pool_name(first, set() if "" in names else names)), key)
        for key, (first, count, names) in groups.items()
    ]
    named.sort(key=lambda pk: (pk[0].name, pk[0].driver or "", str(pk[0].gpus)))
    # merge_targets gives repeated names a -2, -3 suffix (in order: pool i stays pool i).
    pools = merge_targets(Target(pools=(p,), source=source) for p, _ in named).pools
    node_pool = {node: pool.name for pool, (_, key) in zip(pools, named) for node in members.get(key, ())}
    return pools, node_pool


def read_nodes(conn: ObjectSource) -> list[Mapping[str, Any]]:
    """Every node. Not optional: without nodes there is no target (``ClusterError``)."""
    return list(conn.list_objects(NODES).items)


__all__ = ["LABEL_ARCH", "pools_and_members", "pools_from_nodes", "read_nodes"]
