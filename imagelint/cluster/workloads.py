"""Pods and workload templates → the containers a cluster runs (``imagelint audit``).

``read_workload_containers(conn, namespace, label_selector, warnings)`` lists:

* pods (required: a failure ends the run, exit 3): each container and init container with the
  image it names, the digest the kubelet reports for it (``status.containerStatuses[].imageID``)
  and the node it runs on;
* the pod templates of Deployments, StatefulSets, DaemonSets, Jobs, CronJobs and the GPU workload
  kinds ``lint`` understands (Ray, Kubeflow, JobSet, LeaderWorkerSet, Volcano, KServe:
  ``resources.GPU_WORKLOAD_KINDS``), so a workload scaled to zero or a CronJob between runs is
  audited too. These are optional: 403 becomes a warning, 404 (the CRD is not installed) nothing.

Pod specs are found with ``imagelint.static.podspecs.find_pod_specs`` (wherever they sit: Ray
head and worker groups, Kubeflow replica specs, JobSet, LWS, Volcano tasks, KServe) and read with
``imagelint.static.kubernetes.pod_facts``: the same code that reads manifests for ``lint``, so scheduling (nodeSelector,
required affinity, tolerations, GPU requests) means the same in both. A template container that
a pod of the same owner already runs with the same image is left out (the pod says more: its
node and digest).

Pods are read by ``imagelint.cluster.pods.pod_from_object`` (the doctor's pod reader: bounded,
control characters out). Owners: a pod's controller is named by its ``ownerReferences``; a ReplicaSet made by a Deployment
(the ``pod-template-hash`` suffix) is reported as the Deployment, a Job made by a CronJob as the
CronJob. Objects are untrusted: one that does not fit the API is left out with a warning.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from imagelint.cluster.connection import Connection, status_text
from imagelint.cluster.pods import PodInfo, pod_from_object
from imagelint.cluster.resources import (
    CRON_JOBS,
    DAEMON_SETS,
    DEPLOYMENTS,
    GPU_WORKLOAD_KINDS,
    JOBS,
    MALFORMED,
    PODS,
    STATEFUL_SETS,
    Resource,
)
from imagelint.facts.static_model import WorkloadFacts
from imagelint.lazyre import lazy_pattern

TEMPLATE_KINDS = (DEPLOYMENTS, STATEFUL_SETS, DAEMON_SETS, JOBS, CRON_JOBS, *GPU_WORKLOAD_KINDS)
MAX_DEPTH = 40  # of one object's JSON tree (the YAML loader bounds manifests the same way)
_DIGEST = lazy_pattern(r"sha256:[0-9a-f]{64}")
_CRONJOB_SUFFIX = lazy_pattern(r"-\d{6,}$")  # a CronJob's Job: NAME-<scheduled minutes since epoch>


@dataclass(frozen=True)
class WorkloadContainer:
    """One container of one workload as the cluster runs (or would run) it."""

    namespace: str
    owner_kind: str  # Deployment, StatefulSet, Job, CronJob, RayCluster... or Pod for a bare pod
    owner_name: str
    container: str
    image: str  # the reference in the pod spec
    scheduling: WorkloadFacts  # nodeSelector, affinity, tolerations, GPU requests (pod_facts)
    image_digest: str | None = None  # sha256:... the kubelet pulled, when the pod runs
    pullable: str | None = None  # repo@sha256:... from the imageID, when it names one
    node: str | None = None  # the node the pod is bound to
    pod: str | None = None  # None: from a template
    pull_secrets: tuple[str, ...] = ()  # imagePullSecrets names (read only with --use-pull-secrets)

    @property
    def owner(self) -> str:
        return f"{self.owner_kind}/{self.owner_name}"


def parse_image_id(image_id: Any) -> tuple[str | None, str | None]:
    """``status.containerStatuses[].imageID`` → (``sha256:...``, ``repo@sha256:...`` or None).

    containerd reports ``repo@sha256:<manifest or index digest>``, Docker
    ``docker-pullable://repo@sha256:...``; a bare ``sha256:...`` is the image *config* ID (an image
    loaded locally, never pulled) and names no manifest: the reference is used instead.
    """
    if not isinstance(image_id, str) or not image_id:
        return None, None
    text = image_id.split("://", 1)[1] if "://" in image_id else image_id
    repo, sep, digest = text.rpartition("@")
    if sep and repo and _DIGEST.fullmatch(digest):
        return digest, f"{repo}@{digest}"
    return None, None


def to_line_tree(value: Any, depth: int = 0) -> Any:
    """A JSON object as the YAML loader's LineDict/LineList tree (line 0: no file), so that
    ``find_pod_specs`` / ``pod_facts`` read cluster objects exactly as they read manifests."""
    from imagelint.static.yamlsafe import LineDict, LineList

    if depth > MAX_DEPTH:
        raise ValueError("object nested too deep")
    if isinstance(value, dict):  # parsed JSON: dicts and lists only (faster than the ABC checks)
        return LineDict((str(k), to_line_tree(v, depth + 1)) for k, v in value.items())
    if isinstance(value, list):
        out = LineList(to_line_tree(v, depth + 1) for v in value)
        out.item_lines = [0] * len(out)
        return out
    return value


def _pod_specs(obj: Mapping[str, Any], resource: Resource) -> list[Any]:
    from imagelint.static.podspecs import find_pod_specs

    # List items carry no apiVersion/kind; find_pod_specs needs the object's real kind ("Pod").
    # Only what it reads is converted: the spec and the object's name and annotations, not the
    # status or managedFields (most of a pod's bytes).
    kind = "Pod" if resource is PODS else resource.kind
    meta = obj.get("metadata") or {}
    slim_meta = {k: meta[k] for k in ("name", "generateName", "namespace", "annotations") if k in meta}
    tree = to_line_tree({"apiVersion": resource.api_version, "kind": kind, "metadata": slim_meta, "spec": obj.get("spec")})
    return list(find_pod_specs(tree))


def _containers_of(spec_at: Any, source: str) -> list[WorkloadFacts]:
    from imagelint.static.kubernetes import pod_facts

    return [f.workload for f in pod_facts(spec_at, source) if f.workload is not None]


def _images(spec: Mapping[str, Any]) -> dict[str, str]:
    """container name → image, init containers included."""
    out: dict[str, str] = {}
    for group in ("initContainers", "containers"):
        for c in spec.get(group) or ():
            if isinstance(c, Mapping) and isinstance(c.get("name"), str) and isinstance(c.get("image"), str):
                out[c["name"]] = c["image"]
    return out


def _pull_secrets(spec: Mapping[str, Any]) -> tuple[str, ...]:
    items = spec.get("imagePullSecrets")
    if not isinstance(items, list):
        return ()
    return tuple(str(i["name"]) for i in items if isinstance(i, Mapping) and isinstance(i.get("name"), str))


def _owner(pod: PodInfo, cronjobs: set[tuple[str, str]], namespace: str) -> tuple[str, str]:
    """The controller a pod belongs to, as users name it."""
    kind, name = pod.owner_kind, pod.owner_name
    template_hash = pod.labels.get("pod-template-hash", "")
    if kind == "ReplicaSet" and template_hash and name.endswith(f"-{template_hash}"):
        return "Deployment", name[: -len(template_hash) - 1]
    if kind == "Job" and _CRONJOB_SUFFIX.search(name):
        parent = _CRONJOB_SUFFIX.sub("", name)
        if (namespace, parent) in cronjobs:
            return "CronJob", parent
    if kind and name:
        return kind, name
    return "Pod", pod.name


class _SpecMemo:
    """The pods of one ReplicaSet / StatefulSet / Job share one spec but for ``nodeName``: their
    containers' scheduling is read once (bounded: a cluster of all-different pods costs no more)."""

    MAX = 4096

    def __init__(self) -> None:
        self._seen: dict[str, list[WorkloadFacts]] = {}

    def containers(self, pod: PodInfo, namespace: str, owner: str) -> list[WorkloadFacts]:
        spec = {k: v for k, v in pod.spec.items() if k != "nodeName"}
        key = json.dumps([namespace, owner, spec], sort_keys=True, default=str)
        found = self._seen.get(key)
        if found is None:
            found = [w for spec_at in _pod_specs({"metadata": {"name": pod.name, "namespace": namespace}, "spec": spec}, PODS)
                     for w in _containers_of(spec_at, f"pods of {owner} in {namespace}")]
            if len(self._seen) < self.MAX:
                self._seen[key] = found
        return found


