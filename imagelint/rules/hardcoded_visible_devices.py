"""``CUDA_VISIBLE_DEVICES`` / ``NVIDIA_VISIBLE_DEVICES`` fixed to GPU indices or UUIDs.

Inside a Kubernetes pod the device plugin decides which GPUs a container gets
and the runtime renumbers them from 0. An image that pins
``NVIDIA_VISIBLE_DEVICES=1`` (or a UUID) asks for a GPU the pod was not given,
or escapes the allocation; ``CUDA_VISIBLE_DEVICES=1`` hides the only GPU the pod
has ("no CUDA-capable device is detected"). Checked in the image env, Dockerfile
``ENV``, manifest env, and scripts the entrypoint runs. ``NVIDIA_VISIBLE_DEVICES``
values ``all``, ``none``, ``void`` and empty pin nothing and are not reported (``void``
is IL303's advice for CPU-only images), nor values passed through from the
environment (``${NVIDIA_VISIBLE_DEVICES}``, ``${CUDA_VISIBLE_DEVICES:-all}``,
``$GPUS``). CDI names are read by their device: ``nvidia.com/gpu=all`` is all,
``nvidia.com/gpu=0`` is index 0.

``CUDA_VISIBLE_DEVICES`` is read as CUDA reads it: up to the first entry that is
not a device index or UUID. ``-1``, empty, ``NoDevFiles``, ``none`` or ``void``
hide every GPU on purpose (the common way to run CPU-only): that pins nothing and
is said as info ("the container runs CPU-only"), or as a warning when the
workload is given GPUs anyway (a pod's ``nvidia.com/gpu``, a Compose device
request): those GPUs sit allocated and unused. ``0,-1,1`` selects device 0 only.

A single index 0 is info everywhere (it works with one GPU). Lists of several
GPUs, indices above 0 and UUIDs are errors, except in a manifest whose pod
requests enough GPUs for the indices (info there).

Remediation: leave device selection to the device plugin: remove the variable,
or keep the official ``NVIDIA_VISIBLE_DEVICES=all`` and request
``nvidia.com/gpu`` in the pod.

Anti-pattern::

    ENV CUDA_VISIBLE_DEVICES=1

Best practice::

    ENV CUDA_VISIBLE_DEVICES=${CUDA_VISIBLE_DEVICES:-all}
"""

from __future__ import annotations

from collections.abc import Iterator

from imagelint.facts.gpuenv import selected_devices
from imagelint.facts.model import ImageFacts, Provenance
from imagelint.lazyre import lazy_pattern
from imagelint.rules._verdict import fit
from imagelint.rules.base import (
    ERROR,
    INFO,
    NEEDS_CONFIG,
    NEEDS_FILES,
    WARNING,
    Finding,
    FindingFactory,
    RuleContext,
)
from imagelint.untrusted import is_digits

ID = "IL301"
NAME = "hardcoded-visible-devices"
SEVERITY = ERROR
TITLE = "GPU visibility pinned to fixed indices or UUIDs"
NEEDS = (NEEDS_CONFIG, NEEDS_FILES)
REFERENCES = ("https://github.com/NVIDIA/k8s-device-plugin",)
REMEDIATION = "Remove the fixed device list; request nvidia.com/gpu and let the device plugin choose."

finding = FindingFactory(ID, NAME, SEVERITY, REMEDIATION)

_KINDS = {"cuda-visible-devices": "CUDA_VISIBLE_DEVICES", "nvidia-visible-devices": "NVIDIA_VISIBLE_DEVICES"}


def _verdict(name: str, items: tuple[str, ...], gpus: int | None) -> tuple[str, str, str]:
    """(severity, headline, detail) for a pinned device list, given the pod's GPU count when known."""
    uuids = [i for i in items if not is_digits(i, 4)]
    indices = sorted({int(i) for i in items if is_digits(i, 4)})
    listed = _clip(", ".join(map(str, indices)))
    if uuids:
        return ERROR, (f"{name} names specific GPUs ({_clip(', '.join(uuids))})"), (
            "in a pod the device plugin chooses the GPUs, and a UUID it did not allocate is not there (or escapes "
            "the allocation)")
    high = indices[-1]
    if gpus is not None:
        if high < gpus:
            return INFO, (f"{name} selects index(es) {listed} of the {gpus} GPU(s) the pod requests"), (
                "it works, but the device plugin already exposes exactly those")
        return ERROR, (f"{name} selects index {high} but the pod requests {gpus} GPU(s): the device is not there"), (
            "a pod's GPUs are numbered from 0 inside the container")
    if indices == [0]:
        return INFO, f"{name}=0 selects the first GPU the container gets", (
            "it works with one GPU but hides any others a pod requests")
    return ERROR, (f"{name} selects {'GPUs' if len(indices) > 1 else 'GPU'} {listed}: needs at least {high + 1} "
                   "GPU(s) in every pod ('no CUDA-capable device is detected' otherwise)"), (
        "a pod's GPUs are renumbered from 0, whatever GPUs of the node it got")


