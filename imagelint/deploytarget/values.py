"""The target's value grammar, and GPU names resolved through the matrix.

Everything that turns a written value into a model value lives here, once, for
every source of a target (flags, target files, the live cluster): driver and
release versions, compute capabilities, node architectures, runtime modes and the
other enumerations of :class:`~imagelint.deploytarget.model.NodePool`; ``resolve_gpu``
fills compute capability, brand and family from the matrix (``matrix.gpu(name)``);
``cuda_for`` is the CUDA version a driver reports. A bad value is a one-line
``UsageError`` naming where it was written.
"""

from __future__ import annotations

import dataclasses
import difflib
import re
from collections.abc import Sequence
from typing import TYPE_CHECKING

from imagelint.deploytarget.model import GpuSpec
from imagelint.errors import UsageError
from imagelint.lazyre import lazy_pattern
from imagelint.versions import CUDA_RE, ComputeCapability, CudaVersion, DriverVersion

if TYPE_CHECKING:
    from imagelint.matrix.model import Matrix

# --- what the matrix must offer (duck-typed: imagelint.matrix.Matrix fits) ----------




# --- value grammar -------------------------------------------------------------------

# Toolkit / device plugin release versions, with an optional leading v and pre-release.
_RELEASE_RE = lazy_pattern(r"^v?(\d+\.\d+(?:\.\d+)?(?:-[0-9A-Za-z.]+)?)$")

# The enumerations the NodePool model documents (imagelint/deploytarget/model.py).
RUNTIME_MODES = ("legacy", "cdi", "jit-cdi", "csv")
ARCHES = ("amd64", "arm64")
_ARCH_ALIASES = {"x86_64": "amd64", "x86-64": "amd64", "aarch64": "arm64", "arm64/v8": "arm64"}
DEVICE_LIST_STRATEGIES = ("envvar", "volume-mounts", "cdi-annotations", "cdi-cri")
MIG_STRATEGIES = ("none", "single", "mixed")
TAINT_EFFECTS = ("NoSchedule", "PreferNoSchedule", "NoExecute")


def parse_driver_version(value: str, what: str = "--driver") -> DriverVersion:
    try:
        return DriverVersion(value)
    except ValueError:
        raise UsageError(f"{what}: {value!r} is not a driver version; expected NNN[.NN[.NN]], e.g. 535.104.05 "
                         "(or a bare branch: 535, R535)") from None


def parse_cuda_version(value: str, what: str) -> CudaVersion:
    """A CUDA version as written in a flag or target file (``12.2``, ``12.4.1``; no leading ``v``)."""
    if not CUDA_RE.match(str(value).strip()):
        raise UsageError(f"{what}: {value!r} is not a CUDA version; expected MAJOR.MINOR, e.g. 12.2")
    return CudaVersion(value)


def parse_release_version(value: str, what: str) -> str:
    """``v1.17.3`` / ``1.17.3`` → ``1.17.3`` (the model stores versions without the ``v``)."""
    match = _RELEASE_RE.match(str(value).strip())
    if not match:
        raise UsageError(f"{what}: {value!r} is not a release version; expected X.Y[.Z], e.g. 1.17.3")
    return match.group(1)


# nvcc spellings of an architecture: sm_90, sm_90a, compute_86, sm_100f (major = all but the last digit).


def parse_compute_capability(value: str, what: str = "--compute-capability") -> ComputeCapability:
    """``8.0``; also ``9`` (= 9.0) and nvcc's ``sm_90`` / ``sm_90a`` / ``compute_86`` (= 9.0, 9.0, 8.6)."""
    try:
        return ComputeCapability(value)
    except ValueError:
        raise UsageError(f"{what}: {value!r} is not a compute capability; expected MAJOR.MINOR (8.0), MAJOR (9) or sm_90") from None


def parse_arch(value: str, what: str = "--arch") -> str:
    text = str(value).strip().lower()
    text = _ARCH_ALIASES.get(text, text)
    if text not in ARCHES:
        raise UsageError(f"{what}: {value!r} is not a node architecture; expected one of {', '.join(ARCHES)}")
    return text


def parse_runtime_mode(value: str, what: str = "--runtime-mode") -> str | None:
    text = str(value).strip().lower()
    if text == "auto":
        # "auto" is the toolkit's own setting: the mode then follows the toolkit
        # version, which is exactly what None means in the model.
        return None
    if text not in RUNTIME_MODES:
        raise UsageError(f"{what}: {value!r} is not a runtime mode; expected one of {', '.join(RUNTIME_MODES)} or auto")
    return text


