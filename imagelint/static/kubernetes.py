"""Kubernetes manifests → one ``ImageFacts`` (kind ``manifest``) per container, with line numbers.

Workloads are found wherever a pod spec lives: ``Pod`` (``spec``), the
controllers with a pod template (``Deployment``, ``StatefulSet``, ``DaemonSet``,
``ReplicaSet``, ``ReplicationController``, ``Job``: ``spec.template.spec``),
``CronJob`` (``spec.jobTemplate.spec.template.spec``), ``PodTemplate``
(``template.spec``), items of a ``List``, and any other kind whose
``spec.template.spec`` has containers (custom controllers). Documents without
``apiVersion``/``kind`` are not Kubernetes objects and are skipped.

The container's env, command and args feed the same rules as an image's config
(IL301, IL302...); the pod's scheduling (GPU resources, nodeSelector, required
node affinity, tolerations, runtimeClassName) goes into ``WorkloadFacts`` for
the IL60x rules. The annotation ``imagelint.io/ignore: "IL602: reason"`` on the
object or its pod template becomes the ``io.imagelint.ignore`` label that the
engine already honours for images.
"""

from __future__ import annotations

from dataclasses import dataclass
from types import MappingProxyType
from typing import Any, Callable, Iterator, Sequence

from imagelint.facts.model import (
    CudaFacts,
    EnvSetting,
    GpuFacts,
    GpuIndexSetting,
    ImageFacts,
    LoaderFacts,
    LoaderPathEntry,
    NodeSelectorRequirement,
    Provenance,
    ResourceAmount,
    Toleration,
    WorkloadFacts,
)
from imagelint.static.yamlsafe import LineDict, LineList, load_documents

IGNORE_ANNOTATION = "imagelint.io/ignore"
IGNORE_LABEL = "io.imagelint.ignore"  # what the engine reads for in-image suppressions
GPU_RESOURCE_PREFIX = "nvidia.com/"
_TEMPLATE_KINDS = frozenset({"Deployment", "StatefulSet", "DaemonSet", "ReplicaSet", "ReplicationController", "Job"})
MAX_LIST_DEPTH = 4

CommandScanner = Callable[[Sequence[str], Provenance], Sequence[GpuIndexSetting]]


@dataclass(frozen=True)
class PodSpecAt:
    """A pod spec found in a document: the owning object and where the spec sits."""

    kind: str
    name: str
    namespace: str | None
    spec: LineDict
    path: str                # JSON-path-like locator of the spec, e.g. ``spec.template.spec``
    annotations: tuple[str, ...]  # imagelint.io/ignore values (object, then template)


def _line(obj: Any, key: Any = None) -> int | None:
    if isinstance(obj, (LineDict, LineList)):
        return obj.line_of(key) if key is not None else obj.line
    return None


def _get(obj: Any, *keys: str) -> Any:
    for key in keys:
        if not isinstance(obj, dict):
            return None
        obj = obj.get(key)
    return obj


def _ignore_annotation(meta: Any) -> list[str]:
    value = _get(meta, "annotations", IGNORE_ANNOTATION)
    return [str(value)] if value else []


def find_pod_specs(doc: Any, depth: int = 0) -> Iterator[PodSpecAt]:
    """Every pod spec in one YAML document (a ``List`` recurses into its items)."""
    if not isinstance(doc, LineDict) or not doc.get("apiVersion") or not doc.get("kind"):
        return
    kind = str(doc["kind"])
    meta = doc.get("metadata") if isinstance(doc.get("metadata"), dict) else {}
    name = str(meta.get("name") or meta.get("generateName") or "<unnamed>")
    namespace = str(meta["namespace"]) if meta.get("namespace") else None
    annotations = _ignore_annotation(meta)
    if kind.endswith("List") and isinstance(doc.get("items"), list):
        if depth < MAX_LIST_DEPTH:
            for item in doc["items"]:
                yield from find_pod_specs(item, depth + 1)
        return
    candidates: list[tuple[str, Any, Any]] = []
    if kind == "Pod":
        candidates.append(("spec", doc.get("spec"), None))
    elif kind == "CronJob":
        tpl = _get(doc, "spec", "jobTemplate", "spec", "template")
        candidates.append(("spec.jobTemplate.spec.template.spec", _get(tpl, "spec"), _get(tpl, "metadata")))
    elif kind == "PodTemplate":
        candidates.append(("template.spec", _get(doc, "template", "spec"), _get(doc, "template", "metadata")))
    else:
        tpl = _get(doc, "spec", "template")
        spec = _get(tpl, "spec")
        if kind in _TEMPLATE_KINDS or (isinstance(spec, dict) and isinstance(spec.get("containers"), list)):
            candidates.append(("spec.template.spec", spec, _get(tpl, "metadata")))
    for path, spec, tpl_meta in candidates:
        if isinstance(spec, LineDict):
            yield PodSpecAt(kind, name, namespace, spec, path, tuple(annotations + _ignore_annotation(tpl_meta)))


