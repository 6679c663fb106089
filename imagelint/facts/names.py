"""Names of env vars and labels that NVIDIA images use to state facts, in one table each.

These are NVIDIA conventions (what the runtime reads, what official and NGC images
set), kept together so that a new name is one line, never an ``if``. Sources:
nvidia-container-toolkit ``internal/config/image/cuda_image.go`` (the runtime's
env), gitlab.com/nvidia/container-images/cuda ``dist/*/Dockerfile`` (official
images), and the env dumps of NGC images (``/work/shared/reference`` §7, §8).
"""

from __future__ import annotations

# The runtime (nvidia-container-toolkit cuda_image.go).
REQUIRE_PREFIX = "NVIDIA_REQUIRE_"
DISABLE_REQUIRE = "NVIDIA_DISABLE_REQUIRE"
DISABLE_REQUIRES_PLURAL = "NVIDIA_DISABLE_REQUIRES"  # in a CHANGELOG and an issue; read by no code
CUDA_VERSION = "CUDA_VERSION"
VISIBLE_DEVICES = "NVIDIA_VISIBLE_DEVICES"
DRIVER_CAPABILITIES = "NVIDIA_DRIVER_CAPABILITIES"
CUDA_VISIBLE_DEVICES = "CUDA_VISIBLE_DEVICES"  # the CUDA runtime's own device filter

# Env that states a cudart package version (official CUDA images: NV_CUDA_CUDART_VERSION=12.4.127-1).
CUDART_PACKAGE_ENV = ("NV_CUDA_CUDART_VERSION",)

# NGC images: the driver the image was built and tested against.
NGC_DRIVER_ENV = ("CUDA_DRIVER_VERSION",)
# NGC images: NVIDIA_<PRODUCT>_VERSION=<YY.MM> release of the container (NVIDIA_PYTORCH_VERSION=23.10).
NGC_RELEASE_ENV_PREFIX = "NVIDIA_"
NGC_RELEASE_ENV_SUFFIX = "_VERSION"
NGC_PRODUCT_ENV = "NVIDIA_PRODUCT_NAME"

# Labels that state a CUDA version (official images label com.nvidia.cuda.version).
CUDA_VERSION_LABELS = ("com.nvidia.cuda.version",)

# Base image (OCI image spec annotations, also used as labels by buildkit and others).
BASE_NAME_KEYS = ("org.opencontainers.image.base.name",)
BASE_DIGEST_KEYS = ("org.opencontainers.image.base.digest",)
# Official CUDA images: env every one of them sets, and their maintainer label.
OFFICIAL_CUDA_ENV = ("NVARCH", "NV_CUDA_CUDART_VERSION", "NV_CUDA_COMPAT_PACKAGE")
OFFICIAL_CUDA_MAINTAINER_LABEL = ("maintainer", "NVIDIA CORPORATION <cudatools@nvidia.com>")
