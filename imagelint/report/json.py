"""Machine-readable report, documented by ``docs/report-schema.json``."""

from __future__ import annotations

import json as _json
from collections.abc import Iterator
from typing import Any

from imagelint.core.check import CheckRun
from imagelint.core.engine import ImageResult
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


def result_json(r: ImageResult, target: dict[str, Any]) -> dict[str, Any]:
    return {
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


def to_dict(run: CheckRun, results: list[dict[str, Any]] | None = None) -> dict[str, Any]:
    """The report; ``results`` stands for the results' part when given (``render_pieces``)."""
    if results is None:
        target = target_json(run.target)
        results = [result_json(r, target) for r in run.results]
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
    return "".join(render_pieces(run, options))


# The results' place in the report with none in it: the only key indented two spaces is top-level
# (a string holds no raw newline: JSON escapes it).
_NO_RESULTS = '\n  "results": [],\n'
_RESULT_INDENT = "\n    "  # a result's lines in the report: two levels in
_RESULT_HEAD = '{' + _RESULT_INDENT + '  "image": {' + _RESULT_INDENT + '    "ref": '  # what precedes its subject


def render_pieces(run: CheckRun, options: ReportOptions) -> Iterator[str]:
    """The report a result at a time, the same text as ``json.dumps(to_dict(run), indent=2)``: a
    run of 60,000 pods is never one text, nor one list of dicts, in memory."""
    before, after = _json.dumps(to_dict(run, results=[]), indent=2).split(_NO_RESULTS, 1)
    yield before + '\n  "results": ['
    target = target_json(run.target)
    # A result without findings whose every field but its subject is the last one's (the clean pods
    # of one shape) is that one's text under its own subject. Findings are never compared: their
    # extra values can be equal and print apart (1 == True).
    said: tuple[tuple[Any, ...], str] | None = None  # those fields, and the text after the subject
    for i, r in enumerate(run.results):
        ref = _json.dumps(r.subject)
        rest = None if r.findings or r.suppressed else (
            r.kind, r.digest, r.platform, r.error, r.complete, r.notices, r.skipped_rules)
        if rest is None or said is None or said[0] != rest:
            text = _json.dumps(result_json(r, target), indent=2).replace("\n", _RESULT_INDENT)
            if rest is not None:
                said = rest, text[len(_RESULT_HEAD) + len(ref):]
        else:
            text = _RESULT_HEAD + ref + said[1]
        yield ("," if i else "") + _RESULT_INDENT + text
    yield ("\n  ]" if run.results else "]") + ",\n" + after + "\n"
