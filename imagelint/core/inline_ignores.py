"""``# imagelint ignore=IL302[,IL301] reason`` comments in every file kind ``lint`` reads.

One syntax everywhere a comment can be written: Dockerfiles, Python, shell, YAML (Kubernetes
manifests, Compose files), TOML and INI/DeepStream configs (``#``, or ``;`` in INI-style
configs). As with hadolint, a comment on its own line applies to the next line that is not a
comment; as with ruff's ``# noqa``, a comment at the end of a line applies to that line. (In a
Dockerfile a ``#`` in the middle of an instruction is part of it, so there only the line-before
form exists, for every line of the instruction.) JSON has no comments: an ``[[ignores]]`` entry
of ``.imagelint.toml`` silences a finding there.

A reason is required (as for the image label ``io.imagelint.ignore``). What is wrong with an
ignore is said, never silently dropped: a comment that names no rule or an unknown one, an ignore
without a reason, and an ignore that silenced nothing (ruff's RUF100 ``unused-noqa``: only for
rules that ran on the file) each get a note naming ``file:line``. Notes do not fail the run.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, replace

from imagelint.core.config import Config
from imagelint.core.engine import ImageResult, SuppressedFinding
from imagelint.lazyre import lazy_pattern

# The marker, after a comment sign at the start of a line or after white space.
_MARK = lazy_pattern(r"(?:^|\s)(?:#|;)\s*imagelint\s*:?\s*ignore\b(?P<rest>.*)$", re.IGNORECASE)
_CODES = lazy_pattern(r"^\s*=\s*(?P<codes>[A-Za-z0-9_]+(?:\s*,\s*[A-Za-z0-9_]+)*)(?:\s+(?P<reason>.*?))?\s*$")
_COMMENT_ONLY = lazy_pattern(r"^\s*(?:#|;)")
SYNTAX = "# imagelint ignore=IL302 why"


@dataclass(frozen=True)
class InlineIgnore:
    """One ignore comment: where it is, the lines it silences, rule ID → reason ('' when none)."""

    line: int
    applies_to: frozenset[int]
    reasons: Mapping[str, str]


def _known(code: str) -> bool:
    from imagelint.rules import RULES

    return code in RULES


def ignores_in_text(text: str, path: str, dockerfile: bool = False) -> tuple[tuple[InlineIgnore, ...], tuple[str, ...]]:
    """The ignore comments of a file, and a note for each malformed one. ``dockerfile``: only
    comment lines count (their instruction's lines come from the Dockerfile parser)."""
    ignores: list[InlineIgnore] = []
    problems: list[str] = []
    lines = text.splitlines()
    for n, line in enumerate(lines, 1):
        if "gnore" not in line and "GNORE" not in line:
            continue
        m = _MARK.search(line)
        if m is None:
            continue
        own_line = bool(_COMMENT_ONLY.match(line))
        if dockerfile and not own_line:
            continue
        parsed = _CODES.match(m.group("rest"))
        if parsed is None:
            problems.append(f"{path}:{n}: malformed ignore comment, not honoured: write '{SYNTAX}'")
            continue
        codes = [c.strip().upper() for c in parsed.group("codes").split(",")]
        unknown = [c for c in codes if not _known(c)]
        if unknown:
            problems.append(f"{path}:{n}: ignore names no rule imagelint has ({', '.join(unknown)}); "
                            "not honoured for it (imagelint rules lists them)")
        reason = (parsed.group("reason") or "").strip()
        reasons = {c: reason for c in codes if c not in unknown}
        if not reasons:
            continue
        if own_line:
            target = next((k for k in range(n + 1, len(lines) + 1)
                           if lines[k - 1].strip() and not _COMMENT_ONLY.match(lines[k - 1])), None)
            applies = frozenset({target} if target else ())
        else:
            applies = frozenset({n})
        ignores.append(InlineIgnore(n, applies, reasons))
    return tuple(ignores), tuple(problems)


def dockerfile_ignores(instructions: Iterable[object]) -> tuple[InlineIgnore, ...]:
    """The Dockerfile parser's ignores: each instruction's, for every physical line of it."""
    out = []
    for ins in instructions:
        reasons = getattr(ins, "ignores", None)
        if reasons:
            start, end = ins.line, ins.end_line  # type: ignore[attr-defined]  # an instruction with ignores has both
            out.append(InlineIgnore(start, frozenset(range(start, end + 1)), dict(reasons)))
    return tuple(out)


def apply_ignores(results: Sequence[ImageResult], path: str, ignores: Sequence[InlineIgnore],
                  config: Config) -> tuple[list[ImageResult], list[str]]:
    """Move the findings of ``path``'s results that an ignore comment covers to suppressed; the
    notes: ignores refused (inline ignores disabled, no reason) and ignores that silenced nothing."""
    if not ignores:
        return list(results), []
    if not config.inline_ignores:
        return list(results), [f"{path}: '# imagelint ignore=' comments not honoured (inline ignores are disabled)"]
    by_line: dict[int, list[InlineIgnore]] = {}
    for ig in ignores:
        for line in ig.applies_to:
            by_line.setdefault(line, []).append(ig)
    used: set[tuple[int, str]] = set()
    notes: list[str] = []
    out: list[ImageResult] = []
    for result in results:
        kept, suppressed = [], list(result.suppressed)
        for f in result.findings:
            loc = f.location
            covering = by_line.get(loc.line, []) if loc is not None and loc.source == path and loc.line else []
            match = next((ig for ig in covering if f.rule in ig.reasons), None)
            if match is None:
                kept.append(f)
                continue
            used.add((match.line, f.rule))
            reason = match.reasons[f.rule]
            if reason:
                suppressed.append(SuppressedFinding(f, reason, f"comment {path}:{match.line}"))
                continue
            note = (f"{path}:{match.line}: ignore of {f.rule} has no reason and is not honoured "
                    f"(write '# imagelint ignore={f.rule} why')")
            if note not in notes:
                notes.append(note)
            kept.append(f)
        out.append(replace(result, findings=tuple(kept), suppressed=tuple(suppressed)))
    ran = {rule for r in results for rule in r.rules_run}
    for ig in ignores:
        unused = [code for code in ig.reasons if (ig.line, code) not in used and code in ran]
        if unused:
            notes.append(f"{path}:{ig.line}: ignore of {', '.join(unused)} silenced nothing (no such finding on "
                         "the line it applies to); remove it (as ruff's RUF100 reports an unused noqa)")
    return out, notes


__all__ = ["InlineIgnore", "apply_ignores", "dockerfile_ignores", "ignores_in_text"]
