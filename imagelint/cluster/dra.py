"""Dynamic Resource Allocation objects: DeviceClasses, ResourceSlices (devices per node), ResourceClaims.

Read from ``resource.k8s.io/v1`` where the API server serves it (1.34+); a 404 means DRA is
not served here (``served`` False), a 403 that RBAC forbids it (``refused``). Slices are
summarised per node and driver (how many devices a node publishes); claims by whether they
are allocated and which pods reserve them.
"""

from __future__ import annotations

from typing import Mapping

from imagelint.cluster.connection import Connection
from imagelint.cluster.objects import items, mapping, text
from imagelint.cluster.resources import DEVICE_CLASSES, RESOURCE_CLAIMS, RESOURCE_SLICES
from dataclasses import dataclass


@dataclass(frozen=True)
class NodeDevices:
    node: str
    driver: str  # gpu.nvidia.com, compute-domain.nvidia.com...
    devices: int


@dataclass(frozen=True)
class ClaimInfo:
    namespace: str
    name: str
    device_classes: tuple[str, ...]
    allocated: bool
    reserved_for: tuple[str, ...]  # pod names


@dataclass(frozen=True)
class DraInventory:
    served: bool = False
    refused: dict[str, int] | None = None  # kinds → 403 status
    device_classes: tuple[str, ...] = ()
    node_devices: tuple[NodeDevices, ...] = ()
    claims: tuple[ClaimInfo, ...] = ()

    def devices_on(self, node: str, driver_suffix: str = "nvidia.com") -> int:
        return sum(n.devices for n in self.node_devices if n.node == node and n.driver.endswith(driver_suffix))


def _requests(claim: Mapping[str, object]) -> tuple[str, ...]:
    out = []
    for request in items(claim, "spec", "devices", "requests"):
        name = text(request, "exactly", "deviceClassName", limit=253) or text(request, "deviceClassName", limit=253)
        out.extend([name] if name else [])
        out.extend(text(sub, "deviceClassName", limit=253) for sub in items(request, "firstAvailable"))
    return tuple(dict.fromkeys(n for n in out if n))


def read_dra(conn: Connection) -> DraInventory:
    classes = conn.list_objects(DEVICE_CLASSES, optional=True)
    if classes.refused == 404:
        return DraInventory(served=False)
    refused: dict[str, int] = {}
    if not classes.checked:
        refused["deviceclasses"] = classes.refused or 403
    slices = conn.list_objects(RESOURCE_SLICES, optional=True)
    if not slices.checked:
        refused["resourceslices"] = slices.refused or 403
    claims = conn.list_objects(RESOURCE_CLAIMS, optional=True)
    if not claims.checked:
        refused["resourceclaims"] = claims.refused or 403
    per_node: dict[tuple[str, str], int] = {}
    for obj in slices.items:
        spec = mapping(obj, "spec")
        node, driver = text(spec, "nodeName", limit=253), text(spec, "driver", limit=253)
        if node and driver:
            per_node[(node, driver)] = per_node.get((node, driver), 0) + len(items(spec, "devices"))
    return DraInventory(
        served=True,
        refused=refused or None,
        device_classes=tuple(sorted(n for n in (text(c, "metadata", "name", limit=253) for c in classes.items) if n)),
        node_devices=tuple(NodeDevices(n, d, c) for (n, d), c in sorted(per_node.items())),
        claims=tuple(
            ClaimInfo(
                namespace=text(c, "metadata", "namespace", limit=253),
                name=text(c, "metadata", "name", limit=253),
                device_classes=_requests(c),
                allocated=bool(mapping(c, "status", "allocation")),
                reserved_for=tuple(text(r, "name", limit=253) for r in items(c, "status", "reservedFor")),
            )
            for c in claims.items
        ),
    )


__all__ = ["ClaimInfo", "DraInventory", "NodeDevices", "read_dra"]
