"""Helpers several rules share: which CUDA version governs, what a pool's GPUs are, runtime mode.

NVIDIA facts (floors, brands, modes) come from the matrix; this module only
combines facts and matrix answers.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, replace
from typing import Any, Iterable

from imagelint.facts.model import CudaVersionEvidence, DriverLibrary, ImageFacts
from imagelint.target import GpuSpec, NodePool

_NUMERIC = re.compile(r"^\d+(\.\d+)*$")


def compare(a: str, b: str) -> int:
    """libnvidia-container's version compare (imported lazily: the matrix package owns it)."""
    from imagelint.matrix.versions import compare_versions

    return compare_versions(a, b)


def major_minor(version: str) -> str | None:
    """``12.4.1`` / ``12.2.2.009`` / ``v12.4`` → ``12.4``; None when not numeric."""
    v = version.strip().lstrip("vV")
    parts = v.split(".")
    if len(parts) < 2 or not all(p.isdigit() for p in parts[:2]):
        return None
    return f"{int(parts[0])}.{int(parts[1])}"


def major(version: str) -> int | None:
    mm = major_minor(version)
    return int(mm.split(".")[0]) if mm else None


def release_version(ev: CudaVersionEvidence) -> str | None:
    """The version to look a driver floor up by: the toolkit release when the evidence
    names one to the patch (at most three components: NGC's ``12.2.2.009`` is 12.2.2),
    else major.minor."""
    mm = major_minor(ev.version)
    if mm is None:
        return None
    if ev.precision == "patch":
        parts = ev.version.strip().lstrip("vV").split(".")
        if len(parts) >= 3 and parts[2].isdigit():
            return f"{mm}.{int(parts[2])}"
    return mm


def _source_rank(source: str) -> int:
    from imagelint.facts.model import CUDA_SOURCES

    return CUDA_SOURCES.index(source) if source in CUDA_SOURCES else len(CUDA_SOURCES)


@dataclass(frozen=True)
class GoverningCuda:
    """The CUDA version that sets the driver floor, and the evidence for it."""

    version: str          # release (12.4.1) or major.minor (12.4)
    major_minor: str
    evidence: CudaVersionEvidence


def cuda_runtime_evidence(facts: ImageFacts, matrix: Any = None) -> list[CudaVersionEvidence]:
    """The evidence that states a CUDA *runtime* version.

    NGC images also record the driver they were built against (``CUDA_DRIVER_VERSION``,
    component ``driver``) and their release (``NVIDIA_PYTORCH_VERSION=23.10``, component
    ``ngc-pytorch``): neither is a CUDA version. A release is translated through the
    matrix's NGC table when it knows it, and dropped otherwise.
    """
    out: list[CudaVersionEvidence] = []
    for ev in facts.cuda.versions:
        component = ev.component or ""
        if component == "driver":
            continue
        if component.startswith("ngc-"):
            product = component[len("ngc-"):]
            ngc = matrix.ngc_image(f"nvcr.io/nvidia/{product}", ev.version) if matrix is not None else None
            if ngc is not None and getattr(ngc, "cuda", None):
                out.append(replace(ev, version=str(ngc.cuda), precision="patch", component=f"ngc-{product} {ev.version}"))
            continue
        out.append(ev)
    return out


def governing_cuda(facts: ImageFacts, matrix: Any = None) -> GoverningCuda | None:
    """The highest CUDA runtime the evidence shows; among equal major.minor, the most
    precise and most direct source (version.json before CUDA_VERSION before a label)."""
    best: tuple[tuple[int, int], int, int, CudaVersionEvidence, str, str] | None = None
    for ev in cuda_runtime_evidence(facts, matrix):
        mm = major_minor(ev.version)
        rv = release_version(ev)
        if mm is None or rv is None:
            continue
        maj, mi = (int(x) for x in mm.split("."))
        key = ((maj, mi), 1 if rv != mm else 0, -_source_rank(ev.source))
        if best is None or key > best[:3]:
            best = (key[0], key[1], key[2], ev, rv, mm)
    if best is None:
        return None
    return GoverningCuda(best[4], best[5], best[3])


def distinct_major_minors(facts: ImageFacts, matrix: Any = None) -> dict[str, list[CudaVersionEvidence]]:
    out: dict[str, list[CudaVersionEvidence]] = {}
    for ev in cuda_runtime_evidence(facts, matrix):
        mm = major_minor(ev.version)
        if mm:
            out.setdefault(mm, []).append(ev)
    return out


