"""A container that gets GPUs is privileged: it sees every GPU of the node.

A privileged container (``securityContext.privileged: true``, or the ``SYS_ADMIN`` capability;
``privileged: true`` / ``cap_add: [SYS_ADMIN]`` in a Compose service) gets every device node of the
host, ``/dev/nvidia0`` … ``/dev/nvidiaN`` included, whatever it requested: the device plugin's
allocation (or Compose's ``device_ids``) and ``NVIDIA_VISIBLE_DEVICES`` no longer isolate it. Its
CUDA processes can use, and fill, GPUs that the scheduler gave to other pods. The NVIDIA container
toolkit honours ``NVIDIA_VISIBLE_DEVICES`` from privileged containers even where it refuses it
from unprivileged ones. Checked for containers that request GPUs (``nvidia.com/*``
resources, GPU claims, CDI devices, a ``NVIDIA_VISIBLE_DEVICES`` value, Compose GPU requests or
``runtime: nvidia``); privileged system DaemonSets that request no GPU (the device plugin, DCGM) are
not reported.

Remediation: drop ``privileged`` (and ``SYS_ADMIN``); request the GPUs the container needs and
add only the capabilities it needs.

Anti-pattern::

    containers:
    - name: train
      securityContext: {privileged: true}
      resources:
        limits: {nvidia.com/gpu: 1}

Best practice::

    containers:
    - name: train
      securityContext: {allowPrivilegeEscalation: false}
      resources:
        limits: {nvidia.com/gpu: 1}
"""

from __future__ import annotations

from collections.abc import Iterator

from imagelint.facts.gpuenv import selected_devices
from imagelint.rules.base import (
    NEEDS_CONFIG,
    WARNING,
    Finding,
    FindingFactory,
    RuleContext,
)

ID = "IL609"
NAME = "privileged-gpu-container"
SEVERITY = WARNING
TITLE = "A GPU container is privileged and sees every GPU of the node"
NEEDS = (NEEDS_CONFIG,)
REFERENCES = (
    "https://docs.nvidia.com/datacenter/cloud-native/container-toolkit/latest/docker-specialized.html",
    "https://github.com/NVIDIA/k8s-device-plugin",
)
REMEDIATION = "Drop privileged / SYS_ADMIN from GPU containers; request the GPUs they need."

finding = FindingFactory(ID, NAME, SEVERITY, REMEDIATION)


def check(ctx: RuleContext) -> Iterator[Finding]:
    facts = ctx.facts
    visible = facts.gpu.visible_devices
    by_env = visible is not None and selected_devices(visible.value)[0] != "none"
    w = facts.workload
    if w is not None and w.privileged is not None and (w.container_requests_gpu or by_env):
        yield finding(
            f"container {w.container} of {w.kind}/{w.name} is privileged: it sees every GPU of its node, not just "
            "the ones it requested",
            w.privileged,
            details=["the device plugin's allocation and NVIDIA_VISIBLE_DEVICES do not isolate a privileged container"],
        )
    service = facts.compose
    if service is not None and service.privileged is not None and (service.gets_gpus or by_env):
        yield finding(
            f"service {service.name} is privileged: it sees every GPU of the host, whatever its device request says",
            service.privileged,
        )
