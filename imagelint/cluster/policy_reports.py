"""``audit --write-reports``: create or replace imagelint's PolicyReports (wgpolicyk8s.io/v1alpha2).

One object per namespace, named ``imagelint-audit``: an existing one is replaced (its
``resourceVersion`` carried over), a missing one created, an identical one left alone, so re-runs
never pile up reports or results. Needs ``create``/``update``/``get`` on policyreports (the
deploy/ ClusterRole grants it when report writing is enabled); a 403 or a missing CRD is one
error line (exit 3).
"""

from __future__ import annotations

from typing import Any, Mapping, Sequence

from imagelint.cluster.connection import Connection
from imagelint.cluster.resources import CLUSTER_POLICY_REPORTS, POLICY_REPORTS

CREATED, UPDATED, UNCHANGED = "created", "updated", "unchanged"


def _same(existing: Mapping[str, Any], wanted: Mapping[str, Any]) -> bool:
    labels = (existing.get("metadata") or {}).get("labels") or {}
    return (existing.get("results") == wanted.get("results") and existing.get("summary") == wanted.get("summary")
            and all(labels.get(k) == v for k, v in wanted["metadata"].get("labels", {}).items()))


def write_policy_reports(conn: Connection, reports: Sequence[Mapping[str, Any]]) -> list[tuple[str, str]]:
    """Create or replace each report; returns (NAMESPACE/NAME, created|updated|unchanged)."""
    from kubernetes import client

    custom = client.CustomObjectsApi(conn.api_client)
    done = []
    for report in reports:
        meta = report["metadata"]
        name, namespace = meta["name"], meta.get("namespace")
        resource = POLICY_REPORTS if namespace else CLUSTER_POLICY_REPORTS
        where = f"{namespace}/{name}" if namespace else name
        existing = conn.get_object(resource, name, namespace, optional=True,
                                   step=f"reading {resource.kind} {where}")
        if existing.checked and existing.object is not None:
            if _same(existing.object, report):
                done.append((where, UNCHANGED))
                continue
            version = (existing.object.get("metadata") or {}).get("resourceVersion")
            body = {**report, "metadata": {**meta, **({"resourceVersion": version} if version else {})}}
            if namespace:
                call = custom.replace_namespaced_custom_object
                args: tuple[Any, ...] = (resource.group, resource.version, namespace, resource.plural, name, body)
            else:
                call = custom.replace_cluster_custom_object
                args = (resource.group, resource.version, resource.plural, name, body)
            conn.request(f"replacing {resource.kind} {where}", call, *args)
            done.append((where, UPDATED))
            continue
        if existing.refused == 403:
            raise conn.error(f"reading {resource.kind} {where}", "403 Forbidden (the credentials lack permission for this)")
        if namespace:
            conn.request(f"creating {resource.kind} {where}", custom.create_namespaced_custom_object,
                         resource.group, resource.version, namespace, resource.plural, dict(report))
        else:
            conn.request(f"creating {resource.kind} {where}", custom.create_cluster_custom_object,
                         resource.group, resource.version, resource.plural, dict(report))
        done.append((where, CREATED))
    return done


__all__ = ["CREATED", "UNCHANGED", "UPDATED", "write_policy_reports"]
