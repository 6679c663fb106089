"""The audit report as JSON (schema: docs/audit-schema.json), and back (``audit merge`` reads parts).

The output is canonical: keys sorted, lists sorted (workloads by namespace/owner/container,
images by key, checks by image and pool), no timestamps, so that the merge of N shards and one
unsharded run are byte for byte the same.
"""

from __future__ import annotations

import json
from typing import Any

from imagelint.audit.inventory import image_from_json, workload_from_json, workload_json
from imagelint.audit.model import VERDICTS, AuditReport, FindingLine, PoolCheck
from imagelint.errors import UsageError
from imagelint.localfile import read_regular_file
from imagelint.untrusted import loads_json

AUDIT_SCHEMA = "imagelint-audit/1"
MAX_PART_BYTES = 256 * 2**20


def summary(report: AuditReport) -> dict[str, int]:
    """Counts of workload × pool verdicts, and how many images/workloads were (not) checked."""
    counts = {v: 0 for v in VERDICTS}
    for w in report.workloads:
        for pool in w.pools:
            counts[report.verdict(w, pool)] += 1
    return {
        **counts,
        "images": len(report.images),
        "workloads": len(report.workloads),
        "not_on_gpu_pool": sum(1 for w in report.workloads if not w.pools),
    }


def report_to_json(report: AuditReport) -> dict[str, Any]:
    return {
        "schema": AUDIT_SCHEMA,
        "tool": {"name": "imagelint", "version": report.tool_version},
        "source": report.source,
        "target": {"source": report.target_source, "pools": list(report.pools)},
        "matrix_version": report.matrix_version,
        "fail_on": report.fail_on,
        "shard": {"index": report.shard[0], "count": report.shard[1]} if report.shard else None,
        "inventory": report.inventory_digest,
        "summary": summary(report),
        "workloads": [{**workload_json(w), "verdicts": {p: report.verdict(w, p) for p in w.pools}} for w in report.workloads],
        "images": [{"key": i.key, "reference": i.reference, "references": list(i.references)} for i in report.images],
        "checks": [
            {
                "image_key": c.image_key,
                "pool": c.pool,
                "verdict": c.verdict,
                "digest": c.digest,
                "platform": c.platform,
                "error": c.error,
                "findings": [{"rule": f.rule, "severity": f.severity, "message": f.message, "pool": f.pool, "fix": f.fix}
                             for f in c.findings],
            }
            for c in report.checks
        ],
        "warnings": list(report.warnings),
    }


def dumps(data: Any) -> str:
    return json.dumps(data, indent=2, sort_keys=True, ensure_ascii=False) + "\n"


def render_json(report: AuditReport) -> str:
    return dumps(report_to_json(report))


def _finding(raw: Any, where: str) -> FindingLine:
    if not isinstance(raw, dict) or not all(isinstance(raw.get(k), str) for k in ("rule", "severity", "message")):
        raise ValueError(f"{where} is not a finding")
    pool, fix = raw.get("pool"), raw.get("fix")
    return FindingLine(raw["rule"], raw["severity"], raw["message"], pool if isinstance(pool, str) else None,
                       fix if isinstance(fix, str) else "")


def _check(raw: Any, where: str) -> PoolCheck:
    if not isinstance(raw, dict) or raw.get("verdict") not in VERDICTS:
        raise ValueError(f"{where} is not a check")
    opt = {k: raw.get(k) if isinstance(raw.get(k), str) else None for k in ("digest", "platform", "error")}
    if not isinstance(raw.get("image_key"), str) or not isinstance(raw.get("pool"), str) or not isinstance(raw.get("findings"), list):
        raise ValueError(f"{where} is not a check")
    findings = tuple(_finding(f, f"{where}.findings[{n}]") for n, f in enumerate(raw["findings"]))
    return PoolCheck(raw["image_key"], raw["pool"], raw["verdict"], findings, **opt)


def report_from_json(data: Any, name: str) -> AuditReport:
    """A report as ``render_json`` wrote it (a shard part); anything else is a usage error."""
    try:
        if not isinstance(data, dict) or data.get("schema") != AUDIT_SCHEMA:
            raise ValueError(f"not an imagelint audit report (schema {AUDIT_SCHEMA})")
        shard = data.get("shard")
        shard_t = None
        if shard is not None:
            if not isinstance(shard, dict) or not all(isinstance(shard.get(k), int) for k in ("index", "count")):
                raise ValueError("shard is not {index, count}")
            shard_t = (shard["index"], shard["count"])
        target = data.get("target")
        if not isinstance(target, dict) or not isinstance(target.get("pools"), list):
            raise ValueError("target is not {source, pools}")
        tool = tool if isinstance(tool := data.get("tool"), dict) else {}
        for key in ("workloads", "images", "checks", "warnings"):
            if not isinstance(data.get(key), list):
                raise ValueError(f"{key} is not a list")
        return AuditReport(
            workloads=tuple(workload_from_json(w, f"workloads[{n}]") for n, w in enumerate(data["workloads"])),
            images=tuple(image_from_json(i, f"images[{n}]") for n, i in enumerate(data["images"])),
            checks=tuple(_check(c, f"checks[{n}]") for n, c in enumerate(data["checks"])),
            target_source=str(target.get("source")),
            pools=tuple(str(p) for p in target["pools"]),
            matrix_version=data.get("matrix_version") if isinstance(data.get("matrix_version"), str) else None,
            fail_on=str(data.get("fail_on")),
            tool_version=str(tool.get("version")),
            source=str(data.get("source")),
            shard=shard_t,
            warnings=tuple(str(w) for w in data["warnings"]),
            inventory_digest=data.get("inventory") if isinstance(data.get("inventory"), str) else None,
        )
    except ValueError as exc:
        raise UsageError(f"{name}: {exc}") from None


def read_report(path: str) -> AuditReport:
    try:  # a regular file only (a FIFO never blocks the run), and no larger than the cap
        data = read_regular_file(path, MAX_PART_BYTES)
    except OSError as exc:
        raise UsageError(f"cannot read {path}: {exc.strerror or exc}") from None
    try:
        parsed = loads_json(data.decode("utf-8"))
    except ValueError as exc:  # UnicodeDecodeError, or loads_json's one-line refusal
        raise UsageError(f"{path}: not JSON ({exc})") from None
    return report_from_json(parsed, path)


__all__ = ["AUDIT_SCHEMA", "dumps", "read_report", "render_json", "report_from_json", "report_to_json", "summary"]
