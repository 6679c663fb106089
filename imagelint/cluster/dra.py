"""Dynamic Resource Allocation objects: DeviceClasses, ResourceSlices, ResourceClaims and their templates.

Read from ``resource.k8s.io/v1`` where the API server serves it (1.34+); a 404 means DRA is
not served here (``served`` False), a 403 that RBAC forbids it, a dump's ``NOT_IN_DUMP`` that
the dump does not hold it (``refused``: kind → status). Kept as frozen rows:

* ``DeviceClassInfo``: its name and CEL selectors;
* ``SliceDevice``: one device a ResourceSlice publishes — node, driver, pool, name and the
  attributes (``productName``, ``architecture``, ``cudaComputeCapability``, ``driverVersion``...,
  each attribute's ``string`` / ``version`` / ``int`` / ``bool`` value as text);
* ``ClaimInfo``: a claim's requests (DeviceClass, CEL selectors, count), whether it is allocated
  (and the devices), and which pods it is reserved for; ``TemplateInfo`` the requests of a
  ResourceClaimTemplate.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from imagelint.cluster.objects import items, mapping, number, text
from imagelint.cluster.resources import (
    DEVICE_CLASSES,
    RESOURCE_CLAIM_TEMPLATES,
    RESOURCE_CLAIMS,
    RESOURCE_SLICES,
)
from imagelint.cluster.source import ObjectSource

MAX_DEVICES = 100_000  # devices kept across all slices (a 5,000-node cluster of 8-GPU nodes is 40,000)


@dataclass(frozen=True)
class NodeDevices:
    """How many devices one DRA driver publishes for a node, counted over its ResourceSlices."""

    node: str
    driver: str  # gpu.nvidia.com, compute-domain.nvidia.com...
    devices: int


@dataclass(frozen=True)
class SliceDevice:
    """One device a ResourceSlice publishes, its attributes as text (``productName``, ``driverVersion``)."""

    node: str
    driver: str
    pool: str
    name: str
    slice: str  # the ResourceSlice's name, for evidence
    attributes: Mapping[str, str]  # "productName" → "NVIDIA A100-SXM4-80GB" (unqualified names)


@dataclass(frozen=True)
class DeviceClassInfo:
    """A DRA DeviceClass, and the CEL selectors that decide which devices a claim of it can get."""

    name: str
    selectors: tuple[str, ...]  # CEL expressions


@dataclass(frozen=True)
class RequestInfo:
    """One device request of a claim or claim template: the DeviceClass asked for, and how many."""

    name: str
    device_class: str
    selectors: tuple[str, ...]
    count: int  # ExactCount (1 unless the request says otherwise); 0 for allocationMode All
    alternatives: tuple[str, ...] = ()  # firstAvailable subrequests' DeviceClasses


@dataclass(frozen=True)
class ClaimInfo:
    """A ResourceClaim: what a pod asked DRA for, whether it is allocated (to which devices), for whom."""

    namespace: str
    name: str
    device_classes: tuple[str, ...]
    allocated: bool
    reserved_for: tuple[str, ...]  # pod names
    requests: tuple[RequestInfo, ...] = ()
    allocated_devices: tuple[str, ...] = ()  # "driver/pool/device"
    deleting: bool = False


@dataclass(frozen=True)
class TemplateInfo:
    """A ResourceClaimTemplate: the device requests of the claim made from it for each pod."""

    namespace: str
    name: str
    requests: tuple[RequestInfo, ...]


@dataclass(frozen=True)
class DraInventory:
    """The cluster's DRA objects, read once (``read_dra``), and the kinds not served or not readable."""

    served: bool = False
    refused: dict[str, int] | None = None  # kinds → status (403, or NOT_IN_DUMP)
    device_classes: tuple[str, ...] = ()
    node_devices: tuple[NodeDevices, ...] = ()
    claims: tuple[ClaimInfo, ...] = ()
    classes: tuple[DeviceClassInfo, ...] = ()
    devices: tuple[SliceDevice, ...] = ()
    templates: tuple[TemplateInfo, ...] = ()

    def devices_on(self, node: str, driver_suffix: str = "nvidia.com") -> int:
        return sum(n.devices for n in self.node_devices if n.node == node and n.driver.endswith(driver_suffix))

    def device_class(self, name: str) -> DeviceClassInfo | None:
        return next((c for c in self.classes if c.name == name), None)

    def claim(self, namespace: str, name: str) -> ClaimInfo | None:
        return next((c for c in self.claims if c.namespace == namespace and c.name == name), None)

    def template(self, namespace: str, name: str) -> TemplateInfo | None:
        return next((t for t in self.templates if t.namespace == namespace and t.name == name), None)

    def unread(self, kind: str) -> int | None:
        """The status a kind was not read with (403, NOT_IN_DUMP), or None when it was read."""
        return (self.refused or {}).get(kind)


