"""``imagelint audit``: every image a cluster's workloads run, checked against the pools each can
land on, today and on a proposed stack; sharded by digest; reported as text, JSON, SARIF and
PolicyReports. No typer here: ``imagelint/cli/audit_cmd.py`` is the thin CLI.

Layout:

  model.py         Workload, AuditImage, PoolCheck, Inventory, AuditReport (frozen)
  inventory.py     cluster containers / an images file → deduplicated images + placements
  run.py           run_audit: each image × pool through ``core.check.run_check``, ``jobs`` at a time
  shard.py         --shard I/N (JOB_COMPLETION_INDEX), and merging the parts
  plan.py          the upgrade planner: two audits → breaks / fixed / still failing / unchanged, with reasons
  jsonout.py       the JSON report (docs/audit-schema.json) and reading it back
  text.py          the table and details; sarif.py; policyreport.py (wgpolicyk8s.io/v1alpha2)

The cluster side (pods, workload templates, writing PolicyReports) lives in ``imagelint.cluster``.

Exit codes (``exit_code``): 3 when any image could not be read (a partial audit must not pass),
else 1 when a workload fails on a pool it can land on, else 0. A plan exits 3 the same way, else 1
when a workload fails on the proposed stack (it breaks, or it fails today and still fails), else 0.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from imagelint.audit.model import ERROR, FAIL, AuditReport
from imagelint.errors import EXIT_FINDINGS, EXIT_OK, EXIT_UNREADABLE

if TYPE_CHECKING:
    from imagelint.audit.plan import PlanReport


def exit_code(report: AuditReport) -> int:
    verdicts = {c.verdict for c in report.checks}
    if ERROR in verdicts:
        return EXIT_UNREADABLE
    return EXIT_FINDINGS if FAIL in verdicts else EXIT_OK


def plan_exit_code(plan: PlanReport) -> int:
    if exit_code(plan.current) == EXIT_UNREADABLE or exit_code(plan.proposed) == EXIT_UNREADABLE:
        return EXIT_UNREADABLE
    return EXIT_FINDINGS if plan.failing_then else EXIT_OK


__all__ = ["exit_code", "plan_exit_code"]
