"""Forward-compat CUDA libraries in the image that a node pool will not use.

The ``enable-cuda-compat`` hook (and libnvidia-container's legacy compat mode)
use ``/usr/local/cuda/compat/libcuda.so.*`` only when the host driver's branch
is listed in the library's ``.note.cuda.fwd_compatibility`` note and the compat
driver is newer than the host's; NVIDIA supports forward compatibility only on
data-centre GPUs (not GeForce). Otherwise the host's libcuda is used and the
image behaves as if the compat package were absent: anything that relies on it
(a CUDA newer than the host driver) fails with error 803/804. A warning when
the pool's driver is too old for the image's CUDA (the image needs the compat
libraries there); info when the host driver runs the image natively anyway.

Remediation: target pools with data-centre GPUs on a supported branch, or drop
the compat package and build for the host driver's CUDA version.
"""

from __future__ import annotations

from typing import Iterator

from imagelint.rules._common import compare, compat_libcudas, compat_verdict, governing_cuda
from imagelint.rules.base import INFO, NEEDS_FILES, NEEDS_TARGET, WARNING, Finding, FindingFactory, RuleContext

ID = "IL107"
NAME = "compat-libs-unusable"
SEVERITY = WARNING
TITLE = "Forward-compat libraries will not be used on a pool"
NEEDS = (NEEDS_FILES, NEEDS_TARGET)
TAGS = ("gpu", "cuda", "driver-compatibility")
REFERENCES = ("https://docs.nvidia.com/deploy/cuda-compatibility/forward-compatibility.html",)
REMEDIATION = "Target data-centre GPUs on a supported driver branch, or build for the host driver's CUDA."

finding = FindingFactory(ID, NAME, SEVERITY, REMEDIATION)


def check(ctx: RuleContext) -> Iterator[Finding]:
    cuda = governing_cuda(ctx.facts, ctx.matrix)
    floor = ctx.matrix.driver_floor(cuda.version) if cuda is not None and ctx.matrix is not None else None
    for lib in compat_libcudas(ctx.facts):
        for pool in ctx.pools:
            if not pool.driver:
                continue
            verdict = compat_verdict(lib, pool, ctx.matrix)
            if verdict.usable:
                continue
            native = floor is not None and compare(pool.driver, floor.min_driver) >= 0
            tail = (f"; harmless here: the host driver runs CUDA {cuda.version} natively" if native
                    else "; the image needs it on this pool, so CUDA calls will fail")
            yield finding(
                f"forward-compat libcuda {lib.version} will not be used on pool {pool.name} "
                f"(driver {pool.driver}): {'; '.join(verdict.reasons)}{tail}",
                lib.provenance, severity=INFO if native else WARNING, pool=pool,
                compat_version=lib.version, reasons=list(verdict.reasons),
            )
