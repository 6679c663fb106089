"""Dynamic Resource Allocation objects in manifests, and pods' claims resolved against them.

Reads ``resource.k8s.io`` ``ResourceClaim``, ``ResourceClaimTemplate`` and ``DeviceClass`` in
every served version (``v1``, GA since Kubernetes 1.34; ``v1beta1``/``v1beta2``: requests with
``deviceClassName`` directly, or under ``exactly`` / ``firstAvailable``), and NVIDIA's
``ComputeDomain`` (``resource.nvidia.com``), whose ``spec.channel.resourceClaimTemplate.name`` is
a template the DRA driver creates for IMEX channels.

What a device class gives (a GPU, a MIG device, a VFIO passthrough GPU, an IMEX channel) is
matrix data (``dra_device_classes``, NVIDIA's DRA driver); a DeviceClass defined in the linted
files is classified by its CEL selectors (``device.driver == 'gpu.nvidia.com'`` and the
``type`` attribute). A class of another driver is ``other``; a claim not defined in the files
linted stays ``unknown``.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any

from imagelint.facts.model import ImageFacts
from imagelint.facts.static_model import DeviceRequest, PodClaim
from imagelint.lazyre import lazy_pattern
from imagelint.static.yamlsafe import LineDict

if TYPE_CHECKING:
    from imagelint.matrix.model import Matrix

RESOURCE_GROUP = "resource.k8s.io"
NVIDIA_RESOURCE_GROUP = "resource.nvidia.com"
NVIDIA_DRA_DRIVER = "gpu.nvidia.com"
# DeviceClasses NVIDIA's DRA driver installs, used when the matrix lacks the table.
_FALLBACK_CLASSES = {
    "gpu.nvidia.com": "gpu", "mig.nvidia.com": "mig", "vfio.gpu.nvidia.com": "vfio",
    "compute-domain-daemon.nvidia.com": "imex", "compute-domain-default-channel.nvidia.com": "imex",
    "imex.nvidia.com": "imex",
}
_TYPE_ATTR = lazy_pattern(r"""attributes\[\s*['"]gpu\.nvidia\.com['"]\s*\]\.type\s*==\s*['"](\w+)['"]""")
_DRIVER_EQ = lazy_pattern(r"""device\.driver\s*==\s*['"]([\w.-]+)['"]""")


@dataclass(frozen=True)
class DraObject:
    """A ResourceClaim / ResourceClaimTemplate / DeviceClass / ComputeDomain from a manifest."""

    kind: str
    name: str
    namespace: str | None
    source: str
    line: int | None
    requests: tuple[DeviceRequest, ...] = ()
    selectors: tuple[str, ...] = ()        # DeviceClass CEL selectors
    extended_resource: str | None = None   # DeviceClass.spec.extendedResourceName
    provides_template: str | None = None   # ComputeDomain: the IMEX channel template it creates

    @property
    def where(self) -> str:
        return f"{self.source}:{self.line}" if self.line else self.source


def _get(obj: Any, *keys: str) -> Any:
    for key in keys:
        if not isinstance(obj, dict):
            return None
        obj = obj.get(key)
    return obj


def _selectors(items: Any) -> tuple[str, ...]:
    out = []
    for s in items if isinstance(items, list) else ():
        expr = _get(s, "cel", "expression")
        if isinstance(expr, str):
            out.append(expr)
    return tuple(out)


def _int(value: Any) -> int | None:
    try:
        return int(value)
    except (TypeError, ValueError, OverflowError):  # OverflowError: YAML's .inf
        return None


def _requests(devices: Any) -> tuple[DeviceRequest, ...]:
    out = []
    for r in (_get(devices, "requests") or ()) if isinstance(_get(devices, "requests"), list) else ():
        if not isinstance(r, dict):
            continue
        body = body if isinstance(body := r.get("exactly"), dict) else r
        alts = tuple(str(a["deviceClassName"]) for a in r.get("firstAvailable") or ()
                     if isinstance(a, dict) and a.get("deviceClassName"))
        cls = body.get("deviceClassName")
        out.append(DeviceRequest(
            name=str(r.get("name") or ""),
            device_class=str(cls) if cls else None,
            count=_int(body.get("count")),
            allocation_mode=str(body["allocationMode"]) if body.get("allocationMode") else None,
            selectors=_selectors(body.get("selectors")),
            alternatives=alts,
        ))
    return tuple(out)


def dra_object(doc: Any, source: str) -> DraObject | None:
    """The DRA object ``doc`` is, or None."""
    if not isinstance(doc, dict):
        return None
    api, kind = str(doc.get("apiVersion") or ""), str(doc.get("kind") or "")
    group = api.split("/", 1)[0]
    meta = meta if isinstance(meta := doc.get("metadata"), dict) else {}
    name = str(meta.get("name") or meta.get("generateName") or "")
    ns = str(meta["namespace"]) if meta.get("namespace") else None
    line = doc.line if isinstance(doc, LineDict) else None
    if group == RESOURCE_GROUP:
        if kind == "ResourceClaim":
            legacy = _get(doc, "spec", "resourceClassName")  # v1alpha2 (classic DRA, withdrawn in 1.31)
            requests = (DeviceRequest("", str(legacy)),) if legacy else _requests(_get(doc, "spec", "devices"))
            return DraObject(kind, name, ns, source, line, requests)
        if kind == "ResourceClaimTemplate":
            return DraObject(kind, name, ns, source, line, _requests(_get(doc, "spec", "spec", "devices")))
        if kind == "DeviceClass":
            ext = _get(doc, "spec", "extendedResourceName")
            return DraObject(kind, name, ns, source, line, selectors=_selectors(_get(doc, "spec", "selectors")),
                             extended_resource=str(ext) if ext else None)
        return None
    if group == NVIDIA_RESOURCE_GROUP and kind == "ComputeDomain":
        tpl = _get(doc, "spec", "channel", "resourceClaimTemplate", "name")
        return DraObject(kind, name, ns, source, line, provides_template=str(tpl) if tpl else None)
    return None


def class_table(matrix: Matrix | None) -> Mapping[str, str]:
    """DeviceClass name → device kind (gpu, mig, vfio, imex), from the matrix."""
    rows = getattr(matrix, "dra_device_classes", None)
    if callable(rows):
        try:
            found = rows()
        except (LookupError, ValueError):
            found = None
        if found:
            return found
    return _FALLBACK_CLASSES


def classify_selectors(selectors: Sequence[str]) -> str | None:
    """What a DeviceClass's CEL selectors select: gpu/mig/vfio (NVIDIA driver), other, or None."""
    text = " ".join(selectors)
    drivers = set(_DRIVER_EQ.findall(text))
    if drivers and NVIDIA_DRA_DRIVER not in drivers:
        return "other"
    types = set(_TYPE_ATTR.findall(text))
    if NVIDIA_DRA_DRIVER in drivers or types:
        for t in ("mig", "vfio", "gpu"):
            if t in types:
                return t
        return "gpu"
    return None


def device_of_class(name: str | None, classes: Mapping[str, DraObject], table: Mapping[str, str]) -> str:
    if not name:
        return "unknown"
    if name in table:
        return table[name]
    defined = classes.get(name)
    if defined is not None:
        return classify_selectors(defined.selectors) or "other"
    if name.endswith(".nvidia.com"):  # an NVIDIA class the matrix does not list: read its name
        low = name.lower()
        return "imex" if ("imex" in low or "compute-domain" in low or "channel" in low) else \
            "vfio" if "vfio" in low else "mig" if "mig" in low else "gpu"
    return "other"


_RANK = {"gpu": 0, "mig": 1, "vfio": 2, "imex": 3, "other": 4, "unknown": 5}


def _device_of(requests: Sequence[DeviceRequest], classes: Mapping[str, DraObject], table: Mapping[str, str]) -> str:
    kinds = [device_of_class(c, classes, table) for r in requests for c in ((r.device_class,) + r.alternatives) if c]
    if not kinds:
        return "unknown"
    return min(kinds, key=lambda k: _RANK[k])


@dataclass(frozen=True)
class DraIndex:
    """The DRA objects of one lint run, by kind and name (namespaces are not compared: a
    manifest often omits them and is applied with ``-n``)."""

    claims: Mapping[str, DraObject]
    templates: Mapping[str, DraObject]
    classes: Mapping[str, DraObject]
    imex_templates: Mapping[str, DraObject]

    @classmethod
    def build(cls, objects: Iterable[DraObject]) -> DraIndex:
        claims: dict[str, DraObject] = {}
        templates: dict[str, DraObject] = {}
        classes: dict[str, DraObject] = {}
        imex: dict[str, DraObject] = {}
        for o in objects:
            {"ResourceClaim": claims, "ResourceClaimTemplate": templates, "DeviceClass": classes}.get(
                o.kind, {}).setdefault(o.name, o)
            if o.provides_template:
                imex.setdefault(o.provides_template, o)
        return cls(claims, templates, classes, imex)

    def resolve(self, claim: PodClaim, table: Mapping[str, str]) -> PodClaim:
        if claim.template and claim.template in self.imex_templates:
            cd = self.imex_templates[claim.template]
            return replace(claim, device="imex", defined_in=f"ComputeDomain/{cd.name} ({cd.where})")
        obj = self.templates.get(claim.template) if claim.template else self.claims.get(claim.claim or "")
        if obj is None:
            return claim
        return replace(claim, device=_device_of(obj.requests, self.classes, table), requests=obj.requests,
                       defined_in=f"{obj.kind}/{obj.name} ({obj.where})")


def resolve_claims(facts: Sequence[ImageFacts], objects: Iterable[DraObject], matrix: Matrix | None) -> list[ImageFacts]:
    """``facts`` with each workload's pod claims resolved against the run's DRA objects."""
    index = DraIndex.build(objects)
    table = class_table(matrix)
    out = []
    for f in facts:
        w = f.workload
        if w is None or not w.pod_claims:
            out.append(f)
            continue
        claims = tuple(index.resolve(c, table) for c in w.pod_claims)
        out.append(replace(f, workload=replace(w, pod_claims=claims)))
    return out