def _requests_of(devices: Mapping[str, Any]) -> tuple[RequestInfo, ...]:
    out = []
    for request in items(devices, "requests"):
        body = mapping(request, "exactly") or request  # v1: under "exactly"; v1beta1: on the request
        mode = text(body, "allocationMode", limit=20)
        out.append(RequestInfo(
            name=text(request, "name", limit=253),
            device_class=text(body, "deviceClassName", limit=253),
            selectors=tuple(e for e in (text(s, "cel", "expression") for s in items(body, "selectors")) if e),
            count=0 if mode == "All" else (number(body, "count") or 1),
            alternatives=tuple(n for n in (text(sub, "deviceClassName", limit=253) for sub in items(request, "firstAvailable")) if n),
        ))
    return tuple(out)


def _requests(claim: Mapping[str, object]) -> tuple[str, ...]:
    out = []
    for request in _requests_of(mapping(claim, "spec", "devices")):
        out.extend([request.device_class] if request.device_class else [])
        out.extend(request.alternatives)
    return tuple(dict.fromkeys(n for n in out if n))


def _attribute(value: Mapping[str, Any]) -> str:
    for kind in ("string", "version", "int", "bool"):
        if kind in value and not isinstance(value[kind], (Mapping, list)):
            return text(value, kind, limit=253) if kind != "bool" else ("true" if value[kind] is True else "false")
    return ""


def _devices(slices: tuple[Mapping[str, Any], ...]) -> tuple[SliceDevice, ...]:
    found: list[SliceDevice] = []
    for obj in slices:
        spec = mapping(obj, "spec")
        node, driver = text(spec, "nodeName", limit=253), text(spec, "driver", limit=253)
        pool, slice_name = text(spec, "pool", "name", limit=253), text(obj, "metadata", "name", limit=253)
        for device in items(spec, "devices"):
            if len(found) >= MAX_DEVICES:
                return tuple(found)
            attributes = {}
            for key, value in mapping(device, "attributes").items():
                if isinstance(key, str) and isinstance(value, Mapping):
                    # "gpu.nvidia.com/productName" and "productName" are one attribute of this driver
                    short = key.split("/", 1)[1] if "/" in key and key.split("/", 1)[0] == driver else key
                    attributes[short] = _attribute(value)
            found.append(SliceDevice(node, driver, pool, text(device, "name", limit=253), slice_name, attributes))
    return tuple(found)


def read_dra(conn: ObjectSource) -> DraInventory:
    classes = conn.list_objects(DEVICE_CLASSES, optional=True)
    if classes.refused == 404:
        return DraInventory(served=False)
    refused: dict[str, int] = {}
    listings = {}
    for kind, resource in (("deviceclasses", DEVICE_CLASSES), ("resourceslices", RESOURCE_SLICES),
                           ("resourceclaims", RESOURCE_CLAIMS), ("resourceclaimtemplates", RESOURCE_CLAIM_TEMPLATES)):
        listing = classes if kind == "deviceclasses" else conn.list_objects(resource, optional=True)
        if not listing.checked:
            refused[kind] = listing.refused or 403
        listings[kind] = listing.items
    devices = _devices(listings["resourceslices"])
    per_node: dict[tuple[str, str], int] = {}
    for device in devices:
        if device.node and device.driver:
            per_node[(device.node, device.driver)] = per_node.get((device.node, device.driver), 0) + 1
    class_rows = tuple(
        DeviceClassInfo(name, tuple(e for e in (text(s, "cel", "expression") for s in items(c, "spec", "selectors")) if e))
        for c in listings["deviceclasses"] if (name := text(c, "metadata", "name", limit=253))
    )
    return DraInventory(
        served=True,
        refused=refused or None,
        device_classes=tuple(sorted(c.name for c in class_rows)),
        node_devices=tuple(NodeDevices(n, d, c) for (n, d), c in sorted(per_node.items())),
        claims=tuple(
            ClaimInfo(
                namespace=text(c, "metadata", "namespace", limit=253),
                name=text(c, "metadata", "name", limit=253),
                device_classes=_requests(c),
                allocated=bool(mapping(c, "status", "allocation")),
                reserved_for=tuple(text(r, "name", limit=253) for r in items(c, "status", "reservedFor")),
                requests=_requests_of(mapping(c, "spec", "devices")),
                allocated_devices=tuple(
                    "/".join(text(r, k, limit=253) for k in ("driver", "pool", "device"))
                    for r in items(c, "status", "allocation", "devices", "results")),
                deleting=bool(text(c, "metadata", "deletionTimestamp")),
            )
            for c in listings["resourceclaims"]
        ),
        classes=class_rows,
        devices=devices,
        templates=tuple(
            TemplateInfo(text(t, "metadata", "namespace", limit=253), text(t, "metadata", "name", limit=253),
                         _requests_of(mapping(t, "spec", "spec", "devices")))
            for t in listings["resourceclaimtemplates"]
        ),
    )


__all__ = ["ClaimInfo", "DeviceClassInfo", "DraInventory", "NodeDevices", "RequestInfo", "SliceDevice", "TemplateInfo", "read_dra"]
