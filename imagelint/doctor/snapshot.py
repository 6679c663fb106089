"""One read of the cluster for doctor: every list once, logs and ConfigMaps on demand, refusals kept.

``read_snapshot(conn, options)`` lists nodes, pods, Warning events, DaemonSets (with status),
RuntimeClasses, the GPU Operator's ClusterPolicy and DRA objects — each read optional, so a
403 becomes a refusal the stages turn into "stage N not checked: RBAC forbids listing X"
instead of failing the run. Log tails and ConfigMaps are fetched lazily by the stages that
need them, within budgets (``MAX_LOGS``, ``MAX_CONFIGMAPS``), and cached.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from imagelint.cluster.configmap_data import ConfigMapData, read_configmap_data
from imagelint.cluster.connection import status_text
from imagelint.cluster.daemonset_status import DaemonSetStatus, read_daemonset_status
from imagelint.cluster.dra import DraInventory, read_dra
from imagelint.cluster.events import EventInfo, read_warning_events
from imagelint.cluster.node_status import NodeInfo, read_node_status
from imagelint.cluster.objects import items, mapping, text
from imagelint.cluster.operator import OperatorComponent, workloads_from_clusterpolicy
from imagelint.cluster.pod_logs import LogTail, log_tail_of
from imagelint.cluster.pods import PodInfo, read_pods
from imagelint.cluster.resources import CLUSTER_POLICIES, REPLICA_SETS, RUNTIME_CLASSES
from imagelint.cluster.source import NOT_IN_DUMP, ObjectSource

MAX_LOGS = 24  # log tails read per run (one per failing component pod is enough)
MAX_CONFIGMAPS = 64  # ConfigMaps read per run (configs mounted into GPU-visible pods)
MAX_OWNERS = 64  # ReplicaSets read per run to name the Deployment a finding is about


@dataclass(frozen=True)
class DoctorOptions:
    """The workload pods doctor looks at (``--namespace``, ``--pod``); NVIDIA components: all namespaces."""

    namespace: str | None = None  # the affected pods looked at (NVIDIA components: everywhere)
    pod: str | None = None


@dataclass(frozen=True)
class RuntimeClassInfo:
    """A RuntimeClass: the runtime handler a pod naming it gets, and the nodes such pods are scheduled to."""

    name: str
    handler: str
    node_selector: Mapping[str, str]


@dataclass
class Snapshot:
    """One read of the cluster (live or a dump) for doctor: every list once, what was refused, and the log
    tails and ConfigMaps the stages fetch on demand."""

    conn: ObjectSource | None  # the live API server, or a dump (imagelint.cluster.source)
    options: DoctorOptions
    nodes: tuple[NodeInfo, ...] = ()
    pods: tuple[PodInfo, ...] = ()
    events: tuple[EventInfo, ...] = ()
    daemonsets: tuple[DaemonSetStatus, ...] = ()
    runtime_classes: tuple[RuntimeClassInfo, ...] = ()
    policy_components: tuple[OperatorComponent, ...] = ()
    cdi_enabled: bool | None = None  # ClusterPolicy spec.cdi.enabled, when there is one
    dra: DraInventory = field(default_factory=DraInventory)
    node_objects: tuple[Mapping[str, Any], ...] = ()  # as served: pools for the image side's check
    runtime_class_objects: tuple[Mapping[str, Any], ...] = ()
    # what could not be read: "pods" → "RBAC forbids listing pods" (the stages say "not checked")
    refused: dict[str, str] = field(default_factory=dict)
    warnings: list[str] = field(default_factory=list)
    # logs that could not be read, or were cut: said as notes of the stage that asked
    log_notes: list[str] = field(default_factory=list)
    _logs: dict[tuple[str, str, str, bool], LogTail] = field(default_factory=dict)
    _configmaps: dict[tuple[str, str], ConfigMapData] = field(default_factory=dict)
    _kubelet_down: dict[str, int] = field(default_factory=dict)
    _owners: dict[tuple[str, str], tuple[str, str] | None] = field(default_factory=dict)  # node → the status its kubelet's proxy answered

    def log_tail(self, pod: PodInfo, container: str, previous: bool) -> LogTail:
        key = (pod.namespace, pod.name, container, previous)
        if key not in self._logs:
            if self.conn is None or len(self._logs) >= MAX_LOGS or "pods/log" in self.refused:
                return LogTail()
            if pod.node and pod.node in self._kubelet_down:
                return LogTail(refused=self._kubelet_down[pod.node])  # said once, for the first log asked
            tail = log_tail_of(self.conn, pod.namespace, pod.name, container, previous=previous)
            which = f"log of pod {pod.where} container {container}" + (" (previous instance)" if previous else "")
            if tail.refused == 403:
                self.refused["pods/log"] = _why(403, "reading", "pods/log")
            elif tail.refused is not None:
                if (tail.refused >= 500 or tail.refused == 0) and pod.node:  # this node's kubelet is not reached
                    self._kubelet_down[pod.node] = tail.refused
                status = [status_text(tail.refused)] if tail.refused else []
                self.log_notes.append(f"{which} not read: " + ": ".join(status + ([tail.reason] if tail.reason else [])))
            elif tail.truncated:
                self.log_notes.append(f"{which} truncated: the server sent more than asked for; diagnosed with the first bytes")
            self._logs[key] = tail
        return self._logs[key]

    def configmap(self, namespace: str, name: str) -> ConfigMapData | None:
        key = (namespace, name)
        if key not in self._configmaps:
            if self.conn is None or len(self._configmaps) >= MAX_CONFIGMAPS or "configmaps" in self.refused:
                return None
            data = read_configmap_data(self.conn, namespace, name)
            if data.refused in (403, NOT_IN_DUMP):
                self.refused["configmaps"] = _why(data.refused, "reading", "configmaps")
            self._configmaps[key] = data
        return self._configmaps[key]


    def controller_of(self, kind: str, namespace: str, name: str) -> tuple[str, str] | None:
        """(kind, name) of the object that controls a ReplicaSet (its Deployment), read from the
        ReplicaSet's ownerReferences; None when it has none or cannot be read (RBAC, budget)."""
        if kind != "ReplicaSet" or self.conn is None:
            return None
        key = (namespace, name)
        if key not in self._owners:
            if len(self._owners) >= MAX_OWNERS or "replicasets" in self.refused:
                return None
            fetched = self.conn.get_object(REPLICA_SETS, name, namespace, optional=True)
            if fetched.refused in (403, NOT_IN_DUMP):
                self.refused["replicasets"] = _why(fetched.refused, "reading", "replicasets")
            owner = next((o for o in items(fetched.object or {}, "metadata", "ownerReferences") if o.get("controller") is True), None)
            self._owners[key] = (text(owner, "kind", limit=100), text(owner, "name", limit=253)) if owner and text(owner, "name") else None
        return self._owners[key]


