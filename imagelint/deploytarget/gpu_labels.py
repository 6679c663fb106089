"""What a pool's GPUs say about the node labels its nodes carry, and the most specific description.

A target file describes some labels (``labels = {...}``); the rest of a GPU node's labels follow
from its GPU: GKE puts ``cloud.google.com/gke-accelerator=nvidia-l4`` on L4 nodes, GPU Feature
Discovery ``nvidia.com/gpu.product`` / ``.memory`` / ``.compute.major``, an A100 40 GB node is no
``p4de.24xlarge``. The label knowledge is data (``matrices/node-labels.toml``, read by
:mod:`imagelint.matrix.node_labels`); this module judges one label value against a pool:

- :func:`judge_value` — could the pool's nodes carry ``key=value``? True (the value names the
  pool's GPU, as far as the target says), False (it names another GPU: certain), None (the table
  does not know the value, or the target does not say enough).
- :func:`numeric_range` — the range a numeric label (memory, count, compute capability, driver
  branch) has on the pool's nodes, for ``Gt`` / ``Lt``.
- :func:`refine_pool` — the most specific description wins: a pool written ``gpus = ["A100"]``
  whose labels say ``nvidia.com/gpu.product = NVIDIA-A100-SXM4-80GB`` (or whose instance type is
  ``p4de.24xlarge``) is the 80 GB part; descriptions that contradict each other are an error.

Whether a label is *present* on a node depends on the provider and its add-ons (GFD, NFD), which a
target file does not say; a value that names the pool's GPU is therefore only "consistent", and
``Exists`` / ``DoesNotExist`` on such a label stay unknown.
"""

from __future__ import annotations

import dataclasses
import functools
import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from imagelint.deploytarget.model import GpuSpec, NodePool
from imagelint.untrusted import int_or_none
from imagelint.versions import ComputeCapability

if TYPE_CHECKING:
    from imagelint.matrix.model import Matrix
    from imagelint.matrix.node_labels import GpuDescription, LabelRule, NodeLabels

_FIRST_MIG_CC = (8, 0)  # MIG starts with Ampere GA100 (NVIDIA's MIG User Guide, "Supported GPUs")
# NVML reports a little less memory than the product's nominal size (an L4 "24 GB": 23034 MiB,
# an H100 80 GB: 81559 MiB); EC2 reports the nominal size in MiB. A value outside
# [90 %, 100 %] of the nominal size is another GPU.
_REPORTED_SHARE = 0.9


def knowledge() -> NodeLabels:
    from imagelint.matrix.node_labels import load_node_labels

    return load_node_labels()


@dataclass(frozen=True)
class PoolGpu:
    """One GPU model of a pool, as the label knowledge sees it."""

    name: str | None  # the matrix's name (``NVIDIA A100``), or the pool's own text when unknown
    known: bool
    memory_gb: int | None
    count: int | None
    compute_capability: tuple[int, int] | None
    family: str | None

    def shown(self) -> str:
        memory = f" {self.memory_gb} GB" if self.memory_gb else ""
        return f"{self.name or 'a GPU of unknown model'}{memory}"



def pool_gpu(spec: GpuSpec) -> PoolGpu:
    from imagelint.matrix.node_labels import product_and_memory

    product, memory_gb = product_and_memory(spec.product or "")
    name = knowledge().gpu_name(product) if product else None
    if memory_gb is None and name:  # a name without its memory: the size when the table knows one (T4, L4)
        memory_gb = knowledge().only_memory(name)
    return PoolGpu(name or product or None, name is not None, memory_gb, spec.count, ComputeCapability.parts_of(spec.compute_capability),
                   spec.family)


def pool_gpus(pool: NodePool) -> tuple[PoolGpu, ...]:
    return tuple(pool_gpu(g) for g in pool.gpus)


@functools.lru_cache(maxsize=64)
def _mig_rows(gpu: str) -> tuple[tuple[int | None, tuple[str, ...]], ...]:
    from imagelint.matrix.shipped import shipped_section

    return tuple((r.get("memory_gb"), tuple(r.get("profiles", ()))) for r in shipped_section("mig_profiles")
                 if r.get("gpu") == gpu)


