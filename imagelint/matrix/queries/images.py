"""What the matrix answers about images: NGC releases, official CUDA images' env, Jetson
releases, platforms, CUDA versions tags name.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from types import MappingProxyType
from typing import TYPE_CHECKING, Any

from imagelint.lazyre import lazy_pattern
from imagelint.matrix.answers import row_uncertain
from imagelint.matrix.rowstore import (
    RowStore,
    _env_map,
    _image_arch,
    _strip_v,
)
from imagelint.matrix.versions import (
    is_numeric_version,
)
from imagelint.untrusted import is_digits

if TYPE_CHECKING:
    from imagelint.matrix.answers.images import (
        CudaImageEnv,
        ImagePlatforms,
        JetsonRelease,
        NgcImage,
    )


class ImageQueries(RowStore):
    """What the matrix answers about images: NGC releases, official CUDA images' env, Jetson"""

    # --- NGC ----------------------------------------------------------------------------------
    def ngc_image(self, repository: str, tag: str) -> NgcImage | None:
        from imagelint.matrix.answers.images import NgcImage

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
                            rel["source"], row_uncertain(rel), *drivers)
        return NgcImage(
            row["repository"], row["tag"], row["release"], row["cuda"], row.get("framework_version"),
            row.get("min_driver_branch"), row["source"], row_uncertain(row), *drivers,
        )

    def image_platforms(self, repository: str) -> ImagePlatforms | None:
        """The fixed platforms of ``repository`` (``nvcr.io/nvidia/l4t-jetpack``), exact match."""
        from imagelint.matrix.answers.images import ImagePlatforms

        wanted = repository.strip().lower()
        for r in self._section("image_platforms"):
            if r["repository"].lower() == wanted:
                return ImagePlatforms(r["repository"], tuple(r["platforms"]), r["cuda_from"], r["source"], row_uncertain(r))
        return None

    def jetson_release(self, l4t: str) -> JetsonRelease | None:
        """The JetPack and CUDA of an L4T release ("36.4", "r36.4.0": major.minor is what counts)."""
        from imagelint.matrix.answers.images import JetsonRelease

        parts = l4t.strip().lstrip("rR").split(".")
        if len(parts) < 2 or not all(is_digits(p) for p in parts[:2]):
            return None
        key = f"{int(parts[0])}.{int(parts[1])}"
        for r in self._section("jetson_releases"):
            if r["l4t"] == key:
                return JetsonRelease(r["l4t"], r["jetpack"], r["cuda"], r["source"], row_uncertain(r))
        return None

    def jetson_images(self) -> tuple[tuple[str, str, str, bool], ...]:
        """(repository glob, tag regex, source, uncertain) of images built only for Jetson's iGPU."""
        return tuple((r["repository"], r["pattern"], r["source"], row_uncertain(r)) for r in self._section("jetson_images"))

    def image_cuda_tags(self) -> tuple[tuple[str, str, str], ...]:
        """(repository glob, tag regex, source) of image tags that state their CUDA version."""
        return tuple((r["repository"], r["pattern"], r["source"]) for r in self._section("image_cuda_tags"))

    def dra_device_classes(self) -> dict[str, str]:
        """NVIDIA DRA driver DeviceClass name → what a claim of it gives (gpu, mig, vfio, imex)."""
        return {r["name"]: r["device"] for r in self._section("dra_device_classes")}

    # --- official CUDA images ---------------------------------------------------------------
    def cuda_image(self, version: str, arch: str = "amd64", flavor: str | None = None) -> CudaImageEnv | None:
        """The official ``nvidia/cuda:<version>-<flavor>-...`` image's env, exact version only.

        ``arch`` is amd64 or arm64 (``x86_64``/``aarch64``/``linux/arm64`` accepted); ``flavor``
        None or "base" is the base image, else its chain (devel = runtime + devel's additions).
        None when the matrix has no row for that exact version/arch, or the flavor is unknown.
        """
        from imagelint.matrix.answers.images import CudaImageEnv

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
            (base["source"], *(r["source"] for r in chain)), row_uncertain(base) or any(row_uncertain(r) for r in chain),
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


_NGC_MONTHLY_TAG = lazy_pattern(r"^([0-9]{2}\.[0-9]{2})(?:[.-]|$)")


def _ngc_repo(repository: str) -> str:
    repo = repository.strip().lower()
    for prefix in ("nvcr.io/",):
        if repo.startswith(prefix):
            repo = repo[len(prefix):]
    return repo
