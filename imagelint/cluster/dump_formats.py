"""The dump shapes doctor reads, each into one :class:`~imagelint.cluster.dump.DumpSource`.

``read_dump(path)`` takes a file, a directory or ``-`` (stdin) and recognises:

* ``kubectl get nodes,pods,events,... -A -o yaml`` (or ``-o json``): one ``kind: List`` (or a
  typed ``PodList``...), or several YAML documents each an object or a list. A kind that is
  not among the items is "not in the dump" (kubectl writes nothing for a kind it found none of,
  so none and not-dumped look the same: doctor says which kinds it lacks).
* ``kubectl cluster-info dump`` with ``--output-directory``: ``nodes.json`` at the top, per
  namespace ``events``, ``replication-controllers``, ``services``, ``daemonsets``,
  ``deployments``, ``replicasets`` and ``pods`` (``.json``, or ``.yaml`` with ``-o yaml``), and
  ``NS/POD/logs.txt`` holding every container's current log between ``==== START logs for
  container C of pod NS/P ====`` and ``==== END ...`` lines. Only the namespaces dumped are held
  (kube-system and the context's one unless ``-A``): doctor says so. Without
  ``--output-directory`` the same lists are concatenated JSON objects on stdout, the log
  sections between them.
* the GPU Operator's must-gather directory (``hack/must-gather.sh``): ``gpu_operand_pods.yaml``
  and ``gpu_operator_pod.yaml`` (pods of the operator's namespace only), ``gpu_operand_ds.yaml``,
  ``cluster_policy.yaml`` (or ``cluster_policy.missing``), ``nvidiadrivers.yaml``, the GPU nodes as
  ``kubectl describe`` wrote them (``gpu_nodes.descr``) and each operand pod's log
  (``gpu_operand_pod_POD.log`` / ``.previous.log``, ``--all-containers --prefix --timestamps``).
* an ``imagelint target snapshot`` TOML: pools, not objects — doctor says every stage's input is
  not in it.

A directory is read as the union of every file in it that holds objects (so ``kubectl get
runtimeclasses,configmaps -A -o yaml > extra.yaml`` beside a cluster-info dump adds those kinds).
Every file is untrusted: one that cannot be parsed is a warning naming it, and a path with
nothing recognisable is a one-line error (exit 2).
"""

from __future__ import annotations

import json
import sys
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

from imagelint.cluster.dump import DumpSource
from imagelint.errors import UsageError
from imagelint.lazyre import lazy_pattern

MAX_DUMP_FILE = 2 * 2**30  # one file of a dump: larger is not read (untrusted input)
MAX_FILES = 100_000
_LOG_START = lazy_pattern(r"^==== START logs for container (\S+) of pod ([^/\s]+)/(\S+) ====$")
_LOG_END = "==== END logs for container "
# cluster-info dump's per-namespace files: name → kind of their items (the list carries its kind too)
CLUSTER_INFO_FILES = {
    "nodes": "Node", "events": "Event", "pods": "Pod", "daemonsets": "DaemonSet", "deployments": "Deployment",
    "replicasets": "ReplicaSet", "replication-controllers": "ReplicationController", "services": "Service",
}
_OPERAND_LOG = lazy_pattern(r"^gpu_operand_pod_(.+?)(\.previous)?\.log$")
_PREFIXED = lazy_pattern(r"^\[pod/([^/\]]+)/([^\]]+)\] (?:\d{4}-\d\d-\d\dT[\d:.]+Z )?(.*)$")


def read_dump(path: str) -> DumpSource:
    if path == "-":
        data = _read_bounded(sys.stdin.buffer, "<stdin>")
        source = DumpSource(server="dump <stdin>")
        _read_text(source, _decode(data, "<stdin>"), "<stdin>", strict=True)
        return _finished(source, "<stdin>")
    where = Path(path)
    if where.is_dir():
        source = DumpSource(server=f"dump {path}")
        _read_directory(source, where)
        return _finished(source, path)
    if not where.is_file():
        raise UsageError(f"--from {path}: no such file or directory")
    source = DumpSource(server=f"dump {path}")
    if where.suffix == ".toml":
        _read_target_snapshot(source, where)
    else:
        _read_text(source, _decode(_bounded(where), path), path, strict=True)
    return _finished(source, path)


def _finished(source: DumpSource, path: str) -> DumpSource:
    if not source.objects and not source.logs and not source.shapes:
        raise UsageError(f"--from {path}: no Kubernetes objects found (expected kubectl -o yaml/json output, "
                         "a cluster-info dump, a GPU Operator must-gather or a target snapshot)")
    return source


