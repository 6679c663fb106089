"""Doctor's report as text (a verdict first, then each stage) and as JSON (docs/doctor-schema.json)."""

from __future__ import annotations

import json
from typing import Any

from imagelint import __version__
from imagelint.doctor.model import FAILED, Diagnosis, DoctorReport, Evidence
from imagelint.escape import printable_lines

SCHEMA_VERSION = 1
MAX_TEXT_FINDINGS = 15  # per stage in text (JSON has them all): a big cluster's report stays readable
_STATUS = {"ok": "ok", "failed": "FAILED", "not checked": "not checked", "blocked": "blocked (what it judges fails an earlier stage)"}


def _subject(f: Diagnosis) -> str:
    text = f"{f.subject_kind} {f.subject}" + (f" ({f.workload})" if f.workload else "")
    if f.nodes and f.subject_kind == "node pool" and f.nodes != (f.subject,):
        shown = ", ".join(f.nodes[:5]) + (f" and {len(f.nodes) - 5} more" if len(f.nodes) > 5 else "")
        text += f" (nodes {shown})"
    return text


def _same_problem(findings: tuple[Diagnosis, ...]) -> list[tuple[Diagnosis, list[Diagnosis]]]:
    """Pods with the same signature and message (a Job's 100 Pending pods) → one entry in text."""
    groups: dict[tuple[str, str, str | int], tuple[Diagnosis, list[Diagnosis]]] = {}
    for f in findings:
        key = (f.signature, f.subject_kind, f.message) if f.subject_kind == "pod" else (f.signature, f.subject, id(f))
        if key in groups:
            groups[key][1].append(f)
        else:
            groups[key] = (f, [])
    return list(groups.values())


def render_text(report: DoctorReport, verbose: bool = False) -> str:
    lines = [f"imagelint doctor: {report.verdict}"]
    for stage in report.stages:
        lines.append(f"stage {stage.number} {stage.title}: {_STATUS[stage.status]}")
        groups = _same_problem(stage.findings)
        shown = groups if verbose else groups[:MAX_TEXT_FINDINGS]
        for f, others in shown:
            lines.append(f"  {_subject(f)}: {f.message}")
            if others:
                names = ", ".join(o.subject for o in others[:5]) + (f" and {len(others) - 5} more" if len(others) > 5 else "")
                lines.append(f"    also {len(others)} other {f.subject_kind}(s) with the same problem: {names}")
            for e in f.evidence:
                lines.append(f"    evidence: {e.describe()}")
            lines.append(f"    fix: {f.fix}")
            if verbose:
                lines.append(f"    why: {f.meaning}")
                lines.append(f"    source: {f.source}")
        if len(shown) < len(groups):
            lines.append(f"  ... and {len(groups) - len(shown)} more (--verbose or --format json shows all)")
        # a failed stage's findings speak for it; what it could not read is said always
        lines.extend(f"  {n}" for n in stage.notes if stage.status != FAILED or verbose or _unread(n))
    lines.extend(f"warning: {w}" for w in report.warnings)
    # Events, pod names and log lines are the cluster's (a container can print anything): each
    # element is one line, shown escaped (imagelint.escape), and none may open with "::".
    return printable_lines(lines) + "\n"


def _unread(note: str) -> bool:
    """A note about what could not be read (RBAC, a log the kubelet did not give): said always."""
    return any(w in note for w in ("not checked", "partly", " not read: ", " truncated: "))


def _evidence(e: Evidence) -> dict[str, Any]:
    out: dict[str, Any] = {"object": {"kind": e.object.kind, "name": e.object.name, "namespace": e.object.namespace or None}}
    if e.field:
        out["field"] = e.field
    if e.value:
        out["value"] = e.value
    if e.event_reason:
        out["event"] = {"reason": e.event_reason, "message": e.event_message}
    if e.log_line:
        out["log_line"] = e.log_line
    out["text"] = e.describe()
    return out


def _finding(f: Diagnosis) -> dict[str, Any]:
    return {
        "stage": f.stage, "signature": f.signature,
        "subject": {"kind": f.subject_kind, "name": f.subject, "nodes": list(f.nodes), **({"workload": f.workload} if f.workload else {})},
        "message": f.message, "evidence": [_evidence(e) for e in f.evidence], "meaning": f.meaning, "fix": f.fix, "source": f.source,
    }


def report_json(report: DoctorReport) -> dict[str, Any]:
    return {
        "schema_version": SCHEMA_VERSION,
        "tool": {"name": "imagelint", "version": __version__},
        "cluster": {"server": report.server, "context": report.context},
        "verdict": report.verdict,
        "healthy": report.healthy,
        "exit_code": report.exit_code,
        "gpu_nodes": report.gpu_nodes,
        "gpu_pods": report.gpu_pods,
        "stages": [
            {"number": s.number, "id": s.id, "title": s.title, "status": s.status, "notes": list(s.notes),
             "findings": [_finding(f) for f in s.findings]}
            for s in report.stages
        ],
        "warnings": list(report.warnings),
    }


def render_json(report: DoctorReport) -> str:
    return json.dumps(report_json(report), indent=2, ensure_ascii=False) + "\n"


__all__ = ["SCHEMA_VERSION", "render_json", "render_text", "report_json"]
