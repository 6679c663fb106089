"""Runs the selected rules over facts × target and decides what each finding means.

One place decides (flake8's DecisionEngine, yamllint's central options):

* **selection**: ``select``/``ignore`` by rule ID or prefix (``imagelint.core.config``,
  re-exported here); the longest matching prefix wins; on a tie ``ignore`` wins.
* **severity**: per-rule overrides replace what a rule reported.
* **suppression**: config ``ignores`` (rule + image glob + reason, optional
  ``expires``: an expired ignore stops applying and leaves a notice) and the
  image label ``io.imagelint.ignore="IL302:reason[,IL104:reason]"`` (refused with
  ``inline_ignores=False``). Suppressed findings are kept and counted.
* **redaction**: values of env vars whose names look secret never leave here.
* **threshold**: ``fail_on`` decides which findings fail the run.
"""

from __future__ import annotations

import datetime as _dt
import fnmatch
import functools
import warnings
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from types import MappingProxyType
from typing import TYPE_CHECKING, Any

from imagelint.core.config import (  # noqa: F401  (re-exported: the engine's API)
    Config,
    IgnoreEntry,
    RuleSelection,
    ignore_root,
    path_glob_matches,
    selected_rules,
    validate_code_prefix,
)
from imagelint.deploytarget.model import Target
from imagelint.facts.model import ImageFacts
from imagelint.redact import redact_data, redact_text
from imagelint.rules import RuleInfo
from imagelint.rules.base import (
    NEEDS_TARGET,
    SEVERITY_RANK,
    Finding,
    HeadlineTooLong,
    RuleContext,
    headline_problems,
)

if TYPE_CHECKING:
    from imagelint.matrix.model import Matrix

INLINE_IGNORE_LABEL = "io.imagelint.ignore"
SOURCE_LABELS = ("org.opencontainers.image.source", "org.opencontainers.image.revision")

# Selection (RuleSelection, selected_rules, validate_code_prefix) is configuration: imagelint.core.config.


def needs_layers(rules: Iterable[RuleInfo]) -> bool:
    """False when every rule needs only the image config (the inspect fast path)."""
    return any("files" in r.needs for r in rules)


@dataclass(frozen=True)
class SuppressedFinding:
    """A finding that an ignore entry, the ``io.imagelint.ignore`` label or an inline comment suppressed."""

    finding: Finding
    reason: str
    by: str  # "config FILE:LINE" or "label io.imagelint.ignore"

    def to_json(self) -> dict[str, Any]:
        out = self.finding.to_json()
        out["suppressed_by"] = self.by
        out["reason"] = self.reason
        return out


_NO_LABELS: Mapping[str, str] = MappingProxyType({})


@functools.lru_cache(maxsize=256)
def interned(ids: tuple[str, ...]) -> tuple[str, ...]:
    """The one tuple kept for rule IDs equal to ``ids``: the results of a manifest stream (one a
    pod) name the same rules run and skipped, and hold one tuple between them, not one each."""
    return ids


@dataclass(frozen=True, slots=True)  # slots: lint keeps one result a pod to the end of the run
class ImageResult:
    """What imagelint found for one image (one platform), or why it could not look."""

    subject: str
    kind: str = "image"
    digest: str | None = None
    platform: str | None = None
    findings: tuple[Finding, ...] = ()
    suppressed: tuple[SuppressedFinding, ...] = ()
    notices: tuple[str, ...] = ()
    skipped_rules: tuple[str, ...] = ()  # selected rules that need a target and had none
    rules_run: tuple[str, ...] = ()
    error: str | None = None             # set when the image could not be read
    error_exit_code: int | None = None
    complete: bool = True
    # Files the facts needed but could not read to the end (``complete`` is False for them too).
    unread_files: tuple[str, ...] = ()
    # The OCI labels that say where the image was built from (org.opencontainers.image.source /
    # .revision): SARIF uses them to point image findings at the repository's Dockerfile.
    source_labels: Mapping[str, str] = field(default_factory=lambda: _NO_LABELS)
    path: str | None = None  # lint: the repository file the result is about (one manifest holds many objects)

    @property
    def ok(self) -> bool:
        return self.error is None