def _bounded(path: Path) -> bytes:
    # the size first: read(MAX + 1) would reserve MAX bytes up front, whatever the file's size
    if path.stat().st_size > MAX_DUMP_FILE:
        raise UsageError(f"--from {path}: larger than {MAX_DUMP_FILE // 2**30} GiB; not read")
    with path.open("rb") as handle:
        return _read_bounded(handle, str(path))


def _read_bounded(handle: Any, name: str) -> bytes:
    parts, total = [], 0
    while chunk := handle.read(1 << 20):
        parts.append(chunk)
        total += len(chunk)
        if total > MAX_DUMP_FILE:
            raise UsageError(f"--from {name}: larger than {MAX_DUMP_FILE // 2**30} GiB; not read")
    return b"".join(parts)


def _decode(data: bytes, name: str) -> str:
    return data.decode("utf-8", errors="replace")


# --- one file of objects -------------------------------------------------------------------


def _read_text(source: DumpSource, text: str, name: str, strict: bool = False, file_kind: str = "") -> bool:
    """Objects from YAML / JSON text (a list, an object, several documents, or cluster-info dump's
    concatenated stdout). Returns whether anything was recognised; ``strict``: unparseable is an error."""
    stripped = text.lstrip()
    found = False
    try:
        docs = _json_stream(source, stripped, name) if stripped.startswith("{") else _yaml_documents(text)
        for doc in docs:  # generators: one document's objects in memory at a time
            found = _add_document(source, doc, file_kind) or found
    except (ValueError, RecursionError, RuntimeError) as exc:  # RuntimeError: a document cut short (PEP 479)
        return _unreadable(source, name, str(exc).splitlines()[0][:200] if str(exc) else "not JSON", strict)
    except Exception as exc:  # yaml.YAMLError and its kin: a malformed file is said, never a traceback
        if exc.__class__.__module__.startswith("yaml"):
            return _unreadable(source, name, str(exc).splitlines()[0][:200], strict)
        raise
    if found and "kubectl output" not in source.shapes and not file_kind:
        source.shapes.append("kubectl output")
    return found


def _yaml_documents(text: str) -> Iterator[Any]:
    """YAML documents built straight from the parser's events (PyYAML's C parser where it has one).

    ``yaml.load_all`` composes a node graph of the whole document before constructing it: for
    ``kubectl get pods -A -o yaml`` of 5,000 pods that graph is the peak of the run. Built from
    events, only the objects themselves are ever held. Scalars are typed as YAML 1.1 safe loading
    types them (the resolver's implicit tags: int, float, bool, null, else str); anchors are kept.
    """
    import yaml

    loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
    resolver = yaml.resolver.Resolver()
    events = yaml.parse(text, Loader=loader)
    anchors: dict[str, Any] = {}

    def scalar(event: Any) -> Any:
        value = event.value
        tag = event.tag if event.tag not in (None, "!") else (
            resolver.resolve(yaml.ScalarNode, value, event.implicit) if event.implicit[0] else "tag:yaml.org,2002:str")
        if tag == "tag:yaml.org,2002:null":
            return None
        if tag == "tag:yaml.org,2002:bool":
            return value.lower() in ("yes", "true", "on")
        if tag == "tag:yaml.org,2002:int":
            try:
                digits = value.replace("_", "")
                bare = digits.lstrip("+-")
                if bare[:2].lower() in ("0x", "0o", "0b"):
                    return int(digits, 0)
                return int(digits, 8) if bare.startswith("0") and bare != "0" else int(digits)
            except ValueError:
                return value
        if tag == "tag:yaml.org,2002:float":
            try:
                special = {".inf": "inf", "+.inf": "inf", "-.inf": "-inf", ".nan": "nan"}.get(value.lower())
                return float(special or value.replace("_", ""))
            except ValueError:
                return value
        return value

    def build(event: Any, depth: int = 0) -> Any:
        if depth > 200:
            raise ValueError("nested more than 200 levels")
        if isinstance(event, yaml.AliasEvent):
            if event.anchor not in anchors:
                raise ValueError(f"unknown anchor {event.anchor}")
            return anchors[event.anchor]
        if isinstance(event, yaml.ScalarEvent):
            value = scalar(event)
        elif isinstance(event, yaml.SequenceStartEvent):
            value = []
            for inner in events:
                if isinstance(inner, yaml.SequenceEndEvent):
                    break
                value.append(build(inner, depth + 1))
        elif isinstance(event, yaml.MappingStartEvent):
            value = {}
            for inner in events:
                if isinstance(inner, yaml.MappingEndEvent):
                    break
                key = build(inner, depth + 1)
                item = build(next(events), depth + 1)
                if key == "<<" and isinstance(item, dict):  # a merge key
                    value.update({k: v for k, v in item.items() if k not in value})
                elif isinstance(key, (str, int, float, bool)) or key is None:
                    value[key] = item
        else:
            raise ValueError(f"unexpected {event.__class__.__name__}")
        anchor = getattr(event, "anchor", None)
        if anchor:
            anchors[anchor] = value
        return value

    for event in events:
        if isinstance(event, yaml.DocumentStartEvent):
            anchors.clear()
            inner = next(events)
            if isinstance(inner, yaml.DocumentEndEvent):
                continue
            yield build(inner)
        # StreamStart / DocumentEnd / StreamEnd carry nothing


