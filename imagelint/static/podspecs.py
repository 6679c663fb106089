"""Where pod specs live in Kubernetes objects: found generically, named by known shape.

A pod spec is any mapping with a ``containers`` list of container mappings, wherever it sits in
an object: ``Pod.spec``, ``Deployment.spec.template.spec``, ``CronJob`` job templates, RayCluster /
RayJob / RayService head and worker groups, Kubeflow ``PyTorchJob``/``TFJob``/``MPIJob``/
``XGBoostJob`` replica specs, ``JobSet`` replicated jobs, ``LeaderWorkerSet`` leader and worker
templates, Volcano ``Job`` tasks, KServe ``InferenceService`` / ``ServingRuntime`` /
``LLMInferenceService`` containers, Kueue-managed Jobs, custom controllers. Two single-container
shapes are read as well: Argo Workflows templates (``container`` / ``script`` / ``containerSet``)
and KServe predictors that name a model format (``predictor.tensorflow: {resources: ...}``).

The walk is bounded (depth, and the YAML loader's node limit). Objects in which no pod spec is
found and whose kind is not known to carry none are reported by the caller as not understood.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

from imagelint.static.yamlsafe import LineDict, LineList

MAX_DEPTH = 14
MAX_NODES = 200_000  # mappings and lists visited per document (the loader's own node limit)
MAX_LIST_DEPTH = 4

# KServe predictor / transformer / explainer keys that are a container of a model format.
KSERVE_FORMATS = frozenset({
    "sklearn", "xgboost", "tensorflow", "pytorch", "triton", "onnx", "pmml", "lightgbm", "paddle",
    "huggingface", "model", "alibi", "art", "torchserve",
})
KSERVE_COMPONENTS = frozenset({"predictor", "transformer", "explainer"})
ARGO_KINDS = frozenset({"Workflow", "WorkflowTemplate", "ClusterWorkflowTemplate", "CronWorkflow"})

# Kinds that carry no pod spec (so finding none is expected, not "not understood").
_NO_POD_GROUPS = (
    "rbac.authorization.k8s.io", "apiextensions.k8s.io", "networking.k8s.io", "storage.k8s.io", "policy",
    "admissionregistration.k8s.io", "coordination.k8s.io", "node.k8s.io",
    "resource.k8s.io", "kueue.x-k8s.io", "monitoring.coreos.com", "cert-manager.io", "autoscaling",
    "discovery.k8s.io", "certificates.k8s.io", "flowcontrol.apiserver.k8s.io", "apiregistration.k8s.io",
    "gateway.networking.k8s.io", "networking.istio.io", "security.istio.io", "config.openshift.io",
    "route.openshift.io", "security.openshift.io", "scheduling.x-k8s.io", "scheduling.volcano.sh",
    "topology.volcano.sh", "scheduling.run.ai", "kustomize.config.k8s.io", "kind.x-k8s.io",
    "snapshot.storage.k8s.io", "resource.nvidia.com",
)
_NO_POD_CORE_KINDS = frozenset({
    "Namespace", "Service", "ServiceAccount", "ConfigMap", "Secret", "PersistentVolume",
    "PersistentVolumeClaim", "Endpoints", "LimitRange", "ResourceQuota", "Event", "Node", "Binding",
    "ComponentStatus", "RuntimeClass", "PriorityClass",
})
# Kinds of API groups that otherwise need a look (scheduling.k8s.io's Workload/PodGroup carry
# resource claims for pods created elsewhere: named in a note, not silently passed).
_NO_POD_KINDS = frozenset({"PriorityClass"})


@dataclass(frozen=True)
class PodSpecAt:
    """A pod spec found in a document: the owning object, where it sits, and its shape."""

    kind: str
    name: str
    namespace: str | None
    spec: LineDict
    path: str                     # locator of the spec, e.g. ``spec.workerGroupSpecs[0].template.spec``
    annotations: tuple[str, ...]  # imagelint.io/ignore values (object, then template)
    shape: str = ""               # "RayCluster worker group 'gpu'"...
    # Containers that are not in ``spec.containers``: Argo ``container``/``script``, KServe formats.
    extra_containers: tuple[tuple[str, LineDict], ...] = ()
    template_annotations: tuple[tuple[str, str], ...] = ()  # all annotations of the pod template
    inherited_claims: Any = None  # Argo: the workflow's spec.resourceClaims


def _get(obj: Any, *keys: str) -> Any:
    for key in keys:
        if not isinstance(obj, dict):
            return None
        obj = obj.get(key)
    return obj


def _is_container(c: Any) -> bool:
    return isinstance(c, dict) and ("image" in c or "name" in c or "resources" in c)


def _is_pod_spec(d: Any) -> bool:
    items = d.get("containers") if isinstance(d, dict) else None
    return isinstance(items, list) and bool(items) and all(isinstance(c, dict) for c in items) and any(
        _is_container(c) for c in items)


def carries_no_pods(api_version: str, kind: str) -> bool:
    """Kinds known to hold no pod template (RBAC, Services, DRA objects, queues...)."""
    group = api_version.split("/", 1)[0] if "/" in api_version else ""
    if not group:
        return kind in _NO_POD_CORE_KINDS
    return group in _NO_POD_GROUPS or kind in _NO_POD_KINDS


def _shape(kind: str, path: str, node_names: dict[str, str]) -> str:
    """A human name for where a pod spec sits, from the object kind and the locator."""
    name = node_names.get(path, "")
    quoted = f" {name!r}" if name else ""
    p = path
    if kind == "Pod" and p == "spec":
        return "Pod"
    if p.endswith("headGroupSpec.template.spec"):
        return f"{kind} head group"
    if "workerGroupSpecs[" in p:
        return f"{kind} worker group{quoted}"
    if "ReplicaSpecs." in p:  # pytorchReplicaSpecs.Worker.template.spec
        m = re.search(r"(\w+)ReplicaSpecs\.(\w+)\.", p)
        return f"{kind} {m.group(2)} replicas" if m else f"{kind} replicas"
    if "replicatedJobs[" in p:
        return f"{kind} replicated job{quoted}"
    if "leaderTemplate" in p:
        return f"{kind} leader template"
    if "workerTemplate" in p:
        return f"{kind} worker template"
    if kind == "Job" and p.startswith("spec.tasks["):
        return f"Volcano Job task{quoted}"
    if p.startswith("spec.templates[") or ".templates[" in p:
        return f"Argo template{quoted}"
    for comp in KSERVE_COMPONENTS:
        if f".{comp}" in p or p.startswith(f"spec.{comp}"):
            return f"{kind} {comp}"
    if "jobTemplate" in p:
        return f"{kind} job template"
    if p in ("spec.template.spec", "template.spec"):
        return kind
    return f"{kind} at {p}"


def object_name(meta: dict) -> str:
    """The name of the object whose ``metadata`` this is, as its pods are named."""
    return str(meta.get("name") or meta.get("generateName") or "<unnamed>")


def find_pod_specs(doc: Any, depth: int = 0) -> Iterator[PodSpecAt]:
    """Every pod spec in one YAML document (a ``List`` recurses into its items)."""
    if not isinstance(doc, LineDict) or not doc.get("apiVersion") or not doc.get("kind"):
        return
    kind = str(doc["kind"])
    meta = meta if isinstance(meta := doc.get("metadata"), dict) else {}
    name = object_name(meta)
    namespace = str(meta["namespace"]) if meta.get("namespace") else None
    if kind.endswith("List") and isinstance(doc.get("items"), list):
        if depth < MAX_LIST_DEPTH:
            for item in doc["items"]:
                yield from find_pod_specs(item, depth + 1)
        return
    argo_claims = _get(doc, "spec", "resourceClaims") if kind in ARGO_KINDS else None
    if kind == "CronWorkflow":
        argo_claims = _get(doc, "spec", "workflowSpec", "resourceClaims")
    found: list[tuple[str, LineDict, tuple[tuple[str, LineDict], ...], list[Any]]] = []
    names: dict[str, str] = {}
    _walk(doc, "", 0, found, names, [meta], set())
    for path, spec, extra, metas in found:
        annotations: list[str] = []
        template_ann: list[tuple[str, str]] = []
        for m in metas:
            ann = _get(m, "annotations")
            if isinstance(ann, dict):
                value = ann.get("imagelint.io/ignore")
                if value:
                    annotations.append(str(value))
                template_ann.extend((str(k), str(v)) for k, v in ann.items())
        yield PodSpecAt(kind, name, namespace, spec, path, tuple(annotations), _shape(kind, path, names),
                        extra, tuple(template_ann), argo_claims)


def _join(prefix: str, key: str) -> str:
    return f"{prefix}.{key}" if prefix else key


def _walk(node: Any, path: str, depth: int, found: list, names: dict[str, str], metas: list[Any],
          seen: set[int]) -> None:
    # ``seen``: YAML aliases share nodes; each is walked once, so an alias "bomb" stays linear.
    if depth > MAX_DEPTH or id(node) in seen or len(seen) > MAX_NODES:
        return
    seen.add(id(node))
    if isinstance(node, LineList):
        for i, item in enumerate(node):
            sub = f"{path}[{i}]"
            if isinstance(item, dict):
                label = item.get("groupName") or item.get("name") or item.get("replicaType")
                if label and not isinstance(label, (dict, list)):
                    names[f"{sub}.template.spec"] = str(label)
                    names[f"{sub}.template.spec.template.spec"] = str(label)
                    names[sub] = str(label)
            _walk(item, sub, depth + 1, found, names, metas, seen)
        return
    if not isinstance(node, LineDict):
        return
    if _is_pod_spec(node):
        found.append((path, node, (), list(metas)))
        return
    extra = _single_containers(node, path)
    if extra:
        found.append((path, node, extra, list(metas)))
        return
    for key, value in node.items():
        if not isinstance(value, (LineDict, LineList)):
            continue
        key = str(key)
        if key in ("status", "metadata"):  # no pod spec lives there
            continue
        sub_metas = metas
        if key == "template" and isinstance(value, dict) and isinstance(value.get("metadata"), dict):
            sub_metas = metas + [value["metadata"]]
        _walk(value, _join(path, key), depth + 1, found, names, sub_metas, seen)


def _single_containers(node: LineDict, path: str) -> tuple[tuple[str, LineDict], ...]:
    """Argo template containers and KServe model-format containers held by ``node``."""
    out: list[tuple[str, LineDict]] = []
    for key in ("container", "script"):
        c = node.get(key)
        if isinstance(c, LineDict) and "image" in c:
            if "name" not in c and isinstance(node.get("name"), str):  # Argo: the template names it
                c = _named(c, node["name"])
            out.append((_join(path, key), c))
    cset = _get(node, "containerSet", "containers")
    if isinstance(cset, LineList):
        for i, c in enumerate(cset):
            if isinstance(c, LineDict):
                out.append((_join(path, f"containerSet.containers[{i}]"), c))
    last = path.rsplit(".", 1)[-1]
    if last in KSERVE_COMPONENTS:
        for key, c in node.items():
            if str(key) in KSERVE_FORMATS and isinstance(c, LineDict):
                out.append((_join(path, str(key)), c))
    return tuple(out)


def _named(container: LineDict, name: str) -> LineDict:
    """A copy of an unnamed container mapping with ``name`` set (line numbers kept)."""
    copy = LineDict(container)
    copy.line = container.line
    copy.key_lines = dict(container.key_lines)
    copy["name"] = name
    return copy


def privileged_by(container: Any) -> str | None:
    """What makes a container privileged over the node's devices, or None: ``privileged: true``
    (Kubernetes ``securityContext`` or a Compose service) or the CAP_SYS_ADMIN capability. Such a
    container sees every GPU of the node, whatever it requested (the NVIDIA runtime and device
    plugin isolate only unprivileged containers)."""
    if not isinstance(container, dict):
        return None
    security = security if isinstance(security := container.get("securityContext"), dict) else container
    if security.get("privileged") is True:
        return "privileged: true"
    caps = caps if isinstance(caps := security.get("capabilities"), dict) else {}
    adds = adds if isinstance(adds := caps.get("add"), list) else container.get("cap_add")
    for cap in adds if isinstance(adds, list) else ():
        if isinstance(cap, str) and cap.upper() in ("SYS_ADMIN", "CAP_SYS_ADMIN"):
            return f"capability {cap}"
    return None