def parse_inline_ignores(label: str) -> dict[str, str]:
    """``IL302:reason,IL104:other reason`` → {rule: reason}. Entries without a reason are kept
    with an empty reason (and do not suppress: a reason is required)."""
    out: dict[str, str] = {}
    for part in label.split(","):
        code, _, reason = part.partition(":")
        code = code.strip().upper()
        if code:
            out[code] = reason.strip()
    return out


def redact_finding(f: Finding, secrets: Sequence[str]) -> Finding:
    if not secrets:
        return f
    return replace(
        f,
        message=redact_text(f.message, secrets),
        remediation=redact_text(f.remediation, secrets),
        extra=MappingProxyType(redact_data(dict(f.extra), secrets)),
    )


def _matching_ignore(f: Finding, subject: str, entries: Sequence[IgnoreEntry], path: str | None = None,
                     root: str = "") -> IgnoreEntry | None:
    """The config ignore for ``f`` (the longest rule prefix wins): its glob matches the subject,
    or, for a linted file, the file's path with gitignore's rules (``path_glob_matches``)."""
    best = None
    for e in entries:
        if f.rule.startswith(e.rule) and (fnmatch.fnmatchcase(subject, e.image)
                                          or (path is not None and path_glob_matches(e.image, path, root))):
            if best is None or len(e.rule) > len(best.rule):
                best = e
    return best


def run_rules(
    facts: ImageFacts,
    target: Target,
    matrix: Matrix | None,
    config: Config,
    today: _dt.date | None = None,
    path: str | None = None,
) -> ImageResult:
    """Every selected rule over one image's facts, with severities, suppressions and redaction.
    ``path``: the linted file the facts were read from (config ignores match it too; the result is about it)."""
    today = today or _dt.date.today()
    rules = selected_rules(config)
    ctx = RuleContext(facts, target, matrix, today)
    secrets = facts.secret_values()
    notices: list[str] = []
    findings: list[Finding] = []
    for rule in rules:
        try:
            produced = list(rule.check(ctx))
        except Exception as exc:  # a rule bug must not hide every other rule's findings
            notices.append(f"rule {rule.id} failed on {facts.subject}: {exc.__class__.__name__}: {redact_text(str(exc), secrets)[:200]}")
            continue
        for f in produced:
            for problem in headline_problems(f):  # outside the try: a rule's long headline is not a crash
                warnings.warn(HeadlineTooLong(problem), stacklevel=1)
            if f.rule in config.severity:
                f = replace(f, severity=config.severity[f.rule])
            findings.append(redact_finding(f, secrets))

    findings = one_finding_per_cause(findings)
    # Rules that need a target and, without one, said nothing at all (IL101 still reports the floor).
    skipped = [r.id for r in rules if NEEDS_TARGET in r.needs and not target.known and not any(f.rule == r.id for f in findings)]
    active: list[IgnoreEntry] = []
    expired: list[IgnoreEntry] = []  # each with its date
    for entry in config.ignores:
        (expired if entry.expires is not None and entry.expires < today else active).append(entry)
    label = facts.labels.get(INLINE_IGNORE_LABEL) if facts.labels else None
    inline = parse_inline_ignores(label) if label else {}
    if inline and not config.inline_ignores:
        notices.append(f"label {INLINE_IGNORE_LABEL} on {facts.subject} not honoured (inline ignores are disabled)")
        inline = {}

    kept: list[Finding] = []
    suppressed: list[SuppressedFinding] = []
    used_expired: set[IgnoreEntry] = set()
    root = ignore_root(config.path) if path is not None and config.ignores else ""
    for f in findings:
        ignore = _matching_ignore(f, facts.subject, active, path, root)
        if ignore is not None:
            suppressed.append(SuppressedFinding(f, ignore.reason, f"config {ignore.source}"))
            continue
        reason = inline.get(f.rule)
        if reason:
            suppressed.append(SuppressedFinding(f, reason, f"label {INLINE_IGNORE_LABEL}"))
            continue
        stale = _matching_ignore(f, facts.subject, expired, path, root)
        if stale is not None:
            used_expired.add(stale)
        kept.append(f)
    for entry in expired:
        notices.append(
            f"ignore of {entry.rule} for '{entry.image}' ({entry.source}) expired on {entry.expires}"  # a date: YYYY-MM-DD
            + (" and no longer applies" if entry in used_expired else "")
        )
    for code, reason in inline.items():
        if not reason:
            notices.append(f"label {INLINE_IGNORE_LABEL}: {code} has no reason and is not honoured (write {code}:why)")
    unread = tuple(f"/{p.path}" for _, p in facts.unread_files)
    for (note, _), shown in zip(facts.unread_files, unread):
        notices.append(f"{shown!r}: {note}; what it holds past that point is not known")
    kept.sort(key=lambda f: (-SEVERITY_RANK[f.severity], f.rule, f.pool or ""))
    labels = {k: facts.labels[k] for k in SOURCE_LABELS if facts.labels and k in facts.labels}
    return ImageResult(
        subject=facts.subject,
        kind=facts.kind,
        digest=facts.digest,
        platform=str(facts.platform) if facts.platform else None,
        findings=tuple(kept),
        suppressed=tuple(suppressed),
        notices=tuple(notices),
        skipped_rules=interned(tuple(skipped)),
        rules_run=interned(tuple(r.id for r in rules)),
        complete=facts.complete and not unread,
        unread_files=unread,
        source_labels=MappingProxyType(labels) if labels else _NO_LABELS,
        path=path,
    )


