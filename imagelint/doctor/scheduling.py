"""Stage 4, per GPU pod that is not placed: requests vs limits, resource names, selectors and
affinity against the labels nodes carry, taints, free GPUs, and the scheduler's own words
(``FailedScheduling``). Scheduling semantics are the IL60x rules' (``imagelint.kube.scheduler``).
"""

from __future__ import annotations

from fractions import Fraction

from imagelint.cluster.events import latest_first
from imagelint.cluster.node_status import NodeInfo
from imagelint.cluster.pods import PodInfo
from imagelint.doctor.clues import finding, pod_ref
from imagelint.doctor.context import Context
from imagelint.doctor.dra_chain import uses_claims
from imagelint.doctor.model import Diagnosis, Evidence, ObjectRef
from imagelint.doctor.scheduler_message import is_lifecycle_taint, parse_reasons
from imagelint.doctor.selectors import nearest_label, nearest_name
from imagelint.doctor.workloads import PodWorkload
from imagelint.kube.scheduler import parse_quantity, untolerated_taints
from imagelint.matrix.doctor_signatures import Signature


def _requests(w: PodWorkload) -> dict[str, Fraction]:
    """GPU resources the pod's (non-init) containers ask for, summed (limits win: they are the request)."""
    total: dict[str, Fraction] = {}
    for facts in w.containers:
        if facts.workload is None or facts.workload.init_container:
            continue
        for r in facts.workload.resources:
            amount = parse_quantity(r.limit if r.limit is not None else r.request)
            if amount is not None:
                total[r.name] = total.get(r.name, Fraction(0)) + amount
    return total


def _requests_vs_limits(ctx: Context, w: PodWorkload) -> list[Diagnosis]:
    found = []
    for facts in w.containers:
        workload = facts.workload
        if workload is None:
            continue
        for r in workload.resources:
            request, limit = parse_quantity(r.request), parse_quantity(r.limit)
            if r.request is not None and (limit is None or request != limit):
                value = f"requests {r.name}={r.request}, " + (f"limits {r.name}={r.limit}" if r.limit is not None else "no limit")
                found.append(finding(ctx, "requests-not-equal-limits", "pod", w.pod.where,
                                     f"container {workload.container} asks {r.name} with requests != limits",
                                     [Evidence(pod_ref(w.pod), field=f"spec.containers[{workload.container}].resources", value=value)]))
    return found


def _usable(ctx: Context, nodes: tuple[NodeInfo, ...] | list[NodeInfo]) -> list[NodeInfo]:
    """Nodes not failing stages 1-3: a node already reported broken is not judged again."""
    return [n for n in nodes if n.name not in ctx.blocked]


