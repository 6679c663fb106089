"""The PolicyReport / ClusterPolicyReport (wgpolicyk8s.io/v1alpha2) schema the tests validate against.

Written here from the CRD's documented fields (kubernetes-sigs/wg-policy-prototypes,
policy-report/apis/wgpolicyk8s.io/v1alpha2/policyreport_types.go): a result requires ``policy``;
``result`` is one of pass/fail/warn/error/skip, ``severity`` one of critical/high/low/medium/info;
``timestamp`` is a metav1.Timestamp (seconds, nanos); ``resources`` are core/v1 ObjectReferences;
``properties`` maps strings to strings; ``summary`` counts are integers. As in the CRD's
structural schema, unknown fields are not allowed in results, summary or references (the API
server would prune them: a field imagelint relies on must be one the CRD keeps).
"""

from __future__ import annotations

OBJECT_REFERENCE = {
    "type": "object",
    "additionalProperties": False,
    "properties": {k: {"type": "string"} for k in ("apiVersion", "fieldPath", "kind", "name", "namespace", "resourceVersion", "uid")},
}

LABEL_SELECTOR = {"type": "object", "properties": {"matchLabels": {"type": "object", "additionalProperties": {"type": "string"}},
                                                   "matchExpressions": {"type": "array"}}}

RESULT = {
    "type": "object",
    "required": ["policy"],
    "additionalProperties": False,
    "properties": {
        "source": {"type": "string"},
        "policy": {"type": "string"},
        "rule": {"type": "string"},
        "category": {"type": "string"},
        "severity": {"type": "string", "enum": ["critical", "high", "low", "medium", "info"]},
        "timestamp": {"type": "object", "required": ["nanos", "seconds"], "additionalProperties": False,
                      "properties": {"seconds": {"type": "integer"}, "nanos": {"type": "integer"}}},
        "result": {"type": "string", "enum": ["pass", "fail", "warn", "error", "skip"]},
        "scored": {"type": "boolean"},
        "resources": {"type": "array", "items": OBJECT_REFERENCE},
        "resourceSelector": LABEL_SELECTOR,
        "message": {"type": "string"},
        "properties": {"type": "object", "additionalProperties": {"type": "string"}},
    },
}


def report_schema(kind: str) -> dict:
    metadata = {"type": "object", "required": ["name"], "properties": {"name": {"type": "string", "maxLength": 253},
                                                                       "namespace": {"type": "string"}}}
    if kind == "PolicyReport":
        metadata = {**metadata, "required": ["name", "namespace"]}
    return {
        "type": "object",
        "required": ["apiVersion", "kind", "metadata"],
        "additionalProperties": False,
        "properties": {
            "apiVersion": {"const": "wgpolicyk8s.io/v1alpha2"},
            "kind": {"const": kind},
            "metadata": metadata,
            "scope": OBJECT_REFERENCE,
            "scopeSelector": LABEL_SELECTOR,
            "summary": {"type": "object", "additionalProperties": False,
                        "properties": {k: {"type": "integer", "minimum": 0} for k in ("pass", "fail", "warn", "error", "skip")}},
            "results": {"type": "array", "items": RESULT},
        },
    }
