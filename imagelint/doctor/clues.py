"""Helpers the stages share: a finding from a signature row, evidence from a pod's state,
log tail and events, and merging per-node findings into one per node pool."""

from __future__ import annotations

from dataclasses import dataclass, replace

from imagelint.cluster.pods import ContainerState, PodInfo
from imagelint.doctor.context import Context
from imagelint.doctor.model import Diagnosis, Evidence, ObjectRef
from imagelint.matrix.doctor_signatures import Signature

MAX_EVIDENCE = 4  # per finding: enough to check it, short enough to read


def finding(ctx: Context, signature_id: str, subject_kind: str, subject: str, message: str,
            evidence: list[Evidence] | tuple[Evidence, ...], nodes: tuple[str, ...] = (), stage: int | None = None) -> Diagnosis:
    row = ctx.signatures.by_id(signature_id)
    return Diagnosis(
        stage=stage or row.stage, signature=row.id, subject_kind=subject_kind, subject=subject, message=message,
        evidence=tuple(evidence)[:MAX_EVIDENCE], meaning=row.meaning, fix=row.fix, source=row.source, nodes=nodes,
    )


def pod_ref(pod: PodInfo) -> ObjectRef:
    return ObjectRef("Pod", pod.name, pod.namespace)


@dataclass(frozen=True)
class Clue:
    """One piece of evidence about a pod, and the signature row it matched (None: unmatched)."""

    signature: Signature | None
    evidence: Evidence


def container_state_text(c: ContainerState) -> str:
    text = c.reason or c.state
    if c.restart_count:
        text += f", {c.restart_count} restarts"
    if c.last_reason:
        text += f", last exit {c.last_reason}" + (f" ({c.last_exit_code})" if c.last_exit_code is not None else "")
    return text


def init_progress(pod: PodInfo) -> str | None:
    """kubectl's ``Init:N/M`` for a pod stuck in its init containers (the GPU Operator's validator
    runs driver, toolkit, CUDA and plugin validation that way), naming the one it waits on."""
    inits = [c for c in pod.containers if c.init]
    done = sum(1 for c in inits if c.state == "terminated" and c.reason == "Completed")
    if not inits or done == len(inits):
        return None
    c = next(c for c in inits if not (c.state == "terminated" and c.reason == "Completed"))
    if c.state == "running":
        what = "running, not complete"
    elif c.state == "terminated":
        what = f"failed {c.reason}" + (f" ({c.last_exit_code})" if c.last_exit_code is not None else "")
    else:
        what = f"{c.state} {c.reason}".strip()
    restarts = f", {c.restart_count} restarts" if c.restart_count else ""
    return f"Init:{done}/{len(inits)} ({c.name} {what}{restarts})"


def pod_clues(ctx: Context, pod: PodInfo, component: str = "any") -> list[Clue]:
    """Why a pod is not Ready: its waiting containers, their log tails (the crashed instance's
    for a restarting container) and the pod's Warning events, each matched against the signatures."""
    clues: list[Clue] = []
    for event in ctx.events_for("Pod", pod.namespace, pod.name):
        row = ctx.signatures.first_match(event.message, "event", reason=event.reason)
        clues.append(Clue(row, Evidence(pod_ref(pod), event_reason=event.reason, event_message=event.message)))
    for c in pod.containers:
        if c.ready or c.init and c.state == "terminated" and c.reason == "Completed":
            continue
        state = Evidence(pod_ref(pod), field=f"status.containerStatuses[{c.name}]", value=container_state_text(c))
        if c.state == "waiting" and c.message:
            row = ctx.signatures.first_match(c.message, "event")
            if row is not None:
                clues.append(Clue(row, replace(state, value=f"{state.value}: {c.message}")))
        lines: tuple[str, ...] = ()
        if c.restart_count and c.state != "running":
            lines = ctx.snap.log_tail(pod, c.name, previous=True).lines
        if not lines and (c.state != "waiting" or c.restart_count):  # a container still being created has no log
            lines = ctx.snap.log_tail(pod, c.name, previous=False).lines
        words = Evidence(pod_ref(pod), field=f"status.containerStatuses[{c.name}].lastState.terminated.message")
        # the log first (the fullest account), then the crashed instance's termination message,
        # which a pods read carries even where the kubelet cannot be reached for the log
        sources = [(line, Evidence(pod_ref(pod), field=f"container {c.name}", log_line=line)) for line in lines]
        sources += [(line, replace(words, value=line)) for line in c.last_words]
        match = next(((row, e) for line, e in sources if (row := ctx.signatures.first_match(line, "log", component=component))), None)
        if match is not None:
            clues.append(Clue(match[0], match[1]))
        elif sources:  # unmatched: the log's last line says most
            clues.append(Clue(None, sources[len(lines) - 1][1] if lines else sources[-1][1]))
        clues.append(Clue(None, state))
    return clues


def merge_by_pool(findings: list[Diagnosis]) -> list[Diagnosis]:
    """Per-node findings with the same stage, signature, pool and message → one, nodes joined."""
    merged: dict[tuple[int, str, str, str], Diagnosis] = {}
    for f in findings:
        key = (f.stage, f.signature, f.subject, f.message)
        if key in merged:
            first = merged[key]
            evidence = first.evidence + tuple(e for e in f.evidence if e not in first.evidence)
            merged[key] = replace(first, nodes=first.nodes + f.nodes, evidence=evidence[:MAX_EVIDENCE])
        else:
            merged[key] = f
    return list(merged.values())


__all__ = ["Clue", "MAX_EVIDENCE", "container_state_text", "init_progress", "finding", "merge_by_pool", "pod_clues", "pod_ref"]
