"""The image's CUDA runtime needs a newer NVIDIA driver than a node pool has.

A CUDA runtime (libcudart) refuses to work on a driver older than the one its
toolkit release shipped with: ``cudaGetDeviceCount`` returns "CUDA driver
version is insufficient for CUDA runtime version". The floor is the release's
minimum driver from NVIDIA's release notes (Table 3) when the image names the
release to the patch (``version.json``, ``CUDA_VERSION``), else the GA floor of
its major.minor. The highest CUDA version any evidence shows governs.

Two things can still save an image on an older driver:

* **minor-version compatibility**: within one CUDA major, a driver at or above
  that major's floor (12.x: 525.60.13) runs newer minor runtimes, except for
  features that need the newer driver (PTX JIT of PTX newer than the driver,
  newer APIs return ``cudaErrorCallRequiresNewerDriver``). Reported as a warning.
* **forward compatibility**: the ``cuda-compat`` libraries in the image
  (``/usr/local/cuda/compat/libcuda.so.*``) replace the host's libcuda on
  data-centre GPUs when the host branch is one they support. Reported as info.

Without a target, the rule reports (info) the minimum driver the image needs.

Remediation: run the image on nodes with a driver at or above the floor, or
build it on an older CUDA base image that the cluster's driver supports.

Anti-pattern::

    FROM nvidia/cuda:12.4.1-runtime-ubuntu22.04   # needs >= 550.54.15
    # cluster: driver 470.57.02

Best practice::

    FROM nvidia/cuda:12.2.2-runtime-ubuntu22.04   # 535.104.05 nodes run it natively
"""

from __future__ import annotations

from typing import Iterator

from imagelint.rules._common import (
    compare,
    compat_libcudas,
    compat_verdict,
    governing_cuda,
    major,
)
from imagelint.rules.base import ERROR, INFO, NEEDS_CONFIG, NEEDS_FILES, NEEDS_TARGET, WARNING, Finding, FindingFactory, RuleContext

ID = "IL101"
NAME = "cuda-driver-too-old"
SEVERITY = ERROR
TITLE = "CUDA runtime needs a newer driver than the target has"
NEEDS = (NEEDS_CONFIG, NEEDS_FILES, NEEDS_TARGET)
TAGS = ("gpu", "cuda", "driver-compatibility")
REFERENCES = (
    "https://docs.nvidia.com/cuda/cuda-toolkit-release-notes/index.html#cuda-major-component-versions",
    "https://docs.nvidia.com/deploy/cuda-compatibility/",
)
REMEDIATION = "Upgrade the pool's driver to at least the floor, or rebuild on a CUDA base the driver supports."

finding = FindingFactory(ID, NAME, SEVERITY, REMEDIATION)


def check(ctx: RuleContext) -> Iterator[Finding]:
    cuda = governing_cuda(ctx.facts, ctx.matrix)
    if cuda is None or ctx.matrix is None:
        return
    floor = ctx.matrix.driver_floor(cuda.version)
    if floor is None:
        return
    where = cuda.evidence.provenance
    basis = f"CUDA {cuda.version} (from {cuda.evidence.source})"
    floor_text = _floor_text(floor)
    if not ctx.pools:
        yield finding(
            f"{basis} needs NVIDIA driver >= {floor.min_driver} ({floor_text}); no target given to compare against",
            where, severity=INFO, remediation="", min_driver=floor.min_driver, cuda=cuda.version,
        )
        return
    for pool in ctx.pools:
        if not pool.driver:
            continue
        if compare(pool.driver, floor.min_driver) >= 0:
            continue
        yield from _too_old(ctx, pool, cuda, floor, basis, floor_text, where)


def _floor_text(floor) -> str:
    kind = f"floor of CUDA {floor.release}" if floor.exact else f"GA floor of CUDA {floor.release}"
    if getattr(floor, "uncertain", False):
        kind += ", uncertain matrix row"
    return kind


def _too_old(ctx, pool, cuda, floor, basis, floor_text, where) -> Iterator[Finding]:
    # Forward-compat libraries that apply to this pool make the image run natively.
    for lib in compat_libcudas(ctx.facts):
        verdict = compat_verdict(lib, pool, ctx.matrix)
        covers = verdict.compat_cuda is None or compare(verdict.compat_cuda, cuda.major_minor) >= 0
        if verdict.usable and covers and verdict.gpu_unknown:
            # Forward compatibility works on data-centre GPUs only (never GeForce): without a
            # GPU model for the pool we cannot tell, so this is a warning, not a pass.
            yield finding(
                f"{basis} needs driver >= {floor.min_driver} but pool {pool.name} has {pool.driver}; "
                f"it runs only through the forward-compat libcuda {lib.version} in the image, which NVIDIA "
                f"supports on data-centre GPUs only, and the pool names no GPU model (give --gpu)",
                lib.provenance, severity=WARNING, pool=pool,
                min_driver=floor.min_driver, driver=pool.driver, via="forward-compat-unverified",
            )
            return
        if verdict.usable and covers:
            yield finding(
                f"{basis} needs driver >= {floor.min_driver} but pool {pool.name} has {pool.driver}; "
                f"passes through the forward-compat libcuda {lib.version} in the image "
                f"(data-centre GPUs, host branch supported)",
                lib.provenance, severity=INFO, pool=pool, remediation="",
                min_driver=floor.min_driver, driver=pool.driver, via="forward-compat",
            )
            return
    cuda_major = major(cuda.version)
    mvc = ctx.matrix.minor_version_compat(cuda_major) if cuda_major is not None else None
    if mvc is not None and compare(pool.driver, mvc.min_driver) >= 0:
        yield finding(
            f"{basis} needs driver >= {floor.min_driver} ({floor_text}) but pool {pool.name} has "
            f"{pool.driver}; it runs only through CUDA {cuda_major}.x minor-version compatibility "
            f"(driver >= {mvc.min_driver}): PTX newer than the driver cannot be JIT-compiled and "
            f"APIs newer than the driver fail with cudaErrorCallRequiresNewerDriver",
            where, severity=WARNING, pool=pool,
            min_driver=floor.min_driver, driver=pool.driver, via="minor-version-compat",
        )
        return
    yield finding(
        f"{basis} needs NVIDIA driver >= {floor.min_driver} ({floor_text}) but pool {pool.name} has "
        f"{pool.driver}: CUDA calls fail with 'CUDA driver version is insufficient for CUDA runtime version'",
        where, pool=pool, min_driver=floor.min_driver, driver=pool.driver,
    )
