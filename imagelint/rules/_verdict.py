"""Words for the compatibility model's verdicts, shared by every rule that renders one.

IL101, IL102, IL107, IL401 and IL503 describe the same ``imagelint.compat`` verdict with
these helpers, so their findings cannot disagree; each finding carries the verdict's
outcome in ``extra["outcome"]`` (a test runs every rule on synthesized facts and checks).
"""

from __future__ import annotations

from typing import Any

from imagelint.compat.verdict import (
    COMPAT_HW,
    COMPAT_MISMATCH,
    DEPENDS,
    FAILS,
    FORWARD,
    INSUFFICIENT,
    MINOR,
    NATIVE,
    UNKNOWN,
    Case,
    Verdict,
)
from imagelint.rules.base import ERROR, INFO, WARNING

_SHORT = {
    NATIVE: "runs natively",
    MINOR: "runs only through minor-version compatibility",
    FORWARD: "runs through forward compatibility",
    UNKNOWN: "could not judge",
}


def case_text(case: Case, with_limits: bool = True) -> str:
    """One case in words: its outcome, how it fails, why, and what stops working."""
    if case.outcome == FAILS:
        head = f"fails with {case.error}" if case.error else "fails"
    else:
        head = _SHORT.get(case.outcome, case.outcome)
    text = f"{head}: {case.reason}"
    if with_limits and case.limits:
        text += "; " + "; ".join(case.limits)
    if case.missing:
        text += f" (missing: {', '.join(case.missing)})"
    return text


def verdict_text(v: Verdict, cases: "tuple[Case, ...] | list[Case] | None" = None) -> str:
    """The whole verdict (or the given cases of it): one case, or "depends on ..." with each
    case under its condition."""
    chosen = list(cases) if cases is not None else list(v.cases)
    if not v.depends:
        return case_text(chosen[0])
    parts = [f"{c.condition}: {case_text(c)}" for c in chosen]
    return (f"depends on the runtime (give --runtime-mode / --toolkit): {' | '.join(parts)}" if len(chosen) > 1
            else " | ".join(parts))


def verdict_tail(v: Verdict) -> str:
    """Notes and uncertain rows, to append to a message."""
    text = ""
    if v.notes:
        text += " Note: " + "; ".join(v.notes) + "."
    if v.uncertain:
        text += " Rests on uncertain matrix rows: " + "; ".join(v.uncertain) + "."
    return text


def severity(v: Verdict) -> str | None:
    """error: fails whatever the runtime does; warning: fails in some situations, runs with
    limits, or could not be judged; info: runs through forward compatibility; None: native."""
    outcomes = {c.outcome for c in v.cases}
    if outcomes == {FAILS}:
        return ERROR
    if outcomes & {FAILS, UNKNOWN, MINOR}:
        return WARNING
    if FORWARD in outcomes:
        return INFO
    return None


def fixes(v: Verdict) -> str:
    seen = dict.fromkeys(f for c in v.cases for f in c.fixes)
    return "; ".join(seen)


def where_of(v: Verdict, facts: Any, default: Any) -> Any:
    """Point at the compat library when it decides the outcome, else at the CUDA evidence."""
    for case in v.cases:
        if case.compat is not None and case.outcome in (FAILS, FORWARD, UNKNOWN):
            for lib in facts.driver_libraries:
                if "/" + lib.path == case.compat.path:
                    return lib.provenance
    return default


def extra(v: Verdict) -> dict[str, Any]:
    return {
        "outcome": v.outcome,
        "cases": [
            {"outcome": c.outcome, "failure": c.failure, "condition": c.condition or None,
             "compat_by": c.compat.by if c.compat else None}
            for c in v.cases
        ],
        "cuda": v.cuda,
        "min_driver": v.min_driver,
        "driver": v.driver,
        "gpu": v.gpu,
        "notes": list(v.notes) or None,
        "uncertain": list(v.uncertain) or None,
    }


def pool_label(v: Verdict) -> str:
    gpu = f", {v.gpu}" if v.gpu else ""
    return f"pool {v.pool} (driver {v.driver or '?'}{gpu})"


__all__ = [
    "COMPAT_HW", "COMPAT_MISMATCH", "DEPENDS", "INSUFFICIENT", "case_text", "extra", "fixes", "pool_label",
    "severity", "verdict_tail", "verdict_text", "where_of",
]
