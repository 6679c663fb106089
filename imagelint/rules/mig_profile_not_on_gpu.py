"""A pod asks for a MIG profile the target's GPUs do not have.

MIG profile names carry the memory of the slice, so they differ between GPUs and between the
memory variants of one GPU: ``nvidia.com/mig-3g.40gb`` exists on an A100 80 GB, while the
A100 40 GB's three-slice profile is ``3g.20gb``; a T4 has no MIG at all. No node advertises a
profile its GPU cannot make, so the pod stays Pending. The profiles per GPU come from NVIDIA's
Multi-Instance GPU User Guide (the matrix's ``mig_profiles`` table). When the target names a GPU
without its memory (``--gpu A100``), the rule says which variant the profile needs (info).

Remediation: request a profile of the GPU the pool has (``nvidia-smi mig -lgip`` on the node),
or name the GPU exactly in the target (``--gpu A100-SXM4-80GB``).

Anti-pattern::

    resources:
      limits: {nvidia.com/mig-3g.40gb: 1}     # pool: A100-SXM4-40GB

Best practice::

    resources:
      limits: {nvidia.com/mig-3g.20gb: 1}     # the A100 40 GB's 3-slice profile
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import TYPE_CHECKING, Any

from imagelint.kube.scheduler import workload
from imagelint.lazyre import lazy_pattern
from imagelint.rules.base import (
    ERROR,
    INFO,
    NEEDS_CONFIG,
    NEEDS_TARGET,
    Finding,
    FindingFactory,
    RuleContext,
)
from imagelint.versions import ComputeCapability

if TYPE_CHECKING:
    from imagelint.matrix.answers.gpus import MigVariant
    from imagelint.matrix.model import Matrix

ID = "IL612"
NAME = "mig-profile-not-on-gpu"
SEVERITY = ERROR
TITLE = "MIG profile that the target's GPUs do not have"
NEEDS = (NEEDS_CONFIG, NEEDS_TARGET)
REFERENCES = ("https://docs.nvidia.com/datacenter/tesla/mig-user-guide/supported-mig-profiles.html",)
REMEDIATION = "Request a MIG profile of the pool's GPU (nvidia-smi mig -lgip), or name the GPU and its memory in the target."

finding = FindingFactory(ID, NAME, SEVERITY, REMEDIATION)

_MIG_PREFIX = "nvidia.com/mig-"
_MEMORY = lazy_pattern(r"(?<![0-9])([0-9]{1,6})\s*GB", re.IGNORECASE)  # ASCII, bounded: int() of it cannot fail
_FIRST_MIG_CC = (8, 0)  # MIG starts with Ampere GA100 (the guide's "Supported GPUs")


def _variants(matrix: Matrix | None, product: str) -> tuple[str, tuple[MigVariant, ...], MigVariant | None] | None:
    """(GPU name, its MIG rows, the row of this product's memory variant or None) for a product the
    matrix knows; None when the matrix does not know the GPU."""
    if matrix is None:
        return None
    gpu = matrix.gpu(product)
    if gpu is None:
        return None
    rows = matrix.mig_variants(gpu.name)
    wanted = product.strip().lower()
    exact = next((r for r in rows if wanted in (p.lower() for p in r.products)), None)
    if exact is None:
        m = _MEMORY.search(product)
        exact = next((r for r in rows if m and r.memory_gb == int(m.group(1))), None)
    if exact is None and len(rows) == 1 and not _MEMORY.search(product):
        exact = rows[0]
    return gpu.name, rows, exact



def _judge(profile: str, gpu_spec: Any, matrix: Matrix | None) -> tuple[bool | None, str]:
    """(True: the GPU has it / False: it cannot / None: depends on what the target does not say, why)."""
    product = gpu_spec.product or ""
    found = _variants(matrix, product) if product else None
    if found is None or not found[1]:
        cc = ComputeCapability.parts_of(gpu_spec.compute_capability)
        if cc is not None and cc < _FIRST_MIG_CC:
            return False, f"{product or 'the GPU'} (compute capability {gpu_spec.compute_capability}) has no MIG"
        return None, ""
    name, rows, exact = found
    if exact is not None:
        if profile in exact.profiles:
            return True, ""
        same_slices = [p for p in exact.profiles if p.split(".")[0] == profile.split(".")[0] and "+" not in p]
        instead = f"; its {profile.split('.')[0]} profile is {', '.join(same_slices)}" if same_slices else ""
        return False, f"{product} ({exact.memory_gb} GB) has no MIG profile {profile}{instead}"
    having = [r for r in rows if profile in r.profiles]
    if not having:
        return False, f"no {name} variant has MIG profile {profile}"
    sizes = " or ".join(f"{r.memory_gb} GB" for r in having)
    others = [f"{r.memory_gb} GB" for r in rows if r not in having]
    return None, (f"{profile} is a profile of the {name} {sizes}" + (f" (not of the {', '.join(others)})" if others else "")
                  + f"; the target says only {product!r}")


def check(ctx: RuleContext) -> Iterator[Finding]:
    w = workload(ctx.facts)
    if w is None or not ctx.target.known:
        return
    for r in w.resources:
        if not r.name.startswith(_MIG_PREFIX):
            continue
        profile = r.name[len(_MIG_PREFIX):]
        verdicts = [(pool, *_judge(profile, g, ctx.matrix)) for pool in ctx.pools for g in pool.gpus]
        if not verdicts or any(ok is True for _, ok, _ in verdicts):
            continue
        unknown = [why for _, ok, why in verdicts if ok is None and why]
        if any(ok is None for _, ok, _ in verdicts):
            if unknown:
                yield finding(f"container {w.container} of {w.kind}/{w.name} asks for {r.name}: " + unknown[0],
                              r.provenance, severity=INFO, details=unknown[1:], resource=r.name)
            continue
        reasons = list(dict.fromkeys(f"pool {pool.name}: {why}" for pool, _, why in verdicts))
        outcome = "the DaemonSet runs no pods" if w.kind == "DaemonSet" else "it stays Pending"
        yield finding(f"container {w.container} of {w.kind}/{w.name} asks for {r.name}, which no target GPU has: "
                      + outcome, r.provenance, details=reasons, resource=r.name)
