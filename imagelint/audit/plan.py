"""The upgrade planner: the same inventory audited against today's target and a proposed one, as a diff.

The plan is a diff of findings, not of pass/fail. For every workload × pool: ``breaks`` when the
proposed stack raises a failing finding (at or above ``fail_on``) of a rule that raises none there
today, whether or not the workload fails today already (a new error on a failing workload is a
new problem the upgrade brings: trivy's and SARIF's "new" result); ``fixed`` (it fails today and
not on the proposed stack); ``still-failing`` (it fails on both, for the same rules); ``unchanged``
otherwise (it fails on neither). The reasons are the failing findings, each with the fix ``check``
gives: the new ones for a break, the proposed stack's for a workload still failing, today's for a
fix.
A pool the proposed target does not have is left out of the diff with a warning (a plan that
renames pools says nothing about them).
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from imagelint.audit.model import FAIL, AuditReport, FindingLine, Workload

if TYPE_CHECKING:
    from imagelint.matrix.model import Matrix

BREAKS, FIXED, STILL_FAILING, UNCHANGED = "breaks", "fixed", "still-failing", "unchanged"
PLAN_SCHEMA = "imagelint-audit-plan/1"


@dataclass(frozen=True)
class Change:
    """What the upgrade does to one workload on one pool: its verdict today and on the proposed
    stack, and the findings behind the change."""

    workload: Workload
    pool: str
    before: str
    after: str
    change: str  # breaks | fixed | still-failing | unchanged
    reasons: tuple[str, ...] = ()  # "RULE: message" of each failing finding the change is about
    fixes: tuple[str, ...] = ()    # what to do about them (each finding's fix, once)


@dataclass(frozen=True)
class PlanReport:
    """What ``audit --plan`` reports: the inventory audited on today's and the proposed stack, diffed."""

    current: AuditReport
    proposed: AuditReport
    changes: tuple[Change, ...]
    warnings: tuple[str, ...] = ()

    def count(self, change: str) -> int:
        return sum(1 for c in self.changes if c.change == change)

    @property
    def failing_today(self) -> int:
        """Workload × pool pairs that fail on today's stack (fixed, still failing, or broken further)."""
        return sum(1 for c in self.changes if c.before == FAIL)

    @property
    def failing_then(self) -> int:
        """Workload × pool pairs that fail on the proposed stack (breaks or still failing)."""
        return self.count(BREAKS) + self.count(STILL_FAILING)


def _failing(report: AuditReport, image_key: str, pool: str) -> tuple[FindingLine, ...]:
    check = report.check_for(image_key, pool)
    if check is None or check.error:
        return ()
    from imagelint.core.engine import at_or_above

    return tuple(f for f in check.findings if at_or_above(f.severity, report.fail_on))


def _reasons(report: AuditReport, image_key: str, pool: str, lines: tuple[FindingLine, ...]) -> tuple[str, ...]:
    check = report.check_for(image_key, pool)
    if check is not None and check.error:
        return (f"not checked: {check.error}",)
    return tuple(f"{f.rule}: {f.message}" for f in lines)


def _fixes(lines: tuple[FindingLine, ...]) -> tuple[str, ...]:
    """Each fix once, after the rules that give it: ``IL101, IL107: Take ... off LD_LIBRARY_PATH.``"""
    rules: dict[str, list[str]] = {}
    for f in lines:
        if f.fix and f.rule not in rules.setdefault(f.fix, []):
            rules[f.fix].append(f.rule)
    return tuple(f"{', '.join(ids)}: {fix}" for fix, ids in rules.items())


def diff(current: AuditReport, proposed: AuditReport) -> PlanReport:
    """Workload × pool findings of the two audits, compared."""
    known = set(proposed.pools)
    missing = sorted({p for w in current.workloads for p in w.pools} - known)
    changes = []
    for w in current.workloads:
        for pool in w.pools:
            if pool not in known:
                continue
            before, after = current.verdict(w, pool), proposed.verdict(w, pool)
            then = _failing(proposed, w.image_key, pool)
            if after == FAIL:
                today = {f.rule for f in _failing(current, w.image_key, pool)}
                new = tuple(f for f in then if f.rule not in today) if before == FAIL else then
                if new or before != FAIL:
                    changes.append(Change(w, pool, before, after, BREAKS,
                                          _reasons(proposed, w.image_key, pool, new), _fixes(new)))
                else:
                    changes.append(Change(w, pool, before, after, STILL_FAILING,
                                          _reasons(proposed, w.image_key, pool, then), _fixes(then)))
            elif before == FAIL:
                was = _failing(current, w.image_key, pool)
                changes.append(Change(w, pool, before, after, FIXED, _reasons(current, w.image_key, pool, was)))
            else:
                changes.append(Change(w, pool, before, after, UNCHANGED))
    warnings = tuple(f"pool {p} is not in the proposed target; its workloads are left out of the plan" for p in missing)
    return PlanReport(current, proposed, tuple(changes), warnings)


def proposed_target(target: Any, matrix: Matrix | None, *, driver: str | None = None, toolkit: str | None = None,
                    device_plugin: str | None = None) -> Any:
    """Every pool of ``target`` with the proposed versions (``--plan-driver/--plan-toolkit/...``)."""
    from imagelint.deploytarget.values import (
        cuda_for,
        parse_driver_version,
        parse_release_version,
    )

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


def plan_summary(plan: PlanReport) -> dict[str, int]:
    return {BREAKS: plan.count(BREAKS), FIXED: plan.count(FIXED), STILL_FAILING: plan.count(STILL_FAILING),
            UNCHANGED: plan.count(UNCHANGED), "failing-today": plan.failing_today}


def plan_to_json(plan: PlanReport) -> dict[str, Any]:
    from imagelint.audit.inventory import workload_json
    from imagelint.audit.jsonout import report_to_json

    return {
        "schema": PLAN_SCHEMA,
        "summary": plan_summary(plan),
        "changes": [
            {**workload_json(c.workload), "pool": c.pool, "before": c.before, "after": c.after, "change": c.change,
             "reasons": list(c.reasons), "fixes": list(c.fixes)}
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


__all__ = ["BREAKS", "FIXED", "PLAN_SCHEMA", "STILL_FAILING", "UNCHANGED", "Change", "PlanReport", "diff", "plan_summary", "plan_to_json", "proposed_target", "reports_from_plan_json"]
