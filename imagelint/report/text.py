"""The report for people: grouped by image, then severity, with the evidence for each finding."""

from __future__ import annotations

from imagelint.core.check import CheckRun
from imagelint.report import ReportOptions
from imagelint.report._common import SEVERITY_ORDER, image_label

_COLORS = {"error": "\033[31m", "warning": "\033[33m", "info": "\033[36m", "bold": "\033[1m", "dim": "\033[2m"}
_RESET = "\033[0m"


def render(run: CheckRun, options: ReportOptions) -> str:
    def c(style: str, text: str) -> str:
        return f"{_COLORS[style]}{text}{_RESET}" if options.color else text

    lines: list[str] = []
    for result in run.results:
        lines.append(c("bold", image_label(result)))
        if result.error:
            lines.append(f"  {c('error', 'unreadable')}: {result.error}")
            lines.append("")
            continue
        if not result.findings:
            lines.append("  no findings")
        for severity in SEVERITY_ORDER:
            group = [f for f in result.findings if f.severity == severity]
            if not group:
                continue
            lines.append(f"  {c(severity, severity)} ({len(group)})")
            for f in group:
                pool = f" [pool {f.pool}]" if f.pool else ""
                lines.append(f"    {f.rule} {f.name}{pool}: {f.message}")
                if f.location is not None:
                    lines.append(f"      {c('dim', 'at')} {f.location.describe()}")
                if f.remediation:
                    lines.append(f"      {c('dim', 'fix')} {f.remediation}")
        if result.suppressed:
            lines.append(f"  suppressed ({len(result.suppressed)})")
            for s in result.suppressed:
                lines.append(f"    {s.finding.rule} {s.finding.name}: {s.reason} [{s.by}]")
        for notice in result.notices:
            lines.append(f"  note: {notice}")
        if not result.complete and result.kind == "image":
            lines.append("  note: layers were not read (config only); file-based rules saw no files")
        if result.skipped_rules:
            lines.append(f"  not run without a target: {', '.join(result.skipped_rules)} (give --driver/--gpu, --target-file or --cluster)")
        lines.append("")
    for notice in run.notices:
        lines.append(f"note: {notice}")
    static = sum(1 for r in run.results if r.kind != "image" and not r.complete and not r.error)
    if static:
        lines.append(f"note: {static} file(s) read statically (complete: false): rules that need an image's files "
                     "saw only what the files state; check the built image for the rest")
    s = run.summary
    lines.append(
        f"{_subjects(run.results)}: {s['error']} error(s), {s['warning']} warning(s), {s['info']} info, "
        f"{s['suppressed']} suppressed (fail-on {run.config.fail_on})"
    )
    return "\n".join(lines) + "\n"


def _subjects(results) -> str:  # type: ignore[no-untyped-def]
    """``2 image(s)``, ``3 file(s)`` or ``1 image(s), 2 file(s)``: what was checked."""
    images = sum(1 for r in results if r.kind == "image")
    files = len(results) - images
    parts = ([f"{images} image(s)"] if images or not files else []) + ([f"{files} file(s)"] if files else [])
    return ", ".join(parts)
