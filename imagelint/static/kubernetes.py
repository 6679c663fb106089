"""Kubernetes manifests → one ``ImageFacts`` (kind ``manifest``) per container, with line numbers.

Pod specs are found wherever they live (``imagelint.static.podspecs``: Pods, controllers, CronJobs,
Ray, Kubeflow, JobSet, LeaderWorkerSet, Volcano, KServe, Argo templates, custom controllers, items
of a ``List``); documents without ``apiVersion``/``kind`` are not Kubernetes objects and are
skipped, and objects in which no pod spec is found are named in a note unless their kind is
known to hold none. DRA objects (``imagelint.static.dra``) are returned for the run to resolve
claims across files.

The container's env, command and args feed the same rules as an image's config
(IL301, IL302...); its ``image:`` is kept for the base-image table; the pod's scheduling (GPU
resources, DRA claims, CDI annotations, nodeSelector, required node affinity, tolerations,
runtimeClassName) goes into ``WorkloadFacts`` for the IL60x rules. The annotation
``imagelint.io/ignore: "IL602: reason"`` on the object or its pod template becomes the
``io.imagelint.ignore`` label that the engine already honours for images.
"""

from __future__ import annotations

from collections.abc import Callable, Container, Iterator, Sequence
from dataclasses import dataclass
from types import MappingProxyType
from typing import Any

from imagelint.facts.model import (
    BaseImageFacts,
    CudaFacts,
    EnvSetting,
    GpuFacts,
    GpuIndexSetting,
    ImageFacts,
    LoaderFacts,
    LoaderPathEntry,
    Provenance,
)
from imagelint.facts.static_model import (
    NodeSelectorRequirement,
    PodClaim,
    ResourceAmount,
    Toleration,
    WorkloadFacts,
)
from imagelint.lazyre import lazy_pattern
from imagelint.static.podspecs import (
    PodSpecAt,
    find_pod_specs,
    object_name,
    privileged_by,
)
from imagelint.static.yamlsafe import (
    LineDict,
    LineList,
    iter_documents,
    may_hold_anchors,
)

IGNORE_ANNOTATION = "imagelint.io/ignore"
IGNORE_LABEL = "io.imagelint.ignore"  # what the engine reads for in-image suppressions
GPU_RESOURCE_PREFIX = "nvidia.com/"

CommandScanner = Callable[[Sequence[str], Provenance], Sequence[GpuIndexSetting]]


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


def _resources(container: Any, where: str, source: str) -> tuple[ResourceAmount, ...]:
    res = container.get("resources") if isinstance(container, dict) else None
    if not isinstance(res, dict):
        return ()
    requests = requests if isinstance(requests := res.get("requests"), dict) else {}
    limits = limits if isinstance(limits := res.get("limits"), dict) else {}
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
                values = values if isinstance(values := expr.get("values"), list) else []
                reqs.append(NodeSelectorRequirement(str(expr["key"]), str(expr.get("operator") or "In"),
                                                    tuple(str(v) for v in values)))
        out.append(tuple(reqs))
    return tuple(out)


def _command_line(container: LineDict, key: str) -> tuple[str, ...] | None:
    value = container.get(key)
    if isinstance(value, list):
        return tuple(str(v) for v in value)
    return None


def _pod_claims(entries: Any, source: str, where: str) -> tuple[PodClaim, ...]:
    out = []
    for j, item in enumerate(entries if isinstance(entries, list) else ()):
        if not isinstance(item, dict) or not item.get("name"):
            continue
        src = src if isinstance(src := item.get("source"), dict) else item  # v1alpha2 nested form
        template = src.get("resourceClaimTemplateName")
        claim = src.get("resourceClaimName")
        line = entries.line_of(j) if isinstance(entries, LineList) else None
        out.append(PodClaim(
            name=str(item["name"]),
            template=str(template) if template else None,
            claim=str(claim) if claim else None,
            provenance=Provenance(kind="manifest", source=source, line=line, key=f"{where}.resourceClaims[{j}]"),
        ))
    return tuple(out)


def _container_claims(container: Any) -> tuple[str, ...]:
    items = _get(container, "resources", "claims")
    return tuple(str(c["name"]) for c in items or () if isinstance(c, dict) and c.get("name")) if isinstance(items, list) else ()


