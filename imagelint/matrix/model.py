"""The loaded matrix and the typed rows its queries return.

``Matrix`` holds the validated rows of one matrix file (plus overlays) and answers the questions
rules ask: the driver floor of a CUDA version, the CUDA a driver branch reports, forward-compat
eligibility, GPU products by any spelling, NGC image CUDA versions, toolkit/device-plugin/GPU
Operator releases. Rows whose source could not be verified carry ``uncertain=True``; rules must
say so in their findings rather than state them as fact.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any

from imagelint.lazyre import lazy_pattern
from imagelint.matrix.versions import (
    VersionSyntaxError,
    compare_versions,
    cuda_series,
    driver_branch,
    is_numeric_version,
)
from imagelint.untrusted import is_digits


def _uncertain(row: Mapping[str, Any]) -> bool:
    return row.get("confidence") == "uncertain"


def _strip_v(version: str) -> str:
    version = version.strip()
    return version[1:] if version[:1] in ("v", "V") else version


@dataclass(frozen=True)
class CudaRelease:
    version: str  # "12.4.1"
    label: str  # "CUDA 12.4 Update 1"
    release_kind: str  # ga | update | rc
    min_driver: str  # minimum Linux x86_64 driver, e.g. "550.54.15"
    min_driver_windows: str | None
    source: str
    uncertain: bool


@dataclass(frozen=True)
class DriverFloor:
    min_driver: str
    release: str  # the CUDA release whose floor this is
    exact: bool  # True: the asked version named this release to the patch
    source: str
    uncertain: bool


@dataclass(frozen=True)
class MinorVersionCompat:
    major: int
    min_driver: str  # "525.60.13"
    source: str
    below_branch: int | None = None  # the family's minor-compat range ends here (e.g. 580 for 12.x)
    uncertain: bool = False


@dataclass(frozen=True)
class DriverBranch:
    branch: int
    max_cuda: str
    source: str
    uncertain: bool


@dataclass(frozen=True)
class ForwardCompat:
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
    name: str
    since: str
    description: str
    source: str
    uncertain: bool


@dataclass(frozen=True)
class ToolkitRelease:
    version: str
    date: str
    default_runtime_mode: str
    features: tuple[str, ...]  # names of toolkit_features present in this release
    notable: str | None
    source: str
    uncertain: bool


@dataclass(frozen=True)
class DevicePluginRelease:
    version: str
    date: str
    features: tuple[str, ...]
    notable: str | None
    source: str
    uncertain: bool


@dataclass(frozen=True)
class GpuOperatorRelease:
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
    l4t: str
    jetpack: str
    cuda: str
    source: str
    uncertain: bool


@dataclass(frozen=True)
class PtxIsaVersion:
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
        "; ".join(dict.fromkeys(r["source"] for r in picked)), any(_uncertain(r) for r in picked),
    )


def name_from_row(row: Mapping[str, Any]) -> NvidiaName:
    return NvidiaName(
        row["name"], row["kind"], tuple(row["values"]), bool(row.get("deprecated")), row["source"], _uncertain(row)
    )


_ARCH_ALIASES = {"amd64": "amd64", "x86_64": "amd64", "arm64": "arm64", "aarch64": "arm64", "sbsa": "arm64"}


def _image_arch(arch: str) -> str | None:
    """``amd64``, ``x86_64``, ``linux/arm64/v8`` ... -> amd64 | arm64 (None for anything else)."""
    parts = arch.strip().lower().split("/")
    if len(parts) > 1 and parts[0] == "linux":
        parts = parts[1:]
    return _ARCH_ALIASES.get(parts[0])


def _env_map(entries: list[str] | tuple[str, ...]) -> dict[str, str]:
    return dict(e.split("=", 1) for e in entries)


Rows = Mapping[str, tuple[Mapping[str, Any], ...]]


_GFD_MIG_SUFFIX = lazy_pattern(r"(?i)-MIG-.*$")
_GFD_SHARED_SUFFIX = lazy_pattern(r"(?i)-SHARED$")
_NOT_ALNUM = lazy_pattern(r"[^0-9a-z]")


def _gpu_key(name: str) -> str:
    """Case- and separator-insensitive key; GFD suffixes (-SHARED, -MIG-...) dropped."""
    text = _GFD_SHARED_SUFFIX.sub("", _GFD_MIG_SUFFIX.sub("", name.strip()))
    return _NOT_ALNUM.sub("", text.lower())


def _tool_key(version: str) -> tuple[int, ...] | None:
    text = _strip_v(version)
    if not is_numeric_version(text):
        return None
    parts = [int(p) for p in text.split(".") if p != ""]
    while len(parts) > 1 and parts[-1] == 0:
        parts.pop()
    return tuple(parts)


def _cuda_parts(version: str) -> str | None:
    """Normalise a CUDA version to at most major.minor.patch ("v12.2.2.009" -> "12.2.2")."""
    text = _strip_v(version)
    if not is_numeric_version(text):
        return None
    return ".".join(text.split(".")[:3])


@dataclass(frozen=True)
class Matrix:
    """One versioned matrix (with overlays applied). Build it with ``load_matrix``/``matrix_from_text``."""

    version: str
    schema_version: int
    origin: str
    sections: Rows = field(repr=False, compare=True)
    meta: Mapping[str, Any] = field(default_factory=dict, repr=False, compare=False)

    def __hash__(self) -> int:
        # The row mappings are not hashable; a matrix is identified by its version and origin.
        return hash((self.version, self.schema_version, self.origin))

    # --- raw access ---------------------------------------------------------------------------
    def rows(self, section: str | None = None) -> Any:
        """All rows by section (``{section: [row, ...]}``), or one section's rows as a list."""
        if section is not None:
            return [dict(r) for r in self.sections.get(section, ())]
        return {name: [dict(r) for r in rows] for name, rows in self.sections.items()}

    def to_toml(self, section: str | None = None) -> str:
        """The matrix as TOML; with ``section``, ``[meta]`` and that section only."""
        from imagelint.matrix.tomlout import dump_matrix

        return dump_matrix(dict(self.meta), self._rows_of(section))

    def to_json_document(self, section: str | None = None) -> dict[str, Any]:
        return {"meta": dict(self.meta), **self._rows_of(section)}

    def _rows_of(self, section: str | None) -> dict[str, Any]:
        rows = self.rows()
        return rows if section is None else {section: rows.get(section, [])}

    def _section(self, name: str) -> tuple[Mapping[str, Any], ...]:
        return self.sections.get(name, ())

    # --- CUDA toolkit -> driver ---------------------------------------------------------------
    def cuda_releases(self) -> list[CudaRelease]:
        return [self._cuda(r) for r in self._section("cuda_releases")]

    @staticmethod
    def _cuda(row: Mapping[str, Any]) -> CudaRelease:
        return CudaRelease(
            row["version"], row["label"], row["release_kind"], row["min_driver"],
            row.get("min_driver_windows"), row["source"], _uncertain(row),
        )

    def cuda_release(self, version: str) -> CudaRelease | None:
        """``"12.4.1"`` exact; ``"12.4"`` (major.minor only) -> that minor's GA release."""
        return _cuda_release_of(self, version)

    def _find_cuda_release(self, version: str) -> CudaRelease | None:
        wanted = _cuda_parts(version)
        if wanted is None:
            return None
        rows = self._section("cuda_releases")
        if wanted.count(".") >= 2:
            for row in rows:
                if compare_versions(row["version"], wanted) == 0:
                    return self._cuda(row)
            return None
        mm = cuda_series(wanted)
        for row in rows:
            if row["release_kind"] == "ga" and cuda_series(row["version"]) == mm:
                return self._cuda(row)
        return None

    def driver_floor(self, cuda_version: str) -> DriverFloor | None:
        """Minimum driver for a CUDA version: the exact release's when the version names a known
        release to the patch, else the GA floor of its major.minor (``exact=False``)."""
        wanted = _cuda_parts(cuda_version)
        if wanted is None:
            return None
        if wanted.count(".") >= 2:
            exact = self.cuda_release(wanted)
            if exact is not None:
                return DriverFloor(exact.min_driver, exact.version, True, exact.source, exact.uncertain)
        ga = self.cuda_release(cuda_series(wanted))
        if ga is None:
            return None
        return DriverFloor(ga.min_driver, ga.version, False, ga.source, ga.uncertain)

    def minor_version_compat(self, cuda_major: int) -> MinorVersionCompat | None:
        for row in self._section("minor_version_compat"):
            if row["cuda_major"] == cuda_major:
                return MinorVersionCompat(
                    row["cuda_major"], row["min_driver"], row["source"], row.get("below_branch"), _uncertain(row)
                )
        return None

    def driver_branch_info(self, driver: str) -> DriverBranch | None:
        """The branch row for a driver version (exact branch, else the closest older branch).

        None for a branch newer than every branch the matrix knows: what such a driver
        reports is not known, and mapping it to the newest known branch would pass silently."""
        try:
            branch = driver_branch(driver.strip().lstrip("Rr"))
        except VersionSyntaxError:
            return None
        rows = self._section("driver_branches")
        if rows and branch > max(row["branch"] for row in rows):
            return None
        best: Mapping[str, Any] | None = None
        for row in rows:
            if row["branch"] <= branch and (best is None or row["branch"] > best["branch"]):
                best = row
        if best is None:
            return None
        return DriverBranch(best["branch"], best["max_cuda"], best["source"], _uncertain(best))

    def cuda_for_driver(self, driver: str) -> str | None:
        """The CUDA version a driver reports (``"12.2"`` for ``535.104.05``), by branch."""
        info = self.driver_branch_info(driver)
        return info.max_cuda if info else None

    def age_notice(self, today: Any = None, max_days: int = 183) -> str | None:
        """A notice when the matrix data is more than six months old (its ``data_version`` date):
        NVIDIA releases since then are unknown to it, so newer CUDA, drivers and toolkits
        come out as "could not judge"."""
        import datetime as _dt

        try:
            made = _dt.date.fromisoformat(str(self.version))
        except ValueError:
            return None
        today = today or _dt.date.today()
        age = (today - made).days
        if age <= max_days:
            return None
        return (f"the compatibility matrix {self.version} is {age} days old (more than six months): CUDA releases, "
                "driver branches and toolkit releases since then are unknown to it and are reported as "
                "'could not judge'; upgrade imagelint or pass a newer --matrix")

    def newest_driver_branch(self) -> int | None:
        return max((row["branch"] for row in self._section("driver_branches")), default=None)

    def newest_cuda_release(self) -> str | None:
        """The highest CUDA version the matrix knows (any release kind)."""
        versions = [row["version"] for row in self._section("cuda_releases")]
        best = None
        for v in versions:
            if best is None or compare_versions(v, best) > 0:
                best = v
        return best

    def driver_lifecycle(self, branch: int) -> Mapping[str, Any] | None:
        for row in self._section("driver_lifecycle"):
            if row["branch"] == branch:
                return dict(row)
        return None

    # --- forward compatibility ---------------------------------------------------------------
    def forward_compat(self, cuda_version: str) -> ForwardCompat | None:
        wanted = _cuda_parts(cuda_version)
        if wanted is None:
            return None
        mm = cuda_series(wanted)
        brands = [r for r in self._section("forward_compat_brands") if r["eligible"]]
        for row in self._section("forward_compat"):
            if cuda_series(row["cuda"]) == mm:
                return ForwardCompat(
                    row["package"], row["cuda"], tuple(row["compatible_branches"]),
                    tuple(row["not_needed_branches"]), tuple(row["incompatible_branches"]),
                    tuple(row["eligible_kinds"]), tuple(r["brand"] for r in brands),
                    any(_uncertain(r) for r in brands) or not brands, row["source"], _uncertain(row),
                )
        return None

    # --- GPUs ----------------------------------------------------------------------------------
    def gpus(self) -> list[GpuProduct]:
        return [self._gpu(r) for r in self._section("gpus")]

    @staticmethod
    def _gpu(row: Mapping[str, Any]) -> GpuProduct:
        return GpuProduct(
            row["name"], tuple(row["aliases"]), row["compute_capability"], row["family"], row["brand"],
            row["brand_confidence"] == "uncertain", row["kind"], row["datacenter"], row["source"], _uncertain(row),
            row.get("driver_stack"), row.get("tegra_last_branch"),
        )

    def gpu(self, name: str) -> GpuProduct | None:
        """Look a GPU up by product name or alias, ignoring case and separators
        (``H100``, ``NVIDIA-H100-80GB-HBM3``, ``Tesla-T4``, ``t4``, a GFD label with ``-SHARED``)."""
        key = _gpu_key(name)
        row = self._gpu_rows_by_key().get(key) if key else None
        return self._gpu(row) if row is not None else None

    def search_gpus(self, text: str) -> GpuSearch:
        """Exact name/alias first, so ``H20`` is the H20 and not every name containing "h20"; a
        substring over names, aliases, family, brand and compute capability second; near misses
        of a name or alias last."""
        exact = self.gpu(text)
        if exact is not None:
            return GpuSearch(exact, (exact,), ())
        wanted = text.strip().lower()
        matches = tuple(
            self._gpu(r) for r in self._section("gpus")
            if wanted and any(wanted in str(v).lower()
                              for v in (r["name"], r["compute_capability"], r["family"], r["brand"], *r["aliases"]))
        )
        return GpuSearch(None, matches, () if matches else self.gpu_suggestions(text))

    def gpu_suggestions(self, text: str, limit: int = 3) -> tuple[str, ...]:
        """Product names whose name or an alias nearly spells ``text`` (closest first)."""
        import difflib

        key = _gpu_key(text)
        index = self._gpu_rows_by_key()
        names: list[str] = []
        for close in difflib.get_close_matches(key, list(index), n=limit * 3, cutoff=0.6) if key else ():
            name = index[close]["name"]
            if name not in names:
                names.append(name)
        return tuple(names[:limit])

    def _gpu_rows_by_key(self) -> dict[str, Mapping[str, Any]]:
        """Each name's and alias's key -> the first row that has it (built on first use: a check
        looks GPUs up hundreds of times, and keying every name each time was most of it)."""
        index = self.__dict__.get("_gpu_by_key")
        if index is None:
            index = {}
            for row in self._section("gpus"):
                for n in (row["name"], *row["aliases"]):
                    index.setdefault(_gpu_key(n), row)
            self.__dict__["_gpu_by_key"] = index  # beside the frozen fields: not compared, not shown
        return index

    # --- NGC ----------------------------------------------------------------------------------
    def ngc_image(self, repository: str, tag: str) -> NgcImage | None:
        repo = _ngc_repo(repository)
        tag = tag.strip()
        candidates = [r for r in self._section("ngc_images") if _ngc_repo(r["repository"]) == repo]
        row = next((r for r in candidates if r["tag"] == tag), None)
        monthly = _NGC_MONTHLY_TAG.match(tag)  # "23.10-py3-igpu", NeMo's "26.02.00": the YY.MM release
        tag_release = monthly.group(1) if monthly else tag.split("-", 1)[0]
        if row is None:
            row = next((r for r in candidates if r["release"] == tag_release), None)
        release = row["release"] if row is not None else tag_release
        rel = next((r for r in self._section("ngc_releases") if r["release"] == release
                    and repo in {_ngc_repo(x) for x in r["repositories"]}), None)
        if rel is None and row is not None:
            # An image row of a monthly release: the release's driver requirements and built
            # architectures belong to its CUDA base, whichever framework's notes stated them.
            rel = next((r for r in self._section("ngc_releases") if r["release"] == release), None)
        drivers = (tuple(rel.get("datacenter_compat_drivers") or ()), rel.get("driver_requirements"),
                   rel.get("driver_requirements_source"), bool(rel.get("drivers_defer_to_forward_compat")),
                   rel.get("min_compute_capability"), rel.get("compute_capability_source")
                   ) if rel is not None else ((), None, None, False, None, None)
        if row is None:  # a framework of the monthly cadence: the release's CUDA
            if rel is None:
                return None
            return NgcImage(f"nvcr.io/{repo}", tag, release, rel["cuda"], None, rel.get("min_driver_branch"),
                            rel["source"], _uncertain(rel), *drivers)
        return NgcImage(
            row["repository"], row["tag"], row["release"], row["cuda"], row.get("framework_version"),
            row.get("min_driver_branch"), row["source"], _uncertain(row), *drivers,
        )

    def image_platforms(self, repository: str) -> ImagePlatforms | None:
        """The fixed platforms of ``repository`` (``nvcr.io/nvidia/l4t-jetpack``), exact match."""
        wanted = repository.strip().lower()
        for r in self._section("image_platforms"):
            if r["repository"].lower() == wanted:
                return ImagePlatforms(r["repository"], tuple(r["platforms"]), r["cuda_from"], r["source"], _uncertain(r))
        return None

    def jetson_release(self, l4t: str) -> JetsonRelease | None:
        """The JetPack and CUDA of an L4T release ("36.4", "r36.4.0": major.minor is what counts)."""
        parts = l4t.strip().lstrip("rR").split(".")
        if len(parts) < 2 or not all(is_digits(p) for p in parts[:2]):
            return None
        key = f"{int(parts[0])}.{int(parts[1])}"
        for r in self._section("jetson_releases"):
            if r["l4t"] == key:
                return JetsonRelease(r["l4t"], r["jetpack"], r["cuda"], r["source"], _uncertain(r))
        return None

    def jetson_images(self) -> tuple[tuple[str, str, str, bool], ...]:
        """(repository glob, tag regex, source, uncertain) of images built only for Jetson's iGPU."""
        return tuple((r["repository"], r["pattern"], r["source"], _uncertain(r)) for r in self._section("jetson_images"))

    def image_cuda_tags(self) -> tuple[tuple[str, str, str], ...]:
        """(repository glob, tag regex, source) of image tags that state their CUDA version."""
        return tuple((r["repository"], r["pattern"], r["source"]) for r in self._section("image_cuda_tags"))

    def dra_device_classes(self) -> dict[str, str]:
        """NVIDIA DRA driver DeviceClass name → what a claim of it gives (gpu, mig, vfio, imex)."""
        return {r["name"]: r["device"] for r in self._section("dra_device_classes")}

    # --- container toolkit --------------------------------------------------------------------
    def toolkit_features(self, version: str) -> list[ToolkitFeature]:
        """Features (rows of ``toolkit_features``) present in a toolkit version."""
        key = _tool_key(version)
        if key is None:
            return []
        return [
            ToolkitFeature(r["name"], r["since"], r["description"], r["source"], _uncertain(r))
            for r in self._section("toolkit_features")
            if (since := _tool_key(r["since"])) is not None and since <= key
        ]

    def toolkit_has(self, version: str, feature: str) -> bool:
        return any(f.name == feature for f in self.toolkit_features(version))

    def toolkit_default_runtime_mode(self, version: str) -> str:
        """What ``nvidia-container-runtime`` mode ``auto`` resolves to on an NVML (x86/dGPU) host
        for this toolkit version: ``legacy`` before 1.18.0, ``jit-cdi`` from 1.18.0."""
        mode = "legacy"
        best: tuple[int, ...] = ()
        for feat in self._section("toolkit_features"):
            since = _tool_key(feat["since"])
            if feat.get("default_runtime_mode") and since is not None:
                key = _tool_key(version)
                if key is not None and since <= key and since >= best:
                    mode, best = feat["default_runtime_mode"], since
        return mode

    def toolkit(self, version: str) -> ToolkitRelease | None:
        key = _tool_key(version)
        for row in self._section("toolkit_releases"):
            if key is not None and _tool_key(row["version"]) == key:
                return ToolkitRelease(
                    _strip_v(row["version"]), row["date"], self.toolkit_default_runtime_mode(row["version"]),
                    tuple(f.name for f in self.toolkit_features(row["version"])), row.get("notable"),
                    row["source"], _uncertain(row),
                )
        return None

    # --- device plugin ------------------------------------------------------------------------
    def device_plugin(self, version: str) -> DevicePluginRelease | None:
        key = _tool_key(version)
        for row in self._section("device_plugin_releases"):
            if key is not None and _tool_key(row["version"]) == key:
                features = tuple(
                    f["name"] for f in self._section("device_plugin_features")
                    if (_tool_key(f["since"]) or (0,)) <= key
                )
                return DevicePluginRelease(
                    _strip_v(row["version"]), row["date"], features, row.get("notable"), row["source"], _uncertain(row)
                )
        return None

    def device_plugin_requirement(self, name: str) -> str | None:
        for row in self._section("device_plugin_requirements"):
            if row["name"] == name:
                return row["value"]
        return None

    # --- GPU Operator -------------------------------------------------------------------------
    def gpu_operator(self, version: str) -> GpuOperatorRelease | None:
        key = _tool_key(version)
        for row in self._section("gpu_operator_releases"):
            if key is not None and _tool_key(row["version"]) == key:
                return GpuOperatorRelease(
                    _strip_v(row["version"]), tuple(row["drivers"]), row.get("default_driver"),
                    tuple(row.get("recommended_drivers", ())), row["container_toolkit"], row["device_plugin"],
                    row.get("gfd"), row.get("dcgm"), row.get("dcgm_exporter"), row.get("nfd"),
                    row.get("mig_manager"), row.get("driver_manager"), row["source"], _uncertain(row),
                    tuple(row.get("affected_by", ())),
                )
        return None

    # --- official CUDA images ---------------------------------------------------------------
    def cuda_image(self, version: str, arch: str = "amd64", flavor: str | None = None) -> CudaImageEnv | None:
        """The official ``nvidia/cuda:<version>-<flavor>-...`` image's env, exact version only.

        ``arch`` is amd64 or arm64 (``x86_64``/``aarch64``/``linux/arm64`` accepted); ``flavor``
        None or "base" is the base image, else its chain (devel = runtime + devel's additions).
        None when the matrix has no row for that exact version/arch, or the flavor is unknown.
        """
        wanted_arch = _image_arch(arch)
        text = _strip_v(version)
        if wanted_arch is None or not is_numeric_version(text):
            return None
        rows = [r for r in self._section("cuda_image_env") if r["version"] == text and r["flavor"] == "base"]
        base = next((r for r in rows if r["arch"] == wanted_arch), None) or next(
            (r for r in rows if r["arch"] == "any"), None
        )
        if base is None:
            return None
        chain = self._flavor_chain(re.sub(r"^cudnn\d*-", "cudnn-", (flavor or "base").strip().lower()))
        if chain is None:
            return None
        env = _env_map(base["env"])
        for row in chain:
            env.update(_env_map(row["env"]))
        return CudaImageEnv(
            base["version"], base["arch"], flavor or "base", base.get("os"), MappingProxyType(env),
            (base["source"], *(r["source"] for r in chain)), _uncertain(base) or any(_uncertain(r) for r in chain),
        )

    def cuda_image_env(self, version: str, arch: str = "amd64", flavor: str | None = None) -> Mapping[str, str] | None:
        """Just the env of ``cuda_image`` (what the Dockerfile linter merges under a FROM line)."""
        image = self.cuda_image(version, arch, flavor)
        return image.env if image is not None else None

    def _flavor_chain(self, flavor: str) -> list[Mapping[str, Any]] | None:
        """Flavor rows from the first above base down to ``flavor`` (empty for base); None if unknown."""
        if flavor == "base":
            return []
        by_name = {r["flavor"]: r for r in self._section("cuda_image_flavors")}
        chain: list[Mapping[str, Any]] = []
        seen: set[str] = set()
        current: str | None = flavor
        while current and current != "base":
            row = by_name.get(current)
            if row is None or current in seen:  # unknown flavor, or a parent loop in an overlay
                return None
            seen.add(current)
            chain.append(row)
            current = row.get("parent")
        return chain[::-1]

    # --- device plugin resource naming --------------------------------------------------------
    def device_plugin_naming(self) -> DevicePluginNaming | None:
        return naming_from_rows(self._section("device_plugin_resource_names"))

    # --- PTX ISA ------------------------------------------------------------------------------
    def ptx_isa(self, version: str) -> PtxIsaVersion | None:
        """``"8.4" -> PtxIsaVersion("8.4", "12.4", ...)``: the first CUDA that handles that PTX ISA."""
        text = _strip_v(version)
        if not is_numeric_version(text):
            return None
        for row in self._section("ptx_isa_versions"):
            if compare_versions(row["ptx_isa"], text) == 0:
                return PtxIsaVersion(row["ptx_isa"], row["min_cuda"], row["source"], _uncertain(row))
        return None

    def newest_ptx_isa_for_cuda(self, cuda_version: str) -> PtxIsaVersion | None:
        """The newest PTX ISA that CUDA ``cuda_version``'s compiler handles: a driver reporting
        that CUDA version JIT-compiles PTX up to it (``"12.2"`` -> 8.2); None when unknown."""
        wanted = _cuda_parts(cuda_version)
        if wanted is None or "." not in wanted:
            return None  # a major alone ("12") does not say which ISA
        mm = cuda_series(wanted)
        best: Mapping[str, Any] | None = None
        for row in self._section("ptx_isa_versions"):
            if compare_versions(row["min_cuda"], mm) <= 0 and (
                best is None or compare_versions(row["ptx_isa"], best["ptx_isa"]) > 0
            ):
                best = row
        if best is None:
            return None
        return PtxIsaVersion(best["ptx_isa"], best["min_cuda"], best["source"], _uncertain(best))

    def newest_known_ptx_isa(self) -> PtxIsaVersion | None:
        """The newest PTX ISA the matrix knows (an ISA beyond it is newer than the matrix)."""
        rows = self._section("ptx_isa_versions")
        best = max(rows, key=lambda r: tuple(int(p) for p in r["ptx_isa"].split(".")), default=None)
        return None if best is None else PtxIsaVersion(best["ptx_isa"], best["min_cuda"], best["source"],
                                                       _uncertain(best))

    # --- architecture names in build settings -------------------------------------------------
    def gpu_arch_names(self, tool: str = "pytorch") -> tuple[tuple[str, str], ...]:
        """(name, expansion) pairs a build tool expands in its arch list, combined names first
        ("Ampere+Tegra" before "Ampere": PyTorch replaces them as text, in this order)."""
        rows = [(r["name"], r["expands_to"]) for r in self._section("gpu_arch_names") if r["tool"] == tool]
        return tuple(sorted(rows, key=lambda r: ("+" not in r[0], rows.index(r))))

    # --- names NVIDIA software and images use -------------------------------------------------
    def nvidia_name(self, name: str) -> NvidiaName | None:
        row = next((r for r in self._section("nvidia_names") if r["name"] == name), None)
        return name_from_row(row) if row is not None else None


_NGC_MONTHLY_TAG = lazy_pattern(r"^([0-9]{2}\.[0-9]{2})(?:[.-]|$)")


def _ngc_repo(repository: str) -> str:
    repo = repository.strip().lower()
    for prefix in ("nvcr.io/",):
        if repo.startswith(prefix):
            repo = repo[len(prefix):]
    return repo


__all__ = [
    "CudaImageEnv",
    "CudaRelease",
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
    "ToolkitFeature",
    "ToolkitRelease",
    "name_from_row",
    "naming_from_rows",
]


@functools.lru_cache(maxsize=256)
def _cuda_release_of(matrix: Matrix, version: str) -> CudaRelease | None:
    # A walk of the release list with a version comparison per row: asked once per result with a
    # CUDA version (every pod of a manifest stream asks again for the same few versions).
    return matrix._find_cuda_release(version)
