"""``NVIDIA_DRIVER_CAPABILITIES`` lacks a capability the image needs.

The toolkit mounts only the driver libraries of the listed capabilities
(``compute``, ``utility``, ``video``, ``graphics``, ``display``, ``compat32``,
or ``all``). Unset or empty means ``utility,compute`` (a *legacy* image — one
with ``CUDA_VERSION`` and no ``NVIDIA_REQUIRE_CUDA`` — gets all when unset).
DeepStream and NVENC/NVDEC users need ``video`` (libnvcuvid, libnvidia-encode),
OpenGL/Vulkan need ``graphics``; without them the libraries are simply absent
at run time. A CUDA image whose list omits ``compute`` gets no libcuda at all.

A DeepStream config or script linted on its own carries no env: the capabilities of the image
that will run it are unknown there, so nothing is reported (lint the Dockerfile or the image).

Remediation: list what the image uses, e.g.
``ENV NVIDIA_DRIVER_CAPABILITIES=compute,utility,video``.

Anti-pattern::

    ENV NVIDIA_DRIVER_CAPABILITIES=compute,utility
    CMD ["deepstream-app", "-c", "/app/config.txt"]

Best practice::

    ENV NVIDIA_DRIVER_CAPABILITIES=compute,utility,video
    CMD ["deepstream-app", "-c", "/app/config.txt"]
"""

from __future__ import annotations

from collections.abc import Iterator

from imagelint.facts.gpuenv import driver_capabilities
from imagelint.rules.base import (
    NEEDS_CONFIG,
    NEEDS_FILES,
    WARNING,
    Finding,
    FindingFactory,
    RuleContext,
)

ID = "IL304"
NAME = "driver-capabilities-mismatch"
SEVERITY = WARNING
TITLE = "NVIDIA_DRIVER_CAPABILITIES lacks what the image needs"
NEEDS = (NEEDS_CONFIG, NEEDS_FILES)
REFERENCES = ("https://docs.nvidia.com/datacenter/cloud-native/container-toolkit/latest/docker-specialized.html",)
REMEDIATION = "Set NVIDIA_DRIVER_CAPABILITIES to every capability the image uses (e.g. compute,utility,video)."

finding = FindingFactory(ID, NAME, SEVERITY, REMEDIATION)

# Inputs that carry no env of their own: an unset value there is unknown, not "utility,compute".
STANDALONE_KINDS = frozenset({"appconfig", "script", "python"})


def check(ctx: RuleContext) -> Iterator[Finding]:
    gpu = ctx.facts.gpu
    if gpu.driver_capabilities is None and ctx.facts.kind in STANDALONE_KINDS:
        # A DeepStream config or script read on its own: the image that runs it, and so its
        # NVIDIA_DRIVER_CAPABILITIES, is not known here (DeepStream images set "all").
        return
    caps = driver_capabilities(ctx.facts)  # the toolkit's semantics, in the facts layer
    if caps.all:
        return  # "all", or unset in a legacy image: every capability is mounted
    setting = caps.setting
    raw = setting.value if setting is not None else ""
    described = f"NVIDIA_DRIVER_CAPABILITIES={raw if len(raw) <= 60 else raw[:59] + chr(0x2026)}" if caps.how == "set" else (
        "NVIDIA_DRIVER_CAPABILITIES is empty (means utility,compute)" if caps.how == "empty"
        else "NVIDIA_DRIVER_CAPABILITIES is unset (means utility,compute)"
    )
    where = setting.provenance if setting is not None else None
    for cap, why in gpu.needs_capabilities:
        if not caps.includes(cap):
            yield finding(
                f"{described} but the image needs '{cap}': its driver libraries will not be mounted",
                where or why, details=[f"'{cap}' is needed by {why.describe()}"], capability=cap, needed_by=why.describe(),
            )
    if not caps.includes("compute") and ctx.facts.cuda.versions:
        yield finding(
            f"{described} omits 'compute' in a CUDA image: libcuda will not be mounted",
            where, capability="compute",
        )