# CUDA reads CUDA_VISIBLE_DEVICES up to its first entry that is not a device (an index, a GPU- or
# MIG- UUID): "If one of the indices is invalid, only the devices whose index precedes the invalid
# index are visible" (CUDA C++ Programming Guide, CUDA Environment Variables). An empty value, or
# one that starts with such an entry (-1, NoDevFiles, none, void), leaves no GPU visible.
_CUDA_DEVICE_ENTRY = lazy_pattern(r"^(?:\d+|(?:GPU|MIG)-[0-9A-Za-z/-]+)$")


def cuda_visible_prefix(value: str) -> tuple[str, ...] | None:
    """The entries of a ``CUDA_VISIBLE_DEVICES`` value CUDA uses (those before the first entry that
    names no device); None for a value passed through from the environment (``$X``)."""
    v = value.strip().strip("'\"")
    if "$" in v or v.lower() == "all":
        return None  # "all" is the toolkit's word; left to the NVIDIA_VISIBLE_DEVICES reading
    out: list[str] = []
    for part in (p.strip() for p in v.split(",")):
        if not _CUDA_DEVICE_ENTRY.match(part):
            break
        out.append(part)
    return tuple(out)


def _requests_gpus(facts: ImageFacts, gpus: int | None) -> bool:
    """The workload is given GPUs: a pod's GPU resources or claims, a Compose device request."""
    compose = facts.compose
    return bool(gpus) or bool(compose is not None and compose.gpu_requests)


def _hidden(name: str, value: str, where: Provenance, requested: bool, extra: str = "") -> Finding:
    """``CUDA_VISIBLE_DEVICES`` that hides every GPU: on purpose, pins nothing; said, not silent."""
    shown = _clip(value) if value.strip() else "(empty)"
    whole = [f"the whole value: {value!r}"] if value.strip() and _clip(value) != value else []
    if requested:
        return finding(f"{name}={shown} hides every GPU from CUDA, but the workload is given GPUs: they sit "
                       f"allocated and unused{extra}", where, severity=WARNING,
                       remediation="Drop the GPU request if the workload is CPU-only, or remove the variable.",
                       details=["CUDA stops reading the list at its first entry that is not a device index or UUID",
                                *whole], variable=name, value=value, hides_all=True)
    return finding(f"{name}={shown} hides every GPU from CUDA: the container runs CPU-only (pins nothing){extra}",
                   where, severity=INFO, remediation="Nothing to do if CPU-only is meant; remove the variable to use a GPU.",
                   details=["CUDA stops reading the list at its first entry that is not a device index or UUID", *whole],
                   variable=name, value=value, hides_all=True)


def check(ctx: RuleContext) -> Iterator[Finding]:
    from imagelint.kube.scheduler import pod_gpu_count

    gpu = ctx.facts.gpu
    gpus = pod_gpu_count(ctx.facts)
    requested = _requests_gpus(ctx.facts, gpus)
    seen: set[tuple[str, str | None, int | None]] = set()
    for setting in (gpu.cuda_visible_devices, gpu.visible_devices):
        if setting is None:
            continue
        if setting.name == "CUDA_VISIBLE_DEVICES":
            prefix = cuda_visible_prefix(setting.value)
            if prefix == ():
                seen.add((setting.name, setting.provenance.path, setting.provenance.line))
                yield _hidden(setting.name, setting.value, setting.provenance, requested)
                continue
            if prefix is not None:
                # "0,-1,1": CUDA sees device 0 only; judge what it sees.
                what, items = "devices", prefix
            else:
                what, items = selected_devices(setting.value)
        else:
            what, items = selected_devices(setting.value)
        if what != "devices":
            continue
        seen.add((setting.name, setting.provenance.path, setting.provenance.line))
        severity, why, detail = _verdict(setting.name, items, gpus)
        yield finding(fit([f"{setting.name}={_clip(setting.value)}: {why}", why]),
                      setting.provenance, severity=severity,
                      details=[detail, *([f"the whole value: {setting.value!r}"] if _clip(setting.value) != setting.value else [])],
                      variable=setting.name, value=setting.value)
    for s in gpu.index_settings:
        name = _KINDS.get(s.kind)
        if name is None:
            continue
        prefix = cuda_visible_prefix(s.value) if name == "CUDA_VISIBLE_DEVICES" else None
        what, items = ("devices", prefix) if prefix else selected_devices(s.value)
        key = (name, s.provenance.path or s.provenance.source, s.provenance.line)
        if prefix == ():
            if key not in seen:
                seen.add(key)
                reached = "" if s.referenced else " (in a file the entrypoint does not appear to run)"
                yield _hidden(name, s.value, s.provenance, requested and s.referenced, reached)
            continue
        if what != "devices":
            continue
        if key in seen:
            continue
        seen.add(key)
        severity, why, detail = _verdict(name, items, gpus)
        reached = "" if s.referenced else " (in a file the entrypoint does not appear to run)"
        yield finding(fit([f"{why}{reached}", why]), s.provenance, severity=severity if s.referenced else INFO,
                      details=[detail, f"the line: {s.text.strip()!r}"], variable=name, value=s.value)


def _clip(text: str, limit: int = 40) -> str:
    """An image-controlled value, shortened for a headline (the whole value is in ``extra``)."""
    return text if len(text) <= limit else text[: limit - 1] + "…"
