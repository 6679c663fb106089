"""The NVIDIA driver or container toolkit is installed into the image.

They belong to the host. The container toolkit (``nvidia-container-toolkit``,
``nvidia-container-runtime``, ``nvidia-docker2``, ``libnvidia-container*``) configures the
container runtime on the node; inside an image it does nothing but add size and CVE surface.
A driver (``cuda-drivers``, ``nvidia-dkms-*``, ``nvidia-kernel-*``) puts its own ``libcuda.so``
into the image: it shadows the library the runtime mounts from the host and fails with
"driver/library version mismatch" on any other driver (the user-space packages
``nvidia-driver-*`` / ``libnvidia-compute-*`` are IL201's). NVIDIA's CUDA images install neither.

Remediation: install the driver and the toolkit on the nodes (or let the GPU Operator do it); in
the image, install only CUDA user-space libraries (``cuda-libraries-*``, ``cuda-runtime-*``).

Anti-pattern::

    RUN apt-get install -y cuda-drivers nvidia-container-toolkit

Best practice::

    FROM nvidia/cuda:12.4.1-runtime-ubuntu22.04
"""

from __future__ import annotations

from collections.abc import Iterator

from imagelint.lazyre import lazy_pattern
from imagelint.rules.base import (
    ERROR,
    NEEDS_CONFIG,
    WARNING,
    Finding,
    FindingFactory,
    RuleContext,
)

ID = "IL702"
NAME = "host-gpu-stack-installed"
SEVERITY = ERROR
TITLE = "NVIDIA driver or container toolkit installed into the image"
NEEDS = (NEEDS_CONFIG,)
REFERENCES = (
    "https://docs.nvidia.com/datacenter/cloud-native/container-toolkit/latest/install-guide.html",
    "https://docs.nvidia.com/cuda/cuda-installation-guide-linux/",
)
REMEDIATION = "Install the driver and the container toolkit on the nodes, never in the image."

finding = FindingFactory(ID, NAME, SEVERITY, REMEDIATION)

_INSTALLER = lazy_pattern(r"\b(?:apt-get|apt|dnf|yum|microdnf|zypper|apk)\b[^;&|\n]*\binstall\b([^;&|\n]*)")
_DRIVER = lazy_pattern(r"(?<![\w.-])(cuda-drivers(?:-\d{3})?|nvidia-dkms-\d{3}(?:-\w+)?|nvidia-kernel-[\w.-]+)(?![\w-])")
_TOOLKIT = lazy_pattern(r"(?<![\w.-])(nvidia-container-toolkit(?:-base)?|nvidia-container-runtime|nvidia-docker2|"
                      r"libnvidia-container(?:1|-tools))(?![\w-])")


def check(ctx: RuleContext) -> Iterator[Finding]:
    build = ctx.facts.build
    if build is None:
        return
    for step in build.run_steps:
        if not step.final_stage:
            continue  # a builder stage's packages do not reach the image
        for m in _INSTALLER.finditer(step.text):
            words = m.group(1)
            for d in dict.fromkeys(x.group(1) for x in _DRIVER.finditer(words)):
                yield finding(f"RUN installs the NVIDIA driver package {d} into the image: its libcuda shadows the "
                              "host driver's and breaks on any other driver version", step.provenance, package=d)
            for t in dict.fromkeys(x.group(1) for x in _TOOLKIT.finditer(words)):
                yield finding(f"RUN installs {t} into the image: the container toolkit configures the node's "
                              "container runtime and does nothing inside a container", step.provenance,
                              severity=WARNING, package=t)