def _pod_containers(pod: PodInfo, cronjobs: set[tuple[str, str]], memo: _SpecMemo | None = None) -> list[WorkloadContainer]:
    if pod.phase in ("Succeeded", "Failed"):
        return []  # finished pods run nothing; their owner's template is read instead
    namespace = pod.namespace or "default"
    owner_kind, owner_name = _owner(pod, cronjobs, namespace)
    digests = {c.name: parse_image_id(c.image_id) for c in pod.containers}
    images = _images(pod.spec)
    out = []
    for w in (memo or _SpecMemo()).containers(pod, namespace, f"{owner_kind}/{owner_name}"):
        image = images.get(w.container)
        if not image:
            continue
        digest, pullable = digests.get(w.container, (None, None))
        out.append(WorkloadContainer(
            namespace=namespace, owner_kind=owner_kind, owner_name=owner_name, container=w.container,
            image=image, scheduling=w, image_digest=digest, pullable=pullable, node=pod.node or None, pod=pod.name,
            pull_secrets=_pull_secrets(pod.spec),
        ))
    return out


def _template_containers(obj: Mapping[str, Any], resource: Resource) -> list[WorkloadContainer]:
    meta = obj.get("metadata") or {}
    namespace = str(meta.get("namespace") or "default")
    name = str(meta["name"])
    refs = meta.get("ownerReferences")
    read_kinds = {r.kind for r in TEMPLATE_KINDS}
    if isinstance(refs, list) and any(isinstance(r, Mapping) and r.get("controller") and r.get("kind") in read_kinds
                                      for r in refs):
        return []  # made by a controller whose template is read too (a CronJob's Job, a RayJob's RayCluster)
    out = []
    for spec_at in _pod_specs(obj, resource):
        images = _images(spec_at.spec)
        for w in _containers_of(spec_at, f"{resource.kind} {namespace}/{name}"):
            image = images.get(w.container)
            if image:
                out.append(WorkloadContainer(
                    namespace=namespace, owner_kind=resource.kind, owner_name=name, container=w.container,
                    image=image, scheduling=w, pull_secrets=_pull_secrets(spec_at.spec),
                ))
    return out


