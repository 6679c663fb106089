"""An image reference → the CUDA version it carries, without pulling it (the base-image table).

Used for a Dockerfile's ``FROM`` and for a manifest container's ``image:``. In order:

* ``nvidia/cuda:X.Y.Z-…`` (Docker Hub or nvcr.io): the tag's version;
* ``nvcr.io/nvidia/<framework>:YY.MM-…``: the matrix's ``ngc_images`` row, else the NGC monthly
  release (``ngc_releases``) when the framework follows that cadence; DeepStream by its version;
* a tag that states its CUDA version, by the matrix's ``image_cuda_tags`` conventions
  (``pytorch/pytorch:2.5.0-cuda12.4-…``, ``rayproject/ray-llm:…-cu128``, ``cuda-sample:…-cuda12.5.0``).

The answer says which rule of the table gave it (and whether that matrix row is uncertain), so
a finding can name its basis.
"""

from __future__ import annotations

import fnmatch
import functools
import re
from typing import Any

from imagelint.errors import UsageError
from dataclasses import dataclass
from imagelint.lazyre import lazy_pattern

NVIDIA_CUDA_REPOS = ("docker.io/nvidia/cuda", "nvcr.io/nvidia/cuda")
_CUDA_TAG_RE = lazy_pattern(r"^(\d+\.\d+(?:\.\d+)?)(?:-|$)")


@dataclass(frozen=True)
class ImageCuda:
    """What the table says about an image: its CUDA version and how that was known."""

    version: str
    basis: str            # "nvidia/cuda tag", "NGC pytorch 23.10", "tag convention <name>"...
    uncertain: bool = False
    official_cuda: bool = False  # an official nvidia/cuda image (its env is in the matrix)


def parse_image(image: str) -> tuple[str, str] | None:
    """(registry/repository, tag) of an image reference, or None when it is not one."""
    from imagelint.reference import parse_registry_name

    if not image or "$" in image or "{" in image:
        return None
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


def _from_tag_conventions(repository: str, tag: str, matrix: Any) -> ImageCuda | None:
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


def image_cuda(image: str, matrix: Any) -> ImageCuda | None:
    """The CUDA version ``image`` carries per the base-image table, or None when unknown."""
    parsed = parse_image(image)
    if parsed is None:
        return None
    repository, tag = parsed
    if repository in NVIDIA_CUDA_REPOS:
        m = _CUDA_TAG_RE.match(tag)
        return ImageCuda(m.group(1), "nvidia/cuda tag", official_cuda=True) if m else None
    if repository.startswith("nvcr.io/nvidia/") and matrix is not None:
        lookup = getattr(matrix, "ngc_image", None)
        ngc = None
        if callable(lookup):
            try:
                ngc = lookup(repository[len("nvcr.io/"):], tag)
            except (LookupError, ValueError):
                ngc = None
        if ngc is not None and getattr(ngc, "cuda", None):
            framework = repository.rsplit("/", 1)[-1]
            return ImageCuda(str(ngc.cuda), f"NGC {framework} {ngc.release}", bool(getattr(ngc, "uncertain", False)))
    if matrix is not None:
        return _from_tag_conventions(repository, tag, matrix)
    return None
