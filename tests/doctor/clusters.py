"""Scenario clusters for doctor: a healthy GPU cluster, and one helper per object kind.

Objects have the shapes the API server serves (pods with status, DaemonSets with status,
events with involvedObject) so the real ``kubernetes`` client reads them through fakekube.
"""

from __future__ import annotations

import copy
from typing import Any

from tests.support.fakekube import ClusterState, cpu_node, daemonset, gfd_node, runtimeclass

GPU_TERMS = [{"matchExpressions": [{"key": "nvidia.com/gpu.present", "operator": "In", "values": ["true"]}]}]
PLUGIN_IMAGE = "nvcr.io/nvidia/k8s-device-plugin:v0.17.0"
TOOLKIT_IMAGE = "nvcr.io/nvidia/k8s/container-toolkit:v1.17.8-ubuntu20.04"
GPU_NODES = ("gpu-a-1", "gpu-a-2")


def ready(node: dict[str, Any], handlers: list[str] | None = None) -> dict[str, Any]:
    node["status"]["conditions"] = [{"type": "Ready", "status": "True", "reason": "KubeletReady", "message": "kubelet is posting ready status"}]
    if handlers is not None:
        node["status"]["runtimeHandlers"] = [{"name": h, "features": {}} for h in handlers]
    return node


def container_status(name: str, image: str, *, ready: bool = True, waiting: str | None = None, message: str = "",
                     restarts: int = 0, last: str | None = None) -> dict[str, Any]:
    state: dict[str, Any] = {"waiting": {"reason": waiting, **({"message": message} if message else {})}} if waiting else {"running": {"startedAt": "2026-12-01T08:00:00Z"}}
    status: dict[str, Any] = {"name": name, "image": image, "imageID": "", "ready": ready and not waiting, "restartCount": restarts, "state": state}
    if last:
        status["lastState"] = {"terminated": {"reason": last, "exitCode": 1}}
    return status


def pod(namespace: str, name: str, *, node: str | None, image: str = "nvcr.io/nvidia/cuda:12.4.1-base-ubuntu22.04",
        gpus: int | None = 1, phase: str = "Running", container: str = "main", env: dict[str, str] | None = None,
        owner: tuple[str, str] | None = None, labels: dict[str, str] | None = None, statuses: list[dict[str, Any]] | None = None,
        unschedulable: str | None = None, **spec: Any) -> dict[str, Any]:
    c: dict[str, Any] = {"name": container, "image": image}
    if gpus is not None:
        c["resources"] = {"limits": {"nvidia.com/gpu": str(gpus)}}
    if env:
        c["env"] = [{"name": k, "value": v} for k, v in env.items()]
    if "volumeMounts" in spec:
        c["volumeMounts"] = spec.pop("volumeMounts")
    meta: dict[str, Any] = {"name": name, "namespace": namespace, "labels": labels or {}}
    if owner:
        meta["ownerReferences"] = [{"kind": owner[0], "name": owner[1], "apiVersion": "apps/v1", "controller": True}]
    body: dict[str, Any] = {"containers": [c], **spec}
    if node:
        body["nodeName"] = node
    status: dict[str, Any] = {"phase": phase}
    if phase == "Running" or statuses:
        status["containerStatuses"] = statuses or [container_status(container, image)]
    if unschedulable:
        status["conditions"] = [{"type": "PodScheduled", "status": "False", "reason": "Unschedulable", "message": unschedulable}]
    return {"apiVersion": "v1", "kind": "Pod", "metadata": meta, "spec": body, "status": status}


def event(namespace: str, kind: str, name: str, reason: str, message: str) -> dict[str, Any]:
    return {
        "apiVersion": "v1", "kind": "Event", "metadata": {"name": f"{name}.1", "namespace": namespace},
        "involvedObject": {"kind": kind, "name": name, "namespace": namespace}, "reason": reason, "message": message,
        "type": "Warning", "count": 3, "lastTimestamp": "2026-12-01T09:00:00Z",
    }