def parse_choice(value: str, allowed: Sequence[str], what: str) -> str:
    """One of ``allowed``, compared without case (``noschedule`` is ``NoSchedule``)."""
    wanted = str(value).strip().lower()
    for choice in allowed:
        if choice.lower() == wanted:
            return choice
    raise UsageError(f"{what}: {value!r} is not valid; expected one of {', '.join(allowed)}")


# --- GPUs ----------------------------------------------------------------------------


def _known_gpu_names(matrix: Matrix | None) -> list[str]:
    """Every name the matrix knows, for "did you mean" hints (optional matrix API)."""
    names: list[str] = []
    for attr in ("gpu_names", "gpus", "gpu_products"):
        source = getattr(matrix, attr, None)
        if source is None:
            continue
        items = source() if callable(source) else source
        for item in items or ():
            if isinstance(item, str):
                names.append(item)
            else:
                names.append(str(getattr(item, "product", None) or getattr(item, "name", "")))
                names.extend(str(alias) for alias in getattr(item, "aliases", ()) or ())
        if names:
            break
    return [n for n in names if n]


def unknown_gpu_message(name: str, matrix: Matrix | None, what: str) -> str:
    known = _known_gpu_names(matrix)
    by_key = {_gpu_key(n): n for n in known}
    close = difflib.get_close_matches(_gpu_key(name), list(by_key), n=3, cutoff=0.5)
    hint = f"; did you mean {', '.join(by_key[c] for c in close)}?" if close else ""
    return (
        f"{what}: unknown GPU {name!r}{hint} "
        "(give its compute capability with --compute-capability, or compute-capability in a target file)"
    )


def _gpu_key(name: str) -> str:
    return re.sub(r"[\s_\-]+", "", name).lower()


def resolve_gpu(spec: GpuSpec, matrix: Matrix | None) -> tuple[GpuSpec, bool]:
    """Fill what the matrix knows about ``spec.product`` into the fields left empty.

    Returns the spec and whether the matrix knew the product. Idempotent: values
    already set are never replaced, so resolving twice gives the same spec.
    """
    if matrix is None or not spec.product:
        return spec, False
    product = matrix.gpu(spec.product)
    if product is None:
        return spec, False
    return (
        dataclasses.replace(
            spec,
            compute_capability=spec.compute_capability or getattr(product, "compute_capability", None),
            brand=spec.brand or getattr(product, "brand", None),
            family=spec.family or getattr(product, "family", None),
        ),
        True,
    )


def gpus_from_flags(
    gpus: Sequence[str],
    compute_capability: str | None,
    brand: str | None,
    matrix: Matrix | None,
) -> tuple[GpuSpec, ...]:
    """``--gpu`` names (resolved through the matrix), with ``--compute-capability`` /
    ``--brand`` overriding them, or describing the one GPU when no name is given."""
    cc = parse_compute_capability(compute_capability) if compute_capability else None
    brand = brand.strip() if brand else None
    specs: list[GpuSpec] = []
    for raw in gpus:
        name = raw.strip()
        if not name:
            raise UsageError("--gpu: empty GPU name")
        spec = GpuSpec(product=name, compute_capability=cc, brand=brand)
        resolved, known = resolve_gpu(spec, matrix)
        if matrix is not None and not known and cc is None:
            raise UsageError(unknown_gpu_message(name, matrix, "--gpu"))
        specs.append(resolved)
    if not specs and (cc or brand):
        specs.append(GpuSpec(compute_capability=cc, brand=brand))
    return tuple(specs)


def cuda_for(driver: str | None, matrix: Matrix | None) -> CudaVersion | None:
    if not driver or matrix is None:
        return None
    text = matrix.cuda_for_driver(driver)
    return CudaVersion(text) if text else None


__all__ = [
    "ARCHES",
    "DEVICE_LIST_STRATEGIES",
    "MIG_STRATEGIES",
    "RUNTIME_MODES",
    "TAINT_EFFECTS",
    "cuda_for",
    "gpus_from_flags",
    "parse_cuda_version",
    "parse_arch",
    "parse_choice",
    "parse_compute_capability",
    "CudaVersion",
    "DriverVersion",
    "parse_driver_version",
    "parse_release_version",
    "parse_runtime_mode",
    "resolve_gpu",
    "unknown_gpu_message",
]
