"""An image reference → the CUDA version it carries, without pulling it (the base-image table).

Used for a Dockerfile's ``FROM`` and for a manifest container's ``image:``. In order:

* ``nvidia/cuda:X.Y.Z-…`` (Docker Hub or nvcr.io): the tag's version;
* ``nvcr.io/nvidia/<framework>:YY.MM-…``: the matrix's ``ngc_images`` row, else the NGC monthly
  release (``ngc_releases``) when the framework follows that cadence; DeepStream by its version,
  on nvcr.io or its newer home ``ghcr.io/nvidia/deepstream``;
* Jetson's L4T images (``image_platforms``): the CUDA of the L4T release their tag names
  (``l4t-jetpack:r36.4.0`` -> JetPack 6.1 -> CUDA 12.6, ``jetson_releases``) or of the tag itself
  (``l4t-cuda:12.2.12-runtime``); ``image_platform`` gives the one platform such an image is
  built for, so a ``FROM`` of one says linux/arm64 without pulling it;
* a tag that states its CUDA version, by the matrix's ``image_cuda_tags`` conventions
  (``pytorch/pytorch:2.5.0-cuda12.4-…``, ``rayproject/ray-llm:…-cu128``, ``cuda-sample:…-cuda12.5.0``).

The answer says which rule of the table gave it (and whether that matrix row is uncertain), so
a finding can name its basis.
"""

from __future__ import annotations

import fnmatch
import functools
import re
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from imagelint.errors import UsageError
from imagelint.lazyre import lazy_pattern

if TYPE_CHECKING:
    from imagelint.matrix.model import Matrix

NVIDIA_CUDA_REPOS = ("docker.io/nvidia/cuda", "nvcr.io/nvidia/cuda")
# Registries NVIDIA publishes its framework / SDK images on (DeepStream moved to ghcr.io with 9.2).
NVIDIA_IMAGE_HOMES = ("nvcr.io/nvidia/", "ghcr.io/nvidia/")
_CUDA_TAG_RE = lazy_pattern(r"^(\d+\.\d+(?:\.\d+)?)(?:-|$)")
# NGC's monthly releases are tagged YY.MM (23.10-py3, 24.05-trtllm-python-py3, 25.01).
_NGC_RELEASE_TAG_RE = lazy_pattern(r"^\d{2}\.\d{2}(?:-|$)")
# The flavour an official nvidia/cuda tag names (12.4.1-cudnn-runtime-ubuntu22.04 -> cudnn-runtime).
_CUDA_FLAVOR_RE = lazy_pattern(r"^\d+\.\d+(?:\.\d+)?-(base|runtime|devel|cudnn\d*-runtime|cudnn\d*-devel)(?:-|$)")


@dataclass(frozen=True)
class ImageCuda:
    """What the table says about an image: its CUDA version and how that was known."""

    version: str
    basis: str            # "nvidia/cuda tag", "NGC pytorch 23.10", "tag convention <name>"...
    uncertain: bool = False
    official_cuda: bool = False  # an official nvidia/cuda image (its env is in the matrix)


def parse_image(image: str | None) -> tuple[str, str] | None:
    """(registry/repository, tag) of an image reference, or None when it is not one."""
    if not image or not isinstance(image, str) or "$" in image or "{" in image:
        return None
    return _parse_image(image)


@functools.lru_cache(maxsize=1024)  # a manifest stream names the same few images on every pod
def _parse_image(image: str) -> tuple[str, str] | None:
    from imagelint.reference import parse_registry_name

    try:
        name = parse_registry_name(image)
    except UsageError:
        return None
    return f"{name.registry}/{name.repository}", name.tag or ""


@functools.lru_cache(maxsize=64)
def _compiled(pattern: str) -> re.Pattern[str] | None:
    try:
        return re.compile(pattern)
    except re.error:
        return None


def _from_tag_conventions(repository: str, tag: str, matrix: Matrix | None) -> ImageCuda | None:
    rows = getattr(matrix, "image_cuda_tags", None)
    if not callable(rows) or not tag:
        return None
    for glob, pattern, _source in rows():
        if glob != "*" and not fnmatch.fnmatchcase(repository, glob):
            continue
        rx = _compiled(pattern)
        m = rx.search(tag) if rx else None
        if not m:
            continue
        groups = m.groupdict()
        if groups.get("digits"):
            d = groups["digits"]
            version = f"{d[:-1]}.{d[-1]}"
        elif groups.get("major") and groups.get("minor") is not None:
            version = f"{groups['major']}.{groups['minor']}" + (f".{groups['patch']}" if groups.get("patch") else "")
        else:
            continue
        return ImageCuda(version, f"image tag {tag!r}")
    return None


def image_cuda(image: str, matrix: Matrix | None) -> ImageCuda | None:
    """The CUDA version ``image`` carries per the base-image table, or None when unknown."""
    try:
        return _image_cuda_cached(image, matrix)
    except TypeError:  # an unhashable stand-in for the matrix
        return _image_cuda(image, matrix)


@functools.lru_cache(maxsize=512)
def _image_cuda_cached(image: str, matrix: Matrix | None) -> ImageCuda | None:
    # Once per image reference and matrix: the pods of a manifest stream name the same few images.
    return _image_cuda(image, matrix)


