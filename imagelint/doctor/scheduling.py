"""Stage 4, per GPU pod that is not placed: requests vs limits, resource names, selectors and
affinity against the labels nodes carry, taints, free GPUs, and the scheduler's own words
(``FailedScheduling``). Scheduling semantics are the IL60x rules' (``imagelint.rules._kube``).
"""

from __future__ import annotations

from fractions import Fraction

from imagelint.doctor.common import finding, pod_ref
from imagelint.doctor.context import Context
from imagelint.doctor.model import Evidence, Finding, ObjectRef
from imagelint.doctor.selectors import nearest_label, nearest_name
from imagelint.doctor.workloads import PodWorkload
from imagelint.rules._kube import parse_quantity, untolerated_taints


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


def _requests_vs_limits(ctx: Context, w: PodWorkload) -> list[Finding]:
    found = []
    for facts in w.containers:
        for r in facts.workload.resources if facts.workload else ():
            request, limit = parse_quantity(r.request), parse_quantity(r.limit)
            if r.request is not None and (limit is None or request != limit):
                value = f"requests {r.name}={r.request}, " + (f"limits {r.name}={r.limit}" if r.limit is not None else "no limit")
                found.append(finding(ctx, "requests-not-equal-limits", "pod", w.pod.where,
                                     f"container {facts.workload.container} asks {r.name} with requests != limits",
                                     [Evidence(pod_ref(w.pod), field=f"spec.containers[{facts.workload.container}].resources", value=value)]))
    return found


def _placement(ctx: Context, w: PodWorkload, wanted: dict[str, Fraction]) -> list[Finding]:
    workload = w.workload
    if workload is None:
        return []
    pod = w.pod
    nodes = ctx.snap.nodes
    found: list[Finding] = []
    advertised = ctx.advertised
    missing = [name for name in wanted if name not in advertised]
    for name in missing:
        near = nearest_name(name, advertised)
        value = f"asks {name}; nodes advertise {', '.join(sorted(advertised)) or 'no nvidia.com resource'}"
        found.append(finding(ctx, "resource-name-not-advertised", "pod", pod.where,
                             f"no node advertises {name}" + (f" (did you mean {near}?)" if near else "") + _echo(ctx),
                             [Evidence(pod_ref(pod), field="spec.containers[].resources.limits", value=value)]))
    # Selectors: judged against every node (a typo matches none of them).
    selected = ctx.selected_nodes(workload)
    if not selected and (workload.node_selector or workload.affinity_terms):
        evidence, hints = [], []
        labels = [n.labels for n in nodes]
        for key, value in workload.node_selector.items():
            if not any(l.get(key) == value for l in labels):
                near = nearest_label(key, value, ctx.label_pairs)
                hints.append(f"nodeSelector {key}={value}" + (f": did you mean {near}?" if near else ""))
                evidence.append(Evidence(pod_ref(pod), field="spec.nodeSelector", value=f"{key}={value} (no node has it" + (f"; nearest {near})" if near else ")")))
        for term in workload.affinity_terms:
            for req in term:
                if req.operator == "In" and not any(l.get(req.key) in req.values for l in labels):
                    near = nearest_label(req.key, req.values[0] if req.values else None, ctx.label_pairs)
                    hints.append(f"affinity {req.key} In {list(req.values)}" + (f": did you mean {near}?" if near else ""))
                    evidence.append(Evidence(pod_ref(pod), field="spec.affinity.nodeAffinity", value=f"{req.key} In {list(req.values)} (no node has it" + (f"; nearest {near})" if near else ")")))
                elif req.operator == "Exists" and not any(req.key in l for l in labels):
                    near = nearest_label(req.key, None, ctx.label_pairs)
                    hints.append(f"affinity {req.key} Exists" + (f": did you mean {near}?" if near else ""))
                    evidence.append(Evidence(pod_ref(pod), field="spec.affinity.nodeAffinity", value=f"{req.key} Exists (no node has the key)"))
        if not evidence:
            evidence.append(Evidence(pod_ref(pod), field="spec.nodeSelector / spec.affinity", value="no node matches the terms together"))
        found.append(finding(ctx, "selector-matches-no-node", "pod", pod.where,
                             "; ".join(hints) if hints else "its node selector / affinity matches no node", evidence))
        return found
    if missing:
        return found
    # Taints: among the nodes it selects that have the GPUs, every one taints it away.
    fits, tolerated = ctx.placeable(selected, tuple(sorted(wanted)), workload.tolerations)
    if fits and not tolerated:
        taints = {str(t.key) + (f"={t.value}" if t.value else "") + f":{t.effect}" for n in fits for t in untolerated_taints(ctx.node_pool(n), workload.tolerations)}
        first = fits[0]
        found.append(finding(ctx, "untolerated-taint", "pod", pod.where,
                             f"every GPU node it could use is tainted {', '.join(sorted(taints))} and the pod does not tolerate it",
                             [Evidence(ObjectRef("Node", first.name), field="spec.taints", value=", ".join(sorted(taints))),
                              Evidence(pod_ref(pod), field="spec.tolerations",
                                       value=", ".join(f"{t.key}:{t.effect or '*'}" for t in workload.tolerations) or "none")],
                             nodes=tuple(n.name for n in fits)))
        return found
    # Free GPUs on the nodes it can use.
    if tolerated and not pod.node:
        best = ctx.most_free(tuple(tolerated), tuple(sorted(wanted)))
        need = max(wanted.values()) if wanted else Fraction(0)
        if best[1] is not None and best[0] < need:
            found.append(finding(ctx, "insufficient-gpu", "pod", pod.where,
                                 f"no node it can use has {need} free " + ", ".join(wanted) + _echo(ctx),
                                 [Evidence(ObjectRef("Node", best[1].name), field="status.allocatable minus GPUs of pods on it",
                                           value=f"{best[0]} free")]))
    return found


