"""Checking an inventory: each deduplicated image once per pool it can land on, in parallel.

Each image × pool is ``imagelint.core.check.run_check`` of the image against a target of that one
pool, so the verdict is exactly what ``imagelint check --target-file`` says for that pool (the
pool's own CPU architecture picks the platform of an index). The image's facts are read once and
shared by its pools; the layer and facts caches (``--cache-dir``) are shared by every image and
every shard that mounts the same directory. ``jobs`` images are read at a time.

An image that cannot be read (a forbidden pull, a deleted tag, a malformed reference from the
cluster) is an ``error`` verdict for each of its pools with the one-line reason: never a pass.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import replace
from types import MappingProxyType
from typing import TYPE_CHECKING, Any

from imagelint import __version__
from imagelint.audit.model import (
    ERROR,
    AuditImage,
    AuditReport,
    FindingLine,
    Inventory,
    PoolCheck,
    verdict_of,
)
from imagelint.audit.shard import inventory_digest, shard_of
from imagelint.deploytarget.model import Target
from imagelint.errors import ImagelintError

if TYPE_CHECKING:
    from imagelint.matrix.model import Matrix

DEFAULT_JOBS = 4
MAX_JOBS = 64


def _inspect_reference(ref: str, opts: Any, read: bool, capture: str) -> Any:
    from imagelint.core.inspect import inspect_reference

    return inspect_reference(ref, opts, read_layers=read, capture=capture)


def _gpu_less_rules() -> frozenset[str]:
    """Rules about containers that request no GPU (IL303: such a container still sees every GPU):
    not raised for an image that only GPU-requesting containers run."""
    from imagelint.rules import visible_devices_all_leak

    return frozenset({visible_devices_all_leak.ID})


def _check_image(image: AuditImage, pools: Sequence[str], target: Target, matrix: Matrix | None, config: Any,
                 source_options: Any, read_layers: bool, inspector: Callable[..., Any] | None,
                 credentials: Mapping[str, Any] | None = None, gpu_only: bool = False) -> list[PoolCheck]:
    from imagelint.core.check import capture_for, run_check

    if credentials:  # this image's pull secrets, for their own registries only
        source_options = replace(source_options, registry_credentials=MappingProxyType(dict(credentials)))
    by_name = {p.name: p for p in target.pools}
    image_target = replace(target, pools=tuple(by_name[p] for p in pools), warnings=())
    capture = capture_for(config, image_target, matrix)
    memo: dict[tuple[Any, ...], Any] = {}

    def inspect(ref: str, opts: Any, read: bool) -> Any:
        key = (ref, opts.all_platforms, str(opts.platform), read)
        if key not in memo:
            try:
                memo[key] = inspector(ref, opts, read) if inspector else _inspect_reference(ref, opts, read, capture)
            except ImagelintError as exc:  # a SourceError, or a bad reference: the same answer for each pool
                memo[key] = exc
        found = memo[key]
        if isinstance(found, BaseException):
            raise found
        return found

    out = []
    for name in pools:
        one = replace(image_target, pools=(by_name[name],))
        try:
            run = run_check([image.reference], source_options, one, matrix, config, read_layers, inspector=inspect)
        except ImagelintError as exc:  # run_check lets usage errors (a bad reference) through
            out.append(PoolCheck(image.key, name, ERROR, error=exc.message))
            continue
        errors = [r.error for r in run.results if r.error]
        dropped = _gpu_less_rules() if gpu_only else frozenset()
        findings = [f for r in run.results for f in r.findings if f.pool in (None, name) and f.rule not in dropped]
        digest = next((r.digest for r in run.results if r.digest), None)
        platforms = sorted({r.platform for r in run.results if r.platform})
        lines = tuple(sorted({FindingLine(f.rule, f.severity, " ".join(f.message.split()), f.pool,
                                          " ".join(f.remediation.split())) for f in findings},
                             key=lambda f: (f.rule, f.severity, f.message)))
        out.append(PoolCheck(
            image.key, name, ERROR if errors else verdict_of([f.severity for f in findings], config.fail_on), lines, digest,
            ",".join(platforms) or None, "; ".join(errors) or None,
        ))
    return out


def run_audit(
    inventory: Inventory,
    target: Target,
    matrix: Matrix | None,
    config: Any,
    source_options: Any,
    *,
    shard: tuple[int, int] | None = None,
    jobs: int = DEFAULT_JOBS,
    read_layers: bool = True,
    inspector: Callable[..., Any] | None = None,
    credentials: Mapping[str, Mapping[str, Any]] | None = None,
) -> AuditReport:
    """Check the inventory's images (this shard's, when given) against the pools they land on.
    ``credentials``: image key → {registry: Credentials} (``--use-pull-secrets``)."""
    def mine(key: str) -> bool:
        return shard is None or shard_of(key, shard[1]) == shard[0]

    known = {p.name for p in target.pools}
    # A pool the target does not have (an inventory enumerated against other pools) is not
    # checked, and so not counted: read_images_file has said which.
    workloads = tuple(w if set(w.pools) <= known else replace(w, pools=tuple(p for p in w.pools if p in known))
                      for w in inventory.workloads if mine(w.image_key))
    pools_of: dict[str, set[str]] = {}
    gpu_less: set[str] = set()  # images some container that requests no GPU runs
    for w in workloads:
        pools_of.setdefault(w.image_key, set()).update(p for p in w.pools if p in known)
        if not w.requests_gpu:
            gpu_less.add(w.image_key)
    images = tuple(i for i in inventory.images if mine(i.key) and i.key in pools_of)
    # An inventory (a file) whose workload names an image key it does not list: not checked, said so.
    listed = {i.key for i in images}
    orphans = [PoolCheck(key, pool, ERROR, error="the inventory lists no image for this key")
               for key in sorted(set(pools_of) - listed) for pool in sorted(pools_of[key])]
    ordered = {name: n for n, name in enumerate(p.name for p in target.pools)}
    lock = threading.Lock()
    checks: list[PoolCheck] = list(orphans)

    def task(image: AuditImage) -> None:
        pools = sorted(pools_of[image.key], key=ordered.__getitem__)
        found = _check_image(image, pools, target, matrix, config, source_options, read_layers, inspector,
                             (credentials or {}).get(image.key), gpu_only=image.key not in gpu_less)
        with lock:
            checks.extend(found)

    workers = max(1, min(jobs, MAX_JOBS))
    if workers == 1 or len(images) <= 1:
        for image in images:
            task(image)
    else:
        with ThreadPoolExecutor(max_workers=workers, thread_name_prefix="audit") as pool:
            for future in [pool.submit(task, image) for image in images]:
                future.result()
    return AuditReport(
        workloads=workloads,
        images=tuple(sorted(images, key=lambda i: i.key)),
        checks=tuple(sorted(checks, key=lambda c: (c.image_key, c.pool))),
        target_source=target.source,
        pools=tuple(p.name for p in target.pools),
        matrix_version=getattr(matrix, "version", None),
        fail_on=config.fail_on,
        tool_version=__version__,
        source=inventory.source,
        shard=shard,
        warnings=tuple(sorted(set(inventory.warnings) | set(target.warnings))),
        inventory_digest=inventory_digest(inventory),
    )


__all__ = ["DEFAULT_JOBS", "run_audit"]
