"""The audit as SARIF 2.1.0: one result per finding per workload × pool, for code-scanning dashboards.

A workload has no file: results carry a logical location (``NAMESPACE/Kind/name container C``)
and the pool, image and digest in their properties. Unreadable images are tool notifications.

An upgrade plan is the proposed stack's audit with SARIF's own diff: each result's
``baselineState`` compares it with today's audit (``new``: a rule that finds nothing on that
workload × pool today; ``unchanged`` / ``updated``: the same rule, the same or another message;
``absent``: today's finding the plan removes), and ``properties.change`` is the planner's
breaks / fixed / still-failing / unchanged for the workload × pool.
"""

from __future__ import annotations

import json
from typing import Any

from imagelint.audit.model import AuditReport

_LEVEL = {"error": "error", "warning": "warning", "info": "note"}


def _result(f: Any, w: Any, pool: str, where: str, digest: str | None) -> dict[str, Any]:
    return {
        "ruleId": f.rule,
        "level": _LEVEL.get(f.severity, "note"),
        "message": {"text": f.message},
        "locations": [{"logicalLocations": [{"name": where, "kind": "object"}]}],
        "properties": {"namespace": w.namespace, "workload": w.owner, "container": w.container, "pool": pool,
                       "image": w.image, **({"digest": digest} if digest else {}), **({"fix": f.fix} if f.fix else {})},
    }


def _baseline(found: Any, today: tuple[Any, ...]) -> str:
    same_rule = [t for t in today if t.rule == found.rule]
    if not same_rule:
        return "new"
    return "unchanged" if any(t.message == found.message and t.severity == found.severity for t in same_rule) else "updated"


def _results(report: AuditReport, before: AuditReport | None = None,
             changes: dict[tuple[Any, str], str] | None = None) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    results: list[dict[str, Any]] = []
    notifications: list[dict[str, Any]] = []
    for w in report.workloads:
        where = f"{w.namespace}/{w.owner} container {w.container}"
        for pool in w.pools:
            check = report.check_for(w.image_key, pool)
            if check is None or check.error:
                notifications.append({"level": "error", "message": {"text": f"{where} on {pool}: not checked: "
                                                                            f"{check.error if check else 'no check'}"}})
                continue
            if before is None:
                results.extend(_result(f, w, pool, where, check.digest) for f in check.findings)
                continue
            old = before.check_for(w.image_key, pool)
            today = old.findings if old is not None and not old.error else ()
            change = (changes or {}).get((w, pool))
            for f in check.findings:
                r = _result(f, w, pool, where, check.digest)
                r["baselineState"] = _baseline(f, today)
                if change:
                    r["properties"]["change"] = change
                results.append(r)
            gone = {f.rule for f in check.findings}
            for f in today:
                if f.rule not in gone:
                    r = _result(f, w, pool, where, old.digest if old else None)
                    r["baselineState"] = "absent"
                    if change:
                        r["properties"]["change"] = change
                    results.append(r)
    return results, notifications


def _sarif(results: list[dict[str, Any]], notifications: list[dict[str, Any]], report: AuditReport, exit_code: int,
           properties: dict[str, Any]) -> dict[str, Any]:
    from imagelint.report.sarif import INFORMATION_URI, SARIF_SCHEMA, _rule_descriptor
    from imagelint.rules import RULES

    used = {r["ruleId"] for r in results}
    rules = [RULES[r] for r in sorted(used) if r in RULES]
    index = {r.id: n for n, r in enumerate(rules)}
    for r in results:
        if r["ruleId"] in index:
            r["ruleIndex"] = index[r["ruleId"]]
    invocation: dict[str, Any] = {"executionSuccessful": not notifications, "exitCode": exit_code}
    if notifications:
        invocation["toolExecutionNotifications"] = notifications
    return {
        "$schema": SARIF_SCHEMA,
        "version": "2.1.0",
        "runs": [{
            "tool": {"driver": {"name": "imagelint", "version": report.tool_version, "semanticVersion": report.tool_version,
                                "informationUri": INFORMATION_URI, "rules": [_rule_descriptor(r) for r in rules]}},
            "invocations": [invocation],
            "results": results,
            "properties": properties,
        }],
    }


def to_sarif(report: AuditReport, exit_code: int) -> dict[str, Any]:
    results, notifications = _results(report)
    return _sarif(results, notifications, report, exit_code,
                  {"matrixVersion": report.matrix_version, "failOn": report.fail_on, "target": report.target_source})


def plan_to_sarif(plan: Any, exit_code: int) -> dict[str, Any]:
    """The proposed stack's audit, each result marked against today's (``baselineState``)."""
    from imagelint.audit.plan import plan_summary

    changes = {(c.workload, c.pool): c.change for c in plan.changes}
    results, notifications = _results(plan.proposed, plan.current, changes)
    # Workload × pools the plan leaves out (a pool the proposed target lacks) are not in ``changes``.
    results = [r for r in results if "change" in r["properties"]]
    return _sarif(results, notifications, plan.proposed, exit_code, {
        "matrixVersion": plan.proposed.matrix_version, "failOn": plan.proposed.fail_on,
        "target": plan.proposed.target_source, "baselineTarget": plan.current.target_source,
        "plan": plan_summary(plan),
    })


def render_sarif(report: AuditReport, exit_code: int) -> str:
    return json.dumps(to_sarif(report, exit_code), indent=2) + "\n"


def render_plan_sarif(plan: Any, exit_code: int) -> str:
    return json.dumps(plan_to_sarif(plan, exit_code), indent=2) + "\n"


__all__ = ["plan_to_sarif", "render_plan_sarif", "render_sarif", "to_sarif"]