# Rules that render one compatibility verdict from two sides: IL101 (the image's CUDA on the pool)
# and IL107 (its forward-compat libcuda). When both speak about one pool they state one cause.
_SAME_VERDICT = ("IL101", "IL107")


def one_finding_per_cause(findings: Sequence[Finding]) -> list[Finding]:
    """One cause, one finding: where IL101 and IL107 report the same verdict (``extra["cases"]``)
    on one pool, the IL107 finding folds into IL101's — its headline becomes a detail line, the
    severity is the worse of the two, and ``extra["also"]`` names IL107 — instead of two findings
    with one fix (ruff and hadolint report one diagnostic per problem, too). Rules not selected
    produce nothing to fold: ``--ignore IL101`` leaves IL107's finding whole."""
    primary, secondary = _SAME_VERDICT
    by_pool = {(f.pool, _verdict_key(f)): f for f in findings if f.rule == primary}
    folded: dict[int, Finding] = {}
    out: list[Finding] = []
    for f in findings:
        host = by_pool.get((f.pool, _verdict_key(f))) if f.rule == secondary else None
        if host is None or _verdict_key(f) is None:
            out.append(f)
            continue
        base = folded.get(id(host), host)
        worse = f.severity if SEVERITY_RANK[f.severity] > SEVERITY_RANK[base.severity] else base.severity
        folded[id(host)] = replace(
            base, severity=worse,
            details=(*base.details, f"the same cause, from the compat library's side ({secondary} {f.name}): {f.message}"),
            extra=MappingProxyType({**base.extra, "also": [*base.extra.get("also", ()), secondary]}),
            remediation=base.remediation or f.remediation,
        )
    return [folded.get(id(f), f) for f in out]


def _verdict_key(f: Finding) -> str | None:
    cases = f.extra.get("cases")
    return repr((f.extra.get("outcome"), cases)) if cases else None


def at_or_above(severity: str, fail_on: str) -> bool:
    return fail_on != "never" and SEVERITY_RANK[severity] >= SEVERITY_RANK[fail_on]


def exit_code_for(results: Sequence[ImageResult], fail_on: str) -> int:
    """3 if any image was unreadable (documented: a partial result must not pass), 2 if an input
    file was malformed (the others are still linted), else 1 if any finding is at/above ``fail_on``, else 0."""
    from imagelint.errors import EXIT_FINDINGS, EXIT_OK, EXIT_UNREADABLE

    failed = [r.error_exit_code or EXIT_UNREADABLE for r in results if not r.ok]
    if failed:  # an unreadable image (3) outranks a malformed input file (2)
        return max(failed)
    if any(at_or_above(f.severity, fail_on) for r in results for f in r.findings):
        return EXIT_FINDINGS
    return EXIT_OK


def summary_counts(results: Sequence[ImageResult]) -> dict[str, int]:
    counts = {"error": 0, "warning": 0, "info": 0, "suppressed": 0}
    for r in results:
        for f in r.findings:
            counts[f.severity] += 1
        counts["suppressed"] += len(r.suppressed)
    return counts