def read_workload_containers(
    conn: Connection, namespace: str | None, label_selector: str | None, warnings: list[str]
) -> tuple[WorkloadContainer, ...]:
    """Every container the pods and workload templates in ``namespace`` (None: all) run."""
    templates: list[WorkloadContainer] = []
    cronjobs: set[tuple[str, str]] = set()
    for resource in TEMPLATE_KINDS:
        listing = conn.list_objects(resource, namespace, label_selector=label_selector, optional=True)
        if not listing.checked:
            if listing.refused == 403:
                warnings.append(f"cannot list {resource.kinds} ({status_text(403)}); their templates not audited")
            continue
        for obj in listing.items:
            try:
                if resource is CRON_JOBS:
                    meta = obj.get("metadata") or {}
                    cronjobs.add((str(meta.get("namespace") or "default"), str(meta["name"])))
                templates.extend(_template_containers(obj, resource))
            except MALFORMED as exc:
                warnings.append(f"{resource.kind} {_name(obj)}: not an object imagelint understands "
                                f"({exc.__class__.__name__}); ignored")
    running: list[WorkloadContainer] = []
    memo = _SpecMemo()
    # Pods are required (the audit is about what runs); each is read by the doctor's pod reader.
    for obj in conn.list_objects(PODS, namespace, label_selector=label_selector).items:
        try:
            pod = pod_from_object(obj)
            if pod is None:
                raise ValueError("no name")
            running.extend(_pod_containers(pod, cronjobs, memo))
        except MALFORMED as exc:
            warnings.append(f"pod {_name(obj)}: not an object imagelint understands ({exc.__class__.__name__}); ignored")
    covered = {(c.namespace, c.owner, c.container, c.image) for c in running}
    kept = [c for c in templates if (c.namespace, c.owner, c.container, c.image) not in covered]
    return tuple(running + kept)


def _name(obj: Any) -> str:
    meta = obj.get("metadata") if isinstance(obj, Mapping) else None
    if not isinstance(meta, Mapping):
        return "?"
    return f"{meta.get('namespace') or '-'}/{meta.get('name') or '?'}"


__all__ = ["TEMPLATE_KINDS", "WorkloadContainer", "parse_image_id", "read_workload_containers", "to_line_tree"]
