"""``NVIDIA_VISIBLE_DEVICES=all`` in the image can expose every GPU of a node.

Every official CUDA image sets ``NVIDIA_VISIBLE_DEVICES=all``. With the device
plugin's default ``envvar`` device-list strategy, a container that does *not*
request ``nvidia.com/gpu`` still gets every GPU on the node through that
variable, unless the toolkit sets
``accept-nvidia-visible-devices-envvar-when-unprivileged = false`` (default
true). Reported as a warning for pools known to use the ``envvar`` strategy
without that toolkit setting turned off; as info otherwise (a pool whose
strategy is not known — e.g. given by ``--driver`` alone — may use the default,
``envvar``).

A Dockerfile that only inherits the value from its official CUDA base image is not reported on
its own: ``imagelint lint`` says once per run what the convention means (unless a pool is known
to use the ``envvar`` strategy, where it is a real leak and reported per file).

Remediation: on the cluster, set the plugin's ``deviceListStrategy`` to
``volume-mounts`` (or CDI) and the toolkit's
``accept-nvidia-visible-devices-envvar-when-unprivileged = false``; in the
image, unset the variable if it never needs a GPU.

Anti-pattern::

    # a CPU-only image on GPU nodes (envvar strategy)
    ENV NVIDIA_VISIBLE_DEVICES=all

Best practice::

    # images that never use a GPU (a "#" after an instruction is not a comment in a Dockerfile)
    ENV NVIDIA_VISIBLE_DEVICES=void
"""

from __future__ import annotations

from collections.abc import Iterator

from imagelint.facts.gpuenv import nvidia_visible_devices
from imagelint.rules.base import (
    INFO,
    NEEDS_CONFIG,
    WARNING,
    Finding,
    FindingFactory,
    RuleContext,
)

ID = "IL303"
NAME = "visible-devices-all-leak"
SEVERITY = INFO
TITLE = "NVIDIA_VISIBLE_DEVICES=all can expose every GPU"
NEEDS = (NEEDS_CONFIG,)
TAGS = ("gpu", "gpu-isolation", "configuration", "security")
PRECISION = "medium"
SECURITY_SEVERITY = "5.0"  # medium: every GPU of a node exposed to a pod that asked for none
REFERENCES = ("https://github.com/NVIDIA/nvidia-container-toolkit/blob/main/api/config/v1/config.go",)
REMEDIATION = (
    "Use deviceListStrategy=volume-mounts (or CDI) with accept-nvidia-visible-devices-envvar-when-unprivileged=false."
)

finding = FindingFactory(ID, NAME, SEVERITY, REMEDIATION)

def inherited_from_base(facts) -> bool:
    """A Dockerfile's NVIDIA_VISIBLE_DEVICES=all that only repeats its official CUDA base image:
    the convention is stated once per lint run (imagelint.core.lint), not on every file."""
    setting = facts.gpu.visible_devices
    return bool(facts.kind == "dockerfile" and setting is not None and setting.provenance.key
                and "(from base image" in setting.provenance.key)


def check(ctx: RuleContext) -> Iterator[Finding]:
    visible = nvidia_visible_devices(ctx.facts)
    # The image sets it to all (unset in a legacy image also means all; not reported here).
    setting = visible.setting
    if setting is None or visible.kind != "all":
        return
    if inherited_from_base(ctx.facts) and not any("envvar" in p.device_list_strategy for p in ctx.pools):
        return
    leaky = [p for p in ctx.pools if "envvar" in p.device_list_strategy and p.accept_envvar_unprivileged is not False]
    for pool in leaky:
        yield finding(
            f"NVIDIA_VISIBLE_DEVICES=all: on pool {pool.name} a pod that requests no GPU still sees every GPU of the node",
            setting.provenance, details=[f"the pool's device-list strategy is {','.join(pool.device_list_strategy)} and "
                                         "its toolkit accepts the variable from unprivileged containers"], severity=WARNING, pool=pool,
        )
    if not leaky:
        default = _default_strategy(ctx)
        yield finding(
            "NVIDIA_VISIBLE_DEVICES=all: a container that requests no GPU may get every GPU of the node",
            setting.provenance, details=[f"it does where the device plugin uses the envvar strategy (the default: {default}) "
                                         "and the toolkit accepts the variable from unprivileged containers"],
        )


def _default_strategy(ctx: RuleContext) -> str:
    lookup = getattr(ctx.matrix, "device_plugin_requirement", None)
    return (lookup("default_device_list_strategy") if lookup else None) or "unknown"
