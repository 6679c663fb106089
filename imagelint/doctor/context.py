"""The snapshot seen the way the stages ask about it: GPU nodes and their pools, NVIDIA
component DaemonSets and their pods, the workload pods in scope, events per object."""

from __future__ import annotations

import functools
from collections.abc import Callable
from dataclasses import dataclass, field
from fractions import Fraction
from types import MappingProxyType
from typing import TYPE_CHECKING

from imagelint.cluster.daemonset_status import DaemonSetStatus
from imagelint.cluster.events import EventInfo
from imagelint.cluster.node_status import NodeInfo
from imagelint.cluster.nvidia_names import nvidia_names
from imagelint.cluster.objects import items, mapping
from imagelint.cluster.pods import PodInfo
from imagelint.deploytarget.model import NodePool, Target
from imagelint.doctor.model import Diagnosis, ImageSide
from imagelint.doctor.snapshot import Snapshot
from imagelint.doctor.workloads import PodWorkload, pod_workload
from imagelint.facts.static_model import WorkloadFacts
from imagelint.kube.scheduler import match_pool
from imagelint.matrix.doctor_signatures import Signatures
from imagelint.untrusted import is_digits

if TYPE_CHECKING:
    from imagelint.matrix.model import Matrix

# Cloud node-group labels: a node's pool is named after the first it carries.
NODE_GROUP_LABELS = (
    "cloud.google.com/gke-nodepool", "eks.amazonaws.com/nodegroup", "karpenter.sh/nodepool",
    "kubernetes.azure.com/agentpool", "agentpool", "node.kubernetes.io/pool",
)


def gpu_count(node: NodeInfo, prefix: str) -> int:
    total = 0
    for name, value in node.allocatable.items():
        if name.startswith(prefix) and is_digits(value, 6):
            total += int(value)
    return total


