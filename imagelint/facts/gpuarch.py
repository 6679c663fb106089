"""Which compiled GPU code runs on which GPU: SASS and PTX targets against a compute capability.

The targets come from fatbin headers (``imagelint.facts.fatbin``) or, as secondary
evidence, from build settings that name architectures (``imagelint.facts.archlist``).

Compatibility (CUDA Programming Guide, "Compute Capabilities"; nvidia-facts.md §9):
SASS ``sm_XY`` runs on compute capability X.Z when the major matches and Z >= Y;
``sm_XYa`` only on exactly X.Y; ``sm_XYf`` on the same major with Z >= Y. PTX
``compute_XY`` is JIT-compiled by the driver for any CC >= X.Y (a driver new enough for
its PTX ISA version); ``compute_XYa`` only for exactly X.Y; ``compute_XYf`` for the same
major with Z >= Y. These are ISA rules, not product data, so they live here.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import TYPE_CHECKING

from imagelint.lazyre import lazy_pattern
from imagelint.versions import version_key

if TYPE_CHECKING:
    from imagelint.matrix.model import Matrix

# --- what runs where ---------------------------------------------------------------------

_TARGET = lazy_pattern(r"^(sm|compute)_(\d{2,3})([af]?)$")


@dataclass(frozen=True, order=True)
class GpuTarget:
    """A compiled target: ``sm_86`` (SASS) or ``compute_90a`` (PTX)."""

    major: int
    minor: int
    variant: str  # "", "a" (arch-specific), "f" (family-specific)
    ptx: bool

    @classmethod
    def parse(cls, name: str) -> GpuTarget | None:
        m = _TARGET.match(name.strip())
        if m is None:
            return None
        arch = int(m.group(2))
        return cls(arch // 10, arch % 10, m.group(3), m.group(1) == "compute")

    def __str__(self) -> str:
        return f"{'compute' if self.ptx else 'sm'}_{self.major}{self.minor}{self.variant}"

    def runs_on(self, cc: tuple[int, int]) -> bool:
        """Whether this SASS runs, or this PTX can be JIT-compiled, on compute capability ``cc``."""
        major, minor = cc
        if self.variant == "a":
            return (major, minor) == (self.major, self.minor)
        if self.ptx and self.variant == "":
            return (major, minor) >= (self.major, self.minor)
        return major == self.major and minor >= self.minor  # SASS, and "f" PTX: the same family


@dataclass(frozen=True)
class CodeFit:
    """How a set of compiled targets meets one compute capability."""

    sass: tuple[str, ...]  # SASS that runs as is
    ptx: tuple[str, ...]  # PTX the driver can JIT-compile

    @property
    def runs(self) -> bool:
        return bool(self.sass or self.ptx)

    @property
    def needs_jit(self) -> bool:
        return not self.sass and bool(self.ptx)


def code_fit(sass: Iterable[str], ptx: Iterable[str], cc: tuple[int, int]) -> CodeFit:
    def fitting(names: Iterable[str]) -> tuple[str, ...]:
        out = []
        for name in names:
            t = GpuTarget.parse(name)
            if t is not None and t.runs_on(cc):
                out.append(name)
        return tuple(out)

    return CodeFit(fitting(sass), fitting(ptx))


# --- one library on one GPU under one driver -------------------------------------------

# How a library's kernels fare on a GPU (``KernelVerdict.outcome``).
SASS_RUNS = "sass"  # SASS for the GPU: runs as shipped
JIT_RUNS = "jit"  # no SASS; PTX the driver's JIT compiles at first launch
JIT_UNJUDGED = "jit-unknown-driver"  # only PTX fits; whether the driver's JIT knows its ISA is not known
NO_KERNEL = "no-kernel"  # neither: cudaErrorNoKernelImageForDevice
PTX_TOO_NEW = "ptx-too-new"  # only PTX fits and it is newer than the driver's JIT: cudaErrorUnsupportedPtxVersion

ERR_NO_KERNEL = "no kernel image is available for execution on the device"
ERR_PTX_TOO_NEW = "the provided PTX was compiled with an unsupported toolchain"


@dataclass(frozen=True)
class JitLimit:
    """The newest PTX ISA a driver's JIT compiler handles, and why we think so.

    From the matrix: the driver's branch -> the CUDA version it reports -> the newest ISA
    that CUDA release handles (``Matrix.newest_ptx_isa_for_cuda``). With a forward-compat
    libcuda loaded, its package's CUDA version decides instead (its own JIT compiler).
    ``matrix_newest`` is the newest ISA the matrix knows: a PTX ISA beyond it cannot be
    judged (the matrix is older than the library)."""

    ptx_isa: str  # "8.2"
    cuda: str  # "12.2": the CUDA version whose JIT that is
    source: str = ""
    uncertain: bool = False
    matrix_newest: str | None = None


@dataclass(frozen=True)
class KernelVerdict:
    """Can a library's code run on compute capability ``cc`` under a driver: the answer and why."""

    outcome: str
    cc: tuple[int, int]
    sass: tuple[str, ...]  # SASS that runs on the GPU
    ptx: tuple[str, ...]  # PTX the GPU can take (before the driver's ISA is considered)
    ptx_isa: str | None  # the newest ISA among ``ptx`` (what the JIT must handle), when known
    jit: JitLimit | None
    reason: str
    error: str | None = None  # the CUDA error string a launch fails with

    @property
    def runs(self) -> bool:
        return self.outcome in (SASS_RUNS, JIT_RUNS, JIT_UNJUDGED)


