"""Names of env vars and labels that NVIDIA images use to state facts, in one table each.

Two kinds, kept apart on purpose:

* The container runtime's own interface (``NVIDIA_REQUIRE_*``, ``NVIDIA_VISIBLE_DEVICES``,
  ``CUDA_VERSION`` ...; nvidia-container-toolkit ``internal/config/image/cuda_image.go``) and
  the OCI base-image annotations stay constants here: they are the syntax that
  ``imagelint.matrix.require`` implements in code, not data that changes with a release.
* What NVIDIA's images happen to set (``com.nvidia.cuda.version``, ``NVARCH``,
  ``CUDA_DRIVER_VERSION``, NGC's ``NVIDIA_<PRODUCT>_VERSION`` ...) is matrix data: the
  ``nvidia_names`` table of the shipped matrix, each row with its source. Those names are
  module attributes resolved on first use (``names.CUDA_VERSION_LABELS``), reading only that
  table (``imagelint.matrix.shipped``), so importing this module costs nothing.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

# The runtime (nvidia-container-toolkit cuda_image.go).
REQUIRE_PREFIX = "NVIDIA_REQUIRE_"
DISABLE_REQUIRE = "NVIDIA_DISABLE_REQUIRE"
DISABLE_REQUIRES_PLURAL = "NVIDIA_DISABLE_REQUIRES"  # in a CHANGELOG and an issue; read by no code
CUDA_VERSION = "CUDA_VERSION"
VISIBLE_DEVICES = "NVIDIA_VISIBLE_DEVICES"
DRIVER_CAPABILITIES = "NVIDIA_DRIVER_CAPABILITIES"
CUDA_VISIBLE_DEVICES = "CUDA_VISIBLE_DEVICES"  # the CUDA runtime's own device filter

# Base image (OCI image spec annotations, also used as labels by buildkit and others).
BASE_NAME_KEYS = ("org.opencontainers.image.base.name",)
BASE_DIGEST_KEYS = ("org.opencontainers.image.base.digest",)


# Attribute -> (nvidia_names row, how its values become the attribute's value).
_FROM_MATRIX: dict[str, tuple[str, Callable[[tuple[str, ...]], Any]]] = {
    # Env that states a cudart package version (official CUDA images: NV_CUDA_CUDART_VERSION=12.4.127-1).
    "CUDART_PACKAGE_ENV": ("cudart-package-env", tuple),
    # NGC images: the driver the image was built and tested against.
    "NGC_DRIVER_ENV": ("ngc-driver-env", tuple),
    # NGC images: NVIDIA_<PRODUCT>_VERSION=<YY.MM> release of the container (NVIDIA_PYTORCH_VERSION=23.10).
    "NGC_RELEASE_ENV_PREFIX": ("ngc-release-env", lambda v: v[0].split("{product}", 1)[0]),
    "NGC_RELEASE_ENV_SUFFIX": ("ngc-release-env", lambda v: v[0].split("{product}", 1)[1]),
    "NGC_PRODUCT_ENV": ("ngc-product-env", lambda v: v[0]),
    # Labels that state a CUDA version (official images label com.nvidia.cuda.version).
    "CUDA_VERSION_LABELS": ("cuda-version-labels", tuple),
    # Official CUDA images: env every one of them sets, and their maintainer label (key, value).
    "OFFICIAL_CUDA_ENV": ("official-cuda-env", tuple),
    "OFFICIAL_CUDA_MAINTAINER_LABEL": ("official-cuda-maintainer-label", lambda v: (v[0], v[1])),
}


def __getattr__(attribute: str) -> Any:
    """Resolve a matrix-backed name once, then keep it as a plain module global."""
    entry = _FROM_MATRIX.get(attribute)
    if entry is None:
        raise AttributeError(f"module {__name__!r} has no attribute {attribute!r}")
    from imagelint.matrix.shipped import nvidia_name

    row, convert = entry
    value = convert(nvidia_name(row).values)
    globals()[attribute] = value
    return value
