"""A library's compiled GPU code cannot run on a node pool's GPU.

CUDA loads a kernel from a library's fatbin: SASS built for the GPU's
compute capability (``sm_XY`` runs on X.Z with the same major and Z >= Y;
``sm_90a``/``sm_100a`` only on exactly that GPU; ``sm_100f`` on its family),
or else PTX the driver JIT-compiles (``compute_XY`` for any GPU of compute
capability >= X.Y). With neither, every launch fails with "no kernel image is
available for execution on the device" (``cudaErrorNoKernelImageForDevice``).
The architectures come from the fatbin headers inside the image's libraries,
never from their names. A library that fits only through PTX JIT is reported
as info: the first launch compiles every kernel (minutes for large libraries)
and needs a driver that supports the PTX ISA version it was built with.

When no library could be read but the image sets ``TORCH_CUDA_ARCH_LIST``
(the architectures PyTorch was built for), that list is used as secondary
evidence, and said so. Without a target GPU compute capability the rule
reports (info) what the image was compiled for.

Remediation: rebuild the library with SASS for the pool's GPU (``-gencode
arch=compute_90,code=sm_90``) and PTX for the newest architecture
(``code=compute_90``) so that newer GPUs can JIT it, or use a build (wheel,
base image) that includes the GPU's architecture.

Anti-pattern::

    nvcc -gencode arch=compute_80,code=sm_80 -shared -o libk.so k.cu   # A100 only; H100: no kernel

Best practice::

    nvcc -gencode arch=compute_80,code=sm_80 -gencode arch=compute_90,code=sm_90 \\
         -gencode arch=compute_90,code=compute_90 -shared -o libk.so k.cu
"""

from __future__ import annotations

from typing import Iterator

from imagelint.facts.model import GpuCodeObject, Provenance
from imagelint.rules._common import PoolGpu, pool_gpus
from imagelint.rules.base import (
    ERROR,
    INFO,
    NEEDS_CONFIG,
    NEEDS_FILES,
    NEEDS_TARGET,
    WARNING,
    Finding,
    FindingFactory,
    RuleContext,
)
from imagelint.target import NodePool

ID = "IL401"
NAME = "no-kernel-for-gpu"
SEVERITY = ERROR
TITLE = "No compiled GPU code for the pool's GPU architecture"
NEEDS = (NEEDS_CONFIG, NEEDS_FILES, NEEDS_TARGET)
TAGS = ("gpu", "gpu-architecture", "portability")
REFERENCES = (
    "https://docs.nvidia.com/cuda/cuda-programming-guide/05-appendices/compute-capabilities.html",
    "https://docs.nvidia.com/cuda/cuda-compiler-driver-nvcc/index.html#gpu-compilation",
)
REMEDIATION = (
    "Rebuild the library with SASS for the GPU's architecture (-gencode arch=compute_XY,code=sm_XY) "
    "plus PTX for the newest one (code=compute_XY), or use a build that includes it."
)
TORCH_ENV = "TORCH_CUDA_ARCH_LIST"

finding = FindingFactory(ID, NAME, SEVERITY, REMEDIATION)


def check(ctx: RuleContext) -> Iterator[Finding]:
    facts = ctx.facts
    if not facts.gpu_code_read:
        return  # libraries were not scanned: no pool GPU with a known compute capability to judge
    code = [c for c in facts.gpu_code if c.sass or c.ptx]
    secondary = ""  # why the env var stands in for the binaries, when it does
    if not code:
        torch = facts.env_setting(TORCH_ENV)
        if torch is None:
            return
        # The arch module is imported only past these returns: most files ``imagelint lint``
        # reads have no GPU code, and the pre-commit hook should not pay for importing it.
        from imagelint.facts.gpuarch import parse_torch_arch_list

        arch = parse_torch_arch_list(torch.value)
        if not (arch.sass or arch.ptx):
            return
        code = [GpuCodeObject(f"env {TORCH_ENV}", arch.sass, arch.ptx, torch.provenance)]
        secondary = (
            "no library in the image has fatbin GPU code" if facts.complete else "the image's layers were not read"
        )

    from imagelint.facts.gpuarch import parse_compute_capability

    for pool in ctx.pools:
        gpus = [(g, parse_compute_capability(g.arch)) for g in pool_gpus(pool, ctx.matrix)]
        known = [(g, cc) for g, cc in gpus if cc is not None]
        if not known:
            yield _no_target_gpu(code, pool, secondary)
            continue
        for cc, labels in _by_compute_capability(known).items():
            for obj in code:
                yield from _check_one(obj, pool, cc, labels, secondary)
    if not ctx.pools:
        yield _no_target_gpu(code, None, secondary)


