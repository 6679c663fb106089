"""SARIF 2.1.0, always valid: with no findings, and when an image could not be read
(``executionSuccessful: false`` plus a notification).

Locations: files in a repository (Dockerfiles, manifests, app configs) become
physical locations relative to the checkout; files inside an image become
physical locations under the ``IMAGEROOT`` base with the image and layer in the
result's properties; env vars, labels and config fields become logical locations.
"""

from __future__ import annotations

import json
from typing import Any

from imagelint.core.check import CheckRun
from imagelint.core.engine import SuppressedFinding
from imagelint.facts.model import Provenance
from imagelint.report import ReportOptions
from imagelint.rules import RULES
from imagelint.rules.base import Finding

SARIF_SCHEMA = "https://json.schemastore.org/sarif-2.1.0.json"
_LEVEL = {"error": "error", "warning": "warning", "info": "note"}
INFORMATION_URI = "https://github.com/imagelint/imagelint"


def _rule_descriptor(rule) -> dict[str, Any]:
    return {
        "id": rule.id,
        "name": rule.name,
        "shortDescription": {"text": rule.title},
        "fullDescription": {"text": rule.summary},
        "help": {"text": rule.doc, "markdown": rule.doc},
        "defaultConfiguration": {"level": _LEVEL[rule.severity]},
        "properties": {"needs": list(rule.needs), "references": list(rule.references)},
    }


def _location(p: Provenance | None) -> dict[str, Any] | None:
    if p is None:
        return None
    if p.kind == "file" and p.path:
        loc: dict[str, Any] = {"artifactLocation": {"uri": p.path.lstrip("/"), "uriBaseId": "IMAGEROOT"}}
    elif p.source:
        loc = {"artifactLocation": {"uri": p.source}}
    else:
        return {"logicalLocations": [{"name": p.describe(), "kind": "variable" if p.kind == "env" else "object"}]}
    if p.line:
        loc["region"] = {"startLine": int(p.line)}
    out: dict[str, Any] = {"physicalLocation": loc}
    if p.kind == "file":
        out["message"] = {"text": p.describe()}
    return out


def _result(f: Finding, result, rule_index: dict[str, int], suppressed: SuppressedFinding | None = None) -> dict[str, Any]:
    out: dict[str, Any] = {
        "ruleId": f.rule,
        "level": _LEVEL[f.severity],
        "message": {"text": f.message + (f" Fix: {f.remediation}" if f.remediation else "")},
        "properties": {
            "image": result.subject,
            "severity": f.severity,
            **({"digest": result.digest} if result.digest else {}),
            **({"platform": result.platform} if result.platform else {}),
            **({"pool": f.pool} if f.pool else {}),
            **({"layerDigest": f.location.layer_digest} if f.location and f.location.layer_digest else {}),
            **({"location": f.location.describe()} if f.location else {}),
        },
    }
    if f.rule in rule_index:
        out["ruleIndex"] = rule_index[f.rule]
    loc = _location(f.location)
    out["locations"] = [loc] if loc else [{"logicalLocations": [{"name": result.subject, "kind": "module"}]}]
    if suppressed is not None:
        kind = "inSource" if suppressed.by.startswith("label") else "external"
        out["suppressions"] = [{"kind": kind, "justification": suppressed.reason, "status": "accepted"}]
    return out


def to_dict(run: CheckRun) -> dict[str, Any]:
    rules = [RULES[i] for i in run.rule_ids]
    rule_index = {r.id: n for n, r in enumerate(rules)}
    results = []
    notifications = []
    for r in run.results:
        if r.error:
            notifications.append({"level": "error", "message": {"text": f"{r.subject}: {r.error}"}})
            continue
        results.extend(_result(f, r, rule_index) for f in r.findings)
        results.extend(_result(s.finding, r, rule_index, s) for s in r.suppressed)
        notifications.extend({"level": "note", "message": {"text": n}} for n in r.notices)
    notifications.extend({"level": "warning", "message": {"text": n}} for n in run.notices)
    invocation: dict[str, Any] = {"executionSuccessful": run.execution_successful, "exitCode": run.exit_code}
    if notifications:
        invocation["toolExecutionNotifications"] = notifications
    return {
        "$schema": SARIF_SCHEMA,
        "version": "2.1.0",
        "runs": [
            {
                "tool": {
                    "driver": {
                        "name": "imagelint",
                        "version": run.tool_version,
                        "semanticVersion": run.tool_version,
                        "informationUri": INFORMATION_URI,
                        "rules": [_rule_descriptor(r) for r in rules],
                    }
                },
                "invocations": [invocation],
                "originalUriBaseIds": {"IMAGEROOT": {"uri": "file:///", "description": {"text": "the image's root filesystem"}}},
                "results": results,
                "properties": {
                    "matrixVersion": run.matrix_version,
                    "matrixOrigin": run.matrix_origin,
                    "failOn": run.config.fail_on,
                    "images": [r.subject for r in run.results],
                },
            }
        ],
    }


def render(run: CheckRun, options: ReportOptions) -> str:
    return json.dumps(to_dict(run), indent=2) + "\n"
