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
    CudaRelease,
    DriverBranch,
    DriverFloor,
    GpuProduct,
    NvidiaName,
    ToolkitFeature,
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
    "CudaRelease",
    "Device",
    "DriverBranch",
    "DriverFloor",
    "GpuProduct",
    "Matrix",
    "NvidiaName",
    "RequireEnvError",
    "RequireOutcome",
    "ToolkitFeature",
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