def healthy_state() -> ClusterState:
    """Two T4 nodes (pool t4-pool) with the device plugin and toolkit Ready on both, one CPU node,
    RuntimeClass nvidia, one GPU training pod Running on gpu-a-1."""
    nodes = [ready(gfd_node(n, "550.54.15", "12.4", "Tesla-T4", "7.5", "turing", 2, nodepool="t4-pool",
                            extra_labels={"hardware-type": "ai-training"}), handlers=["runc", "nvidia"]) for n in GPU_NODES]
    nodes.append(ready(cpu_node("cpu-1")))
    plugin = daemonset("gpu-operator", "nvidia-device-plugin-daemonset", PLUGIN_IMAGE, affinity_terms=GPU_TERMS)
    toolkit = daemonset("gpu-operator", "nvidia-container-toolkit-daemonset", TOOLKIT_IMAGE, node_selector={"nvidia.com/gpu.present": "true"})
    for ds in (plugin, toolkit):
        ds["status"] = {"desiredNumberScheduled": 2, "numberReady": 2, "numberUnavailable": 0}
    pods = []
    for n in GPU_NODES:
        pods.append(pod("gpu-operator", f"nvidia-device-plugin-daemonset-{n[-1]}", node=n, image=PLUGIN_IMAGE, gpus=None,
                        container="nvidia-device-plugin", owner=("DaemonSet", "nvidia-device-plugin-daemonset"),
                        labels={"app": "nvidia-device-plugin-daemonset"}))
        pods.append(pod("gpu-operator", f"nvidia-container-toolkit-daemonset-{n[-1]}", node=n, image=TOOLKIT_IMAGE, gpus=None,
                        container="nvidia-container-toolkit", owner=("DaemonSet", "nvidia-container-toolkit-daemonset"),
                        labels={"app": "nvidia-container-toolkit-daemonset"}))
    pods.append(pod("ml", "train-0", node="gpu-a-1", owner=("Job", "train"),
                    tolerations=[{"key": "nvidia.com/gpu", "operator": "Exists", "effect": "NoSchedule"}]))
    pods.append(pod("web", "frontend-1", node="cpu-1", image="nginx:1.27", gpus=None))
    logs = {("gpu-operator", f"nvidia-device-plugin-daemonset-{n[-1]}", "nvidia-device-plugin", False):
            "I1201 08:00:01 main.go:279] Retrieving plugins.\nI1201 08:00:02 server.go:216] Starting GRPC server for 'nvidia.com/gpu'\n"
            "I1201 08:00:02 main.go:246] Starting FS watcher.\n" for n in GPU_NODES}
    return ClusterState(nodes=nodes, daemonsets=[plugin, toolkit], runtimeclasses=[runtimeclass("nvidia", "nvidia")],
                        pods=pods, pod_logs=logs)


def add_deepstream(state: ClusterState, index: int, env: dict[str, str] | None,
                   config: str = "[property]\ngpu-id=0\nnet-scale-factor=0.0039\n") -> dict[str, Any]:
    """A DeepStream pod on gpu-a-2 whose mounted ConfigMap pins gpu-id=0 (video/deepstream-INDEX)."""
    state.configmaps[("video", f"ds-config-{index}")] = {"config_infer_primary.txt": config}
    state.pods.append(pod(
        "video", f"deepstream-{index}", node="gpu-a-2", image="nvcr.io/nvidia/deepstream:7.1-triton-multiarch",
        env=env, volumes=[{"name": "cfg", "configMap": {"name": f"ds-config-{index}"}}],
        volumeMounts=[{"name": "cfg", "mountPath": "/opt/config"}]))
    return state.pods[-1]


def find(state: ClusterState, name: str) -> dict[str, Any]:
    return next(o for o in state.pods + state.nodes if o["metadata"]["name"] == name)


def clone(state: ClusterState) -> ClusterState:
    return copy.deepcopy(state)