_CDI_ANNOTATION = lazy_pattern(r"(?:^|\.)cdi\.k8s\.io/")


def _cdi_devices(annotations: Sequence[tuple[str, str]]) -> tuple[str, ...]:
    """Devices requested through CDI annotations (``cdi.k8s.io/<x>: nvidia.com/gpu=all``)."""
    out: list[str] = []
    for key, value in annotations:
        if _CDI_ANNOTATION.search(key):
            out.extend(v.strip() for v in value.split(",") if "=" in v and v.strip())
    return tuple(dict.fromkeys(out))


def _containers(pod: PodSpecAt) -> list[tuple[str, LineDict, bool]]:
    """(locator, container, init) of every container of a pod spec, in the order of its facts."""
    containers: list[tuple[str, LineDict, bool]] = []
    for group, is_init in (("initContainers", True), ("containers", False)):
        items = pod.spec.get(group)
        if isinstance(items, LineList):
            for i, c in enumerate(items):
                if isinstance(c, LineDict):
                    containers.append((f"{pod.path}.{group}[{i}]" if pod.path else f"{group}[{i}]", c, is_init))
    containers.extend((where, c, False) for where, c in pod.extra_containers)
    return containers


def _container_name(where: str, c: LineDict) -> str:
    return str(c.get("name") or where.rsplit(".", 1)[-1])


def _subject(source: str, kind: str, name: str, where: str, c: LineDict) -> str:
    return f"{source}:{c.line} {kind}/{name} container {_container_name(where, c)}"


def pod_facts(pod: PodSpecAt, source: str, scan_command: CommandScanner | None = None) -> list[ImageFacts]:
    """One ImageFacts per container (init containers included) of a pod spec."""
    spec = pod.spec
    containers = _containers(pod)
    all_resources = {where: _resources(c, where, source) for where, c, _ in containers}
    all_claims = {where: _container_claims(c) for where, c, _ in containers}
    pod_resources = tuple(dict.fromkeys(r.name for rs in all_resources.values() for r in rs))
    primary_key = next((k for k, rs in all_resources.items() if rs), None) or next(
        (k for k, cl in all_claims.items() if cl), None)
    if primary_key is None and containers:
        primary_key = next((w for w, _, init in containers if not init), containers[0][0])
    claims_at = spec if "resourceClaims" in spec or pod.inherited_claims is None else None
    pod_claims = _pod_claims(spec.get("resourceClaims") if claims_at is not None else pod.inherited_claims,
                             source, pod.path if claims_at is not None else "spec")
    cdi = _cdi_devices(pod.template_annotations)
    node_selector = node_selector if isinstance(node_selector := spec.get("nodeSelector"), dict) else {}
    sched_key = next((k for k in ("nodeSelector", "affinity", "tolerations", "runtimeClassName") if k in spec), None)
    sched_prov = Provenance(kind="manifest", source=source, line=_line(spec, sched_key) if sched_key else _line(spec),
                            key=_join(pod.path, sched_key) if sched_key else pod.path)
    labels = MappingProxyType({IGNORE_LABEL: ",".join(pod.annotations)} if pod.annotations else {})
    out = []
    for where, c, is_init in containers:
        cname = _container_name(where, c)
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
        argvs = [("command", entrypoint), ("args", cmd)]
        if isinstance(c.get("source"), str):  # Argo script template
            argvs.append(("source", ("sh", "-c", str(c["source"]))))
        for key, argv in argvs:
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
        why_privileged = privileged_by(c)
        privileged = Provenance(kind="manifest", source=source, line=_line(c, "securityContext"),
                                key=f"{where}.securityContext ({why_privileged})") if why_privileged else None
        workload = WorkloadFacts(
            kind=pod.kind,
            name=pod.name,
            namespace=pod.namespace,
            container=cname,
            init_container=is_init,
            primary=where == primary_key,
            resources=all_resources[where],
            pod_resources=pod_resources,
            node_selector=MappingProxyType({str(k): str(v) for k, v in node_selector.items()}),
            affinity_terms=_affinity_terms(spec),
            tolerations=_tolerations(spec),
            runtime_class_name=str(spec["runtimeClassName"]) if spec.get("runtimeClassName") else None,
            provenance=Provenance(kind="manifest", source=source, line=c.line, key=where),
            scheduling_provenance=sched_prov,
            shape=pod.shape,
            pod_path=pod.path,
            pod_claims=pod_claims,
            claims=all_claims[where],
            cdi_devices=cdi,
            privileged=privileged,
        )
        image = c.get("image")
        base = BaseImageFacts(name=str(image), provenance=(Provenance(
            kind="manifest", source=source, line=_line(c, "image"), key=f"{where}.image"),)) if image else BaseImageFacts()
        out.append(ImageFacts(
            subject=_subject(source, pod.kind, pod.name, where, c),
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
            base=base,
            complete=False,
            workload=workload,
        ))
    return out