def judge_kernels(
    sass: Iterable[str],
    ptx: Iterable[str],
    cc: tuple[int, int],
    jit: JitLimit | None,
    ptx_isa: Iterable[tuple[str, str]] = (),
) -> KernelVerdict:
    """Whether code with these SASS/PTX targets (and PTX ISA versions) runs on ``cc``.

    NVIDIA's rules (CUDA Programming Guide, "Compute Capabilities" and "Binary/PTX
    compatibility"; CUDA Compatibility guide): SASS wins when one fits; else the driver
    JIT-compiles a fitting PTX, which works only when its JIT knows the PTX's ISA
    version ("the provided PTX was compiled with an unsupported toolchain" otherwise);
    with neither, "no kernel image is available". The runtime picks the best PTX, so the
    oldest fitting ISA is what must be understood: JIT fails only if every fitting PTX
    is too new.
    """
    fit = code_fit(sass, ptx, cc)
    isa_of = dict(ptx_isa)
    where = f"{cc[0]}.{cc[1]}"
    if fit.sass:
        return KernelVerdict(SASS_RUNS, cc, fit.sass, fit.ptx, None, jit, f"SASS {', '.join(fit.sass)} runs on {where}")
    if not fit.ptx:
        return KernelVerdict(NO_KERNEL, cc, (), (), None, jit, f"no SASS for {where} and no PTX that can be "
                             f"JIT-compiled for it (needs {needed_for(cc)})", ERR_NO_KERNEL)
    isas = [isa_of[p] for p in fit.ptx if p in isa_of and version_key(isa_of[p])]
    known_all = len(isas) == len(fit.ptx)
    oldest = min(isas, key=version_key) if isas else None
    shown = f"PTX {', '.join(fit.ptx)}" + (f" (ISA {oldest})" if oldest else "")
    if jit is None or oldest is None:
        missing = "the driver's PTX JIT version is not known" if jit is None else "the PTX ISA version is not known"
        return KernelVerdict(JIT_UNJUDGED, cc, (), fit.ptx, oldest, jit,
                             f"no SASS for {where}; {shown} must be JIT-compiled and {missing}")
    if not known_all and version_key(oldest) > version_key(jit.ptx_isa):
        return KernelVerdict(JIT_UNJUDGED, cc, (), fit.ptx, oldest, jit,
                             f"no SASS for {where}; {shown} must be JIT-compiled and the ISA of some of it is not known")
    if version_key(oldest) <= version_key(jit.ptx_isa):
        return KernelVerdict(JIT_RUNS, cc, (), fit.ptx, oldest, jit,
                             f"no SASS for {where}; the driver (CUDA {jit.cuda}, PTX ISA up to {jit.ptx_isa}) "
                             f"JIT-compiles {shown} at first launch")
    if jit.matrix_newest is not None and version_key(oldest) > version_key(jit.matrix_newest) and (
            version_key(jit.ptx_isa) >= version_key(jit.matrix_newest)):
        # Both the PTX and the driver are at or past what the matrix knows: cannot tell.
        return KernelVerdict(JIT_UNJUDGED, cc, (), fit.ptx, oldest, jit,
                             f"no SASS for {where}; {shown} is newer than any PTX ISA the matrix knows")
    return KernelVerdict(PTX_TOO_NEW, cc, (), fit.ptx, oldest, jit,
                         f"no SASS for {where}; {shown} is newer than the driver's JIT compiler handles "
                         f"(CUDA {jit.cuda}: PTX ISA up to {jit.ptx_isa})", ERR_PTX_TOO_NEW)


def jit_limit_for_cuda(matrix: Matrix | None, cuda: str | None) -> JitLimit | None:
    """The JIT limit of a libcuda that reports CUDA ``cuda`` (a host driver's, or a forward-compat
    package's), from the matrix's ``ptx_isa_versions``; None when the matrix cannot say."""
    if not cuda or matrix is None:
        return None
    row = matrix.newest_ptx_isa_for_cuda(cuda)
    if row is None:
        return None
    newest = matrix.newest_known_ptx_isa()
    return JitLimit(row.ptx_isa, cuda, row.source, row.uncertain, newest.ptx_isa if newest else None)


def jit_limit_for_driver(matrix: Matrix | None, driver: str | None) -> JitLimit | None:
    """The JIT limit of a host driver (``535.104.05`` or a bare branch ``535``): its branch's CUDA."""
    if not driver or matrix is None:
        return None
    return jit_limit_for_cuda(matrix, matrix.cuda_for_driver(driver))


def needed_for(cc: tuple[int, int]) -> str:
    """What would run on ``cc``: ``sm_90 SASS or PTX <= compute_90``; ``sm_80..sm_86 SASS or ...``."""
    major, minor = cc
    sass = f"sm_{major}{minor}" if minor == 0 else f"sm_{major}0..sm_{major}{minor}"
    return f"{sass} SASS or PTX <= compute_{major}{minor}"