def _placement(ctx: Context, w: PodWorkload, wanted: dict[str, Fraction]) -> tuple[list[Diagnosis], bool]:
    """Doctor's own reading of why the pod is not placed, and whether it waits on nodes that fail
    an earlier stage (then stage 4 has nothing to add: those nodes' failure is the cause)."""
    workload = w.workload
    if workload is None:
        return [], False
    pod = w.pod
    nodes = ctx.snap.nodes
    found: list[Diagnosis] = []
    advertised = ctx.advertised
    missing = [name for name in wanted if name not in advertised]
    for name in missing:
        near = nearest_name(name, advertised)
        value = f"asks {name}; nodes advertise {', '.join(sorted(advertised)) or 'no nvidia.com resource'}"
        found.append(finding(ctx, "resource-name-not-advertised", "pod", pod.where,
                             f"no node advertises {name}" + (f" (did you mean {near}?)" if near else "") + _echo(ctx),
                             [Evidence(pod_ref(pod), field="spec.containers[].resources.limits", value=value)]))
    # Selectors: judged against every node (a typo matches none of them); the nearest label is
    # looked for among the nodes that could give the pod its GPUs (a CPU node's label is no help).
    selected = ctx.selected_nodes(workload)
    if not selected and (workload.node_selector or workload.affinity_terms):
        pairs = ctx.gpu_label_pairs if wanted else ctx.label_pairs
        evidence, hints = [], []
        labels = [n.labels for n in nodes]
        for key, value in workload.node_selector.items():
            if not any(node_labels.get(key) == value for node_labels in labels):
                near = nearest_label(key, value, pairs)
                hints.append(f"nodeSelector {key}={value}" + (f": did you mean {near}?" if near else ""))
                evidence.append(Evidence(pod_ref(pod), field="spec.nodeSelector", value=f"{key}={value} (no node has it" + (f"; nearest {near})" if near else ")")))
        for term in workload.affinity_terms:
            for req in term:
                if req.operator == "In" and not any(node_labels.get(req.key) in req.values for node_labels in labels):
                    near = nearest_label(req.key, req.values[0] if req.values else None, pairs)
                    hints.append(f"affinity {req.key} In {list(req.values)}" + (f": did you mean {near}?" if near else ""))
                    evidence.append(Evidence(pod_ref(pod), field="spec.affinity.nodeAffinity", value=f"{req.key} In {list(req.values)} (no node has it" + (f"; nearest {near})" if near else ")")))
                elif req.operator == "Exists" and not any(req.key in node_labels for node_labels in labels):
                    near = nearest_label(req.key, None, pairs)
                    hints.append(f"affinity {req.key} Exists" + (f": did you mean {near}?" if near else ""))
                    evidence.append(Evidence(pod_ref(pod), field="spec.affinity.nodeAffinity", value=f"{req.key} Exists (no node has the key)"))
        if not evidence:
            evidence.append(Evidence(pod_ref(pod), field="spec.nodeSelector / spec.affinity", value="no node matches the terms together"))
        found.append(finding(ctx, "selector-matches-no-node", "pod", pod.where,
                             "; ".join(hints) if hints else "its node selector / affinity matches no node", evidence))
        return found, False
    if missing:
        return found, False
    resources = tuple(sorted(wanted))
    fits_all, _ = ctx.placeable(selected, resources, workload.tolerations)
    usable = tuple(_usable(ctx, selected))
    if fits_all and not _usable(ctx, fits_all):
        return found, True  # every node with its GPUs fails stage 1-3: reported there
    fits, tolerated = ctx.placeable(usable, resources, workload.tolerations)
    # Taints: among the nodes it selects that have the GPUs, every one taints it away. Taints
    # Kubernetes sets itself (node.kubernetes.io/*: not ready, unreachable, cordoned) are the
    # node's state, never a toleration to add.
    if fits and not tolerated:
        untolerated = {n.name: untolerated_taints(ctx.node_pool(n), workload.tolerations) for n in fits}
        if all(all(is_lifecycle_taint(str(t.key)) for t in ts) for ts in untolerated.values()):
            keys = sorted({str(t.key) for ts in untolerated.values() for t in ts})
            found.append(finding(ctx, "node-lifecycle-taint", "pod", pod.where,
                                 f"every GPU node it could use is kept off by Kubernetes ({', '.join(keys)})",
                                 [Evidence(ObjectRef("Node", n), field="spec.taints", value=", ".join(keys)) for n in list(untolerated)[:2]],
                                 nodes=tuple(untolerated)))
            return found, False
        taints = {str(t.key) + (f"={t.value}" if t.value else "") + f":{t.effect}"
                  for ts in untolerated.values() for t in ts if not is_lifecycle_taint(str(t.key))}
        first = fits[0]
        found.append(finding(ctx, "untolerated-taint", "pod", pod.where,
                             f"every GPU node it could use is tainted {', '.join(sorted(taints))} and the pod does not tolerate it",
                             [Evidence(ObjectRef("Node", first.name), field="spec.taints", value=", ".join(sorted(taints))),
                              Evidence(pod_ref(pod), field="spec.tolerations",
                                       value=", ".join(f"{t.key}:{t.effect or '*'}" for t in workload.tolerations) or "none")],
                             nodes=tuple(n.name for n in fits)))
        return found, False
    # More GPUs than any node it can use has at all: never schedulable, however long it waits.
    if tolerated and not pod.node:
        for name, need in sorted(wanted.items()):
            most, largest = ctx.largest(tuple(tolerated), name)
            if largest is not None and need > most:
                found.append(finding(ctx, "gpu-request-exceeds-every-node", "pod", pod.where,
                                     f"no node has {need} {name} at all (the largest has {most}): this pod can never be scheduled",
                                     [Evidence(pod_ref(pod), field="spec.containers[].resources.limits", value=f"{name}={need}"),
                                      Evidence(ObjectRef("Node", largest.name), field=f"status.allocatable[{name}]", value=str(most))],
                                     nodes=tuple(n.name for n in tolerated)))
        if found:
            return found, False
    # Free GPUs on the nodes it can use.
    if tolerated and not pod.node:
        best = ctx.most_free(tuple(tolerated), resources)
        need = max(wanted.values()) if wanted else Fraction(0)
        if best[1] is not None and best[0] < need:
            found.append(finding(ctx, "insufficient-gpu", "pod", pod.where,
                                 f"no node it can use has {need} free " + ", ".join(wanted) + _echo(ctx),
                                 [Evidence(ObjectRef("Node", best[1].name), field="status.allocatable minus GPUs of pods on it",
                                           value=f"{best[0]} free")]))
    return found, False


