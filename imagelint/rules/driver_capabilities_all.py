"""The image sets ``NVIDIA_DRIVER_CAPABILITIES=all``.

The capabilities choose which of the host driver's libraries and tools the container toolkit
mounts into the container: ``compute,utility`` (CUDA and ``nvidia-smi``) is what CUDA images
set; ``all`` adds graphics, display, video and more, so every container of the image gets host
libraries (and their attack surface) it does not use, and the image no longer says which it
needs. NVIDIA's device plugin and GPU Operator examples set the capabilities a workload needs.
IL304 reports capabilities that are missing; this rule the opposite.

Remediation: list what the image uses (``compute,utility``, plus ``video`` for NVDEC/NVENC,
``graphics`` for OpenGL/Vulkan).

Anti-pattern::

    ENV NVIDIA_DRIVER_CAPABILITIES=all

Best practice::

    ENV NVIDIA_DRIVER_CAPABILITIES=compute,utility,video
"""

from __future__ import annotations

from collections.abc import Iterator

from imagelint.rules.base import (
    NEEDS_CONFIG,
    WARNING,
    Finding,
    FindingFactory,
    RuleContext,
)

ID = "IL703"
NAME = "driver-capabilities-all"
SEVERITY = WARNING
TITLE = "NVIDIA_DRIVER_CAPABILITIES=all mounts every driver capability"
NEEDS = (NEEDS_CONFIG,)
REFERENCES = ("https://docs.nvidia.com/datacenter/cloud-native/container-toolkit/latest/docker-specialized.html",)
REMEDIATION = "Set the capabilities the image uses, e.g. compute,utility (plus video or graphics if needed)."

finding = FindingFactory(ID, NAME, SEVERITY, REMEDIATION)


def check(ctx: RuleContext) -> Iterator[Finding]:
    setting = ctx.facts.gpu.driver_capabilities
    if setting is None or ctx.facts.kind != "dockerfile" or not (setting.provenance.key or "").startswith("ENV "):
        return  # only what the Dockerfile itself writes (a base image's value is its author's)
    if "all" in [c.strip().lower() for c in setting.value.split(",")]:
        yield finding("ENV NVIDIA_DRIVER_CAPABILITIES=all: every container of the image gets all of the host "
                      "driver's libraries and tools, not just compute,utility", setting.provenance)
