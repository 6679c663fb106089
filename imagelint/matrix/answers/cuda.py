"""Answers about CUDA and drivers: minor-version and forward compatibility, PTX ISA versions.

Imported by the query that builds them (see ``imagelint.matrix.answers``).
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class MinorVersionCompat:
    """The lowest driver that runs every minor of a CUDA major through minor-version compatibility."""

    major: int
    min_driver: str  # "525.60.13"
    source: str
    below_branch: int | None = None  # the family's minor-compat range ends here (e.g. 580 for 12.x)
    uncertain: bool = False


@dataclass(frozen=True)
class ForwardCompatBrand:
    """Whether the compat library's device list takes GPUs of an NVML brand."""

    brand: str
    eligible: bool
    source: str
    uncertain: bool


@dataclass(frozen=True)
class ForwardCompat:
    """The ``cuda-compat`` package of a CUDA minor: the host branches it runs on, the GPUs that may use it."""

    package: str  # cuda-compat-12-8
    cuda: str  # "12.8"
    host_branches: tuple[int, ...]  # host branches the compat package supports
    not_needed_branches: tuple[int, ...]  # the host already provides this CUDA
    incompatible_branches: tuple[int, ...]
    eligible_kinds: tuple[str, ...]  # datacenter, rtx-server-ready, jetson (never geforce)
    eligible_brands: tuple[str, ...]  # NVML brand names (UNCERTAIN inference from the ELF note)
    brands_uncertain: bool
    source: str
    uncertain: bool


@dataclass(frozen=True)
class PtxIsaVersion:
    """A PTX ISA version and the first CUDA release (toolkit and driver) that handles it."""

    ptx_isa: str  # "8.4"
    min_cuda: str  # "12.4": the first CUDA (toolkit and driver) that handles it
    source: str
    uncertain: bool
