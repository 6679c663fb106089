"""Isolation that silently fails: pods that see GPUs they were not allocated.

Whether a container's ``NVIDIA_VISIBLE_DEVICES`` decides its GPUs (the toolkit's
``VisibleDevices()``): the container runs under the NVIDIA runtime (its RuntimeClass handler,
or no RuntimeClass where nvidia is the node's default runtime), and the toolkit accepts the
env from unprivileged containers (``accept-nvidia-visible-devices-envvar-when-unprivileged``,
true by default) or the container is privileged / CAP_SYS_ADMIN. With the GPU Operator's CDI
mode (25.10+), nvidia is not the default runtime, so only pods with ``runtimeClassName:
nvidia`` are affected — read here from the toolkit's settings, not from a version.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from imagelint.cluster.objects import items, text
from imagelint.cluster.operator import OperatorComponent
from imagelint.doctor.clues import finding, pod_ref
from imagelint.doctor.context import Context
from imagelint.doctor.model import Evidence, ObjectRef
from imagelint.doctor.workloads import PodWorkload
from imagelint.facts.model import ImageFacts

_TRUE = ("1", "t", "true", "yes", "on")
_NO_DEVICES = ("", "void", "none")


@dataclass(frozen=True)
class Pinned:
    """A container whose own GPU index lands on a physical GPU of its node: pods pinned to one GPU collide."""

    pod: PodWorkload
    container: str
    device: str  # the physical GPU it uses: an index or a UUID
    evidence: tuple[Evidence, ...]


def _toolkit(ctx: Context, labels: Mapping[str, str]) -> OperatorComponent | None:
    for ds in ctx.components("toolkit"):
        if ds.component is not None and ds.component.runs_on(labels):
            return ds.component
    return next((c for c in ctx.snap.policy_components if c.kind == "toolkit"), None)


def _setting(ctx: Context, component: OperatorComponent | None, setting_id: str) -> tuple[str, str]:
    """(value, where it came from) of a toolkit setting: the component's env, else the default."""
    row = ctx.signatures.setting(setting_id)
    for env in row.env:
        if component is not None and env in component.env:
            return component.env[env], f"{component.where} env {env}"
    if setting_id == "runtime-set-as-default" and ctx.snap.cdi_enabled:
        return "false", "ClusterPolicy spec.cdi.enabled (CDI: nvidia is not the default runtime)"
    return row.default, f"default ({row.source.split(' (')[0]})"


def _privileged(container: Mapping[str, object]) -> bool:
    from imagelint.static.podspecs import privileged_by

    return privileged_by(container) is not None


def _mounted_settings(ctx: Context, w: PodWorkload, container: Mapping[str, object]) -> list[tuple[int, Evidence]]:
    """GPU indices fixed in ConfigMaps mounted into the container (DeepStream gpu-id=0...)."""
    from imagelint.facts.gpuindex import language_of
    from imagelint.static.gpuscan import scan_file

    volumes = {text(v, "name"): text(v, "configMap", "name") for v in items(w.pod.spec, "volumes") if text(v, "configMap", "name")}
    found = []
    for mount in items(container, "volumeMounts"):
        name = volumes.get(text(mount, "name"))
        if not name:
            continue
        data = ctx.configmap(w.pod.namespace, name)
        for key, value in sorted((data.data if data is not None else {}).items()):
            for setting in scan_file(value, key, language_of(key, value[:128].encode())).index_settings:
                for index in setting.indices[:1]:
                    line = setting.provenance.line
                    found.append((index, Evidence(ObjectRef("ConfigMap", name, w.pod.namespace), field=f"data[{key}] line {line}", value=setting.text)))
    return found


def _device(visible: str, index: int) -> str | None:
    """The physical GPU CUDA device ``index`` is when the container sees ``visible``."""
    value = visible.strip().lower()
    if value == "all":
        return str(index)
    parts = [p.strip() for p in visible.split(",") if p.strip()]
    return parts[index] if index < len(parts) else None


def _pin(ctx: Context, pinned: list[Pinned], w: PodWorkload, name: str, container: Mapping[str, object], facts: ImageFacts,
         node: str, visible: str, why: Evidence) -> None:
    """The physical GPU the container's first fixed index lands on, given what it sees."""
    indices = _mounted_settings(ctx, w, container) + [
        (s.indices[0], Evidence(pod_ref(w.pod), field=s.provenance.key or "command", value=s.text))
        for s in facts.gpu.index_settings if s.indices
    ]
    for index, evidence in indices[:1]:
        device = _device(visible, index)
        if device is not None:
            pinned.append(Pinned(w, name, f"{node}/{device}", (evidence, why)))