def _scheduler_word(ctx: Context, pod: PodInfo) -> Evidence | None:
    """The scheduler's latest word on the pod: its newest FailedScheduling event (by eventTime or
    lastTimestamp, whichever is set), else the pod's PodScheduled=False condition."""
    events = latest_first([e for e in ctx.events_for("Pod", pod.namespace, pod.name) if e.reason == "FailedScheduling"])
    if events:
        return Evidence(pod_ref(pod), event_reason="FailedScheduling", event_message=events[0].message)
    if pod.unschedulable_message:
        return Evidence(pod_ref(pod), field="status.conditions[PodScheduled]", value=f"False Unschedulable: {pod.unschedulable_message}")
    return None


def _message(evidence: Evidence) -> str:
    return evidence.event_message or evidence.value.removeprefix("False Unschedulable: ")


def _explained_by_counts(ctx: Context, row_id: str, message: str) -> bool:
    """Whether the scheduler's count for this reason is made of nodes that cannot be the cause:
    "Insufficient nvidia.com/gpu" counted on nodes that have no such GPU at all (CPU nodes), an
    untolerated taint counted on nodes that Kubernetes itself keeps off (not ready, unreachable)."""
    if "nodes" in ctx.snap.refused:
        return False
    reasons = parse_reasons(message)
    if row_id == "insufficient-gpu":
        counted = [r for r in reasons if r.resource]
        return bool(counted) and all(
            r.count <= sum(1 for n in ctx.snap.nodes if (parse_quantity(n.allocatable.get(r.resource)) or 0) == 0) for r in counted)
    if row_id == "untolerated-taint":
        counted = [r for r in reasons if r.is_taint]
        lifecycle = sum(1 for n in ctx.snap.nodes if n.taints and all(is_lifecycle_taint(str(t.key)) for t in n.taints))
        return bool(counted) and all(is_lifecycle_taint(r.taint_key) if r.taint_key else r.count <= lifecycle for r in counted)
    return False


def _counted(row: Signature, message: str) -> str:
    """The scheduler's own reason for a row, with its count ("2 Insufficient nvidia.com/gpu")."""
    reason = next((r for r in parse_reasons(message) if row.pattern is not None and row.pattern.search(r.text)), None)
    return f"{reason.count} {reason.text}" if reason is not None else row.id.replace("-", " ")


