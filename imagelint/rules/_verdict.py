"""Words for the compatibility model's verdicts, shared by every rule that renders one.

IL101, IL102, IL107, IL401 and IL503 describe the same ``imagelint.compat`` verdict with
these helpers, so their findings cannot disagree; each finding carries the verdict's
outcome in ``extra["outcome"]`` (a test runs every rule on synthesized facts and checks).

A verdict becomes a headline (``headline``: what happens, on which CUDA / driver / GPU, and
— when it depends on the runtime — on what) and detail lines (``details``): one line per
situation ("legacy <1.17.4; cdi >=1.17.5: runs through forward compatibility — ..."), then
what stops working, the notes, and each uncertain matrix row the verdict rests on.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from typing import Any

from imagelint.compat.verdict import (
    COMPAT_HW,
    COMPAT_MISMATCH,
    DEPENDS,
    FAILS,
    FORWARD,
    GPU_UNSUPPORTED,
    INSUFFICIENT,
    MINOR,
    NATIVE,
    REFUSED,
    UNKNOWN,
    Case,
    Verdict,
)
from imagelint.lazyre import lazy_pattern
from imagelint.rules.base import ERROR, HEADLINE_LIMIT, INFO, WARNING

HEADLINE_TARGET = HEADLINE_LIMIT

# (short form, the message CUDA prints) per failure; the full names stay in ``Case.error``.
_ERROR_WORDS = {
    INSUFFICIENT: ("error 35", '"CUDA driver version is insufficient for CUDA runtime version"'),
    COMPAT_HW: ("error 804", '"forward compatibility was attempted on non supported HW"'),
    COMPAT_MISMATCH: ("error 803", '"system has unsupported display driver / cuda driver combination"'),
}

# A case's outcome at the start of its detail line.
_LINE = {
    NATIVE: "runs natively",
    MINOR: "runs only through minor-version compatibility",
    FORWARD: "runs through forward compatibility",
    UNKNOWN: "could not judge",
}
# The same in a headline that names several outcomes (full, then abbreviated).
_OUTCOME = {NATIVE: ("runs natively", "native"), MINOR: ("minor-version compatibility", "minor-version compat"),
            FORWARD: ("forward compatibility", "forward compat"), UNKNOWN: ("could not judge", "unknown")}


def subject(v: Verdict) -> str:
    """``CUDA 12.4.1 on driver 535.104.05 (T4)``; a pool with a name of its own is named."""
    gpu = v.gpu or ""
    driver = v.driver or "?"
    cuda = f"CUDA {v.cuda}" if v.cuda else "the image's CUDA"
    if v.pool and v.pool != f"driver-{v.driver}":
        return f"{cuda} on pool {v.pool} (driver {driver}{', ' + gpu if gpu else ''})"
    return f"{cuda} on driver {driver}{f' ({gpu})' if gpu else ''}"


def fit(variants: Iterable[str], limit: int = HEADLINE_TARGET) -> str:
    """The first variant that fits in ``limit`` characters (the last, cut at a word, if none does)."""
    options = [" ".join(o.split()) for o in variants]
    for option in options:
        if len(option) <= limit:
            return option
    last = options[-1]
    return last if len(last) <= HEADLINE_LIMIT else last[: HEADLINE_LIMIT - 1].rsplit(" ", 1)[0] + "…"


def _failure_words(case: Case, with_quote: bool = True) -> str:
    code, quote = _ERROR_WORDS.get(case.failure or "", ("", ""))
    return f"{code} {quote}" if with_quote and code else code


def failure_code(case: Case) -> str:
    """How a failing case fails, in a few words: ``error 804``."""
    return _failure_words(case, False) or "an error"


def _single(v: Verdict, case: Case) -> list[str]:
    """Headline variants (longest first) for a verdict that holds whatever the runtime does."""
    if case.outcome == FAILS:
        if case.failure == INSUFFICIENT:
            if case.compat is not None:
                why = f"the forward-compat libcuda {case.compat.version} it loads is below the floor {v.min_driver or '?'}"
            elif v.min_driver:
                why = f"needs driver >= {v.min_driver}"
            else:
                why = f"the driver reports CUDA {case.driver_cuda or '?'}"
            return [f"fails: {why} ({_failure_words(case)})", f"fails: {why} ({_failure_words(case, False)})"]
        version = case.compat.version if case.compat else "?"
        if case.failure == COMPAT_HW:
            why = f"forward-compat libcuda {version} is loaded on a GPU without forward compatibility"
            return [f"fails: {why} ({_failure_words(case)})", f"fails: {why} ({_failure_words(case, False)})",
                    f"fails: forward-compat libcuda {version} on a non-data-centre GPU ({_failure_words(case, False)})"]
        if case.failure == COMPAT_MISMATCH:
            why = f"forward-compat libcuda {version} does not support this host driver"
            return [f"fails: {why} ({_failure_words(case)})", f"fails: {why} ({_failure_words(case, False)})"]
        if case.failure == REFUSED:
            return ["the container does not start: NVIDIA_REQUIRE_* is false (IL102 names each term)"]
        if case.failure == GPU_UNSUPPORTED:
            return ["fails: the driver does not drive this GPU (IL503)"]
        return ["fails"]
    if case.outcome == MINOR:
        floor = f" (native needs driver >= {v.min_driver})" if v.min_driver else ""
        return [f"runs only through minor-version compatibility{floor}: newer PTX and newer APIs fail",
                f"runs only through minor-version compatibility{floor}"]
    if case.outcome == FORWARD:
        version = case.compat.version if case.compat else "?"
        return [f"runs through forward compatibility (the image's libcuda {version})",
                "runs through forward compatibility"]
    if case.outcome == UNKNOWN:
        missing = ", ".join(case.missing) or "see the details"
        return [f"could not judge: needs {missing}", "could not judge (see the details)"]
    return [_LINE.get(case.outcome, case.outcome)]


def _outcome_short(case: Case, short: bool) -> str:
    if case.outcome == FAILS:
        code = _failure_words(case, False)
        if case.failure == REFUSED:
            return "does not start"
        return f"fails with {code}" if code else "fails"
    return _OUTCOME.get(case.outcome, (case.outcome, case.outcome))[1 if short else 0]


def headline(v: Verdict, cases: Sequence[Case] | None = None, lead: str | None = None) -> str:
    """``<lead or subject>: <what happens>``, at most ``HEADLINE_TARGET`` characters where the
    words allow (details carry the rest)."""
    chosen = list(cases) if cases is not None else list(v.cases)
    lead = lead or subject(v)
    if len(chosen) == 1 and (not v.depends or cases is not None):
        return fit(f"{lead}: {variant}" for variant in _single(v, chosen[0]))
    if len({c.outcome for c in chosen}) == 1:
        # The same outcome in every situation (e.g. fails: refused in legacy mode, error 35 in
        # the others): say it once, from the case that says most, the others in brackets.
        primary = next((c for c in chosen if c.failure != REFUSED), chosen[0])
        others = [f"{c.situation or c.condition}: {_outcome_short(c, True)}" for c in chosen if c is not primary]
        also = f" ({'; '.join(others)})" if others else ""
        return fit([*(f"{lead}: {variant}{also}" for variant in _single(v, primary)),
                    *(f"{lead}: {variant}" for variant in _single(v, primary))])
    # Several situations: in plain words, what happens in most of them, what in the others, and
    # which flag settles it; each situation is a detail line.
    ranked = sorted(chosen, key=lambda c: len(c.situation or c.condition))
    named, rest = ranked[:-1], ranked[-1]
    setups, decides = _deciding(v.cases)
    variants = []
    for short in (False, True):
        in_others = " or ".join(dict.fromkeys(_plain_outcome(c, short) for c in named))
        if len(chosen) < len(v.cases):  # only some situations are shown: the others are not this finding's
            every = " or ".join(dict.fromkeys(_plain_outcome(c, short) for c in chosen))
            variants.append(f"{lead}: {every} with some {setups} ({decides})")
        else:
            variants.append(f"{lead}: {_plain_outcome(rest, short)}, but {in_others} with some {setups} ({decides})")
    outcomes = " or ".join(dict.fromkeys(_plain_outcome(c, True) for c in (rest, *named)))
    variants.append(f"{lead}: {outcomes} ({decides})")
    variants.append(f"{lead}: depends on the {setups} ({decides}; see the situations below)")
    return fit(variants)


# An outcome as a headline says it of a situation (full words, then short).
_PLAIN = {NATIVE: ("runs natively", "native"),
          MINOR: ("runs only through minor-version compatibility", "only minor-version compat"),
          FORWARD: ("runs through forward compatibility", "forward compat"),
          UNKNOWN: ("could not judge", "unknown")}
_MODES = lazy_pattern(r"\b(?:legacy|cdi|jit-cdi|csv)\b")
_RELEASE = lazy_pattern(r"\d+\.\d+")


def _plain_outcome(case: Case, short: bool) -> str:
    if case.outcome in _PLAIN:
        return _PLAIN[case.outcome][1 if short else 0]
    return _outcome_short(case, short)


def _deciding(cases: Sequence[Case]) -> tuple[str, str]:
    """(what the situations differ in, which flag settles it): ``("toolkit releases or modes",
    "--toolkit and --runtime-mode decide")``; an NGC image's entrypoint is the image's to settle."""
    texts = [c.situation or c.condition for c in cases]
    toolkit = any(_RELEASE.search(t) for t in texts)
    mode = len({m for t in texts for m in _MODES.findall(t)}) > 1 or (bool(_MODES.search(" ".join(texts))) and not toolkit)
    if toolkit and mode:
        return "toolkit releases or modes", "--toolkit and --runtime-mode decide"
    if toolkit:
        return "toolkit releases", "--toolkit decides"
    if mode:
        return "runtime modes", "--runtime-mode decides"
    if any("entrypoint" in t for t in texts):
        return "entrypoints", "the image's ENTRYPOINT decides"
    return "runtime setups", "see the situations below"


def case_line(case: Case, with_condition: bool = True) -> str:
    """One situation: ``<condition>: <outcome> — <why>``, who loads the compat libcuda, why it
    is not loaded, what would let imagelint judge."""
    if case.failure == REFUSED:
        head = "the container does not start"
    elif case.outcome == FAILS:
        code = _failure_words(case)
        head = f"fails with {code}" if code else "fails"
    else:
        head = _LINE.get(case.outcome, case.outcome)
    text = f"{head} — {case.reason}"
    skipped = case.skipped_because or ((case.compat_skipped,) if case.compat_skipped else ())
    if skipped and case.compat is None:
        text += f"; the image's compat libcuda is not loaded: {_either(skipped, 'or')}"
    if case.compat_inert:
        text += f"; {case.compat_inert}"
    if case.missing:
        text += f"; missing: {', '.join(case.missing)}"
    condition = case.situation or case.condition
    return f"{_plain_condition(condition)}: {text}" if with_condition and condition else text


def _plain_condition(condition: str) -> str:
    return condition[3:] if condition.startswith("in ") else condition


def _either(items: Sequence[str], word: str = "or") -> str:
    items = list(items)
    return items[0] if len(items) == 1 else ", ".join(items[:-1]) + f" {word} " + items[-1]


def details(v: Verdict, cases: Sequence[Case] | None = None) -> list[str]:
    """The detail lines: each situation, then the limits, notes and uncertain rows."""
    chosen = list(cases) if cases is not None else list(v.cases)
    several = len(v.cases) > 1
    out = []
    for c in chosen:
        out.append(case_line(c, with_condition=several or bool(c.condition)))
        if len(c.loaded_by) > 1:  # who does it differs between the situations of this line
            out.append(f"there the compat libcuda is put on the loader path by {_either(c.loaded_by)}")
    out += list(dict.fromkeys(limit for c in chosen for limit in c.limits))
    out += list(v.notes)
    out += [uncertain_line(u) for u in v.uncertain]
    return out


def uncertain_line(row: str) -> str:
    """``rests on an uncertain matrix row: <what> (<source, shortened to its title>)``."""
    what, source = row, ""
    if row.endswith(")") and " (" in row:
        what, source = row.split(" (", 1)
        source = source[:-1]
    return f"rests on an uncertain matrix row: {what}" + (f" ({short_source(source)})" if source else "")


def short_source(source: str, limit: int = 90) -> str:
    """A source's first reference, without its parenthesised remarks, cut at a word."""
    first = source.split("; ", 1)[0]
    if first.startswith(("http://", "https://")):
        return first
    plain = " ".join(re.sub(r"\s*\([^()]*\)", "", first).split())
    return plain if len(plain) <= limit else plain[:limit].rsplit(" ", 1)[0] + "…"


