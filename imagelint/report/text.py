"""The report for people: grouped by image, then severity, with the evidence for each finding."""

from __future__ import annotations

from imagelint.core.check import CheckRun
from imagelint.escape import guard_line
from imagelint.escape import printable as p
from imagelint.report import ReportOptions
from imagelint.report.fragments import (
    SEVERITY_ORDER,
    finding_lines,
    image_label,
    summary_line,
)

_COLORS = {"error": "\033[31m", "warning": "\033[33m", "info": "\033[36m", "bold": "\033[1m", "dim": "\033[2m"}
_RESET = "\033[0m"


def render(run: CheckRun, options: ReportOptions) -> str:
    def c(style: str, text: str) -> str:
        return f"{_COLORS[style]}{text}{_RESET}" if options.color else text

    lines: list[str] = []
    for result in run.results:
        if options.quiet and not result.findings and not result.error:
            continue
        lines.append(c("bold", p(image_label(result))))
        if result.error:
            detail = "the error is on stderr" if options.errors_on_stderr else p(result.error)
            lines.append(f"  {c('error', 'unreadable')}: {detail}")
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
                pool = f" [pool {p(f.pool)}]" if f.pool else ""
                head, details = finding_lines(f)
                head, details = p(head), tuple(p(d) for d in details)
                lines.append(f"    {f.rule} {f.name}{pool}: {head}")
                lines.extend(f"      {detail}" for detail in details)
                if f.location is not None:
                    lines.append(f"      {c('dim', 'at')} {p(f.location.describe())}")
                if f.remediation:
                    lines.append(f"      {c('dim', 'fix')} {p(f.remediation)}")
        if options.quiet:
            lines.append("")
            continue
        if result.suppressed:
            lines.append(f"  suppressed ({len(result.suppressed)})")
            for s in result.suppressed:
                lines.append(f"    {s.finding.rule} {s.finding.name}: {p(s.reason)} [{p(s.by)}]")
        for notice in result.notices:
            lines.append(f"  note: {p(notice)}")
        if not result.complete and result.kind == "image" and not result.unread_files:
            lines.append("  note: layers were not read (config only); file-based rules saw no files")
        lines.append("")
    if options.quiet:
        return "\n".join(guard_line(line) for line in lines).rstrip("\n") + ("\n" if lines else "")
    # Rules skipped for want of a target: about the run, said once (each result's JSON keeps its list).
    skipped = list(dict.fromkeys(rule for r in run.results for rule in r.skipped_rules))
    if skipped:
        lines.append(f"note: not run without a target: {', '.join(skipped)} (give --driver/--gpu, --target-file or --cluster)")
    for notice in run.notices:
        lines.append(f"note: {p(notice)}")
    static = sum(1 for r in run.results if r.kind != "image" and not r.complete and not r.error)
    if static:
        lines.append(f"note: {static} result(s) read statically (complete: false): rules that need an image's "
                     "files saw only what the files state; check the built image for the rest")
    lines.append(summary_line(run))
    # Every value from an image or a file went through printable(); no line may open with "::".
    return "\n".join(guard_line(line) for line in lines) + "\n"
