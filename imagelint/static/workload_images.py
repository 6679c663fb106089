"""A GPU container's ``image:`` in a manifest (or a GPU service's in a Compose file) → CUDA
evidence, through the base-image table.

Only containers that get GPUs themselves (an ``nvidia.com/*`` resource, a GPU/MIG ResourceClaim
they use, or a CDI device request) get the evidence: the same image on a CPU-only Ray head or a
sidecar needs no driver, and IL101 must not judge it. Nothing is pulled; an image whose CUDA the
table does not know gets no evidence (the image itself can be checked with ``lint --image``). An
image the table pins to one platform (Jetson's L4T images: linux/arm64) gives the container that
platform, so IL402 can compare it with the pools the workload reaches.

An official ``nvidia/cuda`` image also brings the requirement its env sets (``NVIDIA_REQUIRE_CUDA``),
as it does to a Dockerfile that starts ``FROM`` it, unless the container sets the variable itself:
one image reference on one pool is judged alike whichever file names it.
"""

from __future__ import annotations

from dataclasses import replace
from typing import TYPE_CHECKING

from imagelint.facts.model import (
    CudaVersionEvidence,
    EnvSetting,
    ImageFacts,
    Provenance,
)

if TYPE_CHECKING:
    from imagelint.matrix.model import Matrix


def with_image_cuda(facts: ImageFacts, matrix: Matrix | None) -> ImageFacts:
    w = facts.workload
    image = facts.base.name
    gets_gpus = w.container_requests_gpu if w is not None else facts.compose is not None and facts.compose.gets_gpus
    if not gets_gpus or not image or matrix is None:
        return facts
    from imagelint.facts.known_images import image_cuda, image_platform

    if facts.platform is None and not facts.platforms:
        only = image_platform(image, matrix)  # a Jetson L4T image is linux/arm64 only
        if only:
            from imagelint.image import Platform

            facts = replace(facts, platform=Platform.parse(only))
    found = image_cuda(image, matrix)
    if found is None:
        return facts
    where = facts.base.provenance[0]
    prov = Provenance(kind="manifest", source=where.source, line=where.line,
                      key=f"image {image} ({found.basis}{', uncertain matrix row' if found.uncertain else ''})")
    ev = CudaVersionEvidence(found.version, "base-image", prov, "patch" if found.version.count(".") >= 2 else "minor")
    cuda = replace(facts.cuda, versions=facts.cuda.versions + (ev,))
    if found.official_cuda:
        cuda = replace(cuda, requires=cuda.requires + _image_requires(facts, image, matrix, where))
    return replace(facts, cuda=cuda)


def _image_requires(facts: ImageFacts, image: str, matrix: Matrix | None, where: Provenance) -> tuple[EnvSetting, ...]:
    """The image's own NVIDIA_REQUIRE_* the container does not set (the container's env wins)."""
    from imagelint.facts.known_images import official_image_env

    arch = facts.platform.architecture if facts.platform is not None and facts.platform.architecture else "amd64"
    env = official_image_env(image, matrix, arch) or {}
    own = {e.name for e in facts.env}
    return tuple(
        EnvSetting(name, value, Provenance(kind="manifest", source=where.source, line=where.line,
                                           key=f"{name} (from image {image})"))
        for name, value in env.items() if name.startswith("NVIDIA_REQUIRE_") and name not in own
    )
