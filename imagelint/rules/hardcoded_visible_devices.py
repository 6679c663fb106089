"""``CUDA_VISIBLE_DEVICES`` / ``NVIDIA_VISIBLE_DEVICES`` fixed to GPU indices or UUIDs.

Inside a Kubernetes pod the device plugin decides which GPUs a container gets
and the runtime renumbers them from 0. An image that pins
``NVIDIA_VISIBLE_DEVICES=1`` (or a UUID) asks for a GPU the pod was not given,
or escapes the allocation; ``CUDA_VISIBLE_DEVICES=1`` hides the only GPU the pod
has ("no CUDA-capable device is detected"). Checked in the image env, Dockerfile
``ENV``, manifest env, and scripts the entrypoint runs. ``all``, ``none``,
``void`` and empty values are not reported, nor values passed through from the
environment (``${NVIDIA_VISIBLE_DEVICES}``, ``${CUDA_VISIBLE_DEVICES:-all}``,
``$GPUS``). CDI names are read by their device: ``nvidia.com/gpu=all`` is all,
``nvidia.com/gpu=0`` is index 0.

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

from typing import Iterator

from imagelint.facts.gpuenv import selected_devices
from imagelint.rules._verdict import fit
from imagelint.rules.base import ERROR, INFO, NEEDS_CONFIG, NEEDS_FILES, Finding, FindingFactory, RuleContext
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


def check(ctx: RuleContext) -> Iterator[Finding]:
    from imagelint.rules._kube import pod_gpu_count

    gpu = ctx.facts.gpu
    gpus = pod_gpu_count(ctx.facts)
    seen: set[tuple[str, str | None, int | None]] = set()
    for setting in (gpu.cuda_visible_devices, gpu.visible_devices):
        if setting is None:
            continue
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
        what, items = selected_devices(s.value)
        if what != "devices":
            continue
        key = (name, s.provenance.path or s.provenance.source, s.provenance.line)
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