def _image_cuda(image: str, matrix: Matrix | None) -> ImageCuda | None:
    parsed = parse_image(image)
    if parsed is None:
        return None
    repository, tag = parsed
    if repository in NVIDIA_CUDA_REPOS:
        m = _CUDA_TAG_RE.match(tag)
        return ImageCuda(m.group(1), "nvidia/cuda tag", official_cuda=True) if m else None
    jetson = _jetson_cuda(repository, tag, matrix)
    if jetson is not None:
        return jetson
    if repository.startswith(NVIDIA_IMAGE_HOMES) and matrix is not None:
        lookup = getattr(matrix, "ngc_image", None)
        ngc = None
        if callable(lookup):
            try:
                ngc = lookup(repository.removeprefix("nvcr.io/"), tag)
            except (LookupError, ValueError):
                ngc = None
        if ngc is not None and getattr(ngc, "cuda", None):
            framework = repository.rsplit("/", 1)[-1]
            return ImageCuda(str(ngc.cuda), f"NGC {framework} {ngc.release}", bool(getattr(ngc, "uncertain", False)))
    if matrix is not None:
        return _from_tag_conventions(repository, tag, matrix)
    return None


def official_image_env(image: str, matrix: Matrix | None, arch: str = "amd64") -> dict[str, str] | None:
    """The env an official ``nvidia/cuda`` image sets (``NVIDIA_REQUIRE_CUDA`` ...), from the
    matrix's ``cuda_image_env`` rows; None for any other image or a version the matrix lacks."""
    parsed = parse_image(image)
    found = image_cuda(image, matrix) if parsed is not None else None
    lookup = getattr(matrix, "cuda_image_env", None)
    if parsed is None or found is None or not found.official_cuda or not callable(lookup):
        return None
    flavor = _CUDA_FLAVOR_RE.match(parsed[1])
    try:
        row = lookup(found.version, arch, re.sub(r"cudnn\d*", "cudnn", flavor.group(1)) if flavor else None)
    except (LookupError, ValueError):
        return None
    return dict(getattr(row, "env", row)) if row is not None else None


def is_ngc_release_tag(repository: str, tag: str) -> bool:
    """An NVIDIA-hosted image tagged as an NGC monthly release (``nvcr.io/nvidia/pytorch:24.05-py3``)."""
    return repository.startswith(NVIDIA_IMAGE_HOMES) and bool(_NGC_RELEASE_TAG_RE.match(tag or ""))


def _platforms_row(repository: str, matrix: Matrix | None) -> Any:
    lookup = getattr(matrix, "image_platforms", None)
    return lookup(repository) if callable(lookup) else None


def _jetson_cuda(repository: str, tag: str, matrix: Matrix | None) -> ImageCuda | None:
    row = _platforms_row(repository, matrix) if matrix is not None else None
    if row is None or not tag:
        return None
    name = repository.rsplit("/", 1)[-1]
    if row.cuda_from == "tag-major-minor":
        m = _CUDA_TAG_RE.match(tag)
        if m is None:
            return None
        return ImageCuda(".".join(m.group(1).split(".")[:2]), f"{name} tag {tag!r}", row.uncertain)
    if row.cuda_from == "l4t-release":
        release = getattr(matrix, "jetson_release", None)
        found = release(tag.split("-", 1)[0]) if callable(release) else None
        if found is None:
            return None
        return ImageCuda(found.cuda, f"{name} L4T r{found.l4t} (JetPack {found.jetpack})", row.uncertain or found.uncertain)
    return None


def image_platform(image: str, matrix: Matrix | None) -> str | None:
    """The one platform (``linux/arm64``) the table says ``image`` is built for, else None
    (unknown, or published for several)."""
    parsed = parse_image(image)
    if parsed is None or matrix is None:
        return None
    row = _platforms_row(parsed[0], matrix)
    if row is None or len(row.platforms) != 1:
        return None
    return str(row.platforms[0])


@dataclass(frozen=True)
class JetsonImage:
    """An image built only for a Jetson's integrated GPU (the base-image table's ``jetson_images``)."""

    image: str
    basis: str        # which row of the table: "nvcr.io/nvidia/* tags matching -igpu$"
    source: str
    uncertain: bool


def jetson_image(image: str, matrix: Matrix | None) -> JetsonImage | None:
    """``image`` when the table says it needs a Jetson's iGPU and its L4T driver stack, else None."""
    parsed = parse_image(image)
    rows = getattr(matrix, "jetson_images", None)
    if parsed is None or not callable(rows):
        return None
    repository, tag = parsed
    for glob, pattern, source, uncertain in rows():
        if not fnmatch.fnmatchcase(repository, glob):
            continue
        rx = _compiled(pattern)
        if rx is not None and rx.search(tag):
            basis = f"{glob} images" if pattern == ".*" else f"{glob} tags matching {pattern!r}"
            return JetsonImage(image, basis, source, uncertain)
    return None


def discrete_gpu_image(image: str, matrix: Matrix | None) -> str | None:
    """Why ``image`` is built for discrete GPUs (x86-64 and SBSA arm64), not a Jetson's iGPU: an
    official ``nvidia/cuda`` image, or an NGC release the matrix knows that is not a Jetson build;
    None when that cannot be told."""
    parsed = parse_image(image)
    if parsed is None or jetson_image(image, matrix) is not None:
        return None
    repository, tag = parsed
    if repository in NVIDIA_CUDA_REPOS and _CUDA_TAG_RE.match(tag):
        return "an official nvidia/cuda image (x86-64 and SBSA arm64 builds, for discrete GPUs)"
    found = image_cuda(image, matrix) if repository.startswith(NVIDIA_IMAGE_HOMES) else None
    if found is not None and found.basis.startswith("NGC ") and is_ngc_release_tag(repository, tag):
        return f"{found.basis}, an NGC release for discrete GPUs (its Jetson build is tagged -igpu)"
    return None