def pool_cuda(pool: NodePool, matrix: Any) -> str | None:
    """The CUDA version a pool's driver reports (given, else from the matrix)."""
    if pool.cuda_driver_version:
        return pool.cuda_driver_version
    if pool.driver and matrix is not None:
        return matrix.cuda_for_driver(pool.driver)
    return None


def driver_branch(driver: str) -> int | None:
    head = driver.strip().split(".")[0]
    return int(head) if head.isdigit() else None


@dataclass(frozen=True)
class PoolGpu:
    """One GPU model of a pool as the runtime sees it."""

    label: str
    brand: str | None
    arch: str | None
    datacenter: bool | None


def pool_gpus(pool: NodePool, matrix: Any) -> list[PoolGpu]:
    """The pool's GPU models with brand/compute capability filled in from the matrix."""
    out = []
    for spec in pool.gpus:
        out.append(_resolve_gpu(spec, matrix))
    return out


def _resolve_gpu(spec: GpuSpec, matrix: Any) -> PoolGpu:
    product = None
    if spec.product and matrix is not None:
        product = matrix.gpu(spec.product)
    brand = spec.brand or getattr(product, "brand", None)
    arch = spec.compute_capability or getattr(product, "compute_capability", None)
    datacenter = getattr(product, "datacenter", None)
    label = spec.product or (f"compute {arch}" if arch else brand or "GPU")
    return PoolGpu(label, brand, arch, datacenter)


def runtime_modes(pool: NodePool, matrix: Any) -> tuple[str, ...]:
    """The container toolkit mode(s) the pool may run: given, derived from the toolkit
    version through the matrix, or both possibilities when unknown."""
    if pool.runtime_mode and pool.runtime_mode != "auto":
        return (pool.runtime_mode,)
    if pool.toolkit and matrix is not None and matrix.toolkit(pool.toolkit) is not None:
        return (matrix.toolkit_default_runtime_mode(pool.toolkit),)
    return ("legacy", "jit-cdi")


def compat_libcudas(facts: ImageFacts) -> list[DriverLibrary]:
    """Forward-compat libcuda files (not their symlinks) in the image."""
    libs = [d for d in facts.driver_libraries if d.role == "compat" and d.name.startswith("libcuda.so")]
    real = [d for d in libs if not d.is_symlink and d.version]
    return real or [d for d in libs if d.version]


def first(items: Iterable[Any]) -> Any:
    for item in items:
        return item
    return None


@dataclass(frozen=True)
class CompatVerdict:
    """Whether a forward-compat libcuda will be used on a pool, and why (not)."""

    usable: bool
    reasons: tuple[str, ...]
    compat_cuda: str | None
    # The pool names no GPU model, so "data-centre only" could not be checked.
    gpu_unknown: bool = False


def compat_verdict(lib: DriverLibrary, pool: NodePool, matrix: Any) -> CompatVerdict:
    """The enable-cuda-compat decision (nvidia-facts §1.5) plus NVIDIA's support policy
    (forward compatibility is for data-centre GPUs only)."""
    reasons: list[str] = []
    note = lib.fwd_compat
    compat_cuda = note.cuda_version if note and note.cuda_version else None
    fwd = None
    if matrix is not None:
        lookup = compat_cuda or (_cuda_of_compat_driver(lib.version, matrix))
        if lookup:
            compat_cuda = compat_cuda or lookup
            fwd = matrix.forward_compat(lookup)
    host = pool.driver
    if host and lib.version and compare(lib.version, host) <= 0:
        reasons.append(f"compat driver {lib.version} is not newer than the host driver {host}")
    branch = driver_branch(host) if host else None
    branches: tuple[int, ...] = tuple(note.driver_branches) if note and note.driver_branches else tuple(
        getattr(fwd, "host_branches", ()) or ()
    )
    if branch is not None and branches and branch not in branches:
        reasons.append(
            f"host driver branch R{branch} is not one the compat library supports "
            f"({', '.join('R' + str(b) for b in branches)})"
        )
    eligible = {b.lower() for b in (getattr(fwd, "brands", None) or getattr(fwd, "eligible_brands", None) or ())}
    gpus = list(pool_gpus(pool, matrix))
    for gpu in gpus:
        if gpu.datacenter is False or (gpu.datacenter is None and gpu.brand and eligible and gpu.brand.lower() not in eligible):
            reasons.append(f"{gpu.label} is not a data-centre GPU (forward compatibility is data-centre only)")
    return CompatVerdict(not reasons, tuple(reasons), compat_cuda, gpu_unknown=not gpus)


def _cuda_of_compat_driver(version: str | None, matrix: Any) -> str | None:
    return matrix.cuda_for_driver(version) if version else None
