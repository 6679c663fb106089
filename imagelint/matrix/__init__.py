"""The versioned NVIDIA compatibility matrix and the NVIDIA_REQUIRE_* evaluator.

``load_matrix()`` gives the newest shipped matrix (``matrices/<date>.toml``); rules query it
(``driver_floor``, ``cuda_for_driver``, ``gpu``, ``toolkit_default_runtime_mode``,
``cuda_image_env``, ``device_plugin_naming``, ``ptx_isa``, ``nvidia_name`` ...) instead of
hard-coding NVIDIA facts; ``imagelint.matrix.shipped`` reads one table of the shipped matrix
without parsing the rest. ``imagelint.matrix.require`` evaluates NVIDIA_REQUIRE_* exactly as the
container toolkit does. See docs/matrix.md.
"""

from __future__ import annotations

from imagelint.matrix.answers import (
    CudaImageEnv,
    CudaRelease,
    DevicePluginNaming,
    DevicePluginRelease,
    DriverBranch,
    DriverFloor,
    ForwardCompat,
    GpuOperatorRelease,
    GpuProduct,
    GpuSearch,
    ImagePlatforms,
    JetsonRelease,
    MinorVersionCompat,
    NgcImage,
    NvidiaName,
    PtxIsaVersion,
    ToolkitFeature,
    ToolkitRelease,
)
from imagelint.matrix.loader import (
    apply_overlay,
    load_matrix,
    matrix_from_text,
    shipped_versions,
)
from imagelint.matrix.model import Matrix
from imagelint.matrix.require import (
    Device,
    RequireEnvError,
    RequireOutcome,
    evaluate_env,
    evaluate_requirement,
    requirements_from_env,
    runtime_enforces_requirements,
)
from imagelint.matrix.versions import compare_versions, driver_branch

__all__ = [
    "CudaImageEnv",
    "CudaRelease",
    "Device",
    "DevicePluginNaming",
    "DevicePluginRelease",
    "DriverBranch",
    "DriverFloor",
    "ForwardCompat",
    "GpuOperatorRelease",
    "GpuProduct",
    "GpuSearch",
    "ImagePlatforms",
    "JetsonRelease",
    "Matrix",
    "MinorVersionCompat",
    "NgcImage",
    "NvidiaName",
    "PtxIsaVersion",
    "RequireEnvError",
    "RequireOutcome",
    "ToolkitFeature",
    "ToolkitRelease",
    "apply_overlay",
    "compare_versions",
    "driver_branch",
    "evaluate_env",
    "evaluate_requirement",
    "load_matrix",
    "matrix_from_text",
    "requirements_from_env",
    "runtime_enforces_requirements",
    "shipped_versions",
]
