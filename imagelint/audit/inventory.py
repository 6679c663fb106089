"""The inventory: which images the workloads run and which pools each can land on.

From a live cluster (``inventory_from_fleet``): a pod bound to a node is checked against that
node's pool; a pod not yet bound, or a template (a Deployment scaled to zero, a CronJob between
runs), against the pools its scheduling allows: blocking taints it tolerates, nodeSelector and
required node affinity (``imagelint.kube.scheduler``, the matching IL603/IL604 use) and, when it asks
for a GPU resource, the pools that advertise it. A container on a CPU node, or a template that
asks for no GPU, lands on no GPU pool and is counted, not checked.

Images are deduplicated by digest: the ``imageID`` the kubelet reports for a running container
(two tags of one digest are one image), else the reference as written (a template whose image a
running pod of the same reference reports adopts that digest). The reference read to check an
image is ``registry:`` + ``repo@digest`` when known: a reference from the cluster never names a
local file or the Docker daemon.

From a file (``read_images_file``): an inventory JSON written by ``imagelint audit enumerate``
(the CronJob's step), or a text file of image references, one a line (``#`` comments), each
checked against every pool of the target.
"""

from __future__ import annotations

import dataclasses
import os
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from imagelint.audit.model import AuditImage, Inventory, Workload
from imagelint.deploytarget.model import Target
from imagelint.errors import UsageError
from imagelint.localfile import read_regular_file
from imagelint.untrusted import loads_json

INVENTORY_SCHEMA = "imagelint-audit-inventory/1"
MAX_IMAGES_FILE_BYTES = 64 * 2**20
_SCHEMES = ("registry:", "docker:", "docker-archive:", "oci-dir:", "oci-archive:")


def registry_reference(reference: str) -> str:
    """A reference from the cluster, read from its registry only (never a path or the daemon)."""
    return reference if reference.startswith("registry:") else f"registry:{reference}"


def _placement(container: Any, target: Target, node_pools: Mapping[str, str], nodes: Sequence[Any]) -> tuple[tuple[str, ...], str]:
    """The pools a container can land on, and why (see the module docstring)."""
    from imagelint.kube.scheduler import match_pool, untolerated_taints

    if container.node:
        pool = node_pools.get(container.node)
        return ((pool,), f"node {container.node}") if pool else ((), f"node {container.node} (no GPU pool)")
    w = container.scheduling
    if not w.pod_resources:
        return (), "requests no GPU"
    by_name = {p.name: p for p in target.pools}
    # Match the nodes themselves when they are known: a pool keeps only its GPU labels, and a
    # nodeSelector on a node-group or zone label must still find the nodes it names.
    views = [dataclasses.replace(by_name[n.pool], labels=n.labels, taints=n.taints) for n in nodes if n.pool in by_name]
    pools: dict[str, None] = {}
    for view in views or target.pools:
        if untolerated_taints(view, w.tolerations) or match_pool(w, view)[0] is False:
            continue
        if view.resources and not any(view.resources.get(r, 0) > 0 for r in w.pod_resources):
            continue
        pools[view.name] = None
    if not pools:
        return (), "scheduling matches no GPU pool"
    return tuple(sorted(pools)), "scheduling"


def _digests_by_reference(containers: Iterable[Any]) -> dict[str, str]:
    """Reference as written → the digest some running pod reports for it (the smallest, if several)."""
    by_ref: dict[str, str] = {}
    for c in containers:
        if c.image_digest and (c.image not in by_ref or c.image_digest < by_ref[c.image]):
            by_ref[c.image] = c.image_digest
    return by_ref


def _image_key(c: Any, by_ref: Mapping[str, str]) -> str:
    return c.image_digest or by_ref.get(c.image) or c.image.strip()


def image_credentials(fleet: Any) -> dict[str, dict[str, Any]]:
    """Image key → {registry: Credentials} from the pull secrets its pods name (``--use-pull-secrets``).
    In memory only: the inventory, reports and cache never see them."""
    from imagelint.sources.registry_auth import Credentials

    by_ref = _digests_by_reference(fleet.containers)
    out: dict[str, dict[str, Any]] = {}
    for c in fleet.containers:
        for secret in c.pull_secrets:
            for cred in fleet.pull_credentials.get((c.namespace, secret), ()):
                out.setdefault(_image_key(c, by_ref), {}).setdefault(
                    cred.registry, Credentials(cred.username, cred.password, cred.identity_token))
    return out


MAX_PLACEMENT_NODES = 3  # nodes named in a workload's placement; the rest are counted


