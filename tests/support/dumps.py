"""Dumps of a fakekube ``ClusterState`` in the shapes the real tools write them (our own fixtures).

* ``kubectl_list(state)``: ``kubectl get nodes,pods,events,daemonsets,... -A -o yaml`` — one
  ``apiVersion: v1, kind: List`` whose items carry their own ``apiVersion``/``kind``; kubectl
  writes nothing for a kind it found none of.
* ``write_cluster_info_dump(kube, root)``: ``kubectl cluster-info dump --output-directory ROOT``
  (kubectl ``pkg/cmd/clusterinfo/clusterinfo_dump.go``): ``nodes.json`` (a ``NodeList`` whose
  items have no ``kind``, as the typed client's lists are printed), per namespace ``events``,
  ``replication-controllers``, ``services``, ``daemonsets``, ``deployments``, ``replicasets``,
  ``pods`` ``.json``, and ``NS/POD/logs.txt`` with each (init) container's current log between
  ``==== START logs for container C of pod NS/P ====`` / ``==== END ...`` lines, or the
  ``Request log error: ...`` line kubectl writes when the API server refuses the log.
  ``cluster_info_stdout(kube)``: the same without ``--output-directory`` (concatenated JSON on stdout).
* ``write_must_gather(kube, root, namespace)``: the GPU Operator's ``hack/must-gather.sh`` files:
  ``gpu_operand_pods.yaml`` (the operator namespace's pods), ``gpu_operand_ds.yaml``,
  ``cluster_policy.yaml`` or ``cluster_policy.missing``, ``gpu_nodes.labels``, ``gpu_nodes.descr``
  (``kubectl describe nodes`` layout) and ``gpu_operand_pod_POD.log`` / ``.previous.log``
  (``kubectl logs --all-containers --prefix --timestamps``).
* ``write_doctor_dump(kube, root)``: what the live/dump comparison reads — a cluster-info dump,
  the must-gather's previous-instance logs beside it, and ``extra.yaml`` with the kinds a
  cluster-info dump lacks (typed lists, as ``kubectl get --raw /apis/...`` prints them).

Logs are asked of the running fakekube (``FakeKube._log``), the way kubectl asks the API server,
so a log the kubelet would not give is missing from the dump too.
"""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

import yaml

from tests.support.fakekube import ClusterState, FakeKube, _configmap

GENERIC_KINDS = {"apis/apps/v1/deployments": ("Deployment", "apps/v1"), "apis/apps/v1/replicasets": ("ReplicaSet", "apps/v1"),
                 "apis/batch/v1/jobs": ("Job", "batch/v1")}


def _typed(obj: dict[str, Any], kind: str, api_version: str) -> dict[str, Any]:
    return {"apiVersion": api_version, "kind": kind, **{k: v for k, v in copy.deepcopy(obj).items() if k not in ("kind", "apiVersion")}}


def _untyped(obj: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in copy.deepcopy(obj).items() if k not in ("kind", "apiVersion")}


def _ns(obj: dict[str, Any]) -> str:
    namespace = (obj.get("metadata") or {}).get("namespace") if isinstance(obj.get("metadata"), dict) else None
    return namespace if isinstance(namespace, str) else ""


def _well_formed(pod: dict[str, Any]) -> bool:
    """A pod kubectl could have written logs for (the suite also serves malformed ones on purpose)."""
    return isinstance(pod.get("spec"), dict) and isinstance(pod["metadata"].get("name"), str) and bool(_ns(pod))


def _configmaps(state: ClusterState) -> list[dict[str, Any]]:
    return [_configmap(ns, name, data) for (ns, name), data in state.configmaps.items()]


def _dra(state: ClusterState) -> list[tuple[str, list[dict[str, Any]]]]:
    kinds = [("DeviceClass", state.deviceclasses), ("ResourceSlice", state.resourceslices),
             ("ResourceClaim", state.resourceclaims), ("ResourceClaimTemplate", getattr(state, "resourceclaimtemplates", None))]
    return [(k, items) for k, items in kinds if items is not None]


def kubectl_list(state: ClusterState) -> dict[str, Any]:
    items = [_typed(n, "Node", "v1") for n in state.nodes]
    items += [_typed(p, "Pod", "v1") for p in state.pods]
    items += [_typed(e, "Event", "v1") for e in state.events]
    items += [_typed(d, "DaemonSet", "apps/v1") for d in state.daemonsets]
    for path, (kind, version) in GENERIC_KINDS.items():
        items += [_typed(o, kind, version) for o in state.objects.get(path, [])]
    items += [_typed(r, "RuntimeClass", "node.k8s.io/v1") for r in state.runtimeclasses]
    items += [_typed(c, "ConfigMap", "v1") for c in _configmaps(state)]
    for kind, objects in _dra(state):
        items += [_typed(o, kind, "resource.k8s.io/v1") for o in objects]
    return {"apiVersion": "v1", "kind": "List", "metadata": {"resourceVersion": ""}, "items": items}


