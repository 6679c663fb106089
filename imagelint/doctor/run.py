"""``run_doctor``: read the cluster once, run the stages in the seed order, build the report.

Each stage is a small check over the :class:`~imagelint.doctor.context.Context`; a stage whose
input RBAC forbids (or the API does not serve) is "not checked" with the reason, and the run
goes on. Findings keep the stage's order (a node that failed stage 2 is not judged at 3).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace

from imagelint.cluster.source import ObjectSource
from imagelint.doctor.context import Context
from imagelint.doctor.isolation import check_isolation
from imagelint.doctor.model import (
    BLOCKED,
    FAILED,
    NOT_CHECKED,
    OK,
    STAGES,
    Diagnosis,
    DoctorReport,
    ImageSide,
    StageResult,
)
from imagelint.doctor.node_stages import (
    check_advertised,
    check_device_plugin,
    check_driver,
)
from imagelint.doctor.runtime import check_runtime
from imagelint.doctor.scheduling import check_scheduling
from imagelint.doctor.snapshot import DoctorOptions, Snapshot, read_snapshot
from imagelint.errors import UsageError
from imagelint.matrix.doctor_signatures import Signatures, load_signatures

CHECKS: dict[int, Callable[[Context], list[str]]] = {
    1: check_driver, 2: check_device_plugin, 3: check_advertised, 4: check_scheduling, 5: check_runtime, 6: check_isolation,
}
# What a stage cannot do without (a refusal makes it "not checked"), and what only narrows it.
# Stage 4 without nodes still reads the scheduler's own words on each Pending pod (a
# namespace-scoped user sees why their pod waits); it cannot judge selectors, taints or free GPUs.
NEEDS: dict[int, tuple[str, ...]] = {1: ("nodes",), 2: ("nodes", "daemonsets"), 3: ("nodes",), 4: ("pods",), 5: ("pods",), 6: ("pods", "nodes")}
NARROWS: dict[int, tuple[str, ...]] = {
    1: ("pods", "pods/log", "events"), 2: ("pods", "pods/log", "events", "resourceslices"), 3: ("resourceslices",),
    4: ("events", "nodes", "replicasets"), 5: ("events", "runtimeclasses", "nodes", "replicasets"),
    6: ("configmaps", "runtimeclasses", "clusterpolicies"),
}
ImageSideReader = Callable[[Context], ImageSide]


def diagnose(snap: Snapshot, signatures: Signatures | None = None, image_side: ImageSideReader | None = None) -> DoctorReport:
    ctx = Context(snap=snap, signatures=signatures or load_signatures())
    if image_side is not None and "nodes" not in snap.refused and "pods" not in snap.refused:
        ctx.image_side = image_side(ctx)
    results = []
    for number, ident, title in STAGES:
        missing = [snap.refused[k] for k in NEEDS[number] if k in snap.refused]
        if missing:
            results.append(StageResult(number, ident, title, NOT_CHECKED, notes=tuple(f"stage {number} not checked: {m}" for m in missing)))
            continue
        before, logs_before = len(ctx.findings), len(snap.log_notes)
        notes = CHECKS[number](ctx)
        notes += snap.log_notes[logs_before:]  # a log is evidence, never a precondition: said, and the stage goes on
        # refusals met while checking (pods/log, configmaps) are known only now
        notes += [f"partly checked: {snap.refused[k]}" for k in NARROWS[number] if k in snap.refused]
        mine = tuple(f for f in ctx.findings[before:])
        status = FAILED if mine else OK
        every_node_failed = ctx.gpu_nodes and all(ctx.blocked.get(n.name, number) < number for n in ctx.gpu_nodes)
        if not mine and ((number in (2, 3, 4, 5) and every_node_failed) or ctx.deferred.get(number)):
            status = BLOCKED  # what it would judge waits on an earlier failure: an "ok" would be a silent pass
        results.append(StageResult(number, ident, title, status, findings=mine, notes=tuple(notes)))
    # a check may report a finding under another stage (a driver error seen in a pod's events)
    findings = [_named_by_workload(ctx, f) for f in ctx.findings]
    by_stage = {r.number: [f for f in findings if f.stage == r.number] for r in results}
    results = [
        StageResult(r.number, r.id, r.title, r.status if r.status in (NOT_CHECKED, BLOCKED) else (FAILED if by_stage[r.number] else OK),
                    findings=tuple(by_stage[r.number]), notes=r.notes)
        for r in results
    ]
    results = [_not_ok_without(r, snap) for r in results]
    return DoctorReport(
        server=snap.conn.server if snap.conn else "", context=snap.conn.context if snap.conn else "",
        stages=tuple(results), gpu_nodes=len(ctx.gpu_nodes) if "nodes" not in snap.refused else 0,
        gpu_pods=len(ctx.gpu_workloads) if "pods" not in snap.refused else 0, warnings=tuple(snap.warnings),
        nodes_read="nodes" not in snap.refused, pods_read="pods" not in snap.refused,
    )


def _not_ok_without(stage: StageResult, snap: Snapshot) -> StageResult:
    """A dump that lacks what a stage reads is no "ok": the stage is not checked in full (exit 5,
    as for a stage RBAC keeps doctor from reading), and says which kinds the dump lacks. A live
    run keeps its RBAC narrowing as notes (the API server had the objects; the user chose the role)."""
    lacking = [snap.refused[k] for k in NARROWS[stage.number] if k in snap.refused and "not in the dump" in snap.refused[k]]
    if stage.status != OK or not lacking:
        return stage
    return replace(stage, status=NOT_CHECKED,
                   notes=(f"stage {stage.number} not checked in full: {'; '.join(lacking)}",) + stage.notes)


def _named_by_workload(ctx: Context, f: Diagnosis) -> Diagnosis:
    """A pod of a Deployment is named with it: its ReplicaSet's name is a hash nobody wrote."""
    if f.subject_kind != "pod":
        return f
    pod = ctx.pod_by_where.get(f.subject)
    if pod is None or pod.owner_kind != "ReplicaSet":
        return f
    kind, name = ctx.workload_of(pod.owner_kind, pod.namespace, pod.owner_name)
    return replace(f, workload=f"{kind} {name}") if kind != "ReplicaSet" else f


def run_doctor(conn: ObjectSource, options: DoctorOptions, image_side: ImageSideReader | None = None) -> DoctorReport:
    snap = read_snapshot(conn, options)
    if options.pod and "pods" not in snap.refused and not any(
        p.name == options.pod and p.namespace == options.namespace for p in snap.pods
    ):
        # a pod that is not there would otherwise read as "healthy"
        raise UsageError(f"no pod {options.pod} in namespace {options.namespace}")
    return diagnose(snap, image_side=image_side)


__all__ = ["CHECKS", "NEEDS", "diagnose", "run_doctor"]
