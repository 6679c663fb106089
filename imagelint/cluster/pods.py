"""Pods, read for ``imagelint doctor``: phase, node, scheduling condition, container states.

``read_pods(conn, namespace, name)`` lists pods (all namespaces, one namespace, or one pod by
name) and turns each into a frozen :class:`PodInfo`. The pod spec is kept as served
(``spec``) because the static manifest reader (``imagelint.static``) decides what a spec asks
for (GPUs, claims, tolerations); nothing else reads it raw. 403/404 → ``refused``.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from imagelint.cluster.objects import clean, items, mapping, number, string_map, text
from imagelint.cluster.resources import PODS
from imagelint.cluster.source import ObjectSource


@dataclass(frozen=True)
class ContainerState:
    """One container's status in a pod: its state, restarts, and why its last instance ended."""

    name: str
    init: bool
    ready: bool
    restart_count: int
    state: str  # waiting | running | terminated | unknown
    reason: str  # waiting/terminated reason: CrashLoopBackOff, ContainerCreating, Error...
    message: str
    last_reason: str  # lastState.terminated.reason (why it crashed last)
    last_exit_code: int | None
    # the crashed instance's last words (termination-message file, or the log tail with
    # FallbackToLogsOnError), readable with pods alone; else the terminated state's message
    last_words: tuple[str, ...]  # its lines, cleaned
    image: str
    image_id: str


@dataclass(frozen=True)
class PodInfo:
    """One pod as doctor reads it: where it runs or why not, its containers' states, its spec as served."""

    namespace: str
    name: str
    node: str  # spec.nodeName ("" while Pending and unscheduled)
    phase: str
    labels: Mapping[str, str]
    owner_kind: str
    owner_name: str
    unschedulable_message: str  # PodScheduled=False reason Unschedulable: the scheduler's message
    containers: tuple[ContainerState, ...]
    spec: Mapping[str, Any]  # as served; read through imagelint.static only

    @property
    def where(self) -> str:
        return f"{self.namespace}/{self.name}"

    def container(self, name: str) -> ContainerState | None:
        return next((c for c in self.containers if c.name == name), None)

    @property
    def waiting_reasons(self) -> tuple[str, ...]:
        return tuple(c.reason for c in self.containers if c.state == "waiting" and c.reason)


@dataclass(frozen=True)
class PodListing:
    """The pods listed (all namespaces, one namespace or one pod), or the status the list was refused with."""

    pods: tuple[PodInfo, ...] = ()
    refused: int | None = None

    @property
    def checked(self) -> bool:
        return self.refused is None


def _container_state(status: Mapping[str, Any], init: bool) -> ContainerState:
    state = mapping(status, "state")
    kind = next((k for k in ("waiting", "running", "terminated") if isinstance(state.get(k), Mapping)), "unknown")
    current = mapping(state, kind)
    last = mapping(status, "lastState", "terminated")
    return ContainerState(
        name=text(status, "name", limit=253),
        init=init,
        ready=status.get("ready") is True,
        restart_count=number(status, "restartCount") or 0,
        state=kind,
        reason=text(current, "reason", limit=200),
        message=text(current, "message"),
        last_reason=text(last, "reason", limit=200),
        last_exit_code=number(last, "exitCode"),
        last_words=_lines(last.get("message") or (current.get("message") if kind == "terminated" else None)),
        image=text(status, "image", limit=1024),
        image_id=text(status, "imageID", limit=1024),
    )


MAX_TERMINATION_MESSAGE = 4096  # the kubelet's own cap on a termination message


def _lines(message: object) -> tuple[str, ...]:
    if not isinstance(message, str):
        return ()
    return tuple(clean(line, 500) for line in message[:MAX_TERMINATION_MESSAGE].splitlines() if line.strip())


def pod_from_object(obj: Mapping[str, Any]) -> PodInfo | None:
    meta, status = mapping(obj, "metadata"), mapping(obj, "status")
    name = text(meta, "name", limit=253)
    if not name:
        return None
    owner = next(iter(items(meta, "ownerReferences")), {})
    scheduled = next((c for c in items(status, "conditions") if c.get("type") == "PodScheduled"), {})
    unschedulable = text(scheduled, "message") if scheduled.get("status") == "False" else ""
    containers = tuple(_container_state(s, True) for s in items(status, "initContainerStatuses")) + tuple(
        _container_state(s, False) for s in items(status, "containerStatuses")
    )
    return PodInfo(
        namespace=text(meta, "namespace", limit=253),
        name=name,
        node=text(obj, "spec", "nodeName", limit=253),
        phase=text(status, "phase", limit=40) or "Unknown",
        labels=string_map(meta, "labels"),
        owner_kind=text(owner, "kind", limit=100),
        owner_name=text(owner, "name", limit=253),
        unschedulable_message=unschedulable,
        containers=containers,
        spec=mapping(obj, "spec"),
    )


def read_pods(conn: ObjectSource, namespace: str | None = None, name: str | None = None) -> PodListing:
    """Pods of ``namespace`` (None: every namespace), or the one pod ``name``; 403/404 → refused."""
    if name:
        fetched = conn.get_object(PODS, name, namespace or conn.namespace, optional=True)
        if not fetched.checked:
            return PodListing(refused=fetched.refused)
        pod = pod_from_object(fetched.object or {})
        return PodListing(pods=(pod,) if pod else ())
    listing = conn.list_objects(PODS, namespace, optional=True)
    if not listing.checked:
        return PodListing(refused=listing.refused)
    return PodListing(pods=tuple(p for p in map(pod_from_object, listing.items) if p is not None))


__all__ = ["ContainerState", "PodInfo", "PodListing", "pod_from_object", "read_pods"]
