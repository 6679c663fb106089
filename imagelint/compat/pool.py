"""What the pool brings: its GPUs (compute capability, data-centre or not) and its driver.

GPU classes and driver-branch facts come from the matrix (``gpus``, ``driver_branches``,
``driver_lifecycle``, ``driver_gpu_support``); this module only reads them.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from imagelint.deploytarget import GpuSpec, NodePool
from imagelint.deploytarget.values import DriverVersion

if TYPE_CHECKING:
    from imagelint.matrix.model import Matrix


@dataclass(frozen=True)
class PoolGpu:
    """One GPU model of a pool as the runtime sees it.

    ``kind``: datacenter | workstation | geforce | jetson (None when the model is not known);
    ``datacenter``: NVIDIA's forward-compatibility class (True for data-centre parts and the
    server editions of RTX cards)."""

    label: str
    brand: str | None
    arch: str | None
    datacenter: bool | None
    kind: str | None = None
    family: str | None = None
    uncertain: bool = False


def pool_gpus(pool: NodePool, matrix: Matrix | None) -> list[PoolGpu]:
    """The pool's GPU models with brand/compute capability filled in from the matrix."""
    return [_resolve_gpu(spec, matrix) for spec in pool.gpus]


def _resolve_gpu(spec: GpuSpec, matrix: Matrix | None) -> PoolGpu:
    product = matrix.gpu(spec.product) if spec.product and matrix is not None else None
    brand = spec.brand or getattr(product, "brand", None)
    arch = spec.compute_capability or getattr(product, "compute_capability", None)
    label = spec.product or (f"compute {arch}" if arch else brand or "GPU")
    return PoolGpu(
        label, brand, arch, getattr(product, "datacenter", None), getattr(product, "kind", None),
        spec.family or getattr(product, "family", None), bool(getattr(product, "uncertain", False)),
    )


def forward_compat_class(gpu: PoolGpu | None, matrix: Matrix | None) -> tuple[bool | None, str]:
    """Whether NVIDIA supports forward compatibility on this GPU (data-centre GPUs, NGC
    server-ready RTX SKUs, Jetson; never GeForce), with the reason; None = cannot tell."""
    if gpu is None:
        return None, "the pool names no GPU model"
    if gpu.datacenter is True:
        return True, f"{gpu.label} is a data-centre GPU"
    if gpu.kind == "jetson":
        return True, f"{gpu.label} is a Jetson board"
    if gpu.kind in ("geforce", "workstation"):
        what = "a GeForce GPU" if gpu.kind == "geforce" else "a workstation GPU (not an NGC server-ready SKU)"
        return False, f"{gpu.label} is {what}"
    if gpu.brand and matrix is not None:
        brand = matrix.forward_compat_brand(gpu.brand)
        if brand is not None:
            return brand.eligible, (
                f"{gpu.label} reports NVML brand {gpu.brand}, which the compat library's device list "
                f"{'includes' if brand.eligible else 'leaves out'} (uncertain inference)"
            )
    return None, f"{gpu.label} is not a GPU model the matrix knows"


# --- the driver -----------------------------------------------------------------------------


# The pool's driver is the target's ``DriverVersion``, parsed once where it was written.
HostDriver = DriverVersion


def host_driver(value: DriverVersion | str | None) -> DriverVersion | None:
    """The pool's driver as a ``DriverVersion`` (target values already are one)."""
    return DriverVersion.parse(value) if value else None


@dataclass(frozen=True)
class DriverFacts:
    """What the matrix says about a pool's driver branch."""

    driver: HostDriver
    max_cuda: str | None          # the CUDA the branch reports; None when unknown
    newest_known: int | None      # the newest branch the matrix knows
    beyond_known: bool            # the branch is newer than any the matrix knows
    branch_uncertain: bool
    designation: str | None       # Long Term Support Branch / Production Branch / New Feature Branch
    eol: str | None               # "June 2026"
    eol_date: str | None          # "2026-06-30": the last day of the EOL month
    lifecycle_source: str | None


def driver_facts(driver: HostDriver, matrix: Matrix | None) -> DriverFacts:
    branches = [b.branch for b in matrix.driver_branches()] if matrix is not None else []
    newest = branches[-1] if branches else None
    beyond = newest is not None and driver.branch > newest
    info = matrix.driver_branch_info(driver) if matrix is not None and not beyond else None
    life = matrix.driver_lifecycle(driver.branch) if matrix is not None else None
    return DriverFacts(
        driver, info.max_cuda if info else None, newest, beyond, bool(info and info.uncertain),
        life.designation if life else None, life.eol if life else None, life.eol_date if life else None,
        life.source if life else None,
    )


@dataclass(frozen=True)
class GpuSupport:
    """Whether a driver branch drives a GPU architecture (``driver_gpu_support`` rows)."""

    supported: bool | None
    architecture: str | None
    first_branch: int | None
    last_branch: int | None
    source: str | None
    uncertain: bool


def driver_supports_gpu(branch: int, compute_capability: str | None, matrix: Matrix | None) -> GpuSupport:
    if not compute_capability or matrix is None:
        return GpuSupport(None, None, None, None, None, False)
    support = matrix.driver_gpu_support(compute_capability)
    if support is None:
        return GpuSupport(None, None, None, None, None, False)
    return GpuSupport(support.drives(branch), support.architecture, support.first_branch, support.last_branch,
                      support.source, support.uncertain)