def check_scheduling(ctx: Context) -> list[str]:
    pending = waiting_on_broken = 0
    nodes_read = "nodes" not in ctx.snap.refused
    dra_notes: list[str] = []
    for w in ctx.gpu_workloads:
        pod = w.pod
        found = _requests_vs_limits(ctx, w)
        if not pod.node and pod.phase == "Pending" and uses_claims(pod):
            pending += 1
            found += _dra_chain(ctx, w, dra_notes)
        elif not pod.node and pod.phase == "Pending":
            pending += 1
            wanted = _requests(w)
            own, blocked = _placement(ctx, w, wanted) if nodes_read else ([], False)
            found += own
            word = _scheduler_word(ctx, pod)
            if blocked:
                waiting_on_broken += 1
            elif word is not None:
                found = _with_scheduler_word(ctx, w, found, own, word)
        for f in found:
            ctx.add(f)
    # Pods that ask through DRA claims only: the scheduler's words are the evidence (whether a
    # claim is a GPU is the DRA driver's business; only NVIDIA/DRA rows are matched).
    judged = {id(w) for w in ctx.gpu_workloads}
    for w in ctx.workloads:
        pod = w.pod
        if pod.node or pod.phase != "Pending" or id(w) in judged or not uses_claims(pod):
            continue
        for f in _dra_chain(ctx, w, dra_notes):
            ctx.add(f)
    # Controllers whose pods the API server rejects (an operator that creates pods itself gets the
    # 422 of a pod whose requests != limits and records it as FailedCreate on its own object).
    for event in ctx.snap.events:
        if event.reason != "FailedCreate" or not _scope_ok(ctx, event.namespace):
            continue
        row = ctx.signatures.first_match(event.message, "event", reason=event.reason)
        if row is not None and row.stage == 4:
            kind, name = ctx.workload_of(event.object_kind, event.namespace, event.object_name)
            ctx.add(finding(ctx, row.id, "workload", f"{event.namespace}/{name}",
                            f"{kind} {name} cannot create its pods",
                            [Evidence(ObjectRef(event.object_kind, event.object_name, event.namespace),
                                      event_reason=event.reason, event_message=event.message)]))
    notes = [f"{len(ctx.gpu_workloads)} GPU pod(s), {pending} Pending and unscheduled"] + list(dict.fromkeys(dra_notes))
    ctx.deferred[4] = waiting_on_broken
    if waiting_on_broken:
        notes.append(f"{waiting_on_broken} Pending pod(s) wait on GPU nodes that fail an earlier stage: not judged here")
    if not nodes_read:
        notes.append("without nodes, only the scheduler's own words were read")
    return notes


def _dra_chain(ctx: Context, w: PodWorkload, notes: list[str]) -> list[Diagnosis]:
    """A Pending pod that asks through ResourceClaims: its claim chain (imagelint.doctor.dra_chain)
    first; where every link holds (or could not be read), the scheduler's own DRA words."""
    from imagelint.doctor.dra_chain import check_dra_pod

    pod = w.pod
    word = _scheduler_word(ctx, pod)
    found, said = check_dra_pod(ctx, w, word)
    notes.extend(said)
    if found or word is None:
        return found
    message = _message(word)
    return [finding(ctx, row.id, "pod", pod.where, f"the scheduler says: {_counted(row, message)}", [word])
            for row in ctx.signatures.all_matches(message, "event", reason="FailedScheduling")
            if row.id.startswith("dra-") or "nvidia.com" in message]


def _with_scheduler_word(ctx: Context, w: PodWorkload, found: list[Diagnosis], own: list[Diagnosis], word: Evidence) -> list[Diagnosis]:
    """The scheduler's message as evidence of doctor's own finding, or as findings of its own
    where doctor found no cause (or could not read the nodes) — each reason read as a count."""
    pod = w.pod
    message = _message(word)
    rows = ctx.signatures.all_matches(message, "event", reason="FailedScheduling")
    if any(r.id == "node-lifecycle-taint" for r in rows):
        rows = [r for r in rows if r.id != "untolerated-taint"]
    attached = False
    for row in rows:
        same = next((f for f in found if f.signature == row.id), None)
        if same is not None:
            found[found.index(same)] = _with(same, word)
            attached = True
    if own:
        if not attached:
            found[found.index(own[0])] = _with(own[0], word)
        return found  # doctor read the nodes and named the cause: the scheduler's other counts are other nodes
    added = False
    for row in rows:
        if any(f.signature == row.id for f in found) or _explained_by_counts(ctx, row.id, message):
            continue
        found.append(finding(ctx, row.id, "pod", pod.where, f"the scheduler says: {_counted(row, message)}", [word]))
        added = True
    if not added and not attached:
        found.append(finding(ctx, "pod-unschedulable", "pod", pod.where, "the scheduler cannot place it", [word]))
    return found


def _echo(ctx: Context) -> str:
    """A GPU shortage while GPU nodes fail stages 1-3 is mostly their echo: say where the cause is."""
    if not ctx.blocked:
        return ""
    first = min(ctx.blocked.values())
    return f" (while {len(ctx.blocked)} GPU node(s) fail stage {first}: fix that first)"


def _scope_ok(ctx: Context, namespace: str) -> bool:
    options = ctx.snap.options
    return not options.pod and (not options.namespace or options.namespace == namespace)


def _with(f: Diagnosis, evidence: Evidence) -> Diagnosis:
    from dataclasses import replace

    return replace(f, evidence=(f.evidence + (evidence,))[:4])


__all__ = ["check_scheduling"]