def _join(prefix: str, key: str) -> str:
    return f"{prefix}.{key}" if prefix else key


def container_images(docs: Sequence[Any]) -> list[str]:
    """The images the workloads in ``docs`` run (for ``lint --image`` defaults and reports)."""
    seen: dict[str, None] = {}
    for doc in docs:
        for pod in find_pod_specs(doc):
            containers = [c for g in ("initContainers", "containers") for c in (pod.spec.get(g) or ())]
            containers += [c for _, c in pod.extra_containers]
            for c in containers:
                if isinstance(c, dict) and c.get("image"):
                    seen.setdefault(str(c["image"]), None)
    return list(seen)


@dataclass(frozen=True)
class ManifestRead:
    """What one manifest file gave: container facts, DRA objects, and notes on what was not read."""

    facts: tuple[ImageFacts, ...]
    dra_objects: tuple[Any, ...] = ()
    notes: tuple[str, ...] = ()
    objects: int = 0  # Kubernetes objects (documents with apiVersion and kind) in the file


_NAMED_IN_NOTE = 5  # objects a note names before it says "and N more"


@dataclass(frozen=True)
class PodShape:
    """What ``ManifestStream(shapes=...)`` gives before a pod's facts, or instead of them.

    ``key`` is the pod's document as text but for its ``metadata.name`` (and its lines), and the
    pod's place in it; ``subjects`` are its containers' subjects, in the order of their facts.
    ``repeat``: ``shapes`` holds ``key`` (a pod of this shape was judged and nothing was said about
    the pod itself), so no facts follow; else the facts of ``len(subjects)`` containers follow.
    """

    key: str
    subjects: tuple[str, ...]
    repeat: bool


