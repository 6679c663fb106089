"""The typed answers of the matrix's queries: a CUDA release, a driver floor, a GPU product, an NGC
image, a toolkit release... Each carries its row's ``source``; rows whose source could not be
verified carry ``uncertain=True``, and rules must say so rather than state them as fact.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from imagelint.untrusted import is_digits


def row_uncertain(row: Mapping[str, Any]) -> bool:
    """The row's source could not be verified (``confidence = "uncertain"``)."""
    return row.get("confidence") == "uncertain"


@dataclass(frozen=True)
class CudaRelease:
    """A CUDA toolkit release (GA, update or RC) and the minimum driver it needs (``cuda_releases``)."""

    version: str  # "12.4.1"
    label: str  # "CUDA 12.4 Update 1"
    release_kind: str  # ga | update | rc
    min_driver: str  # minimum Linux x86_64 driver, e.g. "550.54.15"
    min_driver_windows: str | None
    source: str
    uncertain: bool


@dataclass(frozen=True)
class DriverFloor:
    """The minimum driver for a CUDA version, from the release the version names (``driver_floor``)."""

    min_driver: str
    release: str  # the CUDA release whose floor this is
    exact: bool  # True: the asked version named this release to the patch
    source: str
    uncertain: bool


@dataclass(frozen=True)
class MinorVersionCompat:
    """The lowest driver that runs every minor of a CUDA major through minor-version compatibility."""

    major: int
    min_driver: str  # "525.60.13"
    source: str
    below_branch: int | None = None  # the family's minor-compat range ends here (e.g. 580 for 12.x)
    uncertain: bool = False


@dataclass(frozen=True)
class DriverBranch:
    """A driver branch and the CUDA version its drivers report (``cuda_for_driver``: 535 -> 12.2)."""

    branch: int
    max_cuda: str
    source: str
    uncertain: bool


@dataclass(frozen=True)
class DriverLifecycle:
    """A driver branch's designation (production, LTSB, new feature) and end of life."""

    branch: int
    designation: str
    eol: str  # as NVIDIA writes it: "June 2026", or a date
    eol_date: str | None  # "2026-06-30": the last day of the EOL month, when known
    source: str
    uncertain: bool


@dataclass(frozen=True)
class DriverGpuSupport:
    """The driver branches that drive a GPU architecture (``driver_gpu_support``)."""

    architecture: str
    compute_capabilities: tuple[str, ...]
    first_branch: int | None
    last_branch: int | None
    source: str
    uncertain: bool

    def drives(self, branch: int) -> bool:
        return (self.first_branch is None or branch >= self.first_branch) and (
            self.last_branch is None or branch <= self.last_branch)


@dataclass(frozen=True)
class ForwardCompatBrand:
    """Whether the compat library's device list takes GPUs of an NVML brand."""

    brand: str
    eligible: bool
    source: str
    uncertain: bool


@dataclass(frozen=True)
class MigVariant:
    """The MIG profiles of one memory variant of a GPU (A100 40 GB / 80 GB)."""

    gpu: str
    memory_gb: int
    profiles: tuple[str, ...]  # without the ``mig-`` prefix: 3g.40gb, 1g.10gb+me
    products: tuple[str, ...]  # product names that are this variant


@dataclass(frozen=True)
class ForwardCompat:
    """The ``cuda-compat`` package of a CUDA minor: the host branches it runs on, the GPUs that may use it."""

    package: str  # cuda-compat-12-8
    cuda: str  # "12.8"
    host_branches: tuple[int, ...]  # host branches the compat package supports
    not_needed_branches: tuple[int, ...]  # the host already provides this CUDA
    incompatible_branches: tuple[int, ...]
    eligible_kinds: tuple[str, ...]  # datacenter, rtx-server-ready, jetson (never geforce)
    eligible_brands: tuple[str, ...]  # NVML brand names (UNCERTAIN inference from the ELF note)
    brands_uncertain: bool
    source: str
    uncertain: bool


