"""What the image brings: the CUDA runtime that governs, and its forward-compat libcuda.

Only facts and matrix answers are combined here; NVIDIA's numbers stay in the matrix.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import TYPE_CHECKING

from imagelint.facts.model import (
    CUDA_SOURCES,
    CudaVersionEvidence,
    DriverLibrary,
    ImageFacts,
)
from imagelint.untrusted import is_digits
from imagelint.versions import major_minor, version_key

if TYPE_CHECKING:
    from imagelint.matrix.model import Matrix


def compare(a: str, b: str) -> int:
    """libnvidia-container's version compare (imported lazily: the matrix package owns it)."""
    from imagelint.matrix.versions import compare_versions

    return compare_versions(a, b)


def major(version: str) -> int | None:
    head = version.strip().lstrip("vV").split(".")[0]
    return int(head) if is_digits(head) else None


def release_version(ev: CudaVersionEvidence) -> str | None:
    """The version to look a driver floor up by: the toolkit release when the evidence
    names one to the patch (at most three components: NGC's ``12.2.2.009`` is 12.2.2),
    else major.minor; a major-only version (``libcudart.so.12``) stays the major."""
    mm = major_minor(ev.version)
    if mm is None:
        m = major(ev.version)
        return str(m) if m is not None and ev.precision == "major" else None
    if ev.precision == "patch":
        parts = ev.version.strip().lstrip("vV").split(".")
        if len(parts) >= 3 and is_digits(parts[2]):
            return f"{mm}.{int(parts[2])}"
    return mm


def _source_rank(source: str) -> int:
    return CUDA_SOURCES.index(source) if source in CUDA_SOURCES else len(CUDA_SOURCES)


@dataclass(frozen=True)
class GoverningCuda:
    """The CUDA version that sets the driver floor, and the evidence for it.

    ``major_minor`` is None for major-only evidence (``libcudart.so.12``): the floor is
    then unknown, but the major still decides minor-version and forward compatibility."""

    version: str          # release (12.4.1), major.minor (12.4) or major (12)
    major_minor: str | None
    evidence: CudaVersionEvidence

    @property
    def major(self) -> int | None:
        return major(self.version)


def cuda_runtime_evidence(facts: ImageFacts, matrix: Matrix | None = None) -> list[CudaVersionEvidence]:
    """The evidence that states a CUDA *runtime* version.

    NGC images also record the driver they were built against (``CUDA_DRIVER_VERSION``,
    component ``driver``) and their release (``NVIDIA_PYTORCH_VERSION=23.10``, component
    ``ngc-pytorch``): neither is a CUDA version. A release is translated through the
    matrix's NGC table when it knows it, and dropped otherwise (``unknown_ngc_releases``
    says which, so the verdict can say it could not judge).
    """
    out: list[CudaVersionEvidence] = []
    for ev in facts.cuda.versions:
        component = ev.component or ""
        if component == "driver":
            continue
        if component.startswith("ngc-"):
            product = component[len("ngc-"):]
            ngc = matrix.ngc_image(f"nvcr.io/nvidia/{product}", ev.version) if matrix is not None else None
            if ngc is not None and getattr(ngc, "cuda", None):
                out.append(replace(ev, version=str(ngc.cuda), precision="patch", component=f"ngc-{product} {ev.version}"))
            continue
        out.append(ev)
    return out


def unknown_ngc_releases(facts: ImageFacts, matrix: Matrix | None) -> list[CudaVersionEvidence]:
    """NGC release evidence (``NVIDIA_PYTORCH_VERSION=26.11``) the matrix cannot translate."""
    out = []
    for ev in facts.cuda.versions:
        component = ev.component or ""
        if component.startswith("ngc-") and matrix is not None:
            if matrix.ngc_image(f"nvcr.io/nvidia/{component[len('ngc-'):]}", ev.version) is None:
                out.append(ev)
    return out


def governing_cuda(facts: ImageFacts, matrix: Matrix | None = None) -> GoverningCuda | None:
    """The highest CUDA runtime the evidence shows; among equal versions, the most
    precise and most direct source (version.json before CUDA_VERSION before a label)."""
    best: tuple[tuple[int, int], int, int, CudaVersionEvidence, str, str | None] | None = None
    for ev in cuda_runtime_evidence(facts, matrix):
        rv = release_version(ev)
        if rv is None:
            continue
        mm = major_minor(ev.version)
        maj = major(rv) or 0
        mi = int(mm.split(".")[1]) if mm else -1  # major-only sorts below any minor of its major
        key = ((maj, mi), 1 if rv != mm else 0, -_source_rank(ev.source))
        if best is None or key > best[:3]:
            best = (key[0], key[1], key[2], ev, rv, mm)
    if best is None:
        return None
    return GoverningCuda(best[4], best[5], best[3])


def distinct_major_minors(facts: ImageFacts, matrix: Matrix | None = None) -> dict[str, list[CudaVersionEvidence]]:
    out: dict[str, list[CudaVersionEvidence]] = {}
    for ev in cuda_runtime_evidence(facts, matrix):
        mm = major_minor(ev.version)
        if mm:
            out.setdefault(mm, []).append(ev)
    return out


def compat_libcudas(facts: ImageFacts) -> list[DriverLibrary]:
    """Forward-compat libcuda files (not their symlinks) in the image, newest first."""
    libs = [d for d in facts.driver_libraries if d.role == "compat" and d.name.startswith("libcuda.so")]
    real = [d for d in libs if not d.is_symlink and d.version] or [d for d in libs if d.version]
    return sorted(real, key=lambda lib: version_key(lib.version or ""), reverse=True)


def compat_on_loader_path(facts: ImageFacts, lib: DriverLibrary) -> bool:
    """Whether the image itself puts this compat libcuda (or a symlink to it, such as
    ``compat/libcuda.so.1``) where the loader looks: NGC images list ``/usr/local/cuda/compat/lib``
    in ``LD_LIBRARY_PATH``."""
    if lib.on_loader_path:
        return True
    directory = lib.path.rsplit("/", 1)[0] if "/" in lib.path else ""
    return any(
        d.role == "compat" and d.on_loader_path and d.name.startswith("libcuda.so")
        and (d.path.rsplit("/", 1)[0] if "/" in d.path else "") == directory
        for d in facts.driver_libraries
    )

