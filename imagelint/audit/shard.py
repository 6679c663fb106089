"""Shards: the deduplicated image set split deterministically by digest, and merged back.

``--shard I/N`` (0-based, as Kubernetes' ``JOB_COMPLETION_INDEX``) keeps the images whose key
hashes to I modulo N, and the workloads that run them: every shard of one inventory sees the
same split whatever machine runs it, and each image is checked by exactly one shard. In an
Indexed Job the index and count come from ``JOB_COMPLETION_INDEX`` and ``IMAGELINT_SHARDS``
(Kubernetes does not put the completions count in the environment; the manifest sets it).

``merge_reports`` combines the parts (each shard's JSON) into the report one unsharded run
writes: the parts must come from the same inventory and target, and cover every index once.
Parts are files another job wrote, so each is also checked against what it cannot forge without
the others noticing: its inventory fingerprint (``inventory_digest``, stamped on every report)
equals every other part's, each image it holds hashes to its own index, and each verdict is the
one its findings and the fail-on level give. What a part leaves out or rewrites consistently
(a finding dropped along with its verdict) cannot be told without signed parts.
"""

from __future__ import annotations

import hashlib
import os
from collections.abc import Mapping, Sequence
from dataclasses import replace

from imagelint.audit.model import ERROR, AuditReport, Inventory, verdict_of
from imagelint.errors import UsageError
from imagelint.escape import printable
from imagelint.untrusted import is_digits

MAX_SHARDS = 10_000
INDEX_ENV = "JOB_COMPLETION_INDEX"
COUNT_ENV = "IMAGELINT_SHARDS"


def shard_of(key: str, count: int) -> int:
    """The shard an image key belongs to (sha256 of the key, so digests spread evenly)."""
    return int(hashlib.sha256(key.encode("utf-8")).hexdigest()[:16], 16) % count


def parse_shard(text: str) -> tuple[int, int]:
    """``I/N`` → (I, N), 0 <= I < N."""
    index, sep, count = text.partition("/")
    if not sep or not is_digits(index.strip(), 9) or not is_digits(count.strip(), 9):
        raise UsageError(f"--shard {text!r}: write INDEX/COUNT, e.g. 0/4 (the index counts from 0)")
    i, n = int(index), int(count)
    if not 1 <= n <= MAX_SHARDS or not 0 <= i < n:
        raise UsageError(f"--shard {text!r}: the index must be 0..COUNT-1 and COUNT 1..{MAX_SHARDS}")
    return i, n


def shard_from(option: str | None, environ: Mapping[str, str] | None = None) -> tuple[int, int] | None:
    """``--shard`` if given, else the Indexed Job's environment, else None (the whole set)."""
    if option:
        return parse_shard(option)
    env = os.environ if environ is None else environ
    index = env.get(INDEX_ENV)
    if index is None:
        return None
    count = env.get(COUNT_ENV)
    if not count:
        raise UsageError(f"{INDEX_ENV} is set but {COUNT_ENV} is not: set it to the Job's completions")
    return parse_shard(f"{index}/{count}")


def inventory_digest(inventory: Inventory) -> str:
    """A fingerprint of the whole inventory (its canonical JSON): the same on every shard cut from it."""
    import json

    from imagelint.audit.inventory import inventory_to_json

    text = json.dumps(inventory_to_json(inventory), sort_keys=True, separators=(",", ":"), ensure_ascii=True)
    return "sha256:" + hashlib.sha256(text.encode("ascii")).hexdigest()


def _check_part(part: AuditReport, name: str, index: int, count: int) -> None:
    """Refuse a part holding an image of another shard, or a verdict its own findings contradict."""
    keys = {i.key for i in part.images} | {c.image_key for c in part.checks} | {w.image_key for w in part.workloads}
    for key in sorted(keys):
        owner = shard_of(key, count)
        if owner != index:
            raise UsageError(f"audit merge: {name}: image {printable(key)} belongs to shard {owner}/{count}, not "
                             f"{index}/{count}; refusing a forged or mismatched part")
    for check in part.checks:
        try:
            expected = ERROR if check.error else verdict_of([f.severity for f in check.findings], part.fail_on)
        except KeyError:
            raise UsageError(f"audit merge: {name}: {printable(check.image_key)} on pool {printable(check.pool)}: "
                             f"a severity or fail-on level that is not one (fail-on {printable(part.fail_on)})") from None
        if check.verdict != expected:
            raise UsageError(f"audit merge: {name}: {printable(check.image_key)} on pool {printable(check.pool)} says "
                             f"{check.verdict}, but its findings make it {expected} (fail-on {part.fail_on}); refusing a "
                             "forged or altered part")


def merge_reports(parts: Sequence[AuditReport], names: Sequence[str]) -> AuditReport:
    """The parts of one sharded audit → the report an unsharded run writes."""
    if not parts:
        raise UsageError("audit merge: no parts given")
    first = parts[0]
    counts = {p.shard[1] if p.shard else None for p in parts}
    count = counts.pop() if len(counts) == 1 else None
    if count is None:
        raise UsageError("audit merge: every part must be a shard of the same count (--shard I/N)")
    if not 1 <= count <= MAX_SHARDS:  # checked before use: 0 divided by, 10**12 allocated as a set of indexes
        raise UsageError(f"audit merge: the parts claim a shard count outside 1..{MAX_SHARDS} (the limit of --shard)")
    seen: dict[int, str] = {}
    for part, name in zip(parts, names):
        assert part.shard is not None
        index = part.shard[0]
        if not 0 <= index < count:
            raise UsageError(f"audit merge: {name} claims shard index {index if abs(index) < 10**9 else '…'} of {count}; "
                             f"the index counts from 0 to {count - 1}")
        if index in seen:
            raise UsageError(f"audit merge: shard {index}/{count} given twice ({seen[index]}, {name})")
        seen[index] = name
        for field in ("target_source", "pools", "matrix_version", "fail_on", "tool_version", "source"):
            if getattr(part, field) != getattr(first, field):
                raise UsageError(f"audit merge: {name} differs from {names[0]} in {field}; parts of one audit only")
        if part.inventory_digest is None:
            raise UsageError(f"audit merge: {name} carries no inventory fingerprint; parts of one audit only")
        if part.inventory_digest != first.inventory_digest:
            raise UsageError(f"audit merge: {name} was cut from another inventory than {names[0]} "
                             f"({printable(part.inventory_digest)[:19]}… vs {printable(str(first.inventory_digest))[:19]}…); "
                             "parts of one audit only")
        _check_part(part, name, index, count)
    missing = sorted(set(range(count)) - set(seen))
    if missing:
        raise UsageError(f"audit merge: shards {', '.join(f'{i}/{count}' for i in missing)} are missing")
    return replace(
        first,
        workloads=tuple(sorted((w for p in parts for w in p.workloads), key=lambda w: w.sort_key)),
        images=tuple(sorted((i for p in parts for i in p.images), key=lambda i: i.key)),
        checks=tuple(sorted((c for p in parts for c in p.checks), key=lambda c: (c.image_key, c.pool))),
        shard=None,
        warnings=tuple(sorted({w for p in parts for w in p.warnings})),
    )


__all__ = ["COUNT_ENV", "INDEX_ENV", "inventory_digest", "merge_reports", "parse_shard", "shard_from", "shard_of"]
