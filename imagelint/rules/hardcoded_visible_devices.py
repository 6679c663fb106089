"""``CUDA_VISIBLE_DEVICES`` / ``NVIDIA_VISIBLE_DEVICES`` fixed to GPU indices or UUIDs.

Inside a Kubernetes pod the device plugin decides which GPUs a container gets
and the runtime renumbers them from 0. An image that pins
``NVIDIA_VISIBLE_DEVICES=1`` (or a UUID) asks for a GPU the pod was not given,
or escapes the allocation; ``CUDA_VISIBLE_DEVICES=1`` hides the only GPU the pod
has ("no CUDA-capable device is detected"). Checked in the image env, Dockerfile
``ENV``, manifest env, and scripts the entrypoint runs. ``all``, ``none``,
``void`` and empty values are not reported.

Remediation: leave device selection to the device plugin: remove the variable,
or keep the official ``NVIDIA_VISIBLE_DEVICES=all`` and request
``nvidia.com/gpu`` in the pod.

Anti-pattern::

    ENV CUDA_VISIBLE_DEVICES=1

Best practice::

    resources: {limits: {nvidia.com/gpu: 1}}
"""

from __future__ import annotations

from typing import Iterator

from imagelint.facts.gpuenv import pins_devices
from imagelint.rules.base import ERROR, NEEDS_CONFIG, NEEDS_FILES, Finding, FindingFactory, RuleContext

ID = "IL301"
NAME = "hardcoded-visible-devices"
SEVERITY = ERROR
TITLE = "GPU visibility pinned to fixed indices or UUIDs"
NEEDS = (NEEDS_CONFIG, NEEDS_FILES)
REFERENCES = ("https://github.com/NVIDIA/k8s-device-plugin",)
REMEDIATION = "Remove the fixed device list; request nvidia.com/gpu and let the device plugin choose."

finding = FindingFactory(ID, NAME, SEVERITY, REMEDIATION)

_KINDS = {"cuda-visible-devices": "CUDA_VISIBLE_DEVICES", "nvidia-visible-devices": "NVIDIA_VISIBLE_DEVICES"}


def check(ctx: RuleContext) -> Iterator[Finding]:
    gpu = ctx.facts.gpu
    seen: set[tuple[str, str | None, int | None]] = set()
    for setting in (gpu.cuda_visible_devices, gpu.visible_devices):
        if setting is None or not pins_devices(setting.value):
            continue
        seen.add((setting.name, setting.provenance.path, setting.provenance.line))
        yield finding(
            f"{setting.name}={setting.value} pins specific GPUs; in a pod the allocated GPUs are renumbered "
            f"from 0 and chosen by the device plugin",
            setting.provenance, variable=setting.name, value=setting.value,
        )
    for s in gpu.index_settings:
        name = _KINDS.get(s.kind)
        if name is None or not pins_devices(s.value):
            continue
        key = (name, s.provenance.path or s.provenance.source, s.provenance.line)
        if key in seen:
            continue
        seen.add(key)
        reached = "" if s.referenced else " (in a file the entrypoint does not appear to run)"
        yield finding(
            f"{name}={s.value} pins specific GPUs{reached}: {s.text.strip()!r}",
            s.provenance, variable=name, value=s.value,
        )
