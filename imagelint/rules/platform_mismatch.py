"""No platform of the image matches a node pool's CPU architecture.

A pool of ``arm64`` nodes (Grace Hopper GH200, Jetson) cannot run an
``amd64``-only image, and the reverse: the pod fails with "exec format error"
or stays in ``ErrImagePull`` (no matching manifest for linux/arm64).

A Jetson image (L4T bases ``nvcr.io/nvidia/l4t-*``, ``deepstream-l4t``, NGC ``-igpu``
tags, ``dustynv/*`` tags of an L4T release; the matrix's ``jetson_images``) needs a
Jetson's integrated GPU and the driver stack of Jetson Linux: on a pool of discrete GPUs
(A100, H100, L4, T4 ...) it cannot run, whatever the CPU architecture (an arm64
GH200/GB200 pool included). The reverse too: an image built for discrete GPUs (official
``nvidia/cuda``, an NGC release that is not ``-igpu``) on a pool of Jetson boards whose
GPU Jetson Linux's own driver runs (Orin; the GPU catalogue's ``driver_stack = "tegra"``):
an error when the pool's driver is of a branch the catalogue documents for that stack
(``tegra_last_branch``, R540 = Jetson Linux 36.x), a warning otherwise (a newer Jetson
Linux may run SBSA images; not known here).
Both are read from the image reference (a Dockerfile's ``FROM``, a manifest's or Compose
service's ``image``, a built image's name or recorded base) and reported once per pool,
as an error with the fix; the architecture finding is then not repeated for that pool.

Remediation: build and push a multi-platform index (``docker buildx build
--platform linux/amd64,linux/arm64``), or schedule the image only on pools of
its architecture. For Jetson/dGPU: use the image built for the pool's GPUs (the
NGC release without ``-igpu``, ``nvidia/cuda`` instead of ``l4t-*``, or the reverse),
or schedule it on a pool of the GPUs it is built for.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import TYPE_CHECKING

from imagelint.deploytarget import NodePool
from imagelint.deploytarget.values import DriverVersion
from imagelint.facts.model import ImageFacts, Provenance
from imagelint.image import normalize_arch
from imagelint.rules._verdict import fit
from imagelint.rules.base import (
    ERROR,
    NEEDS_CONFIG,
    NEEDS_TARGET,
    WARNING,
    Finding,
    FindingFactory,
    RuleContext,
)

if TYPE_CHECKING:
    from imagelint.matrix.model import Matrix

ID = "IL402"
NAME = "platform-mismatch"
SEVERITY = ERROR
TITLE = "Image platform does not match the pool's architecture or GPU class (Jetson vs discrete)"
NEEDS = (NEEDS_CONFIG, NEEDS_TARGET)
REFERENCES = ("https://github.com/opencontainers/image-spec/blob/main/image-index.md",)
REMEDIATION = "Publish a multi-platform image that includes the pool's architecture."

finding = FindingFactory(ID, NAME, SEVERITY, REMEDIATION)


def _image_refs(facts: ImageFacts) -> list[tuple[str, Provenance | None]]:
    """The image references that say what the image is: its recorded base, and a built image's
    own name (``imagelint check nvcr.io/nvidia/l4t-jetpack:r36.4.0``)."""
    refs: list[tuple[str, Provenance | None]] = []
    if facts.base.name:
        refs.append((facts.base.name, facts.base.provenance[0] if facts.base.provenance else None))
    if facts.kind == "image" and facts.subject:
        refs.append((facts.subject, None))
    return refs


def _pool_jetson(pool: NodePool, matrix: Matrix | None) -> tuple[bool | None, bool, int | None]:
    """(every GPU of the pool a Jetson board / none of them / None: not known; every one a Jetson
    whose GPU Jetson Linux's own driver runs; the newest driver branch that is documented so)."""
    found = [matrix.gpu(spec.product) if spec.product and matrix is not None else None for spec in pool.gpus]
    products = [p for p in found if p is not None]
    if not found or len(products) != len(found):
        return None, False, None
    kinds = {p.kind for p in products}
    if kinds == {"jetson"}:
        tegra = all(getattr(p, "driver_stack", None) == "tegra" for p in products)
        lasts = [b for b in (getattr(p, "tegra_last_branch", None) for p in products) if isinstance(b, int)]
        return True, tegra, min(lasts) if tegra and len(lasts) == len(products) else None
    return (False, False, None) if "jetson" not in kinds else (None, False, None)


def _gpu_class(ctx: RuleContext) -> Iterator[tuple[NodePool, Finding]]:
    """Jetson images on discrete-GPU pools, and discrete-GPU images on Jetson (Tegra) pools."""
    from imagelint.facts.known_images import discrete_gpu_image, jetson_image

    matrix = ctx.matrix
    if matrix is None or not hasattr(matrix, "gpu"):
        return
    jetson = dgpu = None
    where: Provenance | None = None
    for ref, prov in _image_refs(ctx.facts):
        jetson = jetson_image(ref, matrix)
        dgpu = None if jetson else discrete_gpu_image(ref, matrix)
        if jetson or dgpu:
            where = prov
            break
    if not jetson and not dgpu:
        return
    for pool in ctx.pools:
        all_jetson, tegra, last_branch = _pool_jetson(pool, matrix)
        gpus = ", ".join(s.product or "?" for s in pool.gpus)
        if jetson and all_jetson is False:
            doubt = " (uncertain matrix row)" if jetson.uncertain else ""
            yield pool, finding(
                fit([f"{_clip(jetson.image)} is a Jetson image: it cannot run on the discrete GPUs of pool {pool.name} "
                     f"({_clip(gpus)}), whatever the CPU architecture",
                     f"{_clip(jetson.image)} is a Jetson image: it cannot run on the discrete GPUs of pool {pool.name} "
                     f"({_clip(gpus)})",
                     f"a Jetson image cannot run on the discrete GPUs of pool {pool.name} ({_clip(gpus, 30)})"]),
                where, pool=pool,
                remediation=("Use the image built for discrete GPUs (the NGC release without -igpu, nvidia/cuda or an "
                             "NGC framework image instead of l4t-*), or schedule it on a Jetson pool."),
                details=["it needs a Jetson's integrated GPU and Jetson Linux's (L4T) driver stack, whatever the CPU "
                         "architecture (an arm64 GH200/GB200 pool included)",
                         f"{jetson.image}: {jetson.basis}{doubt} in the matrix's jetson_images",
                         f"source: {jetson.source}"], image=jetson.image, gpu_class="jetson", pool_gpus=gpus)
        elif dgpu and all_jetson and tegra:
            ref = next(r for r, _ in _image_refs(ctx.facts) if discrete_gpu_image(r, matrix))
            host = DriverVersion.parse(pool.driver) if pool.driver else None
            if host is None or last_branch is None or host.branch > last_branch:
                # A newer Jetson Linux than the catalogue describes may run discrete-GPU (SBSA) images.
                what = f"driver {host}" if host is not None else "an unknown driver"
                yield pool, finding(
                    fit([f"{_clip(ref)} is built for discrete GPUs: the Jetson boards of pool {pool.name} run it only "
                         f"if their Jetson Linux takes SBSA images ({what}: not known here)",
                         f"{_clip(ref, 40)} is built for discrete GPUs: on the Jetson boards of pool {pool.name} it may "
                         "not run (not known here)",
                         f"an image for discrete GPUs may not run on the Jetson pool {pool.name} (not known here)"]),
                    where, pool=pool, severity=WARNING, details=[
                        f"{ref}: {dgpu}",
                        f"Jetson Linux through driver R{last_branch} runs only Jetson (L4T, -igpu) images on these "
                        "boards" if last_branch else "the boards' Jetson Linux release is not known"],
                    remediation="Use a Jetson image (l4t-jetpack, l4t-cuda, the NGC -igpu tag) unless the boards' "
                                "Jetson Linux documents SBSA containers.",
                    image=ref, gpu_class="discrete", pool_gpus=gpus, uncertain=True)
                continue
            yield pool, finding(
                fit([f"{_clip(ref)} is built for discrete GPUs: it cannot run on the Jetson boards of pool {pool.name} "
                     f"({_clip(gpus)})",
                     f"an image built for discrete GPUs cannot run on the Jetson boards of pool {pool.name} "
                     f"({_clip(gpus, 30)})"]),
                where, pool=pool, details=[f"{ref}: {dgpu}",
                                           "the boards' integrated GPU runs only on Jetson Linux's own (L4T) driver"],
                remediation=("Use a Jetson image for the pool's Jetson Linux release (nvcr.io/nvidia/l4t-jetpack, "
                             "l4t-cuda, or the NGC release's -igpu tag), or schedule it on a discrete-GPU pool."),
                image=ref, gpu_class="discrete", pool_gpus=gpus)


def _clip(text: str, limit: int = 60) -> str:
    """An input-controlled name, shortened for a headline (the whole one is in the details)."""
    return text if len(text) <= limit else text[: limit - 1] + "…"


def check(ctx: RuleContext) -> Iterator[Finding]:
    facts = ctx.facts
    judged: set[str] = set()
    for pool, f in _gpu_class(ctx):
        judged.add(pool.name)  # the GPU class decides: the architecture is not said again
        yield f
    platforms = list(facts.platforms) or ([facts.platform] if facts.platform else [])
    if not platforms:
        return  # static inputs have no platform
    archs = sorted({normalize_arch(p.architecture) for p in platforms if p.os == "linux"})
    for pool in ctx.pools:
        if not pool.arch or pool.name in judged:
            continue
        if normalize_arch(pool.arch) not in archs:
            yield finding(
                f"pool {pool.name} runs linux/{normalize_arch(pool.arch)} but the image offers only "
                f"{', '.join(str(p) for p in platforms)}: pods fail with 'exec format error' or no matching manifest",
                None, pool=pool, pool_arch=pool.arch, image_platforms=[str(p) for p in platforms],
            )
