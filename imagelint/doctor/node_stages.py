"""Stages 1-3, per GPU node (merged per node pool): driver ready, device plugin registered,
node advertises the GPUs. A node that fails a stage is "blocked" for the later ones: the first
failure is the cause, the rest its echo."""

from __future__ import annotations

from dataclasses import replace

from imagelint.cluster.node_status import NodeInfo
from imagelint.cluster.nvidia_names import nvidia_names
from imagelint.doctor.clues import (
    Clue,
    finding,
    init_progress,
    merge_by_pool,
    pod_clues,
)
from imagelint.doctor.context import Context, gpu_count
from imagelint.doctor.model import Diagnosis, Evidence, ObjectRef


def _node_ref(node: NodeInfo) -> ObjectRef:
    return ObjectRef("Node", node.name)


def _component_clues(ctx: Context, node: NodeInfo) -> list[tuple[str, Clue]]:
    """Clues from every NVIDIA component pod on the node that is not Ready: (component kind, clue)."""
    found: list[tuple[str, Clue]] = []
    for ds in ctx.component_daemonsets:
        pod = ctx.daemonset_pod(ds, node.name)
        if pod is None or all(c.ready for c in pod.containers if not c.init) and pod.containers:
            continue
        kind = ds.component.kind if ds.component else "any"
        found.extend((kind, clue) for clue in pod_clues(ctx, pod, kind))
    return found


def check_driver(ctx: Context) -> list[str]:
    """Stage 1: a driver signature in a component pod's log or events, or an event on the node."""
    findings: list[Diagnosis] = []
    names = nvidia_names()
    labelled = 0
    for node in ctx.gpu_nodes:
        clues = [c for _, c in _component_clues(ctx, node) if c.signature is not None and c.signature.stage == 1]
        for event in ctx.events_for("Node", "", node.name):
            row = ctx.signatures.first_match(event.message, "event", reason=event.reason)
            if row is not None and row.stage == 1:
                clues.append(Clue(row, Evidence(_node_ref(node), event_reason=event.reason, event_message=event.message)))
        if clues:
            row = next(c.signature for c in clues if c.signature is not None)
            findings.append(finding(ctx, row.id, "node pool", ctx.pool_of(node), f"the NVIDIA driver is not usable ({row.id})",
                                    [c.evidence for c in clues], nodes=(node.name,)))
            ctx.block(node.name, 1)
        elif node.labels.get(names.driver_full):
            labelled += 1
    for f in merge_by_pool(findings):
        ctx.add(f)
    notes = [f"{len(ctx.gpu_nodes)} GPU node(s)"]
    if labelled:
        notes.append(f"{labelled} node(s) report a driver version (GPU Feature Discovery label {names.driver_full})")
    return notes