def render(v: Verdict, cases: Sequence[Case] | None = None, lead: str | None = None) -> tuple[str, list[str]]:
    return headline(v, cases, lead), details(v, cases)


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
    """Every fix the verdict's cases know, each a whole alternative: ``One of: (1) …; (2) …``."""
    seen = list(dict.fromkeys(f[3:] if f.startswith("or ") else f for c in v.cases for f in c.fixes))
    if not seen:
        return ""
    if len(seen) == 1:
        return seen[0][0].upper() + seen[0][1:] + "."
    return "One of: " + "; ".join(f"({n}) {fix}" for n, fix in enumerate(seen, 1)) + "."


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
             "situation": c.situation or None, "compat_by": c.compat.by if c.compat else None,
             "loaded_by": list(c.loaded_by) or None, "reason": c.reason, "limits": list(c.limits) or None}
            for c in v.cases
        ],
        "cuda": v.cuda,
        "min_driver": v.min_driver,
        "driver": v.driver,
        "gpu": v.gpu,
        "notes": list(v.notes) or None,
        "uncertain": list(v.uncertain) or None,
    }


__all__ = [
    "COMPAT_HW", "COMPAT_MISMATCH", "DEPENDS", "INSUFFICIENT", "case_line", "details", "extra", "failure_code", "fit", "fixes",
    "headline", "render", "severity", "short_source", "subject", "uncertain_line", "where_of",
]
