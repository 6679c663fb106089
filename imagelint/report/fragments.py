"""Pieces several report formats share."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from imagelint.core.engine import ImageResult
from imagelint.deploytarget import NodePool, Target
from imagelint.escape import printable

SEVERITY_ORDER = ("error", "warning", "info")


def image_label(result: ImageResult) -> str:
    parts = [result.subject]
    extra = [p for p in (result.platform, result.digest[:19] + "…" if result.digest else None) if p]
    if extra:
        parts.append(f"({', '.join(extra)})")
    return " ".join(parts)


HEADLINE_WIDTH = 140
# A GitHub annotation or a JUnit failure: the headline, the fix, and the detail lines that fit.
# CI is often the only place a finding is read (the JSON report stays on the runner), so the fix
# is never left out and the bound is generous; GitHub shows an annotation's whole message.
ANNOTATION_WIDTH = 2000
ANNOTATION_DETAIL_LINES = 12


def finding_lines(finding: Any) -> tuple[str, tuple[str, ...]]:
    """A finding's headline and detail lines, as the rule wrote them (``message`` and
    ``details``). Only a long message with no details (a rule or plugin older than
    ``details``) is split, by ``headline_and_details``."""
    details = tuple(getattr(finding, "details", ()) or ())
    message = finding.message
    if details or (len(message) <= HEADLINE_WIDTH and "\n" not in message):
        return message, details
    return headline_and_details(message)


def headline_and_details(message: str, width: int = HEADLINE_WIDTH) -> tuple[str, tuple[str, ...]]:
    """Fallback for a long message without details: a headline and detail lines, split on the
    message's lines, then its ``; `` clauses, then (for a long first clause) its ``: ``-parts that
    fit in ``width``. The message itself is unchanged (the JSON report keeps it whole)."""
    if "\n" in message:
        lines = [ln.strip() for ln in message.splitlines() if ln.strip()]
        return (lines[0], tuple(lines[1:])) if lines else (message, ())
    clauses = [c.strip() for c in message.split("; ") if c.strip()]
    if not clauses:
        return message, ()
    first, rest = clauses[0], clauses[1:]
    if len(first) > width:
        parts = first.split(": ")
        head = parts[0]
        n = 1
        while n < len(parts) and len(head) + 2 + len(parts[n]) <= width:
            head += ": " + parts[n]
            n += 1
        if n < len(parts):
            rest = [": ".join(parts[n:])] + rest
        first = head
    return first, tuple(rest)


def annotation_text(finding_or_message: Any, width: int = ANNOTATION_WIDTH) -> str:
    """Headline, the detail lines that fit in ``width`` characters (at most
    ``ANNOTATION_DETAIL_LINES``), then ``Fix: …``. The fix always stays; details left out are
    counted, never cut mid-word, and the count says which formats show them."""
    if isinstance(finding_or_message, str):
        (head, details), fix = headline_and_details(finding_or_message), ""
    else:
        (head, details), fix = finding_lines(finding_or_message), getattr(finding_or_message, "remediation", "") or ""
    # Each line printable: only the line breaks between them are the report's own.
    head, details = printable(head), tuple(printable(d) for d in details)
    fix_line = f"Fix: {printable(fix)}" if fix else ""
    lines = [head]
    used = len(head) + (1 + len(fix_line) if fix_line else 0)
    more = "… {} more detail line(s): imagelint --format text or json shows every line"
    room_for_count = 1 + len(more.format(len(details)))
    for n, detail in enumerate(details):
        last = n == len(details) - 1
        if n >= ANNOTATION_DETAIL_LINES or used + 1 + len(detail) + (0 if last else room_for_count) > width:
            lines.append(more.format(len(details) - n))
            break
        lines.append(detail)
        used += 1 + len(detail)
    if fix_line:
        lines.append(fix_line)
    return "\n".join(lines)


def subjects_line(run: Any) -> str:
    """What was looked at, counted once each: ``4 file(s) (1 skipped), 2 image(s) (1 unreadable)``.

    A manifest with three objects is one file; an image read for two platforms is one image;
    ``lint`` always counts its files, ``check`` its images, each the other only when there were some.
    """
    images = list(dict.fromkeys(r.subject for r in run.results if r.kind == "image"))
    unreadable = len({r.subject for r in run.results if r.kind == "image" and r.error})
    skipped = len(getattr(run, "files_skipped", ()))
    clean = len(getattr(run, "files_clean", ()))
    # The target's own findings (kind "target") are about the pools, not a file or image looked at.
    files = len({r.path or r.subject for r in run.results if r.kind not in ("image", "target")}) + skipped + clean
    lint = getattr(run, "command", "check") == "lint"
    parts = []
    if lint or files:
        aside = [f"{skipped} skipped"] * bool(skipped) + [f"{clean} without findings, not listed"] * bool(clean)
        parts.append(f"{files} file(s)" + (f" ({', '.join(aside)})" if aside else ""))
    if not lint or images:
        parts.append(f"{len(images)} image(s)" + (f" ({unreadable} unreadable)" if unreadable else ""))
    return ", ".join(parts)


def counts_line(run: Any) -> str:
    s = run.summary
    return f"{s['error']} error(s), {s['warning']} warning(s), {s['info']} info, {s['suppressed']} suppressed"


def summary_line(run: Any) -> str:
    """The text report's last line: what was looked at, what was found, and the threshold."""
    return f"{subjects_line(run)}: {counts_line(run)} (fail-on {run.config.fail_on})"


def _plain(value: Any) -> Any:
    if isinstance(value, Mapping):
        return {str(k): _plain(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_plain(v) for v in value]
    if hasattr(value, "__dataclass_fields__"):
        return {k: _plain(getattr(value, k)) for k in value.__dataclass_fields__}
    return value


def pool_json(pool: NodePool) -> dict[str, Any]:
    return {k: v for k, v in _plain(pool).items() if v not in (None, [], {})}


def target_json(target: Target) -> dict[str, Any]:
    return {
        "source": target.source,
        "pools": [pool_json(p) for p in target.pools],
        "runtime_classes": list(target.runtime_classes),
    }
