"""``audit --write-reports``: create or replace imagelint's PolicyReports (wgpolicyk8s.io/v1alpha2).

One object per namespace, named ``imagelint-audit``: an existing one is replaced (its
``resourceVersion`` carried over), a missing one created, an identical one left alone, so re-runs
never pile up reports or results. Needs ``create``/``update``/``get`` on policyreports (the
deploy/ ClusterRole grants it when report writing is enabled).

Writes race other writers as the API server intends: a 409 Conflict (someone replaced the report
since it was read, or created it since it was found missing) is met by reading it again and
writing with the fresh ``resourceVersion``, at most ``MAX_ATTEMPTS`` times. A report of that name
whose ``app.kubernetes.io/managed-by`` label names another tool is that tool's: left alone, and
said. A report that cannot be written is one :class:`Written` line with the reason; the others are
still written, and the caller keeps the audit's own verdict (``imagelint.cli.audit_cmd``).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from imagelint.cluster.connection import Connection, Refused
from imagelint.cluster.resources import CLUSTER_POLICY_REPORTS, POLICY_REPORTS, Resource
from imagelint.errors import ClusterError

CREATED, UPDATED, UNCHANGED, SKIPPED, FAILED = "created", "updated", "unchanged", "left alone", "not written"
MANAGED_BY = "app.kubernetes.io/managed-by"
MAX_ATTEMPTS = 3  # reads-and-writes per report when other writers keep winning the race


@dataclass(frozen=True)
class Written:
    """What became of one PolicyReport ``audit --write-reports`` wrote (created, updated, not written...)."""

    where: str  # NAMESPACE/NAME (or NAME for a cluster report)
    outcome: str  # created | updated | unchanged | left alone | not written
    reason: str = ""  # for "left alone" and "not written"

    @property
    def failed(self) -> bool:
        return self.outcome == FAILED

    def __str__(self) -> str:
        return f"PolicyReport {self.where} {self.outcome}" + (f": {self.reason}" if self.reason else "")


def _same(existing: Mapping[str, Any], wanted: Mapping[str, Any]) -> bool:
    labels = (existing.get("metadata") or {}).get("labels") or {}
    return (existing.get("results") == wanted.get("results") and existing.get("summary") == wanted.get("summary")
            and all(labels.get(k) == v for k, v in wanted["metadata"].get("labels", {}).items()))


def _manager(obj: Mapping[str, Any]) -> str | None:
    labels = (obj.get("metadata") or {}).get("labels")
    value = labels.get(MANAGED_BY) if isinstance(labels, Mapping) else None
    return value if isinstance(value, str) else None


def write_policy_reports(conn: Connection, reports: Sequence[Mapping[str, Any]]) -> list[Written]:
    """Create or replace each report; one :class:`Written` per report, failures included."""
    done = []
    for report in reports:
        meta = report["metadata"]
        name, namespace = meta["name"], meta.get("namespace")
        where = f"{namespace}/{name}" if namespace else name
        try:
            done.append(_write_one(conn, report, POLICY_REPORTS if namespace else CLUSTER_POLICY_REPORTS, where))
        except ClusterError as exc:
            done.append(Written(where, FAILED, str(exc)))
    return done


def _write_one(conn: Connection, report: Mapping[str, Any], resource: Resource, where: str) -> Written:
    from kubernetes import client

    custom = client.CustomObjectsApi(conn.api_client)
    meta = report["metadata"]
    name, namespace = meta["name"], meta.get("namespace")
    ours = (meta.get("labels") or {}).get(MANAGED_BY)
    scope = (namespace,) if namespace else ()
    for _ in range(MAX_ATTEMPTS):
        existing = conn.get_object(resource, name, namespace, optional=True, step=f"reading {resource.kind} {where}")
        if existing.refused == 403:
            raise conn.error(f"reading {resource.kind} {where}", "403 Forbidden (the credentials lack permission for this)")
        try:
            if existing.checked and existing.object is not None:
                manager = _manager(existing.object)
                if manager is not None and manager != ours:
                    return Written(where, SKIPPED, f"its {MANAGED_BY} label names {manager!r}, not {ours!r}")
                if _same(existing.object, report):
                    return Written(where, UNCHANGED)
                version = (existing.object.get("metadata") or {}).get("resourceVersion")
                body = {**report, "metadata": {**meta, **({"resourceVersion": version} if version else {})}}
                replace = custom.replace_namespaced_custom_object if namespace else custom.replace_cluster_custom_object
                conn.request(f"replacing {resource.kind} {where}", replace, resource.group, resource.version, *scope,
                             resource.plural, name, body, optional=True, refusable=(409,))
                return Written(where, UPDATED)
            create = custom.create_namespaced_custom_object if namespace else custom.create_cluster_custom_object
            conn.request(f"creating {resource.kind} {where}", create, resource.group, resource.version, *scope,
                         resource.plural, dict(report), optional=True, refusable=(409,))
            return Written(where, CREATED)
        except Refused:
            continue  # 409: another writer got there first; read it again
    return Written(where, FAILED, f"409 Conflict {MAX_ATTEMPTS} times: another writer keeps replacing it")


__all__ = ["CREATED", "FAILED", "MANAGED_BY", "MAX_ATTEMPTS", "SKIPPED", "UNCHANGED", "UPDATED", "Written", "write_policy_reports"]
