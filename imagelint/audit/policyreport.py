"""PolicyReport / ClusterPolicyReport (``wgpolicyk8s.io/v1alpha2``): the audit as Kyverno,
kube-bench and Policy Reporter report, for ``kubectl apply -f -`` or ``--write-reports``.

One ``PolicyReport`` named ``imagelint-audit`` per namespace (workloads of an image list, which
have no namespace, go to one ``ClusterPolicyReport`` of the same name). Its results are keyed by
rule and workload: one result per (rule, workload, container, pool), ``pass`` for a workload
that passes on a pool, ``error`` when its image could not be read. No timestamps: a re-run on an
unchanged cluster yields the same objects, so ``apply`` and ``--write-reports`` replace the
report instead of piling up results.

Field shapes follow the v1alpha2 CRD (results need ``policy``; ``result`` is one of
pass/fail/warn/error/skip; ``severity`` one of critical/high/medium/low/info; ``properties`` maps
strings to strings); tests validate the output against that schema (tests/audit/policyreport_schema.py).
"""

from __future__ import annotations

from typing import Any

from imagelint.audit.model import AuditReport, Workload

API_VERSION = "wgpolicyk8s.io/v1alpha2"
REPORT_NAME = "imagelint-audit"
POLICY = "imagelint"
_SEVERITY = {"error": "high", "warning": "medium", "info": "info"}
MAX_MESSAGE = 1024


def _api_version(kind: str) -> str:
    from imagelint.cluster.workloads import TEMPLATE_KINDS

    for resource in TEMPLATE_KINDS:
        if resource.kind == kind:
            return resource.api_version
    return {"Pod": "v1", "ReplicaSet": "apps/v1"}.get(kind, "v1")


def _subjects(w: Workload) -> dict[str, Any]:
    """The workload as the result's ``resources``; an image of an image list is no Kubernetes
    object, so it has none (the image is in ``properties``)."""
    if w.namespace == "-":
        return {}
    return {"resources": [{"apiVersion": _api_version(w.owner_kind), "kind": w.owner_kind, "name": w.owner_name,
                           "namespace": w.namespace}]}


def _results(report: AuditReport, w: Workload) -> list[dict[str, Any]]:
    from imagelint.core.engine import at_or_above

    out = []
    for pool in w.pools:
        check = report.check_for(w.image_key, pool)
        props = {"pool": pool, "container": w.container, "image": w.image}
        if check is not None and check.digest:
            props["digest"] = check.digest
        base = {"policy": POLICY, "source": "imagelint", "category": "GPU stack compatibility", "scored": True,
                **_subjects(w), "properties": props}
        if check is None or check.error:
            out.append({**base, "rule": "image-readable", "result": "error", "severity": "high",
                        "message": (f"not checked: {check.error}" if check else "not checked")[:MAX_MESSAGE]})
            continue
        shown = [f for f in check.findings if f.severity in ("error", "warning")]
        for f in shown:
            result = "fail" if at_or_above(f.severity, report.fail_on) else "warn"
            out.append({**base, "rule": f.rule, "result": result, "severity": _SEVERITY[f.severity],
                        "message": f.message[:MAX_MESSAGE]})
        if not shown:
            out.append({**base, "rule": "compatible", "result": "pass", "severity": "info",
                        "message": f"no finding at warning or above on pool {pool}"})
    return out


def _order(result: dict[str, Any]) -> tuple[str, ...]:
    ref = (result.get("resources") or [{}])[0]
    p = result["properties"]
    return (ref.get("kind", ""), ref.get("name", ""), p["container"], p["image"], p["pool"], result["rule"], result["message"])


def _report(kind: str, namespace: str | None, results: list[dict[str, Any]]) -> dict[str, Any]:
    results.sort(key=_order)
    summary = {k: sum(1 for r in results if r["result"] == k) for k in ("pass", "fail", "warn", "error", "skip")}
    metadata: dict[str, Any] = {"name": REPORT_NAME, "labels": {"app.kubernetes.io/managed-by": "imagelint"}}
    if namespace is not None:
        metadata["namespace"] = namespace
    return {"apiVersion": API_VERSION, "kind": kind, "metadata": metadata, "summary": summary, "results": results}


def policy_reports(report: AuditReport) -> list[dict[str, Any]]:
    """One PolicyReport per namespace (+ a ClusterPolicyReport for workloads without one), sorted."""
    by_namespace: dict[str, list[dict[str, Any]]] = {}
    for w in report.workloads:
        if w.pools:
            by_namespace.setdefault(w.namespace, []).extend(_results(report, w))
    out = []
    for namespace in sorted(by_namespace):
        if namespace == "-":
            out.append(_report("ClusterPolicyReport", None, by_namespace[namespace]))
        else:
            out.append(_report("PolicyReport", namespace, by_namespace[namespace]))
    return out


def render_policy_reports(report: AuditReport) -> str:
    """The reports as a multi-document YAML stream."""
    import yaml

    docs = policy_reports(report)
    if not docs:
        return ""
    return yaml.safe_dump_all(docs, sort_keys=True, default_flow_style=False, allow_unicode=False, width=1_000_000)


__all__ = ["API_VERSION", "POLICY", "REPORT_NAME", "policy_reports", "render_policy_reports"]
