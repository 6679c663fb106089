"""The typed answers of the matrix's queries. Each carries its row's ``source``; rows whose source
could not be verified carry ``uncertain=True``, and rules must say so rather than state them as fact.

Here, the answers a check of any image builds (a CUDA release, a driver floor and branch, a GPU
product, a toolkit feature, an NVIDIA name). The others live by topic beside it (``cuda``,
``gpus``, ``images``, ``stack``) and are imported by the query that builds them: a frozen
dataclass costs about a millisecond to define on Python 3.11, and a check of one image builds
few of them.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any


def row_uncertain(row: Mapping[str, Any]) -> bool:
    """The row's source could not be verified (``confidence = "uncertain"``)."""
    return row.get("confidence") == "uncertain"


@dataclass(frozen=True)
class CudaRelease:
    """A CUDA toolkit release (GA, update or RC) and the minimum driver it needs (``cuda_releases``)."""

    version: str  # "12.4.1"
    label: str  # "CUDA 12.4 Update 1"
    release_kind: str  # ga | update | rc
    min_driver: str  # minimum Linux x86_64 driver, e.g. "550.54.15"
    min_driver_windows: str | None
    source: str
    uncertain: bool


@dataclass(frozen=True)
class DriverFloor:
    """The minimum driver for a CUDA version, from the release the version names (``driver_floor``)."""

    min_driver: str
    release: str  # the CUDA release whose floor this is
    exact: bool  # True: the asked version named this release to the patch
    source: str
    uncertain: bool


@dataclass(frozen=True)
class DriverBranch:
    """A driver branch and the CUDA version its drivers report (``cuda_for_driver``: 535 -> 12.2)."""

    branch: int
    max_cuda: str
    source: str
    uncertain: bool


@dataclass(frozen=True)
class DriverLifecycle:
    """A driver branch's designation (production, LTSB, new feature) and end of life."""

    branch: int
    designation: str
    eol: str  # as NVIDIA writes it: "June 2026", or a date
    eol_date: str | None  # "2026-06-30": the last day of the EOL month, when known
    source: str
    uncertain: bool


@dataclass(frozen=True)
class DriverGpuSupport:
    """The driver branches that drive a GPU architecture (``driver_gpu_support``)."""

    architecture: str
    compute_capabilities: tuple[str, ...]
    first_branch: int | None
    last_branch: int | None
    source: str
    uncertain: bool

    def drives(self, branch: int) -> bool:
        return (self.first_branch is None or branch >= self.first_branch) and (
            self.last_branch is None or branch <= self.last_branch)


@dataclass(frozen=True)
class GpuProduct:
    """A GPU product of the matrix's ``gpus`` rows, found by its name or any alias."""

    name: str
    aliases: tuple[str, ...]
    compute_capability: str
    family: str
    brand: str  # NVML brand libnvidia-container reports
    brand_uncertain: bool
    kind: str  # datacenter | workstation | geforce | jetson
    datacenter: bool
    source: str
    uncertain: bool
    driver_stack: str | None = None  # Jetson: "tegra" (L4T's iGPU driver; only Jetson images run)
    tegra_last_branch: int | None = None  # ... through this driver branch (Jetson Linux 36.x: R540)


@dataclass(frozen=True)
class ToolkitFeature:
    """A behaviour of the NVIDIA Container Toolkit and the release that brought it (``toolkit_features``)."""

    name: str
    since: str
    description: str
    source: str
    uncertain: bool


@dataclass(frozen=True)
class NvidiaName:
    """Names NVIDIA software or images use (labels, env, image names), from ``nvidia_names``."""

    name: str
    kind: str
    values: tuple[str, ...]
    deprecated: bool
    source: str
    uncertain: bool


def name_from_row(row: Mapping[str, Any]) -> NvidiaName:
    return NvidiaName(
        row["name"], row["kind"], tuple(row["values"]), bool(row.get("deprecated")), row["source"], row_uncertain(row)
    )