def _mig_capable(g: PoolGpu) -> bool | None:
    if g.compute_capability is not None and g.compute_capability < _FIRST_MIG_CC:
        return False
    if g.known and g.name and _mig_rows(g.name):
        return True
    return None


def _same_gpu(described: GpuDescription, g: PoolGpu) -> bool | None:
    """Whether a description names the pool's GPU: True, False (certainly another GPU), None."""
    if g.name is None:
        return None
    if g.known and described.known:
        if described.gpu != g.name:
            return False
    elif g.known != described.known:
        # The catalogue knows a GPU by every name it has (GFD spellings included): a name it
        # does not know is another GPU than one it knows. (A target file accepts an unknown
        # GPU only with its compute capability written: it is unknown on purpose.)
        return False
    elif _key(described.gpu) != _key(g.name):
        return None  # two GPUs the catalogue does not know: different spellings may be one GPU
    if described.memory_gb and g.memory_gb and described.memory_gb != g.memory_gb:
        return False
    if described.count and g.count and described.count != g.count:
        return False
    return True


def _key(name: str) -> str:
    return re.sub(r"[^a-z0-9]", "", re.sub(r"(?i)\b(nvidia|tesla|geforce|quadro)\b", "", name).lower())


def _any(results: Sequence[bool | None]) -> bool | None:
    """True if any is True, False if all are False (and there are some), else None."""
    if any(r is True for r in results):
        return True
    if results and all(r is False for r in results):
        return False
    return None


def _int(text: str) -> int | None:
    # A Gt/Lt value: the API server takes a signed 64-bit integer.
    text = str(text).strip()
    number = int_or_none(text.removeprefix("-"), 19)
    return None if number is None else -number if text.startswith("-") else number


def _per_gpu(pool: NodePool, judge: Any) -> bool | None:
    gpus = pool_gpus(pool)
    return _any([judge(g) for g in gpus]) if gpus else None


def judge_value(rule: LabelRule, value: str, pool: NodePool) -> bool | None:
    """Could the pool's nodes carry ``rule.key=value``? (True: consistent with the pool's GPU;
    False: it names another GPU, memory, count...; None: cannot be told.)"""
    reads = rule.reads
    text = str(value).strip()
    if reads in ("gpu", "instance-type", "instance-family"):
        described = knowledge().describe(rule.key, text)
        if described is None:
            return None
        return _per_gpu(pool, lambda g: _same_gpu(described, g))
    if reads == "vendor":
        # Every pool here has NVIDIA GPUs; another vendor's value is not judged.
        return True if text.lower() in rule.vendor_values and pool.gpus else None
    if reads == "family":
        return _per_gpu(pool, lambda g: None if not g.family else g.family.lower() == text.lower())
    if reads == "mig-capable":
        if text.lower() not in ("true", "false"):
            return None
        return _per_gpu(pool, lambda g: None if _mig_capable(g) is None else _mig_capable(g) == (text.lower() == "true"))
    if reads == "mig-profile":
        return _per_gpu(pool, lambda g: _has_profile(g, text))
    number = _int(text)
    if number is None:
        return None
    span = numeric_range(rule, pool)
    if span is None:
        return None
    low, high = span
    if reads == "memory-mib":
        return low <= number <= high if span else None
    return number == low if low == high else (None if low <= number <= high else False)


def _has_profile(g: PoolGpu, profile: str) -> bool | None:
    if _mig_capable(g) is False:
        return False
    rows = _mig_rows(g.name) if g.known and g.name else ()
    if not rows:
        return None
    if g.memory_gb:
        rows = tuple(r for r in rows if r[0] == g.memory_gb) or rows
    profile = profile.strip().lower()
    return any(profile == p.lower() for _, profiles in rows for p in profiles)