@dataclass
class Context:
    """The snapshot as the stages ask about it, and the findings and blocked nodes they record in one run."""

    snap: Snapshot
    signatures: Signatures
    findings: list[Diagnosis] = field(default_factory=list)
    # node name → first stage (1-3) that failed there: later stages on it are "blocked"
    blocked: dict[str, int] = field(default_factory=dict)
    # stage → how many of its subjects (Pending pods) it left to an earlier stage's failure
    deferred: dict[int, int] = field(default_factory=dict)
    # the images GPU-node pods run, read with --images (None: not read)
    image_side: ImageSide | None = None
    _node_pools: dict[str, NodePool] = field(default_factory=dict)
    _selected: dict[object, tuple[NodeInfo, ...]] = field(default_factory=dict)
    _placeable: dict[object, tuple[list[NodeInfo], list[NodeInfo]]] = field(default_factory=dict)
    _most_free: dict[object, tuple[Fraction, NodeInfo | None]] = field(default_factory=dict)
    _largest: dict[object, tuple[Fraction, NodeInfo | None]] = field(default_factory=dict)

    @property
    def images_read(self) -> bool:
        return self.image_side is not None

    def image_env(self, image: str) -> dict[str, str] | None:
        return self.image_side.envs.get(image) if self.image_side is not None else None

    def node_target(self, node_name: str, matrix: Matrix | None) -> Target | None:
        """The node as ``check``'s target (one pool), built by the cluster package's pool reader."""
        from imagelint.cluster.nodes import pools_from_nodes

        raw = next((n for n in self.snap.node_objects if isinstance(n.get("metadata"), dict) and n["metadata"].get("name") == node_name), None)
        if raw is None:
            return None
        components = [d.component for d in self.component_daemonsets if d.component] + list(self.snap.policy_components)
        warnings: list[str] = []
        pools = pools_from_nodes([raw], components, self.snap.runtime_class_objects, matrix, f"cluster:{node_name}", warnings)
        return Target(pools=pools, source=f"cluster node {node_name}", warnings=tuple(warnings)) if pools else None

    def configmap(self, namespace: str, name: str):  # -> ConfigMapData | None
        return self.snap.configmap(namespace, name)

    @functools.cached_property
    def prefix(self) -> str:
        return nvidia_names().resource_prefix

    def is_gpu_node(self, node: NodeInfo) -> bool:
        names = nvidia_names()
        if any(names.gpu_node_labels.match(k) or (names.kept_labels.match(k) and "pci-10de" in k) for k in node.labels):
            return True
        return gpu_count(node, self.prefix) > 0 or self.snap.dra.devices_on(node.name) > 0

    @functools.cached_property
    def gpu_nodes(self) -> tuple[NodeInfo, ...]:
        return tuple(n for n in self.snap.nodes if self.is_gpu_node(n))

    @functools.cached_property
    def node_by_name(self) -> dict[str, NodeInfo]:
        return {n.name: n for n in self.snap.nodes}

    @functools.cached_property
    def _pool_names(self) -> dict[str, str]:
        """node → pool name, grouped the way ``audit`` and ``check --cluster`` group them (the
        cluster package's pool reader: node group, else identical GPU stacks are one pool)."""
        from imagelint.cluster.nodes import pools_and_members

        components = [d.component for d in self.component_daemonsets if d.component] + list(self.snap.policy_components)
        gpu = {n.name for n in self.gpu_nodes}
        # A pool is its nodes' stack, not their state: a node whose GPUs are not advertised (the
        # failure reported) stays in its pool, so what it advertises and its conditions are left out.
        state = ("allocatable", "capacity", "conditions")
        objects = [{**o, "status": {k: v for k, v in (o.get("status") or {}).items() if k not in state}}
                   for o in self.snap.node_objects
                   if isinstance(o.get("metadata"), dict) and o["metadata"].get("name") in gpu and isinstance(o.get("status") or {}, dict)]
        return pools_and_members(objects, components, self.snap.runtime_class_objects, None, "cluster", [])[1]

    def pool_of(self, node: NodeInfo) -> str:
        group = next((node.labels[k] for k in NODE_GROUP_LABELS if node.labels.get(k)), None)
        return group or self._pool_names.get(node.name) or node.name

    def node_pool(self, node: NodeInfo) -> NodePool:
        """The node as a one-node pool, so the IL60x scheduling semantics (kube.scheduler) apply."""
        pool = self._node_pools.get(node.name)
        if pool is None:
            pool = NodePool(name=node.name, labels=MappingProxyType(dict(node.labels)), taints=node.taints,
                            arch=node.labels.get("kubernetes.io/arch"), source="cluster")
            self._node_pools[node.name] = pool
        return pool

    def selected_nodes(self, workload: WorkloadFacts) -> tuple[NodeInfo, ...]:
        """Nodes the pod's nodeSelector and required affinity select (memoised: pods share selectors)."""
        key = (tuple(sorted(workload.node_selector.items())), workload.affinity_terms)
        found = self._selected.get(key)
        if found is None:
            found = tuple(n for n in self.snap.nodes if match_pool(workload, self.node_pool(n))[0] is not False)
            self._selected[key] = found
        return found

    @functools.cached_property
    def matrix(self) -> Matrix | None:
        """The shipped matrix, for what a component release needs (None if it cannot be read)."""
        from imagelint.errors import ImagelintError
        from imagelint.matrix import load_matrix

        try:
            return load_matrix()
        except ImagelintError:
            return None

    def plugin_requirements_unmet(self, node_name: str) -> list[str]:
        """What the node's device plugin release needs that the node lacks (driver, toolkit,
        strategies), in the words of check's IL501 (``rules._requirements``)."""
        from imagelint.rules._requirements import device_plugin_unmet

        matrix = self.matrix
        target = self.node_target(node_name, matrix) if matrix is not None else None
        if matrix is None or target is None:
            return []
        found = []
        for pool in target.pools:
            release = matrix.device_plugin(pool.device_plugin) if pool.device_plugin else None
            if release is not None:
                found.extend(device_plugin_unmet(release, pool, matrix))
        return found

    @functools.cached_property
    def label_pairs(self) -> frozenset[tuple[str, str]]:
        from imagelint.doctor.selectors import label_pairs

        return label_pairs(n.labels for n in self.snap.nodes)

    @functools.cached_property
    def gpu_label_pairs(self) -> frozenset[tuple[str, str]]:
        """Labels of the GPU nodes only: the nearest label for a GPU pod's selector is one of theirs."""
        from imagelint.doctor.selectors import label_pairs

        return label_pairs(n.labels for n in self.gpu_nodes)

    def workload_of(self, kind: str, namespace: str, name: str) -> tuple[str, str]:
        """The workload a user knows: a ReplicaSet's Deployment (through its ownerReferences), else the object itself."""
        return self.snap.controller_of(kind, namespace, name) or (kind, name)

    @functools.cached_property
    def advertised(self) -> frozenset[str]:
        """nvidia.com/* resource names some node advertises (allocatable, non-zero)."""
        return frozenset(name for n in self.snap.nodes for name, v in n.allocatable.items()
                         if name.startswith(self.prefix) and v not in ("", "0"))

    def placeable(self, selected: tuple[NodeInfo, ...], resources: tuple[str, ...], tolerations: tuple) -> tuple[list[NodeInfo], list[NodeInfo]]:
        """(nodes of ``selected`` with the resources, those of them whose taints the pod tolerates), memoised."""
        from imagelint.kube.scheduler import untolerated_taints

        key = (tuple(n.name for n in selected), resources, tolerations)
        if key not in self._placeable:
            fits = [n for n in selected if all(r in n.allocatable for r in resources)]
            self._placeable[key] = (fits, [n for n in fits if not untolerated_taints(self.node_pool(n), tolerations)])
        return self._placeable[key]

    def most_free(self, nodes: tuple[NodeInfo, ...], resources: tuple[str, ...]) -> tuple[Fraction, NodeInfo | None]:
        """The node of ``nodes`` with the most free GPUs of every resource in ``resources`` (memoised)."""
        from imagelint.kube.scheduler import parse_quantity

        key = (tuple(n.name for n in nodes), resources)
        if key not in self._most_free:
            best: tuple[Fraction, NodeInfo | None] = (Fraction(-1), None)
            for n in nodes:
                free = min((parse_quantity(n.allocatable.get(r)) or Fraction(0)) - self.gpus_in_use.get((n.name, r), Fraction(0))
                           for r in resources)
                if free > best[0]:
                    best = (free, n)
            self._most_free[key] = best
        return self._most_free[key]

    def largest(self, nodes: tuple[NodeInfo, ...], resource: str) -> tuple[Fraction, NodeInfo | None]:
        """The node of ``nodes`` with the most of ``resource`` allocatable at all, used or not (memoised)."""
        from imagelint.kube.scheduler import parse_quantity

        key = (tuple(n.name for n in nodes), resource)
        if key not in self._largest:
            best: tuple[Fraction, NodeInfo | None] = (Fraction(0), None)
            for n in nodes:
                amount = parse_quantity(n.allocatable.get(resource)) or Fraction(0)
                if best[1] is None or amount > best[0]:
                    best = (amount, n)
            self._largest[key] = best
        return self._largest[key]

    @functools.cached_property
    def gpus_in_use(self) -> dict[tuple[str, str], Fraction]:
        """(node, resource) → GPUs the limits of the pods placed there take (one pass over the pods)."""
        from imagelint.kube.scheduler import parse_quantity

        used: dict[tuple[str, str], Fraction] = {}
        for pod in self.snap.pods:
            if not pod.node or pod.phase in ("Succeeded", "Failed"):
                continue
            for container in items(pod.spec, "containers"):
                for name, value in mapping(container, "resources", "limits").items():
                    if isinstance(name, str) and name.startswith(self.prefix) and isinstance(value, (str, int)):
                        amount = parse_quantity(str(value))
                        if amount is not None:
                            used[(pod.node, name)] = used.get((pod.node, name), Fraction(0)) + amount
        return used

    def components(self, kind: str) -> tuple[DaemonSetStatus, ...]:
        return tuple(d for d in self.snap.daemonsets if d.component is not None and d.component.kind == kind)

    @functools.cached_property
    def component_daemonsets(self) -> tuple[DaemonSetStatus, ...]:
        return tuple(d for d in self.snap.daemonsets if d.component is not None)

    def daemonset_pod(self, ds: DaemonSetStatus, node: str) -> PodInfo | None:
        return next(
            (p for p in self.pods_on(node) if p.namespace == ds.namespace and
             ((p.owner_kind == "DaemonSet" and p.owner_name == ds.name) or ds.owns(p.labels))),
            None,
        )

    @functools.cached_property
    def _pods_by_node(self) -> dict[str, list[PodInfo]]:
        by_node: dict[str, list[PodInfo]] = {}
        for pod in self.snap.pods:
            by_node.setdefault(pod.node, []).append(pod)
        return by_node

    @functools.cached_property
    def pod_by_where(self) -> dict[str, PodInfo]:
        return {p.where: p for p in self.snap.pods}

    def pods_on(self, node: str) -> list[PodInfo]:
        return self._pods_by_node.get(node, [])

    def is_component_pod(self, pod: PodInfo) -> bool:
        """A pod of an NVIDIA component DaemonSet (device plugin, toolkit): judged at stages 1-2."""
        return pod.owner_kind == "DaemonSet" and any(
            d.namespace == pod.namespace and d.name == pod.owner_name for d in self.component_daemonsets
        )

    @staticmethod
    def is_node_agent(pod: PodInfo) -> bool:
        """Any DaemonSet's pod (GPU monitoring agents such as DCGM exporter see every GPU on
        purpose): left out of the isolation checks, even when DaemonSets cannot be listed."""
        return pod.owner_kind == "DaemonSet"

    def in_scope(self, pod: PodInfo) -> bool:
        options = self.snap.options
        if options.namespace and pod.namespace != options.namespace:
            return False
        return not options.pod or pod.name == options.pod

    @functools.cached_property
    def workloads(self) -> tuple[PodWorkload, ...]:
        """Pods in scope that matter: Pending ones and those on GPU nodes (read by the static reader)."""
        gpu_nodes = {n.name for n in self.gpu_nodes}
        nodes_read = "nodes" not in self.snap.refused  # unread: every placed pod may be on a GPU node
        chosen = [
            p for p in self.snap.pods
            if self.in_scope(p) and p.phase not in ("Succeeded", "Failed") and (not p.node or p.node in gpu_nodes or not nodes_read)
        ]
        return tuple(pod_workload(p) for p in chosen)

    @functools.cached_property
    def gpu_workloads(self) -> tuple[PodWorkload, ...]:
        return tuple(w for w in self.workloads if w.requests_gpu and not self.is_component_pod(w.pod))

    @functools.cached_property
    def _events_by_object(self) -> dict[tuple[str, str, str], list[EventInfo]]:
        found: dict[tuple[str, str, str], list[EventInfo]] = {}
        for event in self.snap.events:
            kind, namespace, name = event.about
            # a Node's events are filed in "default" (metadata) but the Node has no namespace
            found.setdefault((kind, "" if kind == "Node" else namespace, name), []).append(event)
        return found

    def events_for(self, kind: str, namespace: str, name: str) -> list[EventInfo]:
        return self._events_by_object.get((kind, namespace, name), [])

    def add(self, finding: Diagnosis) -> None:
        self.findings.append(finding)

    def block(self, node: str, stage: int) -> None:
        self.blocked.setdefault(node, stage)


StageCheck = Callable[[Context], list[str]]  # returns notes; findings go to ctx.add

__all__ = ["NODE_GROUP_LABELS", "Context", "StageCheck", "gpu_count"]
