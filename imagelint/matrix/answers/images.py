"""Answers about images: an NGC image release, a CUDA image's env, an image's platforms, a
Jetson release.

Imported by the query that builds them (see ``imagelint.matrix.answers``).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass


@dataclass(frozen=True)
class NgcImage:
    """An NGC framework image (``nvcr.io/nvidia/...:YY.MM-...``): its CUDA and the drivers it runs on."""

    repository: str
    tag: str
    release: str
    cuda: str
    framework_version: str | None
    min_driver_branch: int | None
    source: str
    uncertain: bool
    # The release notes' "Driver Requirements": data-centre drivers (lowest of each branch) the
    # container runs on through forward compatibility; ``drivers_read`` is False when the list is
    # borrowed from the nearest release whose notes were read.
    datacenter_compat_drivers: tuple[str, ...] = ()
    driver_requirements: str | None = None
    drivers_source: str | None = None
    # The notes list no drivers and refer to NVIDIA's CUDA Compatibility guide instead: the
    # forward-compatibility table of the release's CUDA decides (not "no driver works").
    defers_to_forward_compat: bool = False
    # The lowest compute capability the release's builds carry kernels for, and its source.
    min_compute_capability: str | None = None
    compute_capability_source: str | None = None

    @property
    def drivers_read(self) -> bool:
        return bool(self.driver_requirements)


@dataclass(frozen=True)
class CudaImageEnv:
    """The env an official ``nvidia/cuda`` image sets (base row plus what its flavor chain adds)."""

    version: str
    arch: str  # the row's arch: amd64 | arm64 | any (both agree)
    flavor: str  # base | runtime | devel | cudnn-runtime | cudnn-devel
    os: str | None
    env: Mapping[str, str]
    sources: tuple[str, ...]  # the base row's source, then each flavor row's
    uncertain: bool  # any row on the way is uncertain


@dataclass(frozen=True)
class ImagePlatforms:
    """An image repository built for fixed platforms, and where the CUDA it carries is read."""

    repository: str
    platforms: tuple[str, ...]  # "linux/arm64"
    cuda_from: str  # l4t-release | tag-major-minor | none
    source: str
    uncertain: bool


@dataclass(frozen=True)
class JetsonRelease:
    """An L4T (Jetson Linux) release and the JetPack and CUDA versions that come with it."""

    l4t: str
    jetpack: str
    cuda: str
    source: str
    uncertain: bool