def _unreadable(source: DumpSource, name: str, why: str, strict: bool) -> bool:
    if strict:
        raise UsageError(f"--from {name}: cannot be read as YAML or JSON: {why}")
    source.warnings.append(f"{name}: not read (not YAML or JSON: {why})")
    return False


def _add_document(source: DumpSource, doc: Any, file_kind: str = "") -> bool:
    if not isinstance(doc, Mapping):
        return False
    kind = given if isinstance(given := doc.get("kind"), str) else ""
    items = doc.get("items")
    if isinstance(items, list) and (not kind or kind.endswith("List")):
        item_kind = kind[: -len("List")] if kind and kind != "List" else file_kind
        version = said if isinstance(said := doc.get("apiVersion"), str) else ""
        if item_kind:
            from imagelint.cluster.dump import group_of

            source.hold(group_of(version, item_kind), item_kind)
        for item in items:
            if isinstance(item, Mapping):
                source.add(item, item_kind, version if item_kind else "")
        return True
    if kind and isinstance(doc.get("metadata"), Mapping):
        source.add(doc)
        return True
    return False


def _json_stream(source: DumpSource, text: str, name: str) -> Iterator[Any]:
    """JSON values one after another (cluster-info dump's stdout), with its log sections between them."""
    decoder = json.JSONDecoder()
    at, end = 0, len(text)
    while at < end:
        while at < end and text[at] in " \t\r\n":
            at += 1
        if at >= end:
            return
        if text.startswith("==== START logs", at):
            at = _log_section(source, text, at)
            continue
        value, at = decoder.raw_decode(text, at)
        yield value


def _log_section(source: DumpSource, text: str, at: int) -> int:
    """One ``==== START logs for container C of pod NS/P ====`` ... ``==== END ...`` section; the end offset."""
    line_end = text.find("\n", at)
    line_end = len(text) if line_end < 0 else line_end
    match = _LOG_START.match(text[at:line_end].strip())
    close = text.find(_LOG_END, line_end)
    body_end = len(text) if close < 0 else close
    after = text.find("\n", body_end)
    after = len(text) if close < 0 or after < 0 else after + 1
    if match:
        container, namespace, pod = match.groups()
        body = text[line_end + 1: body_end]
        error = next((line for line in body.splitlines()[:2] if line.startswith(("Request log error:", "Create log request error:"))), None)
        if error is not None:
            source.logs[(namespace, pod, container, False)] = error
        else:
            source.add_log(namespace, pod, container, False, body)
    return after


# --- a directory ---------------------------------------------------------------------------


def _read_directory(source: DumpSource, root: Path) -> None:
    files = []
    for count, path in enumerate(sorted(p for p in root.rglob("*") if p.is_file() and not p.is_symlink())):
        if count >= MAX_FILES:
            source.warnings.append(f"more than {MAX_FILES} files in {root}: the rest not read")
            break
        files.append(path)
    names = {p.relative_to(root).as_posix() for p in files}
    cluster_info = any(n in names for n in ("nodes.json", "nodes.yaml"))
    must_gather = any(n in names for n in ("gpu_operand_pods.yaml", "gpu_operand_ds.yaml", "cluster_policy.yaml",
                                           "cluster_policy.missing", "gpu_nodes.descr"))
    dumped_namespaces: set[str] = set()
    for path in files:
        rel = path.relative_to(root)
        name = rel.as_posix()
        if cluster_info and len(rel.parts) == 3 and rel.parts[2] == "logs.txt":
            _log_file(source, path)
            continue
        if must_gather and _must_gather_file(source, root, rel):
            continue
        operand_log = _OPERAND_LOG.match(name)
        if operand_log:  # the must-gather's log files, copied beside another dump
            _prefixed_log(source, path, operand_log.group(1), bool(operand_log.group(2)))
            continue
        if path.suffix not in (".json", ".yaml", ".yml"):
            continue
        stem = path.stem
        file_kind = CLUSTER_INFO_FILES.get(stem, "") if cluster_info else ""
        if file_kind and len(rel.parts) == 2:
            dumped_namespaces.add(rel.parts[0])
        _read_text(source, _decode(_bounded(path), name), name, file_kind=file_kind)
    if cluster_info:
        source.shapes.append("kubectl cluster-info dump")
        if dumped_namespaces:
            source.warnings.append(
                "cluster-info dump of namespace(s) " + ", ".join(sorted(dumped_namespaces)) +
                ": pods, events and workloads of any other namespace are not in the dump (kubectl cluster-info dump --all-namespaces has them all)")
        if not any(p.name == "logs.txt" for p in files):
            source.warnings.append("no pod logs in the dump")
    if must_gather:
        source.shapes.append("GPU Operator must-gather")
        _must_gather_nodes(source, root)
    # logs read before the pods' namespace was known
    for (namespace, pod, container, previous) in [k for k in source.logs if not k[0]]:
        found = _pod_namespace(source, pod)
        if found:
            source.logs[(found, pod, container, previous)] = source.logs.pop((namespace, pod, container, previous))


