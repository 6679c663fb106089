"""The rule registry: ID → rule module. One explicit dict, the single place rules are wired.

Each module carries ``ID``, ``NAME``, ``SEVERITY``, ``TITLE``, ``NEEDS``,
``REFERENCES``, a docstring (its documentation) and ``check(ctx)``.
"""

from __future__ import annotations

from collections.abc import Mapping
from types import MappingProxyType

from imagelint.rules import (
    compat_libs_unusable,
    compose_gpu_pinned,
    compose_gpu_request_invalid,
    cuda_driver_too_old,
    cuda_stubs_on_loader_path,
    cuda_toolkit_reinstalled,
    cuda_version_conflict,
    cuda_version_unknown,
    devel_final_stage,
    device_plugin_incompatible,
    driver_branch_unsupported,
    driver_capabilities_all,
    driver_capabilities_mismatch,
    driver_lib_bundled,
    gpu_claim_with_device_plugin,
    gpu_node_selector_unsatisfiable,
    gpu_query_at_build,
    gpu_request_limit_mismatch,
    gpu_resource_unknown,
    gpu_taint_not_tolerated,
    hardcoded_gpu_index,
    hardcoded_visible_devices,
    host_gpu_stack_installed,
    mig_profile_not_on_gpu,
    no_kernel_for_gpu,
    platform_mismatch,
    privileged_gpu_container,
    require_check_disabled,
    require_invalid,
    require_unsatisfied,
    resource_claim_undefined,
    runtime_class_missing,
    shared_gpu_request_over_one,
    toolkit_incompatible,
    visible_devices_all_leak,
)
from imagelint.rules.base import Finding, RuleContext, RuleInfo

_MODULES = (
    cuda_driver_too_old,
    require_unsatisfied,
    require_invalid,
    require_check_disabled,
    cuda_version_conflict,
    cuda_version_unknown,
    compat_libs_unusable,
    driver_lib_bundled,
    cuda_stubs_on_loader_path,
    hardcoded_visible_devices,
    hardcoded_gpu_index,
    visible_devices_all_leak,
    driver_capabilities_mismatch,
    no_kernel_for_gpu,
    platform_mismatch,
    device_plugin_incompatible,
    toolkit_incompatible,
    driver_branch_unsupported,
    gpu_request_limit_mismatch,
    gpu_resource_unknown,
    gpu_taint_not_tolerated,
    gpu_node_selector_unsatisfiable,
    runtime_class_missing,
    resource_claim_undefined,
    gpu_claim_with_device_plugin,
    shared_gpu_request_over_one,
    privileged_gpu_container,
    compose_gpu_request_invalid,
    compose_gpu_pinned,
    mig_profile_not_on_gpu,
    gpu_query_at_build,
    host_gpu_stack_installed,
    driver_capabilities_all,
    cuda_toolkit_reinstalled,
    devel_final_stage,
)

RULES: Mapping[str, RuleInfo] = MappingProxyType({m.ID: RuleInfo.from_module(m) for m in _MODULES})
_BY_NAME: Mapping[str, RuleInfo] = MappingProxyType({r.name: r for r in RULES.values()})


def get_rule(key: str) -> RuleInfo | None:
    """A rule by ID (``IL101``, case-insensitive) or name (``cuda-driver-too-old``)."""
    return RULES.get(key.strip().upper()) or _BY_NAME.get(key.strip().lower())


__all__ = ["RULES", "Finding", "RuleContext", "RuleInfo", "get_rule"]
