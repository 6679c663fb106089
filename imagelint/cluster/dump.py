"""A cluster dump as an :class:`~imagelint.cluster.source.ObjectSource`: objects and logs someone sent.

``DumpSource`` holds the objects of a dump indexed by kind, the logs it carries, and which kinds
it holds at all. A kind it does not hold answers ``refused=NOT_IN_DUMP`` (the stages say "not in
the dump"); a kind it holds only for some namespaces answers with what it has, and ``unread``
says the rest (``"pods": "only namespace gpu-operator"``) so doctor never reads "no pods here"
as "no pods".

What is kept is what doctor reads: Secrets are never stored, an env value or a ConfigMap key
whose name looks secret (``imagelint.redact.looks_secret``) is replaced by ``[redacted]`` as the
object is added, and ``managedFields`` / ``last-applied-configuration`` (the bulk of a real dump)
are dropped — a 500-node, 5,000-pod dump stays within doctor's memory.

The shapes are read by :mod:`imagelint.cluster.dump_formats`.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from imagelint.cluster.connection import Fetched, Listing
from imagelint.cluster.objects import clean
from imagelint.cluster.pod_logs import MAX_LINE, TAIL_LINES, LogTail
from imagelint.cluster.resources import Resource
from imagelint.cluster.source import NOT_IN_DUMP
from imagelint.errors import ClusterError
from imagelint.redact import REDACTED, looks_secret

# Kind → API group, for objects (and list items) a dump gives without an apiVersion.
KIND_GROUPS: dict[str, str] = {
    "Node": "", "Pod": "", "Event": "", "ConfigMap": "", "Service": "", "ReplicationController": "", "Namespace": "",
    "DaemonSet": "apps", "Deployment": "apps", "ReplicaSet": "apps", "StatefulSet": "apps",
    "Job": "batch", "CronJob": "batch", "RuntimeClass": "node.k8s.io", "ClusterPolicy": "nvidia.com",
    "NVIDIADriver": "nvidia.com", "DeviceClass": "resource.k8s.io", "ResourceSlice": "resource.k8s.io",
    "ResourceClaim": "resource.k8s.io", "ResourceClaimTemplate": "resource.k8s.io",
}
NEVER_KEPT = frozenset({"Secret"})  # a dump's Secrets are read past, never stored
_LAST_APPLIED = "kubectl.kubernetes.io/last-applied-configuration"


def plural_of(kind: str) -> str:
    """``DeviceClass`` → ``deviceclasses``, ``ClusterPolicy`` → ``clusterpolicies`` (the URL plural)."""
    lower = kind.lower()
    if lower.endswith(("s", "x", "ch", "sh")):
        return lower + "es"
    if lower.endswith("y") and lower[-2:-1] not in "aeiou":
        return lower[:-1] + "ies"
    return lower + "s"


def group_of(api_version: str, kind: str) -> str:
    if api_version:
        return api_version.split("/", 1)[0] if "/" in api_version else ""
    return KIND_GROUPS.get(kind, "")


def _key(group: str, plural: str) -> str:
    # events.k8s.io/v1 Events are served as core Events too: one kind here
    return f"{'' if group == 'events.k8s.io' else group}/{plural}"


@dataclass
class DumpSource:
    """A cluster dump (``doctor --from``) as an ``ObjectSource``: its objects by kind and its logs."""

    server: str  # "dump PATH", for messages
    context: str = ""
    namespace: str = "default"
    objects: dict[str, list[Mapping[str, Any]]] = field(default_factory=dict)  # "apps/daemonsets" → objects
    # kinds held only in part: "pods" → "only namespace gpu-operator" (said by doctor)
    unread: dict[str, str] = field(default_factory=dict)
    # (namespace, pod, container, previous) → the log's lines, or the error the dumping tool wrote
    logs: dict[tuple[str, str, str, bool], tuple[str, ...] | str] = field(default_factory=dict)
    warnings: list[str] = field(default_factory=list)
    shapes: list[str] = field(default_factory=list)  # what was recognised: "kubectl List", "cluster-info dump"...

    # --- filling ----------------------------------------------------------------------------

    def hold(self, group: str, kind: str) -> None:
        """The dump holds this kind (perhaps none of it): an empty list is "none", not "not dumped"."""
        self.objects.setdefault(_key(group, plural_of(kind)), [])

    def add(self, obj: Mapping[str, Any], kind: str = "", api_version: str = "") -> None:
        kind = given if isinstance(given := obj.get("kind"), str) and given else kind
        if not kind or kind in NEVER_KEPT:
            return
        version = said if isinstance(said := obj.get("apiVersion"), str) and said else api_version
        group = group_of(version, kind)
        if group == "events.k8s.io":
            obj = _core_event(obj)
        self.objects.setdefault(_key(group, plural_of(kind)), []).append(_slim(obj, kind))

    def add_log(self, namespace: str, pod: str, container: str, previous: bool, text: str) -> None:
        self.logs[(namespace, pod, container, previous)] = tuple(text.splitlines())

    # --- ObjectSource ------------------------------------------------------------------------

    def holds(self, resource: Resource) -> bool:
        return _key(resource.group, resource.plural) in self.objects

    def list_objects(self, resource: Resource, namespace: str | None = None, *, label_selector: str | None = None,
                     field_selector: str | None = None, optional: bool = False, step: str | None = None) -> Listing:
        found = self.objects.get(_key(resource.group, resource.plural))
        if found is None:
            if not optional:
                raise self.error(step or f"listing {resource.kinds}", f"{resource.kinds} are not in the dump")
            return Listing(refused=NOT_IN_DUMP)
        chosen = [o for o in found if _selected(o, namespace, label_selector, field_selector)]
        return Listing(items=tuple(chosen))

    def get_object(self, resource: Resource, name: str, namespace: str | None = None, *, optional: bool = False,
                   step: str | None = None) -> Fetched:
        found = self.objects.get(_key(resource.group, resource.plural))
        if found is None:
            if not optional:
                raise self.error(step or f"reading {resource.kind} {name}", f"{resource.kinds} are not in the dump")
            return Fetched(refused=NOT_IN_DUMP)
        for obj in found:
            meta = m if isinstance(m := obj.get("metadata"), Mapping) else {}
            if meta.get("name") == name and (not resource.namespaced or namespace is None or meta.get("namespace") == namespace):
                return Fetched(object=obj)
        if not optional:
            raise self.error(step or f"reading {resource.kind} {name}", "not in the dump")
        return Fetched(refused=404)

    def log_tail(self, namespace: str, pod: str, container: str, *, previous: bool = False) -> LogTail:
        found = self.logs.get((namespace, pod, container, previous))
        if found is None:
            return LogTail(refused=NOT_IN_DUMP)
        if isinstance(found, str):  # what the dumping tool wrote instead (the kubelet's error)
            return LogTail(refused=NOT_IN_DUMP, reason=clean(found, 300))
        return LogTail(lines=tuple(clean(line, MAX_LINE) for line in found[-TAIL_LINES:] if line.strip()))

    def error(self, step: str, reason: str) -> ClusterError:
        return ClusterError(f"{self.server}: {step}: {reason}")

    def close(self) -> None:
        pass

    def __enter__(self) -> DumpSource:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def _selected(obj: Mapping[str, Any], namespace: str | None, labels: str | None, fields: str | None) -> bool:
    meta = m if isinstance(m := obj.get("metadata"), Mapping) else {}
    if namespace and meta.get("namespace") != namespace:
        return False
    if labels:
        have = h if isinstance(h := meta.get("labels"), Mapping) else {}
        for term in labels.split(","):
            key, _, value = term.partition("=")
            if have.get(key.strip()) != value.strip():
                return False
    if fields:
        for term in fields.split(","):
            path, _, value = term.partition("=")
            here: Any = obj
            for part in path.strip().split("."):
                here = here.get(part) if isinstance(here, Mapping) else None
            if str(here if here is not None else "") != value.strip():
                return False
    return True


def _slim(obj: Mapping[str, Any], kind: str) -> Mapping[str, Any]:
    """The object without what doctor never reads and what it must never print."""
    out = dict(obj)
    meta = out.get("metadata")
    if isinstance(meta, Mapping):
        meta = {k: v for k, v in meta.items() if k != "managedFields"}
        notes = meta.get("annotations")
        if isinstance(notes, Mapping) and _LAST_APPLIED in notes:
            meta["annotations"] = {k: v for k, v in notes.items() if k != _LAST_APPLIED}
        out["metadata"] = meta
    if kind == "ConfigMap":
        out.pop("binaryData", None)  # never an app config doctor reads
        data = out.get("data")
        if isinstance(data, Mapping):
            out["data"] = {k: (REDACTED if isinstance(k, str) and looks_secret(k) else v) for k, v in data.items()}
    spec = out.get("spec")
    if kind in ("Pod",) and isinstance(spec, Mapping):
        out["spec"] = _redact_pod_spec(spec)
    elif isinstance(spec, Mapping) and isinstance(spec.get("template"), Mapping):
        template = dict(spec["template"])
        if isinstance(template.get("spec"), Mapping):
            template["spec"] = _redact_pod_spec(template["spec"])
        out["spec"] = {**spec, "template": template}
    return out


def _redact_pod_spec(spec: Mapping[str, Any]) -> Mapping[str, Any]:
    """Env values whose names look secret → ``[redacted]`` (what doctor reads from env are NVIDIA_* settings)."""
    out = dict(spec)
    for part in ("containers", "initContainers", "ephemeralContainers"):
        containers = out.get(part)
        if not isinstance(containers, list):
            continue
        kept = []
        for c in containers:
            if isinstance(c, Mapping) and isinstance(c.get("env"), list):
                env = [({**e, "value": REDACTED} if isinstance(e, Mapping) and isinstance(e.get("name"), str)
                        and looks_secret(e["name"]) and "value" in e else e) for e in c["env"]]
                c = {**c, "env": env}
            kept.append(c)
        out[part] = kept
    return out


def _core_event(obj: Mapping[str, Any]) -> Mapping[str, Any]:
    """An events.k8s.io/v1 Event in core/v1's words (``regarding`` → ``involvedObject``, ``note`` → ``message``)."""
    series = s if isinstance(s := obj.get("series"), Mapping) else {}
    return {
        "metadata": obj.get("metadata"), "involvedObject": obj.get("regarding"), "reason": obj.get("reason"),
        "message": obj.get("note"), "type": obj.get("type"), "eventTime": obj.get("eventTime"),
        "count": obj.get("deprecatedCount") or series.get("count"), "lastTimestamp": obj.get("deprecatedLastTimestamp"),
        "series": series or None, "reportingComponent": obj.get("reportingController"),
    }


__all__ = ["KIND_GROUPS", "DumpSource", "group_of", "plural_of"]
