"""What every rule shares: severities, the Finding it yields, the context it reads.

A rule is a module with metadata constants (``ID``, ``NAME``, ``SEVERITY``,
``TITLE``, ``NEEDS``, ``REFERENCES``; optional ``TAGS``, ``PRECISION``,
``SECURITY_SEVERITY`` for SARIF), a docstring that is its documentation,
and a generator ``check(ctx) -> Iterator[Finding]``. Rules never decide whether
a finding is selected, suppressed or fatal: the engine does (flake8 style).
"""

from __future__ import annotations

import datetime as _dt
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from types import MappingProxyType, ModuleType
from typing import TYPE_CHECKING, Any

from imagelint.deploytarget import NodePool, Target
from imagelint.facts.model import ImageFacts, Provenance

if TYPE_CHECKING:
    from imagelint.matrix.model import Matrix

ERROR = "error"
WARNING = "warning"
INFO = "info"
SEVERITIES = (ERROR, WARNING, INFO)
# Higher is worse; "never" (fail-on) sits above every severity so nothing reaches it.
SEVERITY_RANK: Mapping[str, int] = MappingProxyType({INFO: 1, WARNING: 2, ERROR: 3, "never": 99})

# What a rule needs to run. ``config``: the image config (env, labels, entrypoint);
# ``files``: facts read from layers; ``target``: node pools to compare against; ``gpu-code``: the
# compiled GPU code of every library (the fatbin scan, the costliest capture). The reader
# captures what the selected rules declare, nothing more (core.check.capture_spec_for).
NEEDS_CONFIG = "config"
NEEDS_FILES = "files"
NEEDS_TARGET = "target"
NEEDS_GPU_CODE = "gpu-code"

# How long a finding's headline (``Finding.message``) may be: what a terminal line, a GitHub
# annotation title or a code-scanning alert list shows; the rest belongs in ``details``.
HEADLINE_LIMIT = 160


class HeadlineTooLong(UserWarning):
    """A rule wrote a finding whose headline is over HEADLINE_LIMIT or not one line (a rule's
    bug: reports still show it, split by their fallback). The test suite makes it an error."""


def headline_problems(finding: Finding) -> list[str]:
    """What is wrong with ``finding``'s headline and detail lines, as text (empty: nothing)."""
    problems = []
    if len(finding.message) > HEADLINE_LIMIT or "\n" in finding.message or "\r" in finding.message:
        problems.append(f"{finding.rule} ({len(finding.message)} chars): {finding.message!r}")
    problems.extend(f"{finding.rule} detail with a newline: {d!r}" for d in finding.details if "\n" in d or "\r" in d)
    return problems


@dataclass(frozen=True)
class Finding:
    """One problem a rule found in one image (or static input), maybe for one pool."""

    rule: str
    name: str
    severity: str
    message: str
    location: Provenance | None = None
    remediation: str = ""
    pool: str | None = None
    extra: Mapping[str, Any] = field(default_factory=lambda: MappingProxyType({}))
    # ``message`` is the headline (one line, about HEADLINE_LIMIT characters at most); ``details``
    # are the lines under it, each a sentence or a "condition: outcome" line. Reports show both;
    # a rule that has only a headline leaves them empty.
    details: tuple[str, ...] = ()

    @property
    def text(self) -> str:
        """Headline and detail lines, one a line (what a plain-text consumer shows)."""
        return "\n".join((self.message, *self.details))

    def to_json(self) -> dict[str, Any]:
        return {
            "rule": self.rule,
            "name": self.name,
            "severity": self.severity,
            "message": self.message,
            "details": list(self.details),
            "location": self.location.to_json() if self.location else None,
            "location_text": self.location.describe() if self.location else None,
            "remediation": self.remediation,
            "pool": self.pool,
            "extra": dict(self.extra),
        }




@dataclass(frozen=True)
class RuleContext:
    """What a rule may read: the facts, the target (maybe empty), the matrix and the run's date
    (end-of-life dates are judged against it; tests fix it)."""

    facts: ImageFacts
    target: Target
    matrix: Matrix | None
    today: _dt.date | None = None

    @property
    def pools(self) -> tuple[NodePool, ...]:
        return self.target.pools


# SARIF rule tags by rule family (IL1xx …), for rules that set no TAGS of their own.
FAMILY_TAGS: Mapping[str, tuple[str, ...]] = MappingProxyType({
    "IL1": ("gpu", "cuda", "driver-compatibility"),
    "IL2": ("gpu", "driver-libraries", "loader"),
    "IL3": ("gpu", "gpu-isolation", "configuration"),
    "IL4": ("gpu", "gpu-architecture", "portability"),
    "IL5": ("gpu", "kubernetes", "gpu-operator"),
    "IL6": ("gpu", "kubernetes", "scheduling"),
})


@dataclass(frozen=True)
class RuleInfo:
    """A rule's metadata and entry point, read from its module."""

    id: str
    name: str
    severity: str
    title: str
    needs: tuple[str, ...]
    references: tuple[str, ...]
    doc: str
    module: ModuleType = field(repr=False, compare=False)
    tags: tuple[str, ...] = ()          # TAGS: what the rule is about (SARIF rule tags); default FAMILY_TAGS
    precision: str = "high"             # PRECISION: very-high | high | medium | low (how often it is right)
    security_severity: str | None = None  # SECURITY_SEVERITY: "0.0".."10.0", only for rules tagged security

    @classmethod
    def from_module(cls, module: ModuleType) -> RuleInfo:
        return cls(
            id=module.ID,
            name=module.NAME,
            severity=module.SEVERITY,
            title=module.TITLE,
            needs=tuple(module.NEEDS),
            references=tuple(getattr(module, "REFERENCES", ())),
            doc=(module.__doc__ or "").strip(),
            module=module,
            tags=tuple(getattr(module, "TAGS", None) or FAMILY_TAGS.get(module.ID[:3], ("gpu",))),
            precision=getattr(module, "PRECISION", "high"),
            security_severity=getattr(module, "SECURITY_SEVERITY", None),
        )

    @property
    def summary(self) -> str:
        """The docstring's first paragraph (what the rule is about)."""
        return self.doc.split("\n\n", 1)[0].replace("\n", " ").strip()

    @property
    def remediation(self) -> str:
        """The docstring's ``Remediation:`` paragraph, if any."""
        for para in self.doc.split("\n\n"):
            if para.strip().lower().startswith("remediation:"):
                return " ".join(para.strip()[len("remediation:"):].split())
        return ""

    def check(self, ctx: RuleContext) -> Iterator[Finding]:
        return self.module.check(ctx)


class FindingFactory:
    """Builds findings that carry a rule's id and name (keeps rule bodies short)."""

    def __init__(self, rule_id: str, name: str, severity: str, remediation: str = "") -> None:
        self.rule_id, self.name, self.severity, self.remediation = rule_id, name, severity, remediation

    def __call__(
        self,
        message: str,
        location: Provenance | None = None,
        *,
        severity: str | None = None,
        pool: NodePool | str | None = None,
        remediation: str | None = None,
        details: tuple[str, ...] | list[str] = (),
        **extra: Any,
    ) -> Finding:
        pool_name = pool.name if isinstance(pool, NodePool) else pool
        return Finding(
            rule=self.rule_id,
            name=self.name,
            severity=severity or self.severity,
            message=message,
            location=location,
            remediation=self.remediation if remediation is None else remediation,
            pool=pool_name,
            extra=MappingProxyType({k: v for k, v in extra.items() if v is not None}),
            details=tuple(d for d in details if d),
        )
