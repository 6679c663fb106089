"""The upgrade planner: the same inventory audited against today's target and a proposed one, as a diff.

For every workload × pool: ``breaks`` (it does not fail today and fails on the proposed stack),
``fixed`` (it fails today and not on the proposed stack), ``still-failing`` (it fails on both),
``unchanged`` otherwise (it fails on neither). The reason is the failing findings: the proposed
stack's for a break or a workload still failing, today's for a fix.
A pool the proposed target does not have is left out of the diff with a warning (a plan that
renames pools says nothing about them).
"""

from __future__ import annotations

import dataclasses
from typing import Any

from imagelint.audit.model import FAIL, AuditReport, Workload
from dataclasses import dataclass

BREAKS, FIXED, STILL_FAILING, UNCHANGED = "breaks", "fixed", "still-failing", "unchanged"
PLAN_SCHEMA = "imagelint-audit-plan/1"


@dataclass(frozen=True)
class Change:
    workload: Workload
    pool: str
    before: str
    after: str
    change: str  # breaks | fixed | still-failing | unchanged
    reasons: tuple[str, ...] = ()


@dataclass(frozen=True)
class PlanReport:
    current: AuditReport
    proposed: AuditReport
    changes: tuple[Change, ...]
    warnings: tuple[str, ...] = ()

    def count(self, change: str) -> int:
        return sum(1 for c in self.changes if c.change == change)

    @property
    def failing_today(self) -> int:
        """Workload × pool pairs that fail on today's stack (fixed or still failing)."""
        return self.count(FIXED) + self.count(STILL_FAILING)

    @property
    def failing_then(self) -> int:
        """Workload × pool pairs that fail on the proposed stack (breaks or still failing)."""
        return self.count(BREAKS) + self.count(STILL_FAILING)


def _failing(report: AuditReport, image_key: str, pool: str) -> tuple[str, ...]:
    check = report.check_for(image_key, pool)
    if check is None:
        return ()
    if check.error:
        return (f"not checked: {check.error}",)
    from imagelint.core.engine import at_or_above

    return tuple(f"{f.rule}: {f.message}" for f in check.findings if at_or_above(f.severity, report.fail_on))


def diff(current: AuditReport, proposed: AuditReport) -> PlanReport:
    """Workload × pool verdicts of the two audits, compared."""
    known = set(proposed.pools)
    missing = sorted({p for w in current.workloads for p in w.pools} - known)
    changes = []
    for w in current.workloads:
        for pool in w.pools:
            if pool not in known:
                continue
            before, after = current.verdict(w, pool), proposed.verdict(w, pool)
            if before != FAIL and after == FAIL:
                changes.append(Change(w, pool, before, after, BREAKS, _failing(proposed, w.image_key, pool)))
            elif before == FAIL and after != FAIL:
                changes.append(Change(w, pool, before, after, FIXED, _failing(current, w.image_key, pool)))
            elif before == FAIL:
                changes.append(Change(w, pool, before, after, STILL_FAILING, _failing(proposed, w.image_key, pool)))
            else:
                changes.append(Change(w, pool, before, after, UNCHANGED))
    warnings = tuple(f"pool {p} is not in the proposed target; its workloads are left out of the plan" for p in missing)
    return PlanReport(current, proposed, tuple(changes), warnings)


def proposed_target(target: Any, matrix: Any, *, driver: str | None = None, toolkit: str | None = None,
                    device_plugin: str | None = None) -> Any:
    """Every pool of ``target`` with the proposed versions (``--plan-driver/--plan-toolkit/...``)."""
    from imagelint.target.values import cuda_for, parse_driver_version, parse_release_version

    changes: dict[str, Any] = {}
    if driver:
        version = parse_driver_version(driver, "--plan-driver")
        changes.update(driver=version, cuda_driver_version=cuda_for(version, matrix))
    if toolkit:
        changes["toolkit"] = parse_release_version(toolkit, "--plan-toolkit")
    if device_plugin:
        changes["device_plugin"] = parse_release_version(device_plugin, "--plan-device-plugin")
    pools = tuple(dataclasses.replace(p, **changes) for p in target.pools)
    described = ", ".join(f"{k.replace('_', '-')} {v}" for k, v in changes.items() if k != "cuda_driver_version")
    return dataclasses.replace(target, pools=pools, source=f"{target.source} with {described}", warnings=())


def plan_to_json(plan: PlanReport) -> dict[str, Any]:
    from imagelint.audit.inventory import workload_json
    from imagelint.audit.jsonout import report_to_json

    return {
        "schema": PLAN_SCHEMA,
        "summary": {BREAKS: plan.count(BREAKS), FIXED: plan.count(FIXED), STILL_FAILING: plan.count(STILL_FAILING),
                    UNCHANGED: plan.count(UNCHANGED), "failing-today": plan.failing_today},
        "changes": [
            {**workload_json(c.workload), "pool": c.pool, "before": c.before, "after": c.after, "change": c.change,
             "reasons": list(c.reasons)}
            for c in plan.changes
        ],
        "current": report_to_json(plan.current),
        "proposed": report_to_json(plan.proposed),
        "warnings": list(plan.warnings),
    }


def reports_from_plan_json(data: Any, name: str) -> tuple[AuditReport, AuditReport]:
    """A plan part (``render_plan_json``) → its (current, proposed) audits, for ``audit merge``."""
    from imagelint.audit.jsonout import report_from_json
    from imagelint.errors import UsageError

    if not isinstance(data, dict) or data.get("schema") != PLAN_SCHEMA:
        raise UsageError(f"{name}: not an imagelint audit plan (schema {PLAN_SCHEMA})")
    return report_from_json(data.get("current"), f"{name} (current)"), report_from_json(data.get("proposed"), f"{name} (proposed)")


__all__ = ["BREAKS", "FIXED", "PLAN_SCHEMA", "STILL_FAILING", "UNCHANGED", "Change", "PlanReport", "diff", "plan_to_json", "proposed_target", "reports_from_plan_json"]