def _resources(container: Any, where: str, source: str) -> tuple[ResourceAmount, ...]:
    res = container.get("resources") if isinstance(container, dict) else None
    if not isinstance(res, dict):
        return ()
    requests = res.get("requests") if isinstance(res.get("requests"), dict) else {}
    limits = res.get("limits") if isinstance(res.get("limits"), dict) else {}
    names = [n for n in list(requests) + list(limits) if isinstance(n, str) and n.startswith(GPU_RESOURCE_PREFIX)]
    out = []
    for n in dict.fromkeys(names):
        in_requests = n in requests
        holder = requests if in_requests else limits
        key = f"{where}.resources.{'requests' if in_requests else 'limits'}[{n}]"
        prov = Provenance(kind="manifest", source=source, line=_line(holder, n), key=key)
        req = requests.get(n)
        lim = limits.get(n)
        out.append(ResourceAmount(n, None if req is None else str(req), None if lim is None else str(lim), prov))
    return tuple(out)


def _tolerations(spec: LineDict) -> tuple[Toleration, ...]:
    out = []
    for t in spec.get("tolerations") or ():
        if isinstance(t, dict):
            out.append(Toleration(
                key=str(t["key"]) if t.get("key") not in (None, "") else None,
                operator=str(t.get("operator") or "Equal"),
                value=None if t.get("value") is None else str(t.get("value")),
                effect=str(t["effect"]) if t.get("effect") else None,
            ))
    return tuple(out)


def _affinity_terms(spec: LineDict) -> tuple[tuple[NodeSelectorRequirement, ...], ...]:
    terms = _get(spec, "affinity", "nodeAffinity", "requiredDuringSchedulingIgnoredDuringExecution", "nodeSelectorTerms")
    out = []
    for term in terms if isinstance(terms, list) else ():
        reqs = []
        for expr in (_get(term, "matchExpressions") or ()):
            if isinstance(expr, dict) and expr.get("key"):
                values = expr.get("values") if isinstance(expr.get("values"), list) else []
                reqs.append(NodeSelectorRequirement(str(expr["key"]), str(expr.get("operator") or "In"),
                                                    tuple(str(v) for v in values)))
        out.append(tuple(reqs))
    return tuple(out)


def _command_line(container: LineDict, key: str) -> tuple[str, ...] | None:
    value = container.get(key)
    if isinstance(value, list):
        return tuple(str(v) for v in value)
    return None


