"""The forward compatibility NVIDIA's own images carry, and who turns it on.

An image's files show its compat libcuda (``evidence.compat_libcudas``); a Dockerfile or a
manifest only names its base, so for ``lint`` the base says what is there:

* **NGC framework containers** (``nvcr.io/nvidia/pytorch:23.10-py3`` ...) carry the CUDA compat
  package and their entrypoint (``/opt/nvidia/nvidia_entrypoint.sh``) enables it when the host
  driver is older than the image's CUDA and the GPU supports forward compatibility. Each
  release's notes ("Driver Requirements") list the data-centre drivers, per branch, it runs on
  that way: the matrix's ``ngc_releases`` rows carry that list. Recent notes list no drivers and
  say only "requires the NVIDIA Driver release. Please see CUDA Compatibility": those defer to
  NVIDIA's forward-compatibility table for the release's CUDA (``defers_to_forward_compat``).
* **Official nvidia/cuda images** (amd64) install ``cuda-compat-X-Y`` under
  ``/usr/local/cuda-X.Y/compat``, off the loader path: the container toolkit loads it
  (``runtime``), or the image's own ``LD_LIBRARY_PATH`` does. The package's driver is the one
  its CUDA release ships (the release's floor); its host branches are the ``forward_compat`` row's.

A Dockerfile whose RUN steps take the package out again (``apt-get purge cuda-compat-*``,
``rm -rf /usr/local/cuda/compat``; ``BuildFacts.compat_removed``) builds an image without it: the
base no longer counts, and the verdict says why (``removal_note``).
"""

from __future__ import annotations

import posixpath
from dataclasses import dataclass
from typing import TYPE_CHECKING

from imagelint.deploytarget.values import DriverVersion
from imagelint.facts.known_images import NVIDIA_CUDA_REPOS, parse_image
from imagelint.facts.model import (
    DriverLibrary,
    ForwardCompatNote,
    ImageFacts,
    Provenance,
)
from imagelint.lazyre import lazy_pattern
from imagelint.untrusted import is_digits

if TYPE_CHECKING:
    from imagelint.matrix.model import Matrix

NGC_ENTRYPOINT = "/opt/nvidia/nvidia_entrypoint.sh"


@dataclass(frozen=True)
class NgcCompat:
    """An NGC framework container's forward compatibility, as its release notes state it."""

    image: str                          # "NGC pytorch 23.10"
    release: str
    drivers: tuple[DriverVersion, ...]  # lowest data-centre driver of each branch the notes list
    read: bool                          # False: the list is the nearest read release's
    source: str | None
    entrypoint_replaced: str | None     # the image's own ENTRYPOINT, when it is not NGC's
    row_uncertain: bool = False         # the matrix marks the release's row uncertain
    defers_to_table: bool = False       # the notes list no drivers: the forward-compat table decides
    row_source: str | None = None       # the source of the image's own row (its CUDA), not of the driver list

    def notes(self) -> str:
        """Whose release notes the driver list is: the image's own, or — when the matrix takes the
        release's list from another product's notes (Triton's, for every framework container of
        the release) — that product's, said as such."""
        owner = _notes_owner(self.source)
        product = self.image.split(" ")[1] if self.image.count(" ") >= 2 else ""
        if owner is None or not product or product.removesuffix("server") in owner[1]:
            return f"{self.image}'s release notes ('Driver Requirements')"
        return f"{owner[0]} {self.release}'s release notes ('Driver Requirements', which the matrix applies to {self.image})"

    def listed_for(self, branch: int) -> DriverVersion | None:
        return next((d for d in self.drivers if d.branch == branch), None)

    def listing(self) -> str:
        return ", ".join(f"R{d.branch} >= {d}" for d in self.drivers)


def removed_by_build(facts: ImageFacts, cuda: str | None) -> Provenance | None:
    """Where the Dockerfile's RUN steps take out the compat package of CUDA ``cuda`` (X.Y[.Z]) the
    base carries (``apt-get purge cuda-compat-*``, ``rm -rf /usr/local/cuda/compat``), if they do."""
    build = facts.build
    if build is None or not build.compat_removed:
        return None
    minor = ".".join((cuda or "").split(".")[:2])
    return next((where for version, where in build.compat_removed if version in ("", minor)), None)


def removal_note(facts: ImageFacts, matrix: Matrix | None) -> str | None:
    """Said with the verdict when the base carries forward compatibility and the build removes it."""
    ngc = ngc_compat(facts, matrix, after_build=False)
    base = official_base_compat(facts, matrix, after_build=False) if ngc is None else None
    ref = parse_image(facts.base.name or "")
    cuda = _ngc_cuda(facts, matrix) if ngc is not None else (ref[1].split("-", 1)[0] if base and ref else None)
    where = removed_by_build(facts, cuda) if (ngc or base) else None
    if where is None:
        return None
    carrier = ngc.image if ngc is not None else f"the official base {facts.base.name}"
    return (f"{where.describe()} removes the forward-compatibility package {carrier} carries: "
            "judged without it, on the host driver alone")