def _namespaces(state: ClusterState) -> list[str]:
    found = {_ns(o) for o in state.pods + state.events + state.daemonsets} | {"default", "kube-system"}
    for objects in state.objects.values():
        found |= {_ns(o) for o in objects}
    return sorted(found - {""})


def _lists(kube: FakeKube, namespace: str) -> list[tuple[str, dict[str, Any]]]:
    state = kube.state

    def typed_list(kind: str, version: str, objects: list[dict[str, Any]]) -> dict[str, Any]:
        return {"kind": f"{kind}List", "apiVersion": version, "metadata": {"resourceVersion": "1"},
                "items": [_untyped(o) for o in objects if _ns(o) == namespace]}

    generic = {kind: state.objects.get(path, []) for path, (kind, _) in GENERIC_KINDS.items()}
    return [
        ("events", typed_list("Event", "v1", state.events)),
        ("replication-controllers", typed_list("ReplicationController", "v1", [])),
        ("services", typed_list("Service", "v1", [])),
        ("daemonsets", typed_list("DaemonSet", "apps/v1", state.daemonsets)),
        ("deployments", typed_list("Deployment", "apps/v1", generic["Deployment"])),
        ("replicasets", typed_list("ReplicaSet", "apps/v1", generic["ReplicaSet"])),
        ("pods", typed_list("Pod", "v1", state.pods)),
    ]


def _log_sections(kube: FakeKube, pod: dict[str, Any], logs: bool = True) -> str:
    """Each (init) container's section of logs.txt; ``logs=False``: empty sections (a big dump's
    layout without asking fakekube, whose log lookup scans every pod)."""
    meta, spec = pod["metadata"], pod.get("spec") or {}
    out = []
    for c in (spec.get("initContainers") or []) + (spec.get("containers") or []):
        name = c["name"]
        where = f"container {name} of pod {meta['namespace']}/{meta['name']}"
        out.append(f"==== START logs for {where} ====\n")
        answer = kube._log(f"/api/v1/namespaces/{meta['namespace']}/pods/{meta['name']}/log", {"container": [name]}) if logs else b""
        if isinstance(answer, tuple):
            out.append(f"Request log error: {answer[1].get('message', '')}\n")
        else:
            out.append(answer.decode())
        out.append(f"==== END logs for {where} ====\n")
    return "".join(out)


def write_cluster_info_dump(kube: FakeKube, root: Path, logs: bool = True) -> Path:
    root.mkdir(parents=True, exist_ok=True)
    state = kube.state
    nodes = {"kind": "NodeList", "apiVersion": "v1", "metadata": {"resourceVersion": "1"}, "items": [_untyped(n) for n in state.nodes]}
    (root / "nodes.json").write_text(json.dumps(nodes, indent=4))
    for namespace in _namespaces(state):
        (root / namespace).mkdir(exist_ok=True)
        for name, body in _lists(kube, namespace):
            (root / namespace / f"{name}.json").write_text(json.dumps(body, indent=4))
        for pod in state.pods:
            if _ns(pod) == namespace and _well_formed(pod):
                (root / namespace / pod["metadata"]["name"]).mkdir(exist_ok=True)
                (root / namespace / pod["metadata"]["name"] / "logs.txt").write_text(_log_sections(kube, pod, logs))
    return root


def cluster_info_stdout(kube: FakeKube) -> str:
    state = kube.state
    out = [json.dumps({"kind": "NodeList", "apiVersion": "v1", "metadata": {}, "items": [_untyped(n) for n in state.nodes]}, indent=4) + "\n"]
    for namespace in _namespaces(state):
        out += [json.dumps(body, indent=4) + "\n" for _, body in _lists(kube, namespace)]
        out += [_log_sections(kube, p) for p in state.pods if _ns(p) == namespace and _well_formed(p)]
    return "".join(out)


def _prefixed(kube: FakeKube, pod: dict[str, Any], previous: bool) -> str:
    """``kubectl logs POD --all-containers --prefix --timestamps [--previous]``; empty when refused."""
    meta, spec = pod["metadata"], pod.get("spec") or {}
    lines = []
    for c in (spec.get("initContainers") or []) + (spec.get("containers") or []):
        query = {"container": [c["name"]], **({"previous": ["true"]} if previous else {})}
        answer = kube._log(f"/api/v1/namespaces/{meta['namespace']}/pods/{meta['name']}/log", query)
        if isinstance(answer, tuple):
            continue  # kubectl prints the error on stderr, the file keeps nothing
        for n, line in enumerate(answer.decode().splitlines()):
            lines.append(f"[pod/{meta['name']}/{c['name']}] 2026-12-01T08:00:{n % 60:02d}.000000000Z {line}\n")
    return "".join(lines)