def pod_facts(pod: PodSpecAt, source: str, scan_command: CommandScanner | None = None) -> list[ImageFacts]:
    """One ImageFacts per container (init containers included) of a pod spec."""
    spec = pod.spec
    groups = [("initContainers", True), ("containers", False)]
    containers: list[tuple[str, int, LineDict, bool]] = []
    for group, is_init in groups:
        items = spec.get(group)
        if isinstance(items, LineList):
            for i, c in enumerate(items):
                if isinstance(c, LineDict):
                    containers.append((group, i, c, is_init))
    all_resources = {
        (group, i): _resources(c, f"{pod.path}.{group}[{i}]", source) for group, i, c, _ in containers
    }
    pod_resources = tuple(dict.fromkeys(r.name for rs in all_resources.values() for r in rs))
    primary_key = next((k for k, rs in all_resources.items() if rs), None)
    if primary_key is None and containers:
        primary_key = next(((g, i) for g, i, _, init in containers if not init), (containers[0][0], containers[0][1]))
    node_selector = spec.get("nodeSelector") if isinstance(spec.get("nodeSelector"), dict) else {}
    sched_key = next((k for k in ("nodeSelector", "affinity", "tolerations", "runtimeClassName") if k in spec), None)
    sched_prov = Provenance(kind="manifest", source=source, line=_line(spec, sched_key) if sched_key else _line(spec),
                            key=f"{pod.path}.{sched_key}" if sched_key else pod.path)
    labels = MappingProxyType({IGNORE_LABEL: ",".join(pod.annotations)} if pod.annotations else {})
    out = []
    for group, i, c, is_init in containers:
        where = f"{pod.path}.{group}[{i}]"
        cname = str(c.get("name") or f"{group}[{i}]")
        env: list[EnvSetting] = []
        env_list = c.get("env")
        if isinstance(env_list, LineList):
            for j, item in enumerate(env_list):
                if isinstance(item, dict) and item.get("name") and "value" in item:
                    value = item.get("value")
                    prov = Provenance(kind="manifest", source=source, line=env_list.line_of(j),
                                      key=f"{where}.env[{j}]")
                    env.append(EnvSetting(str(item["name"]), "" if value is None else str(value), prov))
        by_name = {e.name: e for e in env}
        entrypoint = _command_line(c, "command")
        cmd = _command_line(c, "args")
        settings: list[GpuIndexSetting] = []
        needs: list[tuple[str, Provenance]] = []
        for key, argv in (("command", entrypoint), ("args", cmd)):
            if not argv:
                continue
            prov = Provenance(kind="manifest", source=source, line=_line(c, key), key=f"{where}.{key}")
            if scan_command is not None:
                settings.extend(scan_command(argv, prov))
            # Comparable only when the container env fixes the capabilities (else the image's apply).
            if "NVIDIA_DRIVER_CAPABILITIES" in by_name:
                from imagelint.static.gpuscan import command_needs

                needs.extend(command_needs(argv, prov))
        ld = by_name.get("LD_LIBRARY_PATH")
        workload = WorkloadFacts(
            kind=pod.kind,
            name=pod.name,
            namespace=pod.namespace,
            container=cname,
            init_container=is_init,
            primary=(group, i) == primary_key,
            resources=all_resources[(group, i)],
            pod_resources=pod_resources,
            node_selector=MappingProxyType({str(k): str(v) for k, v in node_selector.items()}),
            affinity_terms=_affinity_terms(spec),
            tolerations=_tolerations(spec),
            runtime_class_name=str(spec["runtimeClassName"]) if spec.get("runtimeClassName") else None,
            provenance=Provenance(kind="manifest", source=source, line=c.line, key=where),
            scheduling_provenance=sched_prov,
        )
        out.append(ImageFacts(
            subject=f"{source}:{c.line} {pod.kind}/{pod.name} container {cname}",
            kind="manifest",
            env=tuple(env),
            entrypoint=entrypoint,
            cmd=cmd,
            working_dir=str(c.get("workingDir") or ""),
            labels=labels,
            cuda=CudaFacts(
                requires=tuple(e for e in env if e.name.startswith("NVIDIA_REQUIRE_")),
                cuda_version_env=by_name.get("CUDA_VERSION"),
                disable_require=by_name.get("NVIDIA_DISABLE_REQUIRE"),
                disable_requires_plural=by_name.get("NVIDIA_DISABLE_REQUIRES"),
            ),
            loader=LoaderFacts(ld_library_path=tuple(
                LoaderPathEntry(d, "LD_LIBRARY_PATH", ld.provenance) for d in ld.value.split(":") if d
            ) if ld else ()),
            gpu=GpuFacts(
                visible_devices=by_name.get("NVIDIA_VISIBLE_DEVICES"),
                cuda_visible_devices=by_name.get("CUDA_VISIBLE_DEVICES"),
                driver_capabilities=by_name.get("NVIDIA_DRIVER_CAPABILITIES"),
                index_settings=tuple(settings),
                needs_capabilities=tuple(needs),
            ),
            complete=False,
            workload=workload,
        ))
    return out


def container_images(docs: Sequence[Any]) -> list[str]:
    """The images the workloads in ``docs`` run (for ``lint --image`` defaults and reports)."""
    seen: dict[str, None] = {}
    for doc in docs:
        for pod in find_pod_specs(doc):
            for group in ("initContainers", "containers"):
                for c in pod.spec.get(group) or ():
                    if isinstance(c, dict) and c.get("image"):
                        seen.setdefault(str(c["image"]), None)
    return list(seen)


def manifest_facts(text: str, source: str, scan_command: CommandScanner | None = None) -> list[ImageFacts]:
    """Facts for every container of every workload in a (multi-document) manifest file."""
    out: list[ImageFacts] = []
    for doc in load_documents(text, source):
        for pod in find_pod_specs(doc):
            out.extend(pod_facts(pod, source, scan_command))
    return out


def looks_like_kubernetes(text: str) -> bool:
    """A cheap content test for detection: some document has apiVersion and kind at top level."""
    has_api = has_kind = False
    for line in text.splitlines()[:400]:
        if line.startswith("apiVersion:"):
            has_api = True
        elif line.startswith("kind:"):
            has_kind = True
        elif line.strip() == "---":
            if has_api and has_kind:
                return True
            has_api = has_kind = False
    return has_api and has_kind
