"""The audit as SARIF 2.1.0: one result per finding per workload × pool, for code-scanning dashboards.

A workload has no file: results carry a logical location (``NAMESPACE/Kind/name container C``)
and the pool, image and digest in their properties. Unreadable images are tool notifications.
"""

from __future__ import annotations

import json
from typing import Any

from imagelint.audit.model import AuditReport

_LEVEL = {"error": "error", "warning": "warning", "info": "note"}


def to_sarif(report: AuditReport, exit_code: int) -> dict[str, Any]:
    from imagelint.report.sarif import INFORMATION_URI, SARIF_SCHEMA, _rule_descriptor
    from imagelint.rules import RULES

    results, notifications, used = [], [], set()
    for w in report.workloads:
        where = f"{w.namespace}/{w.owner} container {w.container}"
        for pool in w.pools:
            check = report.check_for(w.image_key, pool)
            if check is None or check.error:
                notifications.append({"level": "error", "message": {"text": f"{where} on {pool}: not checked: "
                                                                            f"{check.error if check else 'no check'}"}})
                continue
            for f in check.findings:
                used.add(f.rule)
                results.append({
                    "ruleId": f.rule,
                    "level": _LEVEL.get(f.severity, "note"),
                    "message": {"text": f.message},
                    "locations": [{"logicalLocations": [{"name": where, "kind": "object"}]}],
                    "properties": {"namespace": w.namespace, "workload": w.owner, "container": w.container, "pool": pool,
                                   "image": w.image, **({"digest": check.digest} if check.digest else {})},
                })
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
            "properties": {"matrixVersion": report.matrix_version, "failOn": report.fail_on, "target": report.target_source},
        }],
    }


def render_sarif(report: AuditReport, exit_code: int) -> str:
    return json.dumps(to_sarif(report, exit_code), indent=2) + "\n"


__all__ = ["render_sarif", "to_sarif"]
