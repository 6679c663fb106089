"""A library's compiled GPU code cannot run on a node pool's GPU.

CUDA loads a kernel from a library's fatbin: SASS built for the GPU's
compute capability (``sm_XY`` runs on X.Z with the same major and Z >= Y;
``sm_90a``/``sm_100a`` only on exactly that GPU; ``sm_100f`` on its family),
or else PTX the driver JIT-compiles (``compute_XY`` for any GPU of compute
capability >= X.Y). With neither, every launch fails with "no kernel image is
available for execution on the device" (``cudaErrorNoKernelImageForDevice``).
The architectures come from the fatbin headers inside the image's libraries,
never from their names, and only from the fatbins the CUDA runtime loads (the
``.nv_fatbin`` section): the ``__nv_relfatbin`` copies of a relocatable-device-code
build (``nvcc -rdc=true``) are for the device linker and never run; a fatbin
array in ``.rodata``/``.ldata`` only the library itself can load
(``cuModuleLoadData``, nvJitLink: cuFFT keeps nearly all its kernels so), so when
only such code fits the GPU the finding is info, not judged further. A library that fits only
through PTX JIT is reported as info: the first launch compiles every kernel
(minutes for large libraries). The JIT works only when the driver's compiler
knows the PTX's ISA version (each CUDA release writes its own: 12.4 writes 8.4,
13.0 writes 9.0; a driver handles the ISA of the CUDA version it reports, from
the matrix's ``ptx_isa_versions``); PTX newer than that is an error, "the
provided PTX was compiled with an unsupported toolchain"
(``cudaErrorUnsupportedPtxVersion``). Minor-version compatibility does not help
here: a CUDA 12.4 PTX-only library does not run on a 535 (CUDA 12.2) driver.
The JIT is the libcuda the compatibility model (IL101's verdict) loads: the host's,
or the image's forward-compat libcuda where the runtime or the image puts it on the
loader path; when CUDA itself does not initialise on the pool, the finding says so.

When no library could be read (a Dockerfile, an image whose layers were not
read, or one with no fatbin), the build settings that name architectures are
used as secondary evidence, and said so (warning, not error):
``TORCH_CUDA_ARCH_LIST`` (``"8.0 8.6+PTX"``; names such as ``Ampere`` expand as
PyTorch expands them, from the matrix), ``CUDA_ARCH_LIST``,
``CMAKE_CUDA_ARCHITECTURES`` / ``CUDAARCHS`` (``"80;86-real"``), and nvcc's
``-gencode``/``-arch`` flags, in env, Dockerfile ``ENV``/``ARG``/``RUN`` lines
(every stage), the image's build history and its shell scripts. Without a target GPU compute capability the rule
reports (info) what the image was compiled for.

NGC framework releases (``nvcr.io/nvidia/pytorch:YY.MM-py3`` ...) are built for a set of GPU
architectures (their ``CUDA_ARCH_LIST`` / ``TORCH_CUDA_ARCH_LIST``; releases on CUDA 13 carry
nothing below Turing, 7.5: CUDA 13.0 removed Maxwell, Pascal and Volta). A ``FROM`` (or a
manifest's image) of such a release on a pool of older GPUs has no kernel image either: the
matrix's ``ngc_releases`` row gives the floor (``min_compute_capability``) and its source, and
the finding is an error where the row is documented, a warning where it is uncertain.

Remediation: rebuild the library with SASS for the pool's GPU (``-gencode
arch=compute_90,code=sm_90``) and PTX for the newest architecture
(``code=compute_90``) so that newer GPUs can JIT it, or use a build (wheel,
base image) that includes the GPU's architecture.

Anti-pattern::

    nvcc -gencode arch=compute_80,code=sm_80 -shared -o libk.so k.cu   # A100 only; H100: no kernel
    # CUDA 13 nvcc, PTX only: runs by JIT on R580+, "unsupported toolchain" on R535/R570
    nvcc -gencode arch=compute_80,code=compute_80 -shared -o libk.so k.cu

Best practice::

    nvcc -gencode arch=compute_80,code=sm_80 -gencode arch=compute_90,code=sm_90 \\
         -gencode arch=compute_90,code=compute_90 -shared -o libk.so k.cu
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import TYPE_CHECKING, Any

from imagelint.deploytarget import NodePool
from imagelint.facts.model import GpuCodeObject, Provenance
from imagelint.rules.base import (
    ERROR,
    INFO,
    NEEDS_CONFIG,
    NEEDS_FILES,
    NEEDS_GPU_CODE,
    NEEDS_TARGET,
    WARNING,
    Finding,
    FindingFactory,
    RuleContext,
)
from imagelint.rules.pools import PoolGpu, pool_gpus
from imagelint.versions import ComputeCapability

if TYPE_CHECKING:
    from imagelint.compat.verdict import Verdict
    from imagelint.facts.gpuarch import JitLimit
    from imagelint.matrix.answers.images import NgcImage
    from imagelint.matrix.model import Matrix

ID = "IL401"
NAME = "no-kernel-for-gpu"
SEVERITY = ERROR
TITLE = "No compiled GPU code for the pool's GPU architecture"
NEEDS = (NEEDS_CONFIG, NEEDS_FILES, NEEDS_TARGET, NEEDS_GPU_CODE)
REFERENCES = (
    "https://docs.nvidia.com/cuda/cuda-programming-guide/05-appendices/compute-capabilities.html",
    "https://docs.nvidia.com/cuda/cuda-compiler-driver-nvcc/index.html#gpu-compilation",
)
REMEDIATION = (
    "Rebuild the library with SASS for the GPU's architecture (-gencode arch=compute_XY,code=sm_XY) "
    "plus PTX for the newest one (code=compute_XY), or use a build that includes it."
)
# Env names that carry an arch list (the same as imagelint.facts.archlist.ENV_SETTINGS, which
# is not imported at module level to keep ``imagelint lint`` start-up light).
ARCH_ENV = ("TORCH_CUDA_ARCH_LIST", "CUDA_ARCH_LIST", "CMAKE_CUDA_ARCHITECTURES", "CUDAARCHS")

finding = FindingFactory(ID, NAME, SEVERITY, REMEDIATION)


def check(ctx: RuleContext) -> Iterator[Finding]:
    facts = ctx.facts
    if not facts.gpu_code_read:
        return  # libraries were not scanned: no pool GPU with a known compute capability to judge
    yield from _below_ngc_floor(ctx)
    code = [c for c in facts.gpu_code if c.sass or c.ptx]
    secondary = ""  # why build settings stand in for the binaries, when they do
    if not code:
        code = _from_arch_lists(ctx)
        if not code:
            return
        if facts.kind == "dockerfile":
            secondary = "a Dockerfile holds no binaries to read"
        else:
            secondary = ("no library in the image has fatbin GPU code" if facts.complete
                         else "the image's layers were not read")

    for pool in ctx.pools:
        gpus = [(g, ComputeCapability.parts_of(g.arch)) for g in pool_gpus(pool, ctx.matrix)]
        known = [(g, cc) for g, cc in gpus if cc is not None]
        if not known:
            yield _no_target_gpu(code, pool, secondary)
            continue
        verdicts = _runtime_verdicts(ctx, pool)
        for cc, labels in _by_compute_capability(known).items():
            jit, jit_note = _jit_limit(ctx.matrix, pool, verdicts.get(labels[0]))
            for obj in code:
                yield from _check_one(obj, pool, cc, labels, secondary, ctx.matrix, jit, jit_note)
    if not ctx.pools:
        yield _no_target_gpu(code, None, secondary)


def _ngc_release(ctx: RuleContext) -> NgcImage | None:
    """The NGC release row of the image's base (a Dockerfile's FROM, a manifest's image), or of
    the image itself when its env names the release (``NVIDIA_PYTORCH_VERSION=26.07``)."""
    matrix = ctx.matrix
    if matrix is None:
        return None
    for ev in ctx.facts.cuda.versions:
        component = ev.component or ""
        if component.startswith("ngc-") and " " not in component:
            return matrix.ngc_image(f"nvcr.io/nvidia/{component[len('ngc-'):]}", ev.version)
    from imagelint.facts.known_images import parse_image

    ref = parse_image(ctx.facts.base.name) if ctx.facts.base.name else None
    if ref is None or not ref[0].startswith("nvcr.io/nvidia/"):
        return None
    try:
        return matrix.ngc_image(ref[0][len("nvcr.io/"):], ref[1])
    except (LookupError, ValueError):
        return None


def _below_ngc_floor(ctx: RuleContext) -> Iterator[Finding]:
    """A pool GPU older than the NGC release's lowest built architecture: no kernel image.
    Only where no library's fatbin was read: the binaries, when there, are the better evidence
    and are judged one by one below (one cause, one finding)."""
    if any(c.sass or c.ptx for c in ctx.facts.gpu_code):
        return
    ngc = _ngc_release(ctx)
    floor_text = getattr(ngc, "min_compute_capability", None)
    if ngc is None or not floor_text:
        return
    floor = ComputeCapability.parts_of(floor_text)
    if floor is None:
        return
    uncertain = bool(getattr(ngc, "uncertain", False))
    image = f"{ngc.repository}:{ngc.tag}"
    where = ctx.facts.base.provenance[0] if ctx.facts.base.provenance else None
    for pool in ctx.pools:
        older: dict[tuple[int, int], list[str]] = {}
        for gpu in pool_gpus(pool, ctx.matrix):
            cc = ComputeCapability.parts_of(gpu.arch)
            if cc is not None and cc < floor:
                older.setdefault(cc, []).append(gpu.label)
        for cc, labels in older.items():
            named = f"{' / '.join(dict.fromkeys(labels))} ({cc[0]}.{cc[1]})"
            details = [f"NGC release {ngc.release} is built for compute capability {floor_text} and later "
                       f"({ngc.compute_capability_source})"]
            if uncertain:
                details.append(f"rests on an uncertain matrix row: NGC release {ngc.release} ({ngc.source})")
            yield finding(
                f"pool {pool.name}: {image} has no kernel for {named}: NGC {ngc.release} is built for compute "
                f"capability {floor_text} and later",
                where, pool=pool, severity=WARNING if uncertain else None, details=details,
                remediation=(f"Use an NGC release built for compute capability {cc[0]}.{cc[1]} (an older one), "
                             f"or run the workload on GPUs of compute capability {floor_text} or newer."),
                library=image, sass=[], ptx=[], compute_capability=f"{cc[0]}.{cc[1]}", evidence="ngc-release",
                outcome="no-kernel", min_compute_capability=floor_text,
            )


def _from_arch_lists(ctx: RuleContext) -> list[GpuCodeObject]:
    """One pseudo code object per build setting that names architectures (secondary evidence).

    The arch modules are imported only here: most files ``imagelint lint`` reads have no
    GPU code, and the pre-commit hook should not pay for importing them."""
    if not ctx.facts.arch_lists and not any(e.name in ARCH_ENV for e in ctx.facts.env):
        return []
    from imagelint.facts.archlist import arch_targets, settings_in_env, unique_settings

    # The env's own settings first (what the image states), then Dockerfile lines, history, scripts.
    settings = unique_settings([*settings_in_env(ctx.facts.env), *ctx.facts.arch_lists])

    names = ctx.matrix.gpu_arch_names() if ctx.matrix is not None else ()
    out = []
    for setting in settings:
        t = arch_targets(setting, names)
        if t.sass or t.ptx:
            label = f"nvcc {setting.value}" if setting.setting == "nvcc" else f"{setting.setting}={setting.value}"
            out.append(GpuCodeObject(label, t.sass, t.ptx, setting.provenance, evidence=setting.setting))
    return out


def _by_compute_capability(gpus: Sequence[tuple[PoolGpu, tuple[int, int] | None]]) -> dict[tuple[int, int], list[str]]:
    out: dict[tuple[int, int], list[str]] = {}
    for gpu, cc in gpus:
        if cc is not None and gpu.label not in out.setdefault(cc, []):
            out[cc].append(gpu.label)
    return out


def _runtime_verdicts(ctx: RuleContext, pool: NodePool) -> dict[str | None, Verdict]:
    """The compatibility model's verdict per GPU model of the pool (IL101's), by label."""
    from imagelint.compat.judge import judge_pool

    return {v.gpu: v for v in judge_pool(ctx.facts, pool, ctx.matrix)}


def _jit_limit(matrix: Matrix | None, pool: NodePool, verdict: Verdict | None) -> tuple[JitLimit | None, str]:
    """Whose JIT compiles the PTX: the libcuda the compatibility verdict loads (the host's, or
    the image's forward-compat one), with a note when that depends on the runtime or when
    CUDA itself does not start on the pool."""
    from imagelint.compat.verdict import FORWARD, MINOR, NATIVE
    from imagelint.facts import gpuarch

    if verdict is None:
        return gpuarch.jit_limit_for_driver(matrix, pool.driver), ""
    working = [c for c in verdict.cases if c.outcome in (NATIVE, MINOR, FORWARD)]
    if not working:
        return (gpuarch.jit_limit_for_driver(matrix, pool.driver),
                "; CUDA itself does not initialise on this pool (IL101), so no kernel launches at all")
    cudas = sorted({c.driver_cuda for c in working if c.driver_cuda}, key=lambda v: tuple(int(p) for p in v.split(".")))
    if not cudas:
        return gpuarch.jit_limit_for_driver(matrix, pool.driver), ""
    note = ""
    compat = [c for c in working if c.compat is not None]
    if compat and len(cudas) > 1:
        note = (f"; judged with the host driver's JIT (CUDA {cudas[0]}); where the image's forward-compat libcuda is "
                f"loaded ({compat[0].condition or 'see IL101'}) its JIT handles up to CUDA {cudas[-1]}")
    elif compat and (use := compat[0].compat) is not None:  # always, as compat holds only such cases
        note = f"; the JIT is the image's forward-compat libcuda {use.version} (CUDA {cudas[0]})"
    return gpuarch.jit_limit_for_cuda(matrix, cudas[0]), note


def _check_one(
    obj: GpuCodeObject, pool: NodePool, cc: tuple[int, int], labels: list[str], secondary: str, matrix: Matrix | None,
    jit_limit: JitLimit | None = None, jit_note: str = "",
) -> Iterator[Finding]:
    from imagelint.facts import gpuarch
    from imagelint.rules._verdict import fit

    verdict = gpuarch.judge_kernels(obj.sass, obj.ptx, cc, jit_limit, obj.ptx_isa)
    gpu = f"{' / '.join(labels)} ({cc[0]}.{cc[1]})"
    where = _name(obj, secondary)
    extra: dict[str, Any] = dict(  # the finding's data, as keywords
        library=obj.path, sass=list(obj.sass), ptx=list(obj.ptx), compute_capability=f"{cc[0]}.{cc[1]}",
        evidence=obj.evidence, outcome=verdict.outcome,
        ptx_isa=dict(obj.ptx_isa),
    )
    setting = "nvcc's arch flags" if obj.evidence == "nvcc" else f"the build setting {obj.evidence}"
    notes = [f"secondary evidence: {setting} at {obj.provenance.describe()} ({secondary})"] if secondary else []
    notes += _placement_notes(obj)
    if jit_note and verdict.outcome != gpuarch.SASS_RUNS:
        notes.append(jit_note.lstrip("; "))
    jit = verdict.jit
    short = _short_name(obj, secondary)
    if verdict.outcome == gpuarch.NO_KERNEL:
        # Code for this GPU in a fatbin the runtime does not register (an array in .rodata) may
        # still be loaded by the library itself (cuModuleLoadData, nvJitLink): not an error then.
        own = _own_loaded_fit(obj, cc)
        if own:
            # cuFFT keeps ~all its kernels in fatbins in .ldata and loads them itself; its
            # .nv_fatbin holds one sm_52 helper. The library's own loader is not ours to judge.
            yield finding(
                fit([f"pool {pool.name}: {w} registers no kernel for {gpu} with the CUDA runtime but loads its own: "
                     "not judged further" for w in (where, short)]),
                obj.provenance, pool=pool, severity=INFO, remediation="",
                details=[f".nv_fatbin has {_has(obj)}; the library embeds {', '.join(own)}, which it loads itself "
                         "(as cuFFT does)", *notes], **{**extra, "outcome": "own-loaded-code"},
            )
            return
        yield finding(
            fit([f"pool {pool.name}: {w} has no kernel for {gpu} ('{gpuarch.ERR_NO_KERNEL}')" for w in (where, short)]
                + [f"pool {pool.name}: {short} has no kernel for {gpu}"]),
            obj.provenance, pool=pool, severity=WARNING if secondary else None,
            details=[f"{where} has {_has(obj)}; needs {gpuarch.needed_for(cc)}", *notes], **extra,
        )
    elif verdict.outcome == gpuarch.PTX_TOO_NEW:
        assert jit is not None
        yield finding(
            fit([f"pool {pool.name}: {w} has no SASS for {gpu} and PTX too new for driver {pool.driver}'s JIT "
                 f"('{gpuarch.ERR_PTX_TOO_NEW}')" for w in (where, short)]
                + [f"pool {pool.name}: {short} has no SASS for {gpu} and PTX too new for the driver's JIT"]),
            obj.provenance, pool=pool, severity=WARNING if secondary or jit.uncertain else None,
            details=[f"its PTX {', '.join(verdict.ptx)} is PTX ISA {verdict.ptx_isa}; driver {pool.driver}'s JIT "
                     f"compiler (CUDA {jit.cuda}) handles PTX ISA up to {jit.ptx_isa}{_uncertain(jit)}", *notes],
            remediation=(f"Upgrade the pool's driver to one that reports CUDA {_cuda_for_isa(matrix, verdict.ptx_isa)} "
                         "or newer, or use a build of the library with SASS for the GPU (code=sm_XY)."),
            **extra,
        )
    elif verdict.outcome in (gpuarch.JIT_RUNS, gpuarch.JIT_UNJUDGED):
        if verdict.outcome == gpuarch.JIT_RUNS:
            assert jit is not None
            driver = f"driver {pool.driver} (CUDA {jit.cuda}) JIT-compiles PTX ISA up to {jit.ptx_isa}"
        elif jit is None:
            driver = "the pool's driver is not known: it must JIT-compile " + (
                f"PTX ISA {verdict.ptx_isa} (CUDA {_cuda_for_isa(matrix, verdict.ptx_isa)} or newer)"
                if verdict.ptx_isa else "the PTX ISA version it was built with")
        else:
            driver = "whether the driver's JIT compiler handles it is not known: the PTX ISA version is not known"
        yield finding(
            fit([f"pool {pool.name}: {w} has no SASS for {gpu}: runs only by JIT-compiling its PTX at first launch"
                 for w in (where, short)] + [f"pool {pool.name}: {short} has no SASS for {gpu}: runs by JIT only"]),
            obj.provenance, pool=pool, severity=INFO, remediation="Add SASS for the GPU (code=sm_XY) to avoid JIT.",
            details=[f"{where} has PTX {', '.join(verdict.ptx)}{f' (ISA {verdict.ptx_isa})' if verdict.ptx_isa else ''}; "
                     "JIT compilation at first launch is slow for large libraries", driver, *notes],
            **extra,
        )


def _uncertain(jit: object) -> str:
    return " (the matrix row for this PTX ISA is marked uncertain)" if getattr(jit, "uncertain", False) else ""


def _cuda_for_isa(matrix: Matrix | None, isa: str | None) -> str:
    row = matrix.ptx_isa(isa) if isa and matrix is not None else None
    return row.min_cuda if row is not None else f"for PTX ISA {isa}"


def _own_loaded_fit(obj: GpuCodeObject, cc: tuple[int, int]) -> list[str]:
    """Targets for ``cc`` in fatbins outside .nv_fatbin and __nv_relfatbin ("section: target")."""
    from imagelint.facts.gpuarch import GpuTarget

    out = []
    for item in obj.not_loaded:
        section, _, target = item.partition(": ")
        t = GpuTarget.parse(target)
        if section != "__nv_relfatbin" and t is not None and t.runs_on(cc):
            out.append(f"{target} ({section})")
    return out


def _placement_notes(obj: GpuCodeObject) -> list[str]:
    """Say what was left out or could not be placed, so a surprising verdict can be checked."""
    out = []
    relocatable = [t.split(": ", 1)[1] for t in obj.not_loaded if t.startswith("__nv_relfatbin: ")]
    if relocatable:
        out.append(f"not counted: {', '.join(relocatable)} in __nv_relfatbin (relocatable device code for the "
                   "device linker: the CUDA runtime never loads it)")
    if obj.unplaced_containers:
        out.append(f"{obj.unplaced_containers} fatbin container(s) counted without knowing their ELF section "
                   "(no readable section table): relocatable code may be among them")
    return out


def _no_target_gpu(code: list[GpuCodeObject], pool: NodePool | None, secondary: str) -> Finding:
    sass = sorted({s for c in code for s in c.sass})
    ptx = sorted({p for c in code for p in c.ptx})
    has = ", ".join(sass + ptx)
    if secondary:
        subject = f"{', '.join(sorted({c.evidence for c in code}))} (secondary evidence)"
    else:
        subject = f"{len(code)} {'library' if len(code) == 1 else 'libraries'} with GPU code"
    scope = f"pool {pool.name}: " if pool is not None else ""
    return finding(
        f"{scope}no target GPU compute capability: {subject} not checked",
        code[0].provenance if len(code) == 1 else None, pool=pool, severity=INFO, remediation="",
        details=[f"compiled for {has}"],
        sass=sass, ptx=ptx,
    )


def _short_name(obj: GpuCodeObject, secondary: str) -> str:
    """The library's file name (or the build setting's name), for a headline."""
    if secondary:
        return f"the code built with {obj.evidence}"
    name = obj.path.rsplit("/", 1)[-1]
    return name if len(name) <= 60 else name[:59] + "…"


def _name(obj: GpuCodeObject, secondary: str) -> str:
    if secondary:
        return f"the code built with {obj.path}"
    p: Provenance = obj.provenance
    layer = f" (layer {p.layer_index})" if p.layer_index is not None else ""
    return f"/{obj.path}{layer}"


def _has(obj: GpuCodeObject) -> str:
    return ", ".join([*obj.sass, *obj.ptx]) or "no SASS or PTX"
