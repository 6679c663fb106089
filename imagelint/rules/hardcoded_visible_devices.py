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
from imagelint.rules.base import ERROR, INFO, NEEDS_CONFIG, NEEDS_FILES, Finding, FindingFactory, RuleContext

ID = "IL301"
NAME = "hardcoded-visible-devices"
SEVERITY = ERROR
TITLE = "GPU visibility pinned to fixed indices or UUIDs"
NEEDS = (NEEDS_CONFIG, NEEDS_FILES)
REFERENCES = ("https://github.com/NVIDIA/k8s-device-plugin",)
REMEDIATION = "Remove the fixed device list; request nvidia.com/gpu and let the device plugin choose."

finding = FindingFactory(ID, NAME, SEVERITY, REMEDIATION)

_KINDS = {"cuda-visible-devices": "CUDA_VISIBLE_DEVICES", "nvidia-visible-devices": "NVIDIA_VISIBLE_DEVICES"}


def _verdict(name: str, items: tuple[str, ...], gpus: int | None) -> tuple[str, str]:
    """(severity, why) for a pinned device list, given the pod's GPU count when known."""
    uuids = [i for i in items if not i.isdigit()]
    indices = sorted({int(i) for i in items if i.isdigit()})
    if uuids:
        return ERROR, (f"{name} names specific GPUs ({', '.join(uuids)}); in a pod the device plugin chooses the "
                       "GPUs, and a UUID it did not allocate is not there (or escapes the allocation)")
    high = indices[-1]
    if gpus is not None:
        if high < gpus:
            return INFO, (f"{name} selects index(es) {', '.join(map(str, indices))} of the {gpus} GPU(s) the pod "
                          "requests; it works, but the device plugin already exposes exactly those")
        return ERROR, (f"{name} selects index {high} but the pod requests {gpus} GPU(s), numbered from 0 "
                       "inside the container: the device is not there")
    if indices == [0]:
        return INFO, (f"{name}=0 selects the first GPU the container gets; it works with one GPU but hides any "
                      "others a pod requests")
    return ERROR, (f"{name} selects {'GPUs' if len(indices) > 1 else 'GPU'} {', '.join(map(str, indices))}; a "
                   f"pod's GPUs are renumbered from 0, so this needs at least {high + 1} GPU(s) in every pod "
                   "that runs it ('no CUDA-capable device is detected' otherwise)")


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
        severity, why = _verdict(setting.name, items, gpus)
        yield finding(f"{setting.name}={setting.value}: {why}", setting.provenance, severity=severity,
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
        severity, why = _verdict(name, items, gpus)
        reached = "" if s.referenced else " (in a file the entrypoint does not appear to run)"
        yield finding(f"{why}{reached}: {s.text.strip()!r}", s.provenance,
                      severity=severity if s.referenced else INFO, variable=name, value=s.value)