def check_scheduling(ctx: Context) -> list[str]:
    pending = 0
    for w in ctx.gpu_workloads:
        pod = w.pod
        found = _requests_vs_limits(ctx, w)
        if not pod.node and pod.phase == "Pending":
            pending += 1
            found += _placement(ctx, w, _requests(w))
            messages = [e.message for e in ctx.events_for("Pod", pod.namespace, pod.name) if e.reason == "FailedScheduling"]
            messages += [pod.unschedulable_message] if pod.unschedulable_message else []
            for message in messages[-1:]:  # the scheduler's latest word
                for row in ctx.signatures.all_matches(message, "event", reason="FailedScheduling"):
                    evidence = Evidence(pod_ref(pod), event_reason="FailedScheduling", event_message=message)
                    same = next((f for f in found if f.signature == row.id), None)
                    if same is not None:
                        found[found.index(same)] = _with(same, evidence)
                    else:
                        found.append(finding(ctx, row.id, "pod", pod.where, f"the scheduler says: {row.id.replace('-', ' ')}", [evidence]))
        for f in found:
            ctx.add(f)
    # Pods that ask through DRA claims only: the scheduler's words are the evidence (whether a
    # claim is a GPU is the DRA driver's business; only NVIDIA/DRA rows are matched).
    judged = {id(w) for w in ctx.gpu_workloads}
    for w in ctx.workloads:
        pod = w.pod
        if pod.node or pod.phase != "Pending" or id(w) in judged or not isinstance(pod.spec.get("resourceClaims"), list):
            continue
        messages = [e.message for e in ctx.events_for("Pod", pod.namespace, pod.name) if e.reason == "FailedScheduling"]
        messages += [pod.unschedulable_message] if pod.unschedulable_message else []
        for message in messages[-1:]:
            for row in ctx.signatures.all_matches(message, "event", reason="FailedScheduling"):
                if row.id.startswith("dra-") or "nvidia.com" in message:
                    ctx.add(finding(ctx, row.id, "pod", pod.where, f"the scheduler says: {row.id.replace('-', ' ')}",
                                    [Evidence(pod_ref(pod), event_reason="FailedScheduling", event_message=message)]))
    # Controllers whose pods the API server rejects (requests != limits never becomes a pod).
    for event in ctx.snap.events:
        if event.reason != "FailedCreate" or not _scope_ok(ctx, event.namespace):
            continue
        row = ctx.signatures.first_match(event.message, "event", reason=event.reason)
        if row is not None and row.stage == 4:
            ctx.add(finding(ctx, row.id, "workload", f"{event.namespace}/{event.object_name}",
                            f"{event.object_kind} {event.object_name} cannot create its pods",
                            [Evidence(ObjectRef(event.object_kind, event.object_name, event.namespace),
                                      event_reason=event.reason, event_message=event.message)]))
    return [f"{len(ctx.gpu_workloads)} GPU pod(s), {pending} Pending and unscheduled"]


def _echo(ctx: Context) -> str:
    """A GPU shortage while GPU nodes fail stages 1-3 is mostly their echo: say where the cause is."""
    if not ctx.blocked:
        return ""
    first = min(ctx.blocked.values())
    return f" (while {len(ctx.blocked)} GPU node(s) fail stage {first}: fix that first)"


def _scope_ok(ctx: Context, namespace: str) -> bool:
    options = ctx.snap.options
    return not options.pod and (not options.namespace or options.namespace == namespace)


def _with(f: Finding, evidence: Evidence) -> Finding:
    from dataclasses import replace

    return replace(f, evidence=(f.evidence + (evidence,))[:4])


__all__ = ["check_scheduling"]