def _log_file(source: DumpSource, path: Path) -> None:
    text = _decode(_bounded(path), path.name)
    at = 0
    while True:
        start = text.find("==== START logs", at)
        if start < 0:
            return
        at = _log_section(source, text, start)


def _must_gather_file(source: DumpSource, root: Path, rel: Path) -> bool:
    """The must-gather's own files (True: handled here)."""
    if len(rel.parts) != 1:
        return False
    name = rel.name
    if name == "cluster_policy.missing":
        source.hold("nvidia.com", "ClusterPolicy")
        return True
    if name in ("gpu_operand_pods.yaml", "gpu_operator_pod.yaml"):
        before = len(source.objects.get("/pods", []))
        _read_text(source, _decode(_bounded(root / rel), name), name, file_kind="Pod")
        pods = source.objects.get("/pods", [])[before:]
        spaces = sorted({str((p.get("metadata") or {}).get("namespace") or "") for p in pods} - {""})
        if spaces:
            source.unread["pods"] = "only namespace(s) " + ", ".join(spaces) + " (the must-gather holds the GPU Operator's pods)"
        return True
    if name == "cluster_policy.yaml":
        source.hold("nvidia.com", "ClusterPolicy")
        return False  # read as objects below
    match = _OPERAND_LOG.match(name)
    if match:
        _prefixed_log(source, root / rel, match.group(1), bool(match.group(2)))
        return True
    return name.endswith((".descr", ".status", ".labels", ".log", ".txt", ".list", ".gz")) or name == "version"


def _prefixed_log(source: DumpSource, path: Path, pod: str, previous: bool) -> None:
    """``kubectl logs --all-containers --prefix --timestamps``: ``[pod/P/C] TIME line`` per line."""
    namespace = _pod_namespace(source, pod)
    lines: dict[str, list[str]] = {}
    for line in _decode(_bounded(path), path.name).splitlines():
        match = _PREFIXED.match(line)
        if match and match.group(1) == pod:
            lines.setdefault(match.group(2), []).append(match.group(3))
    for container, text in lines.items():
        source.logs[(namespace, pod, container, previous)] = tuple(text)


def _pod_namespace(source: DumpSource, pod: str) -> str:
    for obj in source.objects.get("/pods", []):
        meta = m if isinstance(m := obj.get("metadata"), Mapping) else {}
        if meta.get("name") == pod:
            return str(meta.get("namespace") or "")
    return ""


def _must_gather_nodes(source: DumpSource, root: Path) -> None:
    descr = root / "gpu_nodes.descr"
    if "/nodes" in source.objects:
        return
    if not descr.is_file():
        source.warnings.append("the must-gather has no gpu_nodes.descr: node status is not in the dump")
        return
    from imagelint.cluster.dump_describe import nodes_from_describe

    source.hold("", "Node")
    for node in nodes_from_describe(_decode(_bounded(descr), descr.name)):
        source.add(node, "Node", "v1")
    source.warnings.append("the must-gather holds only the GPU nodes (nvidia.com/gpu.present=true), as kubectl describe wrote them")


def _read_target_snapshot(source: DumpSource, path: Path) -> None:
    """A target file holds pools (driver, GPUs, labels), not objects: every stage is "not in the dump"."""
    from imagelint.deploytarget.file import load_target_file

    target = load_target_file(str(path), None)
    source.shapes.append("imagelint target snapshot")
    source.warnings.append(
        f"{path.name} is a target snapshot: {len(target.pools)} pool(s) with their driver and GPUs, but no nodes, pods, "
        "events or DaemonSets; doctor needs those (kubectl cluster-info dump, or kubectl get -o yaml)")


__all__ = ["CLUSTER_INFO_FILES", "read_dump"]