def _ngc_cuda(facts: ImageFacts, matrix: Matrix | None) -> str | None:
    ref = parse_image(facts.base.name or "")
    if ref is None or matrix is None:
        return None
    try:
        row = matrix.ngc_image(ref[0].removeprefix("nvcr.io/"), ref[1])
    except (LookupError, ValueError):
        return None
    return str(row.cuda) if row is not None and getattr(row, "cuda", None) else None


def ngc_compat(facts: ImageFacts, matrix: Matrix | None, *, after_build: bool = True) -> NgcCompat | None:
    """The NGC release the image is (or is built FROM) when its notes list forward-compat drivers
    (``after_build``: None when the Dockerfile's RUN steps remove the compat package)."""
    if matrix is None:
        return None
    if facts.kind == "image" and facts.complete and not any(
            d.role == "compat" and d.name.startswith("libcuda.so") for d in facts.driver_libraries):
        return None  # the image's files are read and hold no compat libcuda: nothing to enable
    found = None
    for ev in facts.cuda.versions:
        component = ev.component or ""
        if component.startswith("ngc-") and not component.count(" "):
            product = component[len("ngc-"):]
            found = (product, matrix.ngc_image(f"nvcr.io/nvidia/{product}", ev.version))
            break
    if found is None or found[1] is None:
        ref = parse_image(facts.base.name)
        if ref is None or not ref[0].startswith("nvcr.io/nvidia/"):
            return None
        try:
            found = (ref[0].rsplit("/", 1)[-1], matrix.ngc_image(ref[0][len("nvcr.io/"):], ref[1]))
        except (LookupError, ValueError):
            return None
    product, ngc = found
    if ngc is None:
        return None
    defers = bool(getattr(ngc, "defers_to_forward_compat", False))
    if not defers and not getattr(ngc, "datacenter_compat_drivers", ()):
        return None
    if after_build and removed_by_build(facts, str(getattr(ngc, "cuda", "") or "")) is not None:
        return None  # the build took /usr/local/cuda/compat out: the entrypoint has nothing to enable
    drivers = tuple(d for d in (DriverVersion.parse(x) for x in ngc.datacenter_compat_drivers) if d is not None)
    return NgcCompat(f"NGC {product} {ngc.release}", ngc.release, drivers, ngc.drivers_read, ngc.drivers_source,
                     _replaced_entrypoint(facts), bool(ngc.uncertain), defers_to_table=defers,
                     row_source=getattr(ngc, "source", None))


_NOTES_URL = lazy_pattern(r"docs\.nvidia\.com/deeplearning/([a-z0-9-]+)/([a-z0-9-]*)")


def _notes_owner(source: str | None) -> tuple[str, str] | None:
    """(product as people write it, the URL's path words run together) of the release-notes page
    ``source`` cites: ``.../deeplearning/triton-inference-server/release-notes/...`` ->
    ("Triton Inference Server", "tritoninferenceserverreleasenotes")."""
    found = _NOTES_URL.search(source or "")
    if found is None:
        return None
    product = found.group(1)
    words = " ".join(w.capitalize() for w in product.split("-"))
    return words, (product + found.group(2)).replace("-", "")


def _replaced_entrypoint(facts: ImageFacts) -> str | None:
    entrypoint = facts.entrypoint
    if not entrypoint or any("nvidia_entrypoint" in part for part in entrypoint):
        return None
    return " ".join(entrypoint)


def official_base_compat(facts: ImageFacts, matrix: Matrix | None, *, after_build: bool = True) -> DriverLibrary | None:
    """The cuda-compat libcuda an official ``nvidia/cuda`` base puts in the image a Dockerfile
    builds, or a manifest's or a Compose file's ``image:`` names: one image reference is one
    image whichever file names it. A read image's own files say what is there instead.
    ``after_build``: None when the Dockerfile's RUN steps remove it."""
    if matrix is None or facts.kind == "image":
        return None
    if facts.platform is not None and facts.platform.architecture not in ("amd64", ""):
        return None  # NV_CUDA_COMPAT_PACKAGE is set for the amd64 images
    ref = parse_image(facts.base.name)
    if ref is None or ref[0] not in NVIDIA_CUDA_REPOS:
        return None
    version = ref[1].split("-", 1)[0]
    parts = version.split(".")
    if len(parts) < 2 or not all(is_digits(p) for p in parts):
        return None
    if after_build and removed_by_build(facts, version) is not None:
        return None
    floor = matrix.driver_floor(version)
    fc = matrix.forward_compat(version)
    if floor is None or fc is None:
        return None
    directory = f"usr/local/cuda-{parts[0]}.{parts[1]}/compat"
    name = f"libcuda.so.{floor.min_driver}"
    searched = {posixpath.normpath(d.strip("/")) for d in facts.loader.directories}
    on_path = directory in searched or "usr/local/cuda/compat" in searched
    where = facts.base.provenance[0] if facts.base.provenance else Provenance(kind=facts.kind)
    note = ForwardCompatNote(fc.cuda, tuple(fc.host_branches), (), f"{fc.package} (official nvidia/cuda base; matrix row)")
    return DriverLibrary(name, f"{directory}/{name}", "compat", floor.min_driver, on_path, where, fwd_compat=note)


__all__ = ["NGC_ENTRYPOINT", "NgcCompat", "ngc_compat", "official_base_compat", "removal_note", "removed_by_build"]
