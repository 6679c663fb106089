"""What an audit is made of: workloads, the deduplicated images they run, and image × pool verdicts.

Frozen dataclasses, no I/O. ``AuditReport`` is what every report format, the shard merge and the
upgrade planner read; its JSON form is ``imagelint.audit.jsonout`` (schema docs/audit-schema.json).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

# A pool verdict, worst first. "error": the image could not be read (not checked), never a pass.
FAIL, ERROR, WARN, PASS = "fail", "error", "warn", "pass"
VERDICTS = (FAIL, ERROR, WARN, PASS)
VERDICT_RANK: Mapping[str, int] = {FAIL: 3, ERROR: 2, WARN: 1, PASS: 0}


@dataclass(frozen=True)
class Workload:
    """One container of one workload (owner), and the pools it can land on."""

    namespace: str
    owner_kind: str
    owner_name: str
    container: str
    image: str  # the reference as the pod spec writes it
    image_key: str  # the deduplicated image: sha256:... when the kubelet reported it, else the reference
    pools: tuple[str, ...]  # pool names; empty = on no GPU pool (not checked)
    placement: str  # why these pools: "node NODE", "scheduling", "every pool"
    pods: int = 0  # running pods of this owner/container/image (0: a template)
    requests_gpu: bool = False  # the container gets GPUs of its own (resources, claims, CDI)

    @property
    def owner(self) -> str:
        return f"{self.owner_kind}/{self.owner_name}"

    @property
    def sort_key(self) -> tuple[str, ...]:
        return (self.namespace, self.owner_kind, self.owner_name, self.container, self.image, self.image_key)


@dataclass(frozen=True)
class AuditImage:
    """One image to check, whatever references name it."""

    key: str
    reference: str  # what is read to check it (repo@digest from the kubelet when known)
    references: tuple[str, ...]  # every reference workloads use for it


@dataclass(frozen=True)
class FindingLine:
    """A finding as an audit keeps it: enough for reports and diffs, no provenance objects."""

    rule: str
    severity: str
    message: str
    pool: str | None = None
    fix: str = ""  # the remediation ``check`` gives: a plan's break says what to do without a re-run


@dataclass(frozen=True)
class PoolCheck:
    """One image checked against one pool."""

    image_key: str
    pool: str
    verdict: str  # fail | error | warn | pass
    findings: tuple[FindingLine, ...] = ()
    digest: str | None = None
    platform: str | None = None
    error: str | None = None


@dataclass(frozen=True)
class Inventory:
    """What runs where: the enumerate step's output, the input of every (sharded) check."""

    workloads: tuple[Workload, ...]
    images: tuple[AuditImage, ...]
    source: str  # cluster:CONTEXT, or the images file
    warnings: tuple[str, ...] = ()


@dataclass(frozen=True)
class AuditReport:
    """The audit of an inventory (or one shard of it) against one target."""

    workloads: tuple[Workload, ...]
    images: tuple[AuditImage, ...]
    checks: tuple[PoolCheck, ...]
    target_source: str
    pools: tuple[str, ...]
    matrix_version: str | None
    fail_on: str
    tool_version: str
    source: str
    shard: tuple[int, int] | None = None  # (index, count); None = the whole inventory
    warnings: tuple[str, ...] = ()
    # sha256 of the whole inventory the report (or shard) was cut from (``shard.inventory_digest``):
    # ``audit merge`` takes parts of one inventory only.
    inventory_digest: str | None = None

    def check_for(self, image_key: str, pool: str) -> PoolCheck | None:
        return self._index().get((image_key, pool))

    def _index(self) -> Mapping[tuple[str, str], PoolCheck]:
        cached = self.__dict__.get("_check_index")
        if cached is None:
            cached = {(c.image_key, c.pool): c for c in self.checks}
            object.__setattr__(self, "_check_index", cached)  # a cache, not state: frozen stays true
        return cached

    def verdict(self, workload: Workload, pool: str) -> str:
        check = self.check_for(workload.image_key, pool)
        return check.verdict if check is not None else ERROR

    def worst(self, workload: Workload) -> str | None:
        verdicts = [self.verdict(workload, p) for p in workload.pools]
        return max(verdicts, key=VERDICT_RANK.__getitem__) if verdicts else None


def verdict_of(severities: Sequence[str], fail_on: str) -> str:
    """The verdict of a readable image on one pool, from its findings' severities: fail at or above
    ``fail_on``, warn for any other error or warning, else pass. ``KeyError`` for an unknown severity."""
    from imagelint.rules.base import SEVERITY_RANK

    floor = SEVERITY_RANK[fail_on]
    ranks = [SEVERITY_RANK[s] for s in severities]
    if fail_on != "never" and any(r >= floor for r in ranks):
        return FAIL
    if any(s in ("error", "warning") for s in severities):
        return WARN
    return PASS


__all__ = [
    "ERROR",
    "FAIL",
    "PASS",
    "VERDICTS",
    "VERDICT_RANK",
    "WARN",
    "AuditImage",
    "AuditReport",
    "FindingLine",
    "Inventory",
    "PoolCheck",
    "Workload",
    "verdict_of",
]
