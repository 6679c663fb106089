"""A pod asks for GPUs through a DRA claim and through the device plugin at once.

NVIDIA's DRA driver and the device plugin both publish a node's GPUs; the scheduler counts them
separately, so a pod with a ``gpu.nvidia.com`` / ``mig.nvidia.com`` claim *and* an
``nvidia.com/gpu`` (or MIG) limit can be given the same physical GPU twice, or two pods can
share a GPU each believes it owns. NVIDIA's DRA chart refuses to enable GPU allocation next to
the device plugin for this reason (until KEP 5004, extended-resource bridging, is GA). A claim
for an IMEX channel (ComputeDomain) next to an ``nvidia.com/gpu`` limit is the documented
pattern and is not reported.

Remediation: ask for the GPUs one way: DRA claims on DRA nodes, or ``nvidia.com/gpu`` where the
device plugin runs.

Anti-pattern::

    resources:
      limits: {nvidia.com/gpu: 1}
      claims: [{name: gpu}]          # gpu -> deviceClassName: gpu.nvidia.com

Best practice::

    resources:
      claims: [{name: gpu}]
"""

from __future__ import annotations

from collections.abc import Iterator

from imagelint.kube.scheduler import workload
from imagelint.rules.base import (
    NEEDS_CONFIG,
    WARNING,
    Finding,
    FindingFactory,
    RuleContext,
)

ID = "IL607"
NAME = "gpu-claim-with-device-plugin"
SEVERITY = WARNING
TITLE = "GPUs requested through a DRA claim and the device plugin in one pod"
NEEDS = (NEEDS_CONFIG,)
REFERENCES = (
    "https://github.com/NVIDIA/k8s-dra-driver-gpu",
    "https://github.com/kubernetes/enhancements/issues/5004",
)
REMEDIATION = "Request the GPUs one way: DRA claims or nvidia.com/gpu, not both in one pod."

finding = FindingFactory(ID, NAME, SEVERITY, REMEDIATION)

_DEVICE_PLUGIN_GPU = ("nvidia.com/gpu", "nvidia.com/mig-")


def check(ctx: RuleContext) -> Iterator[Finding]:
    w = workload(ctx.facts, primary_only=True)
    if w is None or not w.gpu_claims:
        return
    plugin = [r for r in w.pod_resources if r == "nvidia.com/gpu" or r.startswith("nvidia.com/mig-")
              or r == "nvidia.com/gpu.shared"]
    if not plugin:
        return
    claims = ", ".join(f"{c.name} ({c.defined_in or c.device})" for c in w.gpu_claims)
    yield finding(
        f"{w.shape or w.kind} {w.name} asks for GPUs from both the device plugin and DRA: where both publish the "
        "same GPUs the scheduler can hand out one GPU twice",
        w.scheduling_provenance or w.provenance,
        details=[f"device plugin: {', '.join(plugin)}", f"DRA claim(s): {claims}"],
    )