def check_device_plugin(ctx: Context) -> list[str]:
    """Stage 2: a device plugin DaemonSet selects the node and its pod there is Ready (or DRA publishes the GPUs)."""
    findings: list[Diagnosis] = []
    plugins = ctx.components("device-plugin")
    seen: dict[tuple[str, str, str], Diagnosis] = {}
    dra_nodes = other_plugin = 0
    for node in ctx.gpu_nodes:
        if node.name in ctx.blocked:
            continue
        if ctx.snap.dra.devices_on(node.name) > 0:
            dra_nodes += 1
            continue
        running = [ds for ds in plugins if ds.component is not None and ds.component.runs_on(node.labels)]
        if not running and gpu_count(node, ctx.prefix) > 0:
            other_plugin += 1  # allocatable GPUs prove some device plugin registered (KubeVirt's, a vendor's)
            continue
        if not running:
            evidence = [Evidence(ObjectRef("DaemonSet", ds.name, ds.namespace), field="spec.template.spec nodeSelector/affinity",
                                 value=f"does not select node {node.name}") for ds in plugins]
            if not plugins:
                evidence = [Evidence(ObjectRef("Node", node.name), value="no device plugin DaemonSet in the cluster (none runs the k8s-device-plugin image)")]
            findings.append(finding(ctx, "device-plugin-missing", "node pool", ctx.pool_of(node), "no device plugin runs on the node",
                                    evidence, nodes=(node.name,)))
            ctx.block(node.name, 2)
            continue
        ds = running[0]
        pod = ctx.daemonset_pod(ds, node.name)
        ds_ref = ObjectRef("DaemonSet", ds.name, ds.namespace)
        if pod is None:
            if not ctx.snap.pods and "pods" in ctx.snap.refused:
                continue  # cannot see pods: judged by DaemonSet status only
            findings.append(finding(
                ctx, "device-plugin-missing", "node pool", ctx.pool_of(node), f"device plugin DaemonSet {ds.where} has no pod on the node",
                [Evidence(ds_ref, field="status", value=f"desiredNumberScheduled={ds.desired}, numberReady={ds.ready}")],
                nodes=(node.name,)))
            ctx.block(node.name, 2)
            continue
        if pod.containers and all(c.ready for c in pod.containers if not c.init):
            continue
        states = ", ".join(f"{c.name} {c.reason or c.state}" for c in pod.containers if not c.ready and not c.init) or pod.phase
        message = f"device plugin pod is not Ready ({states})"
        # Pods of one DaemonSet in one pool failing the same way fail for the same reason: one
        # log read per group (a 400-node pool must not cost 400 log reads), the nodes joined.
        group = (ds.where, ctx.pool_of(node), states)
        if group in seen:
            findings.append(replace(seen[group], nodes=(node.name,)))
            ctx.block(node.name, 2)
            continue
        clues = pod_clues(ctx, pod, "device-plugin")
        # only where the plugin fails: a release "too old" for a node whose plugin works is no failure
        clues += [Clue(None, Evidence(ds_ref, field="image", value=unmet)) for unmet in ctx.plugin_requirements_unmet(node.name)]
        matched = [c for c in clues if c.signature is not None]
        if matched and matched[0].signature is not None:
            row = matched[0].signature
            evidence = [c.evidence for c in matched] + [c.evidence for c in clues if c.signature is None]
            findings.append(finding(ctx, row.id, "node pool", ctx.pool_of(node), message, evidence, nodes=(node.name,),
                                    stage=2))
        else:
            findings.append(finding(ctx, "device-plugin-no-devices", "node pool", ctx.pool_of(node), message,
                                    [c.evidence for c in clues], nodes=(node.name,)))
        seen[group] = findings[-1]
        ctx.block(node.name, 2)
    for f in merge_by_pool(findings):
        ctx.add(f)
    notes = [f"{len(plugins)} device plugin DaemonSet(s): " + ", ".join(d.where for d in plugins)] if plugins else []
    if dra_nodes:
        notes.append(f"{dra_nodes} node(s) publish GPUs through DRA ResourceSlices")
    if other_plugin:
        notes.append(f"{other_plugin} node(s) advertise GPUs through a device plugin other than NVIDIA's k8s-device-plugin DaemonSets")
    return notes


def check_advertised(ctx: Context) -> list[str]:
    """Stage 3: the node is Ready and its allocatable carries nvidia.com/* GPUs (or DRA devices)."""
    findings: list[Diagnosis] = []
    prefix = ctx.prefix
    advertising = 0
    for node in ctx.gpu_nodes:
        if node.name in ctx.blocked:
            continue
        ref = _node_ref(node)
        if node.ready and node.ready != "True":
            findings.append(finding(
                ctx, "node-not-ready", "node pool", ctx.pool_of(node), "the node is not Ready",
                [Evidence(ref, field="status.conditions[Ready]", value=f"{node.ready} {node.ready_reason}: {node.ready_message}".strip())],
                nodes=(node.name,)))
            ctx.block(node.name, 3)
            continue
        if gpu_count(node, prefix) > 0 or ctx.snap.dra.devices_on(node.name) > 0:
            advertising += 1
            continue
        capacity = {k: v for k, v in node.capacity.items() if k.startswith(prefix)}
        value = f"no {prefix}* resource" + (f" (capacity has {', '.join(f'{k}={v}' for k, v in sorted(capacity.items()))})" if capacity else "")
        # Node agents stuck in their init containers say how far the GPU stack got (the GPU
        # Operator's validator waits at plugin-validation until the plugin registers).
        stuck = [Evidence(ObjectRef("Pod", p.name, p.namespace), field="status", value=progress)
                 for p in ctx.pods_on(node.name) if ctx.is_node_agent(p) and (progress := init_progress(p))]
        findings.append(finding(
            ctx, "gpus-unhealthy" if capacity else "gpus-not-advertised", "node pool", ctx.pool_of(node),
            f"the node advertises no {prefix}* GPUs", [Evidence(ref, field="status.allocatable", value=value), *stuck], nodes=(node.name,)))
        ctx.block(node.name, 3)
    for f in merge_by_pool(findings):
        ctx.add(f)
    skipped = sum(1 for n in ctx.gpu_nodes if ctx.blocked.get(n.name, 3) < 3)
    return [f"{advertising} node(s) advertise GPUs"] + ([f"{skipped} node(s) not judged here: they fail an earlier stage"] if skipped else [])


__all__ = ["check_advertised", "check_device_plugin", "check_driver"]