def _why(status: int | None, verb: str, what: str) -> str:
    if status == NOT_IN_DUMP:
        return f"{what} not in the dump"
    return f"RBAC forbids {verb} {what}" if status == 403 else f"{what}: {status_text(status or 0)}"


def read_snapshot(conn: ObjectSource, options: DoctorOptions) -> Snapshot:
    snap = Snapshot(conn=conn, options=options)
    nodes = read_node_status(conn)
    snap.nodes, snap.node_objects = nodes.nodes, nodes.objects
    if not nodes.checked:
        snap.refused["nodes"] = _why(nodes.refused, "listing", "nodes")

    # Every namespace when allowed (NVIDIA components live in their own); else the asked one.
    pods = read_pods(conn)
    if not pods.checked and options.namespace:
        pods = read_pods(conn, options.namespace)
        snap.warnings.append(f"pods: only namespace {options.namespace} read ({_why(403, 'listing', 'pods in all namespaces')})")
    snap.pods = pods.pods
    if not pods.checked:
        snap.refused["pods"] = _why(pods.refused, "listing", "pods")

    events = read_warning_events(conn)
    if not events.checked and options.namespace:
        events = read_warning_events(conn, options.namespace)
    snap.events = events.events
    if not events.checked:
        snap.refused["events"] = _why(events.refused, "listing", "events")

    daemonsets = read_daemonset_status(conn, snap.warnings)
    snap.daemonsets = daemonsets.daemonsets
    if not daemonsets.checked:
        snap.refused["daemonsets"] = _why(daemonsets.refused, "listing", "daemonsets")

    classes = conn.list_objects(RUNTIME_CLASSES, optional=True)
    if classes.checked:
        snap.runtime_class_objects = classes.items
        snap.runtime_classes = tuple(
            RuntimeClassInfo(text(rc, "metadata", "name", limit=253), text(rc, "handler", limit=253),
                             {k: str(v) for k, v in mapping(rc, "scheduling", "nodeSelector").items() if isinstance(v, str)})
            for rc in classes.items if text(rc, "metadata", "name")
        )
    elif classes.refused in (403, NOT_IN_DUMP):
        snap.refused["runtimeclasses"] = _why(classes.refused, "listing", "runtimeclasses")

    policies = conn.list_objects(CLUSTER_POLICIES, optional=True)
    if policies.checked:
        snap.policy_components = tuple(workloads_from_clusterpolicy(policies.items))
        cdi = [mapping(p, "spec", "cdi") for p in policies.items]
        if cdi:
            snap.cdi_enabled = any(c.get("enabled") is True for c in cdi)
    elif policies.refused in (403, NOT_IN_DUMP):
        snap.refused["clusterpolicies"] = _why(policies.refused, "listing", "clusterpolicies")

    snap.dra = read_dra(conn)
    holds = getattr(conn, "holds", None)
    if callable(holds) and snap.dra.refused and not any(isinstance(p.spec.get("resourceClaims"), list) and p.spec["resourceClaims"] for p in snap.pods):
        # a dump without DRA objects, and no pod that asks for a claim: DRA is not what it is about
        snap.dra = DraInventory(served=False)
        snap.warnings.append("DRA objects (DeviceClasses, ResourceSlices, ResourceClaims) are not in the dump; no pod in it asks for a ResourceClaim")
    for kind, status in (snap.dra.refused or {}).items():
        snap.refused[kind] = _why(status, "listing", kind)
    # a dump that holds a kind for some namespaces only: what it lacks is not "none"
    for kind, why in getattr(conn, "unread", {}).items():
        snap.refused.setdefault(kind, f"{kind} not in the dump ({why})")
    snap.warnings.extend(getattr(conn, "warnings", ()))
    return snap


__all__ = ["MAX_CONFIGMAPS", "MAX_LOGS", "DoctorOptions", "RuntimeClassInfo", "Snapshot", "read_snapshot"]
