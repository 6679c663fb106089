"""Machine-readable report, documented by ``docs/report-schema.json``."""

from __future__ import annotations

import json as _json
from typing import Any

from imagelint.core.check import CheckRun
from imagelint.report import ReportOptions
from imagelint.report.fragments import target_json

REPORT_FORMAT_VERSION = 1


def finding_json(f) -> dict[str, Any]:
    return {
        "rule": f.rule,
        "name": f.name,
        "severity": f.severity,
        "message": f.message,
        "details": list(getattr(f, "details", ()) or ()),
        "location": ({**f.location.to_json(), "text": f.location.describe()} if f.location else None),
        "remediation": f.remediation,
        "pool": f.pool,
        "extra": _jsonable(dict(f.extra)),
    }


def _jsonable(value: Any) -> Any:
    if isinstance(value, dict):
        return {str(k): _jsonable(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_jsonable(v) for v in value]
    if isinstance(value, (str, int, float, bool)) or value is None:
        return value
    return str(value)


def to_dict(run: CheckRun) -> dict[str, Any]:
    target = target_json(run.target)
    results = []
    for r in run.results:
        results.append(
            {
                "image": {"ref": r.subject, "digest": r.digest, "platform": r.platform, "kind": r.kind},
                "target": target,
                "error": r.error,
                "complete": r.complete,
                "findings": [finding_json(f) for f in r.findings],
                "suppressed": [
                    {**finding_json(s.finding), "reason": s.reason, "suppressed_by": s.by} for s in r.suppressed
                ],
                "notices": list(r.notices),
                "skipped_rules": list(r.skipped_rules),
            }
        )
    return {
        "imagelint": run.tool_version,
        "format_version": REPORT_FORMAT_VERSION,
        "matrix": {"version": run.matrix_version, "origin": run.matrix_origin},
        "fail_on": run.config.fail_on,
        "exit_code": run.exit_code,
        "results": results,
        "notices": list(run.notices),
        "summary": run.summary,
    }


def render(run: CheckRun, options: ReportOptions) -> str:
    return _json.dumps(to_dict(run), indent=2, sort_keys=False) + "\n"