@dataclass(frozen=True)
class GpuProduct:
    """A GPU product of the matrix's ``gpus`` rows, found by its name or any alias."""

    name: str
    aliases: tuple[str, ...]
    compute_capability: str
    family: str
    brand: str  # NVML brand libnvidia-container reports
    brand_uncertain: bool
    kind: str  # datacenter | workstation | geforce | jetson
    datacenter: bool
    source: str
    uncertain: bool
    driver_stack: str | None = None  # Jetson: "tegra" (L4T's iGPU driver; only Jetson images run)
    tegra_last_branch: int | None = None  # ... through this driver branch (Jetson Linux 36.x: R540)


@dataclass(frozen=True)
class GpuSearch:
    """What a GPU search text names: the one product it spells exactly (name or alias, any case or
    separators), else the products whose name, alias, family, brand or compute capability contain
    it, else the names it nearly spells ("did you mean")."""

    exact: GpuProduct | None
    matches: tuple[GpuProduct, ...]
    suggestions: tuple[str, ...]


@dataclass(frozen=True)
class NgcImage:
    """An NGC framework image (``nvcr.io/nvidia/...:YY.MM-...``): its CUDA and the drivers it runs on."""

    repository: str
    tag: str
    release: str
    cuda: str
    framework_version: str | None
    min_driver_branch: int | None
    source: str
    uncertain: bool
    # The release notes' "Driver Requirements": data-centre drivers (lowest of each branch) the
    # container runs on through forward compatibility; ``drivers_read`` is False when the list is
    # borrowed from the nearest release whose notes were read.
    datacenter_compat_drivers: tuple[str, ...] = ()
    driver_requirements: str | None = None
    drivers_source: str | None = None
    # The notes list no drivers and refer to NVIDIA's CUDA Compatibility guide instead: the
    # forward-compatibility table of the release's CUDA decides (not "no driver works").
    defers_to_forward_compat: bool = False
    # The lowest compute capability the release's builds carry kernels for, and its source.
    min_compute_capability: str | None = None
    compute_capability_source: str | None = None

    @property
    def drivers_read(self) -> bool:
        return bool(self.driver_requirements)


@dataclass(frozen=True)
class ToolkitFeature:
    """A behaviour of the NVIDIA Container Toolkit and the release that brought it (``toolkit_features``)."""

    name: str
    since: str
    description: str
    source: str
    uncertain: bool


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
class CudaImageEnv:
    """The env an official ``nvidia/cuda`` image sets (base row plus what its flavor chain adds)."""

    version: str
    arch: str  # the row's arch: amd64 | arm64 | any (both agree)
    flavor: str  # base | runtime | devel | cudnn-runtime | cudnn-devel
    os: str | None
    env: Mapping[str, str]
    sources: tuple[str, ...]  # the base row's source, then each flavor row's
    uncertain: bool  # any row on the way is uncertain


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


@dataclass(frozen=True)
class ImagePlatforms:
    """An image repository built for fixed platforms, and where the CUDA it carries is read."""

    repository: str
    platforms: tuple[str, ...]  # "linux/arm64"
    cuda_from: str  # l4t-release | tag-major-minor | none
    source: str
    uncertain: bool


@dataclass(frozen=True)
class JetsonRelease:
    """An L4T (Jetson Linux) release and the JetPack and CUDA versions that come with it."""

    l4t: str
    jetpack: str
    cuda: str
    source: str
    uncertain: bool


@dataclass(frozen=True)
class PtxIsaVersion:
    """A PTX ISA version and the first CUDA release (toolkit and driver) that handles it."""

    ptx_isa: str  # "8.4"
    min_cuda: str  # "12.4": the first CUDA (toolkit and driver) that handles it
    source: str
    uncertain: bool


@dataclass(frozen=True)
class NvidiaName:
    """Names NVIDIA software or images use (labels, env, image names), from ``nvidia_names``."""

    name: str
    kind: str
    values: tuple[str, ...]
    deprecated: bool
    source: str
    uncertain: bool


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


def name_from_row(row: Mapping[str, Any]) -> NvidiaName:
    return NvidiaName(
        row["name"], row["kind"], tuple(row["values"]), bool(row.get("deprecated")), row["source"], row_uncertain(row)
    )