class ManifestStream:
    """A (multi-document) manifest file read document by document.

    Iterating yields the facts of every container of every workload as its document is parsed,
    and keeps none of them: a stream of 60,000 pods is judged pod by pod in the memory of one.
    What only the whole file tells is known once the iteration has ended: ``dra_objects`` (the
    run resolves claims across files with them), ``objects`` (Kubernetes objects counted) and
    ``notes`` (objects in which no pod spec imagelint knows was found, classic DRA, managed DRA).

    ``shapes``: the judge's clean shapes (``PodShape.key``). With them, ``items()`` gives each
    pod's ``PodShape`` too, and a pod that repeats a clean shape as a ``PodShape`` alone: its
    facts are not made (a generated stream of 60,000 pods holds a handful of shapes). Only pods
    of a document that is not a List, in a text without anchors, whose claims are judged at once
    (no ``resourceClaims``) have a shape.
    """

    def __init__(self, text: str, source: str, scan_command: CommandScanner | None = None,
                 shapes: Container[str] | None = None) -> None:
        self.text, self.source, self.scan_command = text, source, scan_command
        self.shapes = shapes
        self.dra_objects: list[Any] = []
        self.objects = 0
        self._not_understood: list[str] = []  # the first _NAMED_IN_NOTE, counted in _not_understood_count
        self._not_understood_count = 0
        self._managed_dra: list[str] = []
        self._classic: list[str] = []
        # A document's text but for its name -> its pods' (PodShape.key, (locator, route to the
        # container) of each container), for a document that holds pods and nothing else to note.
        self._documents: dict[str, tuple[tuple[str, tuple[tuple[str, tuple[Any, ...]], ...]], ...]] = {}

    def __iter__(self) -> Iterator[ImageFacts]:
        for item in self.items():
            if isinstance(item, ImageFacts):  # no PodShape without ``shapes``
                yield item

    def items(self) -> Iterator[ImageFacts | PodShape]:
        from imagelint.static.dra import dra_object
        from imagelint.static.podspecs import carries_no_pods

        shapes = self.shapes
        if shapes is not None and may_hold_anchors(self.text):
            shapes = None  # an alias may share (or loop) a node: the text of a document is no key
        for doc in iter_documents(self.text, self.source):
            if not isinstance(doc, dict) or not doc.get("kind"):
                continue
            self.objects += 1
            shape = _unnamed_text(doc) if shapes is not None else None
            if shape is not None:
                assert shapes is not None  # a shape is made only with them
                pods = self._documents.get(shape)
                if pods is not None and all(key in shapes for key, _ in pods):
                    repeated = self._repeat(doc, pods)
                    if repeated is not None:
                        yield from repeated
                        continue
            found = False
            # Its pods' keys and routes, while the document may still be remembered.
            keys: list[tuple[str, tuple[tuple[str, tuple[Any, ...]], ...]]] | None = \
                [] if shape is not None and len(self._documents) < MAX_DOCUMENT_SHAPES else None
            for pod in find_pod_specs(doc):
                found = True
                if shape is None or "resourceClaims" in pod.spec or pod.inherited_claims is not None:
                    keys = None
                    yield from pod_facts(pod, self.source, self.scan_command)
                    continue
                assert shapes is not None  # a shape is made only with them
                key = f"{pod.path}\0{shape}"
                containers = _containers(pod)
                subjects = tuple(_subject(self.source, pod.kind, pod.name, where, c) for where, c, _ in containers)
                repeat = key in shapes
                yield PodShape(key, subjects, repeat)
                if not repeat:
                    yield from pod_facts(pod, self.source, self.scan_command)
                if keys is not None:
                    routes = _routes(doc, [c for _, c, _ in containers])
                    keys = None if routes is None else [*keys, (key, tuple(zip([w for w, _, _ in containers], routes)))]
            meta = meta if isinstance(meta := doc.get("metadata"), dict) else {}
            ann = ann if isinstance(ann := meta.get("annotations"), dict) else {}
            managed = next((str(v) for k, v in ann.items() if str(k).endswith("/exp-dra-device-class")), None)
            if managed:  # KServe "managed DRA": the controller creates the claims, not this file
                self._managed_dra.append(f"{doc.get('kind')}/{meta.get('name') or '<unnamed>'} (DeviceClass {managed})")
            obj = dra_object(doc, self.source)
            classic = str(doc.get("apiVersion") or "").startswith("resource.k8s.io/v1alpha")
            if classic and len(self._classic) < _NAMED_IN_NOTE:
                self._classic.append(f"{doc.get('kind')}/{meta.get('name') or '<unnamed>'}")
            if shape is not None and keys and not (managed or classic or obj is not None):
                self._documents[shape] = tuple(keys)  # a document whose every pod has a shape: nothing else to note
            if obj is not None:
                self.dra_objects.append(obj)
                continue
            if not found and doc.get("apiVersion"):
                kind, api = str(doc["kind"]), str(doc["apiVersion"])
                if not kind.endswith("List") and not carries_no_pods(api, kind):
                    self._not_understood_count += 1
                    if len(self._not_understood) < _NAMED_IN_NOTE:
                        self._not_understood.append(f"{kind}/{object_name(meta)} (line {_line(doc)})")

    def _repeat(self, doc: dict, pods: tuple[tuple[str, tuple[tuple[str, tuple[Any, ...]], ...]], ...]
                ) -> list[PodShape] | None:
        """The PodShapes of a document that repeats an earlier one's text but for its name, each
        container found where it was in that one; None if one is not there (equal texts have equal keys,
        so none is known: then its pods are read as any other)."""
        kind = str(doc["kind"])
        name = object_name(meta if isinstance(meta := doc.get("metadata"), dict) else {})
        out = []
        for key, containers in pods:
            subjects = []
            for where, route in containers:
                c = _at(doc, route)
                if not isinstance(c, LineDict):
                    return None
                subjects.append(_subject(self.source, kind, name, where, c))
            out.append(PodShape(key, tuple(subjects), True))
        return out

    @property
    def notes(self) -> tuple[str, ...]:
        notes: tuple[str, ...] = ()
        if self._not_understood:
            more = self._not_understood_count - len(self._not_understood)
            shown = ", ".join(self._not_understood) + (f" and {more} more" if more else "")
            notes = (f"{self.source}: no pod template found in {shown}; these objects were not linted "
                     "(if they run GPU pods, lint the pods they create, e.g. from `kubectl get pod -o yaml`)",)
        if self._classic:
            notes = notes + (f"{self.source}: {', '.join(self._classic)} use resource.k8s.io/v1alpha* (classic DRA, "
                             "withdrawn: Kubernetes 1.31+ serves resource.k8s.io/v1beta1 and later, v1 from 1.34); "
                             "applying them fails, rewrite them for structured parameters",)
        if self._managed_dra:
            notes = notes + (f"{self.source}: {', '.join(self._managed_dra)} request GPUs through claims the KServe "
                             "controller creates (managed DRA); those claims are not in this file, so their devices "
                             "were not checked",)
        return notes


