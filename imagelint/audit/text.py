"""The audit for people: a short workload × pool × verdict table, then the details per image and pool.

Names and messages from the cluster and from images are untrusted: control characters are
shown escaped (``\\x1b``), never sent to the terminal.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from imagelint.audit.jsonout import summary
from imagelint.audit.model import PASS, VERDICT_RANK, AuditReport
from imagelint.audit.plan import BREAKS, FIXED, STILL_FAILING, UNCHANGED, PlanReport

MAX_DETAIL_FINDINGS = 20
MAX_TABLE_ROWS = 200  # worst first; the JSON report has every row
MAX_DETAILS = 100  # image × pool details, worst first


def safe(text: str) -> str:
    """``text`` with every non-printable character escaped."""
    return "".join(ch if ch.isprintable() else repr(ch)[1:-1] for ch in str(text))


UNKNOWN = "-"  # a workload field an image list does not know (namespace, container)


def _table(table: Sequence[tuple[str, ...]]) -> list[str]:
    """Aligned columns; a column no row knows (every cell ``-``: an image list) is left out."""
    if not table:
        return []
    known = [i for i in range(len(table[0])) if len(table) == 1 or any(r[i] != UNKNOWN for r in table[1:])]
    rows = [tuple(r[i] for i in known) for r in table]
    widths = [max(len(r[i]) for r in rows) for i in range(len(rows[0]))]
    return ["  ".join(cell.ljust(w) for cell, w in zip(r, widths)).rstrip() for r in rows]


def render_text(report: AuditReport) -> str:
    s = summary(report)
    lines = [
        f"imagelint audit of {safe(report.source)}: {s['workloads']} workload containers, {s['images']} distinct images, "
        f"against {safe(report.target_source)} (pools: {', '.join(map(safe, report.pools)) or 'none'})",
        f"workload × pool: {s['fail']} fail, {s['error']} not checked, {s['warn']} warn, {s['pass']} pass; "
        f"{s['not_on_gpu_pool']} on no GPU pool (not checked)",
        "",
    ]
    rows = []
    for w in report.workloads:
        for pool in w.pools:
            verdict = report.verdict(w, pool)
            if verdict != PASS:
                rows.append((VERDICT_RANK[verdict], w, pool, verdict))
    rows.sort(key=lambda r: (-r[0], r[1].sort_key, r[2]))
    if rows:
        table = [("VERDICT", "NAMESPACE", "WORKLOAD", "CONTAINER", "POOL", "IMAGE")]
        table += [(v.upper(), safe(w.namespace), safe(w.owner), safe(w.container), safe(p), safe(w.image))
                  for _, w, p, v in rows[:MAX_TABLE_ROWS]]
        lines += _table(table)
        if len(rows) > MAX_TABLE_ROWS:
            lines.append(f"... and {len(rows) - MAX_TABLE_ROWS} more rows (every row: --format json)")
    elif not any(w.pools for w in report.workloads):
        lines.append("no workload runs on (or can land on) a GPU pool: nothing was checked")
    else:
        lines.append("every workload passes on every pool it can land on")
    details = [c for c in report.checks if c.verdict != PASS]
    if details:
        lines += ["", "Details:"]
    refs = {i.key: i for i in report.images}
    details.sort(key=lambda c: (-VERDICT_RANK[c.verdict], c.image_key, c.pool))
    for c in details[:MAX_DETAILS]:
        image = refs.get(c.image_key)
        names = ", ".join(safe(r) for r in image.references) if image else safe(c.image_key)
        lines.append(f"  {c.verdict.upper()} {names} on pool {safe(c.pool)}"
                     + (f" ({safe(c.platform)})" if c.platform else ""))
        if c.error:
            lines.append(f"    not checked: {safe(c.error)}")
        for f in c.findings[:MAX_DETAIL_FINDINGS]:
            lines.append(f"    {f.rule} {f.severity}: {safe(f.message)}")
        if len(c.findings) > MAX_DETAIL_FINDINGS:
            lines.append(f"    ... and {len(c.findings) - MAX_DETAIL_FINDINGS} more (see --format json)")
    if len(details) > MAX_DETAILS:
        lines.append(f"  ... and {len(details) - MAX_DETAILS} more images × pools (every one: --format json)")
    lines += _warnings(report.warnings)
    return "\n".join(lines) + "\n"


def _warnings(warnings: Iterable[str]) -> list[str]:
    out = [f"warning: {safe(w)}" for w in warnings]
    return ([""] + out) if out else []


def render_plan_text(plan: PlanReport) -> str:
    lines = [
        f"imagelint audit plan: {safe(plan.current.target_source)} → {safe(plan.proposed.target_source)}",
        f"workload × pool: {plan.failing_today} failing today; with the plan: {plan.count(BREAKS)} break, "
        f"{plan.count(FIXED)} fixed, {plan.count(STILL_FAILING)} still failing, {plan.count(UNCHANGED)} unchanged (passing)",
    ]
    for kind, title in ((BREAKS, "Breaks"), (FIXED, "Fixed"), (STILL_FAILING, "Still failing")):
        changes = [c for c in plan.changes if c.change == kind]
        if not changes:
            continue
        lines += ["", f"{title}:"]
        by_namespace: dict[str, list] = {}
        for c in changes:
            by_namespace.setdefault(c.workload.namespace, []).append(c)
        for namespace in sorted(by_namespace):
            if namespace != UNKNOWN:  # an image list knows no namespace or container: none is printed
                lines.append(f"  namespace {safe(namespace)}")
            for c in sorted(by_namespace[namespace], key=lambda c: (c.workload.sort_key, c.pool)):
                w = c.workload
                container = f" container {safe(w.container)}" if w.container != UNKNOWN else ""
                new = " with a new error" if kind == BREAKS and c.before == c.after else ""
                lines.append(f"    {safe(w.owner)}{container} on {safe(c.pool)}: {c.before} → {c.after}"
                             f"{new} ({safe(w.image)})")
                for reason in c.reasons[:MAX_DETAIL_FINDINGS]:
                    lines.append(f"      {'was' if kind == FIXED else 'because'}: {safe(reason)}")
                for fix in c.fixes[:MAX_DETAIL_FINDINGS]:
                    lines.append(f"      fix {safe(fix)}")
    lines += _warnings(tuple(plan.warnings) + tuple(plan.current.warnings))
    return "\n".join(lines) + "\n"


__all__ = ["render_plan_text", "render_text", "safe"]