def _placement_text(placements: Iterable[str]) -> str:
    """One workload's placements (one per pod or template), said once: ``nodes a, b and 3 more``."""
    distinct = sorted(set(placements))
    if len(distinct) == 1:
        return distinct[0]
    nodes = [p[len("node "):] for p in distinct if p.startswith("node ") and not p.endswith(")")]
    others = [p for p in distinct if not (p.startswith("node ") and not p.endswith(")"))]
    shown = ", ".join(nodes[:MAX_PLACEMENT_NODES])
    if len(nodes) > MAX_PLACEMENT_NODES:
        shown += f" and {len(nodes) - MAX_PLACEMENT_NODES} more"
    return "; ".join(([f"nodes {shown}" if len(nodes) > 1 else f"node {shown}"] if nodes else []) + others)


def inventory_from_fleet(fleet: Any) -> Inventory:
    """Workload containers (``imagelint.cluster.fleet.Fleet``) → deduplicated images + placements.

    One workload per (namespace, owner, container, image): its pods on different nodes (or its
    pods and its template) are one entry whose pools are the union of theirs."""
    target: Target = fleet.target
    by_ref = _digests_by_reference(fleet.containers)
    grouped: dict[tuple[Any, ...], list[tuple[Any, tuple[str, ...], str]]] = {}
    images: dict[str, dict[str, Any]] = {}
    for c in fleet.containers:
        pools, placement = _placement(c, target, fleet.node_pools, getattr(fleet, "nodes", ()))
        key = _image_key(c, by_ref)
        grouped.setdefault((c.namespace, c.owner_kind, c.owner_name, c.container, c.image, key), []).append((c, pools, placement))
        entry = images.setdefault(key, {"pullable": None, "refs": set()})
        entry["refs"].add(c.image)
        if c.pullable and (entry["pullable"] is None or c.pullable < entry["pullable"]):
            entry["pullable"] = c.pullable  # the smallest: the same whatever order pods are listed in
    workloads = tuple(sorted(
        (Workload(ns, kind, name, container, image, key, tuple(sorted({p for _, pools, _ in cs for p in pools})),
                  _placement_text(placement for _, _, placement in cs), sum(1 for c, _, _ in cs if c.pod),
                  any(c.scheduling.container_requests_gpu for c, _, _ in cs))
         for (ns, kind, name, container, image, key), cs in grouped.items()),
        key=lambda w: w.sort_key,
    ))
    checked = {w.image_key for w in workloads if w.pools}
    # A GPU workload that can land nowhere is not a pass: say so (IL603/IL604 explain why in lint).
    stranded = tuple(f"{w.namespace}/{w.owner} container {w.container}: asks for a GPU but its scheduling matches "
                     "no GPU pool; not checked" for w in workloads if not w.pools and "scheduling matches no GPU pool" in w.placement)
    audit_images = tuple(
        AuditImage(key, registry_reference(e["pullable"] or min(e["refs"])), tuple(sorted(e["refs"])))
        for key, e in sorted(images.items()) if key in checked
    )
    return Inventory(workloads, audit_images, target.source, tuple(fleet.warnings) + stranded)


def inventory_from_references(references: Iterable[str], target: Target, source: str) -> Inventory:
    """An image list: each image, its own workload, on every pool of the target."""
    pools = tuple(p.name for p in target.pools)
    refs = sorted(dict.fromkeys(r.strip() for r in references if r.strip()))
    workloads = tuple(Workload("-", "Image", r, "-", r, r, pools, "every pool") for r in refs)
    images = tuple(AuditImage(r, r if r.startswith(_SCHEMES) else registry_reference(r), (r,)) for r in refs)
    return Inventory(workloads, images, source)


def inventory_to_json(inv: Inventory) -> dict[str, Any]:
    return {
        "schema": INVENTORY_SCHEMA,
        "source": inv.source,
        "workloads": [workload_json(w) for w in inv.workloads],
        "images": [{"key": i.key, "reference": i.reference, "references": list(i.references)} for i in inv.images],
        "warnings": list(inv.warnings),
    }


def workload_json(w: Workload) -> dict[str, Any]:
    return {
        "namespace": w.namespace,
        "owner": {"kind": w.owner_kind, "name": w.owner_name},
        "container": w.container,
        "image": w.image,
        "image_key": w.image_key,
        "pools": list(w.pools),
        "placement": w.placement,
        "pods": w.pods,
        "requests_gpu": w.requests_gpu,
    }


def _str(value: Any, where: str) -> str:
    if not isinstance(value, str):
        raise ValueError(f"{where} is not a string")
    return value


def _strs(value: Any, where: str) -> tuple[str, ...]:
    if not isinstance(value, list):
        raise ValueError(f"{where} is not a list")
    return tuple(_str(v, where) for v in value)


