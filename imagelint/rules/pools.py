"""Helpers several rules share: which CUDA version governs, what a pool's GPUs are, runtime mode.

NVIDIA facts (floors, brands, modes) come from the matrix; this module only
combines facts and matrix answers.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING, Any

# The CUDA evidence and pool readers live with the compatibility model (imagelint.compat);
# rules import them from here as before.
from imagelint.compat.evidence import (
    GoverningCuda,
    compare,
    compat_libcudas,
    cuda_runtime_evidence,
    distinct_major_minors,
    governing_cuda,
    major,
    major_minor,
    release_version,
)
from imagelint.compat.pool import PoolGpu, pool_gpus
from imagelint.deploytarget import NodePool
from imagelint.untrusted import is_digits

if TYPE_CHECKING:
    from imagelint.matrix.model import Matrix


def pool_cuda(pool: NodePool, matrix: Matrix | None) -> str | None:
    """The CUDA version a pool's driver reports (given, else from the matrix)."""
    if pool.cuda_driver_version:
        return pool.cuda_driver_version
    if pool.driver and matrix is not None:
        return matrix.cuda_for_driver(pool.driver)
    return None


def driver_branch(driver: str) -> int | None:
    head = driver.strip().split(".")[0]
    return int(head) if is_digits(head) else None


def runtime_modes(pool: NodePool, matrix: Matrix | None) -> tuple[str, ...]:
    """The container toolkit mode(s) the pool may run: given, derived from the toolkit
    version through the matrix, or both possibilities when unknown."""
    if pool.runtime_mode and pool.runtime_mode != "auto":
        return (pool.runtime_mode,)
    if pool.toolkit and matrix is not None and matrix.toolkit(pool.toolkit) is not None:
        return (matrix.toolkit_default_runtime_mode(pool.toolkit),)
    return ("legacy", "jit-cdi")


def first(items: Iterable[Any]) -> Any:
    for item in items:
        return item
    return None


__all__ = [
    "GoverningCuda", "PoolGpu", "compare", "compat_libcudas", "cuda_runtime_evidence", "distinct_major_minors",
    "driver_branch", "first", "governing_cuda", "major", "major_minor", "pool_cuda", "pool_gpus", "release_version",
    "runtime_modes",
]
