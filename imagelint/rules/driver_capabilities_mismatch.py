"""``NVIDIA_DRIVER_CAPABILITIES`` lacks a capability the image needs.

The toolkit mounts only the driver libraries of the listed capabilities
(``compute``, ``utility``, ``video``, ``graphics``, ``display``, ``compat32``,
or ``all``). Unset or empty means ``utility,compute`` (a *legacy* image — one
with ``CUDA_VERSION`` and no ``NVIDIA_REQUIRE_CUDA`` — gets all when unset).
DeepStream and NVENC/NVDEC users need ``video`` (libnvcuvid, libnvidia-encode),
OpenGL/Vulkan need ``graphics``; without them the libraries are simply absent
at run time. A CUDA image whose list omits ``compute`` gets no libcuda at all.

Remediation: list what the image uses, e.g.
``ENV NVIDIA_DRIVER_CAPABILITIES=compute,utility,video``.
"""

from __future__ import annotations

from typing import Iterator

from imagelint.facts.gpuenv import driver_capabilities
from imagelint.rules.base import NEEDS_CONFIG, NEEDS_FILES, WARNING, Finding, FindingFactory, RuleContext

ID = "IL304"
NAME = "driver-capabilities-mismatch"
SEVERITY = WARNING
TITLE = "NVIDIA_DRIVER_CAPABILITIES lacks what the image needs"
NEEDS = (NEEDS_CONFIG, NEEDS_FILES)
REFERENCES = ("https://docs.nvidia.com/datacenter/cloud-native/container-toolkit/latest/docker-specialized.html",)
REMEDIATION = "Set NVIDIA_DRIVER_CAPABILITIES to every capability the image uses (e.g. compute,utility,video)."

finding = FindingFactory(ID, NAME, SEVERITY, REMEDIATION)

def check(ctx: RuleContext) -> Iterator[Finding]:
    gpu = ctx.facts.gpu
    caps = driver_capabilities(ctx.facts)  # the toolkit's semantics, in the facts layer
    if caps.all:
        return  # "all", or unset in a legacy image: every capability is mounted
    setting = caps.setting
    raw = setting.value if setting is not None else ""
    described = f"NVIDIA_DRIVER_CAPABILITIES={raw}" if caps.how == "set" else (
        "NVIDIA_DRIVER_CAPABILITIES is empty (means utility,compute)" if caps.how == "empty"
        else "NVIDIA_DRIVER_CAPABILITIES is unset (means utility,compute)"
    )
    where = setting.provenance if setting is not None else None
    for cap, why in gpu.needs_capabilities:
        if not caps.includes(cap):
            yield finding(
                f"{described} but the image needs '{cap}' ({why.describe()}): the driver libraries of that "
                f"capability will not be mounted",
                where or why, capability=cap, needed_by=why.describe(),
            )
    if not caps.includes("compute") and ctx.facts.cuda.versions:
        yield finding(
            f"{described} omits 'compute' in a CUDA image: libcuda will not be mounted",
            where, capability="compute",
        )
