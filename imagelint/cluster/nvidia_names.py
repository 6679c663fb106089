"""NVIDIA's label and image names as the cluster shows them, read once from the matrix.

GFD label names, the GPU product suffixes GFD appends, the NFD PCI label and the
device-plugin / toolkit image names are NVIDIA facts: they live in the matrix
(``nvidia_names``, every row with its source; GFD's are NVIDIA/k8s-device-plugin
``internal/lm``) and are compiled here once, lazily, into :class:`NvidiaNames`.
"""

from __future__ import annotations

import fnmatch
import functools
import re
from dataclasses import dataclass
from typing import Any


def _any_match(patterns: tuple[str, ...]) -> re.Pattern[str]:
    """One regex for ``*`` globs (``*`` spans anything, "/" included)."""
    return re.compile("|".join(fnmatch.translate(p) for p in patterns))


def _with_profile(template: str) -> re.Pattern[str]:
    """``"-MIG-{profile}"`` -> a regex capturing the MIG profile (``1g.5gb``) where it stands."""
    head, _, tail = template.partition("{profile}")
    return re.compile(re.escape(head) + r"(\d+g\.\d+gb)" + re.escape(tail))


@dataclass(frozen=True)
class NvidiaNames:
    """GFD/NFD label names, GFD's product suffixes and NVIDIA component image names, from the matrix."""

    driver_full: str
    driver_parts: tuple[str, ...]
    driver_parts_deprecated: tuple[str, ...]
    cuda_full: str  # despite GFD's name (cuda.runtime-version): the DRIVER's CUDA version
    cuda_parts: tuple[str, ...]
    cuda_parts_deprecated: tuple[str, ...]
    product: str
    compute_capability: tuple[str, ...]  # (major, minor)
    family: str
    count: str
    mig_strategy: str
    gpu_node_labels: re.Pattern[str]  # labels only GFD writes, on GPU nodes
    product_shared: re.Pattern[str]  # "-SHARED" at the end of gpu.product (time-slicing/MPS)
    product_mig: re.Pattern[str]  # "-MIG-<profile>" at the end of gpu.product (MIG single)
    mig_mixed_count: re.Pattern[str]  # nvidia.com/mig-<profile>.count (MIG mixed)
    kept_labels: re.Pattern[str]
    volatile_labels: re.Pattern[str]  # change over time or per node on the same stack
    resource_prefix: str  # "nvidia.com/"
    device_plugin_images: tuple[str, ...]  # last path component of the repository
    toolkit_images: tuple[str, ...]


@functools.lru_cache(maxsize=1)
def nvidia_names() -> NvidiaNames:
    from imagelint.matrix.shipped import device_plugin_naming, nvidia_name

    def values(name: str) -> tuple[str, ...]:
        return nvidia_name(name).values

    def one(name: str) -> str:
        return values(name)[0]

    return NvidiaNames(
        driver_full=one("gfd-driver-version"),
        driver_parts=values("gfd-driver-version-parts"),
        driver_parts_deprecated=values("gfd-driver-version-parts-deprecated"),
        cuda_full=one("gfd-driver-cuda-version"),
        cuda_parts=values("gfd-driver-cuda-version-parts"),
        cuda_parts_deprecated=values("gfd-driver-cuda-version-parts-deprecated"),
        product=one("gfd-gpu-product"),
        compute_capability=values("gfd-gpu-compute-capability"),
        family=one("gfd-gpu-family"),
        count=one("gfd-gpu-count"),
        mig_strategy=one("gfd-mig-strategy"),
        gpu_node_labels=_any_match(values("gfd-gpu-node-labels")),
        product_shared=re.compile(re.escape(one("gfd-product-shared-suffix")) + "$"),
        product_mig=re.compile(_with_profile(one("gfd-product-mig-suffix")).pattern + "$"),
        mig_mixed_count=re.compile("^" + _with_profile(one("gfd-mig-mixed-count")).pattern + "$"),
        kept_labels=_any_match(values("gfd-label-prefix") + values("nfd-nvidia-pci-label")),
        volatile_labels=_any_match(values("gfd-volatile-labels")),
        resource_prefix=device_plugin_naming().prefix + "/",
        device_plugin_images=values("device-plugin-images"),
        toolkit_images=values("toolkit-images"),
    )


# The label constants imagelint.cluster used to define, for code that imported them.
_LEGACY_NAMES = {
    "LABEL_DRIVER_FULL": "driver_full", "LABEL_DRIVER_PARTS": "driver_parts",
    "LABEL_DRIVER_PARTS_DEPRECATED": "driver_parts_deprecated", "LABEL_CUDA_FULL": "cuda_full",
    "LABEL_CUDA_PARTS": "cuda_parts", "LABEL_CUDA_PARTS_DEPRECATED": "cuda_parts_deprecated",
    "LABEL_PRODUCT": "product", "LABEL_CC": "compute_capability", "LABEL_FAMILY": "family",
    "LABEL_COUNT": "count", "LABEL_MIG_STRATEGY": "mig_strategy",
}


def __getattr__(attribute: str) -> Any:
    if attribute in _LEGACY_NAMES:
        return getattr(nvidia_names(), _LEGACY_NAMES[attribute])
    raise AttributeError(f"module {__name__!r} has no attribute {attribute!r}")

__all__ = ["NvidiaNames", "nvidia_names"]