def describe_nodes(nodes: list[dict[str, Any]]) -> str:
    """``kubectl describe nodes`` text for these nodes (the sections doctor reads, in kubectl's layout)."""
    out = []
    for node in nodes:
        meta, spec, status = node["metadata"], node.get("spec") or {}, node.get("status") or {}
        labels = [f"{k}={v}" for k, v in sorted((meta.get("labels") or {}).items())] or ["<none>"]
        taints = [f"{t['key']}{'=' + t['value'] if t.get('value') else ''}:{t['effect']}" for t in spec.get("taints") or []] or ["<none>"]
        block = [f"Name:               {meta['name']}", "Roles:              <none>", f"Labels:             {labels[0]}"]
        block += [f"                    {label}" for label in labels[1:]]
        block += ["Annotations:        node.alpha.kubernetes.io/ttl: 0", "CreationTimestamp:  Fri, 01 Aug 2026 00:00:00 +0000",
                  f"Taints:             {taints[0]}"]
        block += [f"                    {t}" for t in taints[1:]]
        block += [f"Unschedulable:      {'true' if spec.get('unschedulable') else 'false'}", "Conditions:",
                  "  Type    Status  LastHeartbeatTime                 LastTransitionTime                Reason    Message",
                  "  ----    ------  -----------------                 ------------------                ------    -------"]
        for c in status.get("conditions") or []:
            block.append(f"  {c['type']}   {c['status']}    Mon, 01 Dec 2026 08:00:00 +0000   Mon, 01 Dec 2026 08:00:00 +0000   "
                         f"{c.get('reason', '')}   {c.get('message', '')}")
        for section, key in (("Capacity", "capacity"), ("Allocatable", "allocatable")):
            if key in status:
                block.append(f"{section}:")
                block += [f"  {k}:{' ' * max(2, 20 - len(k))}{v}" for k, v in status[key].items()]
        block += ["System Info:", "  Kernel Version:             6.8.0-1015-aws", "Events:              <none>"]
        out.append("\n".join(block) + "\n")
    return "\n\n".join(out)


def write_must_gather(kube: FakeKube, root: Path, namespace: str = "gpu-operator") -> Path:
    state = kube.state
    root.mkdir(parents=True, exist_ok=True)
    pods = [p for p in state.pods if _ns(p) == namespace]
    (root / "gpu_operand_pods.yaml").write_text(yaml.safe_dump({"apiVersion": "v1", "kind": "List", "metadata": {"resourceVersion": ""},
                                                                "items": [_typed(p, "Pod", "v1") for p in pods]}))
    (root / "gpu_operand_ds.yaml").write_text(yaml.safe_dump({"apiVersion": "v1", "kind": "List", "metadata": {"resourceVersion": ""},
                                                              "items": [_typed(d, "DaemonSet", "apps/v1") for d in state.daemonsets if _ns(d) == namespace]}))
    if state.clusterpolicies:
        (root / "cluster_policy.yaml").write_text(yaml.safe_dump(_typed(state.clusterpolicies[0], "ClusterPolicy", "nvidia.com/v1")))
    else:
        (root / "cluster_policy.missing").write_text("")
    gpu = [n for n in state.nodes if (n["metadata"].get("labels") or {}).get("nvidia.com/gpu.present") == "true"]
    (root / "gpu_nodes.labels").write_text("".join(
        n["metadata"]["name"] + "\n" + "".join(f"- {k}={v}\n" for k, v in n["metadata"]["labels"].items()) + "\n" for n in gpu))
    (root / "gpu_nodes.descr").write_text(describe_nodes(gpu))
    (root / "gpu_nodes.status").write_text("NAME   STATUS   ROLES   AGE   VERSION\n")
    for pod in filter(_well_formed, pods):
        name = pod["metadata"]["name"]
        (root / f"gpu_operand_pod_{name}.log").write_text(_prefixed(kube, pod, False))
        (root / f"gpu_operand_pod_{name}.previous.log").write_text(_prefixed(kube, pod, True))
    (root / "must-gather.log").write_text("+ kubectl version\n")
    return root


def write_doctor_dump(kube: FakeKube, root: Path) -> Path:
    """A cluster-info dump, the previous-instance logs beside it, and the kinds it lacks in extra.yaml."""
    state = kube.state
    write_cluster_info_dump(kube, root)
    for pod in filter(_well_formed, state.pods):
        text = _prefixed(kube, pod, True)
        if text:
            (root / f"gpu_operand_pod_{pod['metadata']['name']}.previous.log").write_text(text)
    docs = [{"apiVersion": "node.k8s.io/v1", "kind": "RuntimeClassList", "metadata": {}, "items": [_untyped(r) for r in state.runtimeclasses]},
            {"apiVersion": "v1", "kind": "ConfigMapList", "metadata": {}, "items": [_untyped(c) for c in _configmaps(state)]}]
    if state.clusterpolicies is not None:
        docs.append({"apiVersion": "nvidia.com/v1", "kind": "ClusterPolicyList", "metadata": {}, "items": [_untyped(c) for c in state.clusterpolicies]})
    for kind, objects in _dra(state):
        docs.append({"apiVersion": "resource.k8s.io/v1", "kind": f"{kind}List", "metadata": {}, "items": [_untyped(o) for o in objects]})
    (root / "extra.yaml").write_text(yaml.safe_dump_all(docs))
    return root


__all__ = ["cluster_info_stdout", "describe_nodes", "kubectl_list", "write_cluster_info_dump", "write_doctor_dump", "write_must_gather"]