def _by_compute_capability(gpus: list[tuple[PoolGpu, tuple[int, int] | None]]) -> dict[tuple[int, int], list[str]]:
    out: dict[tuple[int, int], list[str]] = {}
    for gpu, cc in gpus:
        if cc is not None and gpu.label not in out.setdefault(cc, []):
            out[cc].append(gpu.label)
    return out


def _check_one(
    obj: GpuCodeObject, pool: NodePool, cc: tuple[int, int], labels: list[str], secondary: str
) -> Iterator[Finding]:
    from imagelint.facts.gpuarch import code_fit, needed_for

    fit = code_fit(obj.sass, obj.ptx, cc)
    gpu = f"{' / '.join(labels)} ({cc[0]}.{cc[1]})"
    where = _name(obj, secondary)
    extra = dict(
        library=obj.path, sass=list(obj.sass), ptx=list(obj.ptx), compute_capability=f"{cc[0]}.{cc[1]}",
        evidence="TORCH_CUDA_ARCH_LIST" if secondary else "fatbin",
    )
    note = f" (secondary evidence: the image's TORCH_CUDA_ARCH_LIST; {secondary})" if secondary else ""
    if not fit.runs:
        yield finding(
            f"pool {pool.name}: {where} has no kernel for {gpu}: has {_has(obj)}; needs {needed_for(cc)} "
            f"-> 'no kernel image is available for execution on the device'{note}",
            obj.provenance, pool=pool, severity=WARNING if secondary else None, **extra,
        )
    elif fit.needs_jit:
        yield finding(
            f"pool {pool.name}: {where} has no SASS for {gpu} and runs only by JIT-compiling PTX "
            f"{', '.join(fit.ptx)} at first launch (slow for large libraries; needs a driver that supports "
            f"the PTX ISA version it was built with){note}",
            obj.provenance, pool=pool, severity=INFO, remediation="Add SASS for the GPU (code=sm_XY) to avoid JIT.",
            **extra,
        )


def _no_target_gpu(code: list[GpuCodeObject], pool: NodePool | None, secondary: str) -> Finding:
    sass = sorted({s for c in code for s in c.sass})
    ptx = sorted({p for c in code for p in c.ptx})
    has = ", ".join(sass + ptx)
    if secondary:
        subject = "TORCH_CUDA_ARCH_LIST (secondary evidence)"
    else:
        subject = f"{len(code)} {'library' if len(code) == 1 else 'libraries'} with GPU code"
    scope = f"pool {pool.name}: " if pool is not None else ""
    return finding(
        f"{scope}no target GPU compute capability: {subject} not checked; compiled for {has}",
        code[0].provenance if len(code) == 1 else None, pool=pool, severity=INFO, remediation="",
        sass=sass, ptx=ptx,
    )


def _name(obj: GpuCodeObject, secondary: str) -> str:
    if secondary:
        return "PyTorch (TORCH_CUDA_ARCH_LIST)"
    p: Provenance = obj.provenance
    layer = f" (layer {p.layer_index})" if p.layer_index is not None else ""
    return f"/{obj.path}{layer}"


def _has(obj: GpuCodeObject) -> str:
    return ", ".join([*obj.sass, *obj.ptx]) or "no SASS or PTX"