def numeric_range(rule: LabelRule, pool: NodePool) -> tuple[float, float] | None:
    """The lowest and highest value a numeric label has on the pool's nodes (None: not known)."""
    reads = rule.reads
    if reads == "driver-major":
        return (pool.driver.branch, pool.driver.branch) if pool.driver is not None else None
    if reads in ("cuda-major", "cuda-minor"):
        cuda = pool.cuda_driver_version
        if cuda is None or len(cuda.parts) < 2:
            return None
        part = cuda.parts[0] if reads == "cuda-major" else cuda.parts[1]
        return part, part
    spans: list[tuple[float, float]] = []
    for g in pool_gpus(pool):
        span: tuple[float, float] | None
        if reads == "memory-gb":
            span = (g.memory_gb, g.memory_gb) if g.memory_gb else None
        elif reads == "memory-mib":
            span = (g.memory_gb * 1024 * _REPORTED_SHARE, g.memory_gb * 1024) if g.memory_gb else None
        elif reads == "count":
            span = (g.count, g.count) if g.count else None
        elif reads in ("compute-major", "compute-minor"):
            cc = g.compute_capability
            span = None if cc is None else ((cc[0], cc[0]) if reads == "compute-major" else (cc[1], cc[1]))
        else:
            return None
        if span is None:
            return None
        spans.append(span)
    if not spans:
        return None
    return min(s[0] for s in spans), max(s[1] for s in spans)


# --- the most specific description wins ------------------------------------------------------


def descriptions(labels: dict[str, str] | Any) -> list[GpuDescription]:
    """What the pool's own labels say its GPU is (GFD product, instance type, provider labels)."""
    known = knowledge()
    found = []
    for key, value in labels.items():
        rule = known.rule(key)
        if rule is None or rule.reads not in ("gpu", "instance-type", "instance-family"):
            continue
        described = known.describe(key, str(value))
        if described is not None:
            found.append(described)
    return found


def _said(d: GpuDescription) -> str:
    count = f"{d.count} × " if d.count else ""
    memory = f" {d.memory_gb} GB" if d.memory_gb else ""
    return f"{d.said_by} says {count}{d.gpu}{memory}"


class PoolContradiction(ValueError):
    """A pool's descriptions of its GPU contradict each other (the message says which);
    ``uncertain`` when a row of the label table that says so is not re-read from its source."""

    def __init__(self, message: str, uncertain: bool = False) -> None:
        super().__init__(message)
        self.uncertain = uncertain


def refine_pool(pool: NodePool, matrix: Matrix | None = None) -> NodePool:
    """The pool with its GPUs described as specifically as its labels allow.

    Raises :class:`PoolContradiction` when two descriptions name different GPUs (``gpus`` says
    T4, the instance type says p4d), different memory sizes or different counts.
    """
    from imagelint.deploytarget.values import resolve_gpu

    if not pool.labels:
        return pool  # nothing to refine with: the label table is not even read
    found = descriptions(pool.labels)
    if not found:
        return pool
    for i, a in enumerate(found):
        for b in found[i + 1:]:
            if (a.known and b.known and a.gpu != b.gpu) or (a.memory_gb and b.memory_gb and a.memory_gb != b.memory_gb) \
                    or (a.count and b.count and a.count != b.count):
                raise PoolContradiction(f"its labels contradict each other: {_said(a)}, {_said(b)}",
                                        a.uncertain or b.uncertain)
    best = max(found, key=lambda d: (d.product is not None, d.memory_gb is not None, d.count is not None))
    count = next((d.count for d in found if d.count), None)
    if not pool.gpus:
        spec, _ = resolve_gpu(GpuSpec(product=best.product or best.gpu, count=count), matrix)
        return dataclasses.replace(pool, gpus=(spec,))
    specs = list(pool.gpus)
    matched = False
    for n, spec in enumerate(specs):
        g = pool_gpu(spec)
        if all(_same_gpu(d, g) is not False for d in found):
            matched = True
            refined = spec
            if best.product and not g.memory_gb and (spec.product or "").strip():
                refined = dataclasses.replace(refined, product=best.product)
            if refined.count is None and count is not None:
                refined = dataclasses.replace(refined, count=count)
            specs[n] = resolve_gpu(refined, matrix)[0] if refined is not spec else spec
    if not matched:
        gpus = ", ".join(pool_gpu(s).shown() for s in pool.gpus)
        raise PoolContradiction(f"gpus says {gpus}, but {'; '.join(_said(d) for d in found)}",
                                all(d.uncertain for d in found))
    return dataclasses.replace(pool, gpus=tuple(specs))


__all__ = ["PoolContradiction", "PoolGpu", "descriptions", "judge_value", "knowledge", "numeric_range",
           "pool_gpu", "pool_gpus", "refine_pool"]