def workload_from_json(raw: Any, where: str) -> Workload:
    if not isinstance(raw, dict) or not isinstance(raw.get("owner"), dict):
        raise ValueError(f"{where} is not a workload object")
    pods = raw.get("pods", 0)
    if not isinstance(pods, int) or isinstance(pods, bool) or pods < 0:
        raise ValueError(f"{where}.pods is not a count")
    return Workload(
        namespace=_str(raw.get("namespace"), f"{where}.namespace"),
        owner_kind=_str(raw["owner"].get("kind"), f"{where}.owner.kind"),
        owner_name=_str(raw["owner"].get("name"), f"{where}.owner.name"),
        container=_str(raw.get("container"), f"{where}.container"),
        image=_str(raw.get("image"), f"{where}.image"),
        image_key=_str(raw.get("image_key"), f"{where}.image_key"),
        pools=_strs(raw.get("pools"), f"{where}.pools"),
        placement=_str(raw.get("placement"), f"{where}.placement"),
        pods=pods,
        requests_gpu=raw.get("requests_gpu") is True,
    )


def image_from_json(raw: Any, where: str) -> AuditImage:
    if not isinstance(raw, dict):
        raise ValueError(f"{where} is not an image object")
    return AuditImage(_str(raw.get("key"), f"{where}.key"), _str(raw.get("reference"), f"{where}.reference"),
                      _strs(raw.get("references"), f"{where}.references"))


def inventory_from_json(data: Any, path: str) -> Inventory:
    try:
        if not isinstance(data, dict) or data.get("schema") != INVENTORY_SCHEMA:
            raise ValueError(f"not an imagelint inventory (schema {INVENTORY_SCHEMA})")
        workloads = tuple(workload_from_json(w, f"workloads[{i}]") for i, w in enumerate(_list(data, "workloads")))
        images = tuple(image_from_json(m, f"images[{i}]") for i, m in enumerate(_list(data, "images")))
        return Inventory(workloads, images, _str(data.get("source"), "source"), _strs(data.get("warnings", []), "warnings"))
    except ValueError as exc:
        raise UsageError(f"{path}: {exc}") from None


def _list(data: dict[str, Any], key: str) -> list[Any]:
    value = data.get(key)
    if not isinstance(value, list):
        raise ValueError(f"{key} is not a list")
    return value


def read_images_file(path: str, target: Target) -> Inventory:
    """An inventory JSON, or a text list of references (one a line)."""
    try:  # a regular file only (a FIFO never blocks the run), and no larger than the cap
        data = read_regular_file(path, MAX_IMAGES_FILE_BYTES)
    except OSError as exc:
        raise UsageError(f"cannot read {path}: {exc.strerror or exc}") from None
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        raise UsageError(f"{path}: not UTF-8 text") from None
    if text.lstrip().startswith("{"):
        try:
            parsed = loads_json(text)
        except ValueError as exc:
            raise UsageError(f"{path}: not valid JSON ({exc})") from None
        inv = inventory_from_json(parsed, path)
        known = {p.name for p in target.pools}
        unknown = sorted({p for w in inv.workloads for p in w.pools} - known)
        if unknown:
            warning = f"{path}: pools {', '.join(unknown)} are not in the target; their workloads are not checked there"
            inv = Inventory(inv.workloads, inv.images, inv.source, inv.warnings + (warning,))
        return inv
    refs = [line.split("#", 1)[0].strip() for line in text.splitlines()]
    base = os.path.dirname(os.path.abspath(path))
    return inventory_from_references([_beside(r, base) for r in refs if r], target, path)


_LOCAL_SCHEMES = ("oci-dir:", "oci-archive:", "docker-archive:")


def _beside(ref: str, base: str) -> str:
    """A local image named in a list file, resolved against the file's directory (as docker
    compose resolves a compose file's paths), not the working directory: ``oci-dir:build/app``
    in ``ci/images.txt`` is ``ci/build/app``. Registry and daemon references pass unchanged."""
    scheme = next((s for s in _LOCAL_SCHEMES if ref.startswith(s)), None)
    if scheme is None:
        return ref
    rest = ref[len(scheme):]
    if not rest or os.path.isabs(rest):
        return ref
    return scheme + os.path.relpath(os.path.join(base, rest))


__all__ = [
    "INVENTORY_SCHEMA",
    "image_credentials",
    "inventory_from_fleet",
    "inventory_from_json",
    "inventory_from_references",
    "inventory_to_json",
    "read_images_file",
    "registry_reference",
    "workload_from_json",
    "workload_json",
]