def check_isolation(ctx: Context) -> list[str]:
    notes: list[str] = []
    classes = {rc.name: rc.handler for rc in ctx.snap.runtime_classes}
    gpu_nodes = {n.name: n for n in ctx.gpu_nodes}
    pinned: list[Pinned] = []
    honoured_env: list[tuple[PodWorkload, str, tuple[Evidence, ...]]] = []
    unknown_default = 0
    for w in ctx.workloads:
        pod = w.pod
        node = gpu_nodes.get(pod.node)
        if node is None or ctx.is_node_agent(pod):
            continue
        toolkit = _toolkit(ctx, node.labels)
        runtime_class = w.workload.runtime_class_name if w.workload else None
        if runtime_class:
            nvidia_runtime: bool | None = "nvidia" in classes.get(runtime_class, runtime_class)
            runtime_evidence = Evidence(pod_ref(pod), field="spec.runtimeClassName", value=runtime_class)
        elif toolkit is None:
            nvidia_runtime, runtime_evidence = None, Evidence(pod_ref(pod), value="no RuntimeClass")
        else:
            value, where = _setting(ctx, toolkit, "runtime-set-as-default")
            nvidia_runtime = value.strip().lower() in _TRUE
            runtime_evidence = Evidence(ObjectRef("Node", node.name), field="default runtime", value=f"nvidia={value} ({where})")
        accept_value, accept_where = _setting(ctx, toolkit, "accept-envvar-unprivileged")
        accept = accept_value.strip().lower() in _TRUE
        containers = {text(c, "name"): c for c in items(pod.spec, "containers")}
        for facts in w.containers:
            workload = facts.workload
            if workload is None or workload.init_container:
                continue
            container = containers.get(workload.container, {})
            privileged = _privileged(container)
            env = {e.name: e.value for e in facts.env}
            image_env = ctx.image_env(text(container, "image"))
            pod_value = env.get("NVIDIA_VISIBLE_DEVICES")
            visible = pod_value if pod_value is not None else (image_env or {}).get("NVIDIA_VISIBLE_DEVICES")
            if nvidia_runtime is None:
                unknown_default += 1
                continue
            if not nvidia_runtime:
                continue
            honoured = privileged or accept
            accept_evidence = Evidence(ObjectRef("Node", node.name), field="toolkit accept-nvidia-visible-devices-envvar-when-unprivileged",
                                       value=f"{accept_value} ({accept_where})")
            if privileged:
                ctx.add(finding(ctx, "privileged-gpu-container", "pod", pod.where, f"container {workload.container} is privileged on GPU node {node.name}",
                                [Evidence(pod_ref(pod), field=f"spec.containers[{workload.container}].securityContext", value="privileged / SYS_ADMIN")],
                                nodes=(node.name,)))
            if privileged and w.requests_gpu and pod_value is None:
                # A privileged container gets every device node of the host, whatever it was
                # allocated: it uses the GPUs its own config names, counted from the node's first.
                _pin(ctx, pinned, w, workload.container, container, facts, node.name, "all",
                     Evidence(pod_ref(pod), field=f"spec.containers[{workload.container}].securityContext",
                              value="privileged, no NVIDIA_VISIBLE_DEVICES: sees every GPU of the node"))
                continue
            if not honoured or visible is None or visible.strip().lower() in _NO_DEVICES:
                continue
            if not w.requests_gpu:
                source = (Evidence(pod_ref(pod), field=f"spec.containers[{workload.container}].env", value=f"NVIDIA_VISIBLE_DEVICES={visible}")
                          if pod_value is not None else
                          Evidence(ObjectRef("Image", text(container, "image")), field="config Env", value=f"NVIDIA_VISIBLE_DEVICES={visible}"))
                ctx.add(finding(ctx, "gpu-less-pod-sees-gpus", "pod", pod.where,
                                f"container {workload.container} requests no GPU but sees GPUs {visible} of node {node.name}",
                                [source, runtime_evidence, accept_evidence], nodes=(node.name,)))
                continue
            if pod_value is None:
                continue  # the image's own value: the plugin's allocation overrides it
            env_evidence = Evidence(pod_ref(pod), field=f"spec.containers[{workload.container}].env", value=f"NVIDIA_VISIBLE_DEVICES={pod_value}")
            honoured_env.append((w, workload.container, (env_evidence, accept_evidence)))
            _pin(ctx, pinned, w, workload.container, container, facts, node.name, pod_value, env_evidence)
    collided: set[str] = set()
    by_device: dict[str, list[Pinned]] = {}
    for p in pinned:
        by_device.setdefault(p.device, []).append(p)
    for device, users in sorted(by_device.items()):
        pods = sorted({u.pod.pod.where for u in users})
        if len(pods) < 2:
            continue
        node_name, _, gpu = device.partition("/")
        evidence = [e for u in users for e in u.evidence]
        ctx.add(finding(ctx, "pinned-index-collision", "pod", pods[0], f"pods {', '.join(pods)} all use GPU {gpu} of node {node_name}",
                        evidence, nodes=(node_name,)))
        collided.update(pods)
    for w, container_name, env_and_accept in honoured_env:
        if w.pod.where not in collided:
            ctx.add(finding(ctx, "pod-sets-visible-devices", "pod", w.pod.where,
                            f"container {container_name} sets NVIDIA_VISIBLE_DEVICES and the toolkit honours it", list(env_and_accept),
                            nodes=(w.pod.node,)))
    if unknown_default:
        notes.append(f"{unknown_default} container(s) not judged: no toolkit DaemonSet or ClusterPolicy says whether nvidia is the default runtime")
    if not ctx.images_read:
        notes.append("images' own env not read (use --images): a GPU-less pod whose image sets NVIDIA_VISIBLE_DEVICES=all is seen only with it")
    return notes


__all__ = ["check_isolation"]