# Documents a stream remembers the pods of (``ManifestStream._documents``).
MAX_DOCUMENT_SHAPES = 1024


def _routes(doc: Any, containers: Sequence[LineDict]) -> list[tuple[Any, ...]] | None:
    """The keys and indexes that lead from ``doc`` to each container (found by identity, in one
    walk), or None when one is not in it (a copy: an Argo template's container named by it)."""
    wanted = {id(c): i for i, c in enumerate(containers)}
    routes: list[tuple[Any, ...] | None] = [None] * len(containers)
    stack: list[tuple[Any, tuple[Any, ...]]] = [(doc, ())]
    left = len(wanted)
    while stack and left:
        node, route = stack.pop()
        i = wanted.get(id(node))
        if i is not None and routes[i] is None:
            routes[i] = route
            left -= 1
        if isinstance(node, dict):
            stack.extend((v, (*route, k)) for k, v in node.items() if isinstance(v, (dict, list)))
        elif isinstance(node, list):
            stack.extend((v, (*route, j)) for j, v in enumerate(node) if isinstance(v, (dict, list)))
    if any(r is None for r in routes):
        return None
    return routes  # type: ignore[return-value]  # none is None


def _at(doc: Any, route: tuple[Any, ...]) -> Any:
    """What ``route`` leads to in ``doc``, or None."""
    node = doc
    for step in route:
        if isinstance(node, dict):
            node = node.get(step)
        elif isinstance(node, list) and isinstance(step, int) and 0 <= step < len(node):
            node = node[step]
        else:
            return None
    return node


def _unnamed_text(doc: dict) -> str | None:
    """The text of a document but for its ``metadata.name``: two documents with one text make the
    same facts but for their subjects and lines. None for a List (its pods have their own names)."""
    if str(doc.get("kind")).endswith("List") and isinstance(doc.get("items"), list):
        return None
    meta = doc.get("metadata")
    if isinstance(meta, dict) and "name" in meta:
        doc = {**doc, "metadata": {k: v for k, v in meta.items() if k != "name"}}
    return repr(doc)  # every type a safe YAML loader makes has a repr that tells values apart


def read_manifest(text: str, source: str, scan_command: CommandScanner | None = None) -> ManifestRead:
    """Facts for every container of every workload in a (multi-document) manifest file, the DRA
    objects it defines, and a note naming objects in which no pod spec imagelint knows was found
    (every fact at once: ``ManifestStream`` gives them document by document)."""
    stream = ManifestStream(text, source, scan_command)
    facts = tuple(stream)
    return ManifestRead(facts, tuple(stream.dra_objects), stream.notes, stream.objects)


def manifest_facts(text: str, source: str, scan_command: CommandScanner | None = None) -> list[ImageFacts]:
    """Facts for every container of every workload in a (multi-document) manifest file."""
    return list(read_manifest(text, source, scan_command).facts)
_JSON_API = lazy_pattern(r'"apiVersion"\s*:')
_JSON_KIND = lazy_pattern(r'"kind"\s*:')


def looks_like_kubernetes(text: str) -> bool:
    """A cheap content test for detection: some document has apiVersion and kind at top level
    (YAML block style, or a JSON object)."""
    if text.lstrip().startswith(("{", "[")):
        return bool(_JSON_API.search(text) and _JSON_KIND.search(text))
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
