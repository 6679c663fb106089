"""Answers about the node stack: container toolkit, device plugin and GPU Operator releases, the
device plugin's resource names.

Imported by the query that builds them (see ``imagelint.matrix.answers``).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from imagelint.matrix.answers import row_uncertain
from imagelint.untrusted import is_digits


@dataclass(frozen=True)
class ToolkitRelease:
    """An NVIDIA Container Toolkit release, with its default runtime mode and the features it has."""

    version: str
    date: str
    default_runtime_mode: str
    features: tuple[str, ...]  # names of toolkit_features present in this release
    notable: str | None
    source: str
    uncertain: bool


@dataclass(frozen=True)
class DevicePluginRelease:
    """A k8s-device-plugin release and the features it has (``device_plugin_releases``)."""

    version: str
    date: str
    features: tuple[str, ...]
    notable: str | None
    source: str
    uncertain: bool


@dataclass(frozen=True)
class GpuOperatorRelease:
    """A GPU Operator release and the component versions it deploys (driver, toolkit, device plugin...)."""

    version: str
    drivers: tuple[str, ...]
    default_driver: str | None
    recommended_drivers: tuple[str, ...]
    container_toolkit: str
    device_plugin: str
    gfd: str | None
    dcgm: str | None
    dcgm_exporter: str | None
    nfd: str | None
    mig_manager: str | None
    driver_manager: str | None
    source: str
    uncertain: bool
    affected_by: tuple[str, ...] = ()  # CVEs whose record lists this release as affected


@dataclass(frozen=True)
class DevicePluginNaming:
    """How the k8s-device-plugin names the resources it advertises."""

    prefix: str  # "nvidia.com"
    full_gpu: str  # "nvidia.com/gpu" (migStrategy none, and non-MIG GPUs under mixed)
    mig_single: str  # "nvidia.com/gpu": under single, MIG devices keep the plain name
    mig_mixed: str  # "nvidia.com/mig-{profile}"
    shared_suffix: str  # ".shared" (sharing with renameByDefault)
    max_length: int  # 63
    source: str
    uncertain: bool

    def mig_resource(self, profile: str) -> str:
        """``"1g.5gb" -> "nvidia.com/mig-1g.5gb"`` (the mixed strategy's name)."""
        return self.mig_mixed.replace("{profile}", profile)

    def is_mig_resource(self, name: str) -> bool:
        head, _, tail = self.mig_mixed.partition("{profile}")
        return name.startswith(head) and name.endswith(tail) and len(name) > len(head) + len(tail)

    def is_shared(self, name: str) -> bool:
        return name.endswith(self.shared_suffix)

    def advertised(self, mig_strategy: str | None, mig_profiles: tuple[str, ...] = ()) -> frozenset[str]:
        """Names a GPU with these MIG profiles gets under a MIG strategy, without renames."""
        strategy = mig_strategy or "none"
        if strategy == "mixed" and mig_profiles:
            return frozenset(self.mig_resource(p) for p in mig_profiles)
        if strategy == "single" and mig_profiles:
            return frozenset({self.mig_single})
        return frozenset({self.full_gpu})


def naming_from_rows(rows: tuple[Mapping[str, Any], ...] | list[Mapping[str, Any]]) -> DevicePluginNaming | None:
    """A ``DevicePluginNaming`` from ``device_plugin_resource_names`` rows (None if incomplete)."""
    by_name = {r["name"]: r for r in rows}
    needed = ("prefix", "full-gpu", "mig-single", "mig-mixed", "shared-suffix", "max-length")
    if any(n not in by_name for n in needed) or not is_digits(by_name["max-length"]["value"]):
        return None
    picked = [by_name[n] for n in needed]
    prefix, full_gpu, mig_single, mig_mixed, shared_suffix = (r["value"] for r in picked[:5])
    return DevicePluginNaming(
        prefix, full_gpu, mig_single, mig_mixed, shared_suffix, int(by_name["max-length"]["value"]),
        "; ".join(dict.fromkeys(r["source"] for r in picked)), any(row_uncertain(r) for r in picked),
    )
