"""What the matrix answers about CUDA releases and drivers: driver floors, branches and their
lifecycle, forward compatibility, PTX ISA versions.
"""

from __future__ import annotations

import functools
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from imagelint.matrix.answers import (
    CudaRelease,
    DriverBranch,
    DriverFloor,
    DriverGpuSupport,
    DriverLifecycle,
    row_uncertain,
)
from imagelint.matrix.rowstore import (
    RowStore,
    _cuda_parts,
    _strip_v,
)
from imagelint.matrix.versions import (
    VersionSyntaxError,
    compare_versions,
    cuda_series,
    driver_branch,
    is_numeric_version,
)

if TYPE_CHECKING:
    from imagelint.matrix.answers.cuda import (
        ForwardCompat,
        ForwardCompatBrand,
        MinorVersionCompat,
        PtxIsaVersion,
    )


class CudaQueries(RowStore):
    """What the matrix answers about CUDA releases and drivers: driver floors, branches and their"""

    # --- CUDA toolkit -> driver ---------------------------------------------------------------
    def cuda_releases(self) -> list[CudaRelease]:
        return [self._cuda(r) for r in self._section("cuda_releases")]

    @staticmethod
    def _cuda(row: Mapping[str, Any]) -> CudaRelease:
        return CudaRelease(
            row["version"], row["label"], row["release_kind"], row["min_driver"],
            row.get("min_driver_windows"), row["source"], row_uncertain(row),
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
        from imagelint.matrix.answers.cuda import MinorVersionCompat

        for row in self._section("minor_version_compat"):
            if row["cuda_major"] == cuda_major:
                return MinorVersionCompat(
                    row["cuda_major"], row["min_driver"], row["source"], row.get("below_branch"), row_uncertain(row)
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
        return DriverBranch(best["branch"], best["max_cuda"], best["source"], row_uncertain(best))

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

    def driver_branches(self) -> tuple[DriverBranch, ...]:
        """Every driver branch the matrix knows, oldest first."""
        rows = sorted(self._section("driver_branches"), key=lambda r: r["branch"])
        return tuple(DriverBranch(r["branch"], r["max_cuda"], r["source"], row_uncertain(r)) for r in rows)

    def driver_lifecycles(self) -> tuple[DriverLifecycle, ...]:
        """The lifecycle of every branch the matrix has one for, oldest first."""
        rows = sorted(self._section("driver_lifecycle"), key=lambda r: r["branch"])
        return tuple(DriverLifecycle(r["branch"], r["designation"], r["eol"], r.get("eol_date"), r["source"],
                                     row_uncertain(r)) for r in rows)

    def driver_lifecycle(self, branch: int) -> DriverLifecycle | None:
        return next((life for life in self.driver_lifecycles() if life.branch == branch), None)

    def driver_gpu_support(self, compute_capability: str) -> DriverGpuSupport | None:
        """The driver branches that drive GPUs of ``compute_capability`` (``8.0``), or None."""
        for r in self._section("driver_gpu_support"):
            if compute_capability in r["compute_capabilities"]:
                return DriverGpuSupport(r["architecture"], tuple(r["compute_capabilities"]), r.get("first_branch"),
                                        r.get("last_branch"), r["source"], row_uncertain(r))
        return None

    def forward_compat_brand(self, brand: str) -> ForwardCompatBrand | None:
        """Whether the compat library takes GPUs of NVML brand ``brand`` (any case), or None."""
        from imagelint.matrix.answers.cuda import ForwardCompatBrand

        wanted = brand.lower()
        for r in self._section("forward_compat_brands"):
            if r["brand"].lower() == wanted:
                return ForwardCompatBrand(r["brand"], bool(r["eligible"]), r["source"], row_uncertain(r))
        return None

    # --- forward compatibility ---------------------------------------------------------------
    def forward_compat(self, cuda_version: str) -> ForwardCompat | None:
        from imagelint.matrix.answers.cuda import ForwardCompat

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
                    any(row_uncertain(r) for r in brands) or not brands, row["source"], row_uncertain(row),
                )
        return None

    # --- PTX ISA ------------------------------------------------------------------------------
    def ptx_isa(self, version: str) -> PtxIsaVersion | None:
        """``"8.4" -> PtxIsaVersion("8.4", "12.4", ...)``: the first CUDA that handles that PTX ISA."""
        from imagelint.matrix.answers.cuda import PtxIsaVersion

        text = _strip_v(version)
        if not is_numeric_version(text):
            return None
        for row in self._section("ptx_isa_versions"):
            if compare_versions(row["ptx_isa"], text) == 0:
                return PtxIsaVersion(row["ptx_isa"], row["min_cuda"], row["source"], row_uncertain(row))
        return None

    def newest_ptx_isa_for_cuda(self, cuda_version: str) -> PtxIsaVersion | None:
        """The newest PTX ISA that CUDA ``cuda_version``'s compiler handles: a driver reporting
        that CUDA version JIT-compiles PTX up to it (``"12.2"`` -> 8.2); None when unknown."""
        from imagelint.matrix.answers.cuda import PtxIsaVersion

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
        return PtxIsaVersion(best["ptx_isa"], best["min_cuda"], best["source"], row_uncertain(best))

    def newest_known_ptx_isa(self) -> PtxIsaVersion | None:
        """The newest PTX ISA the matrix knows (an ISA beyond it is newer than the matrix)."""
        from imagelint.matrix.answers.cuda import PtxIsaVersion

        rows = self._section("ptx_isa_versions")
        best = max(rows, key=lambda r: tuple(int(p) for p in r["ptx_isa"].split(".")), default=None)
        return None if best is None else PtxIsaVersion(best["ptx_isa"], best["min_cuda"], best["source"],
                                                       row_uncertain(best))


@functools.lru_cache(maxsize=256)
def _cuda_release_of(matrix: CudaQueries, version: str) -> CudaRelease | None:
    # A walk of the release list with a version comparison per row: asked once per result with a
    # CUDA version (every pod of a manifest stream asks again for the same few versions).
    return matrix._find_cuda_release(version)
