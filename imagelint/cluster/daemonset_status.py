"""DaemonSets with their rollout status, and which NVIDIA component each one runs.

One list of DaemonSets (all namespaces) gives both what ``imagelint.cluster.operator`` reads
(component kind, version, settings, where it runs: :class:`OperatorComponent`) and the
status doctor needs: how many pods should run, how many are Ready, and the label selector
that finds those pods. 403/404 → ``refused``.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from imagelint.cluster.objects import mapping, number, string_map, text
from imagelint.cluster.operator import OperatorComponent, workloads_from_daemonsets
from imagelint.cluster.resources import DAEMON_SETS
from imagelint.cluster.source import ObjectSource


@dataclass(frozen=True)
class DaemonSetStatus:
    """A DaemonSet's rollout (pods desired, Ready, unavailable) and the NVIDIA component it runs, if any."""

    namespace: str
    name: str
    selector: Mapping[str, str]  # spec.selector.matchLabels: finds its pods
    desired: int
    ready: int
    unavailable: int
    component: OperatorComponent | None  # device plugin / toolkit, when it runs one

    @property
    def where(self) -> str:
        return f"{self.namespace}/{self.name}"

    def owns(self, labels: Mapping[str, str]) -> bool:
        return bool(self.selector) and all(labels.get(k) == v for k, v in self.selector.items())


@dataclass(frozen=True)
class DaemonSetListing:
    """The DaemonSets of every namespace, or the status the list was refused with (403/404)."""

    daemonsets: tuple[DaemonSetStatus, ...] = ()
    refused: int | None = None

    @property
    def checked(self) -> bool:
        return self.refused is None


def read_daemonset_status(conn: ObjectSource, warnings: list[str]) -> DaemonSetListing:
    listing = conn.list_objects(DAEMON_SETS, optional=True)
    if not listing.checked:
        return DaemonSetListing(refused=listing.refused)
    found = []
    for obj in listing.items:
        meta, status = mapping(obj, "metadata"), mapping(obj, "status")
        components = workloads_from_daemonsets([obj], warnings)
        desired = number(status, "desiredNumberScheduled") or 0
        ready = number(status, "numberReady") or 0
        found.append(
            DaemonSetStatus(
                namespace=text(meta, "namespace", limit=253),
                name=text(meta, "name", limit=253),
                selector=string_map(obj, "spec", "selector", "matchLabels"),
                desired=desired,
                ready=ready,
                unavailable=number(status, "numberUnavailable") or max(desired - ready, 0),
                component=components[0] if components else None,
            )
        )
    return DaemonSetListing(daemonsets=tuple(found))


__all__ = ["DaemonSetListing", "DaemonSetStatus", "read_daemonset_status"]
