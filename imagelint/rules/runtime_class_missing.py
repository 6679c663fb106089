"""A GPU pod does not name the RuntimeClass the target needs, or names one the cluster lacks.

When the NVIDIA runtime is not containerd's/CRI-O's default (the GPU
Operator's ``CONTAINERD_SET_AS_DEFAULT=false``, many managed clusters), GPU
pods must say ``runtimeClassName: nvidia``; without it the container starts
under ``runc``, no driver is injected, and CUDA reports "no CUDA-capable device
is detected". Naming a RuntimeClass that does not exist fails admission
("RuntimeClass ... not found").

Remediation: set ``runtimeClassName`` to the RuntimeClass the GPU pools use.

Anti-pattern::

    spec:
      containers: [...]          # pool requires runtimeClassName: nvidia

Best practice::

    spec:
      runtimeClassName: nvidia
"""

from __future__ import annotations

from typing import Iterator

from imagelint.rules.base import NEEDS_CONFIG, NEEDS_TARGET, WARNING, Finding, FindingFactory, RuleContext
from imagelint.rules._kube import workload

ID = "IL605"
NAME = "runtime-class-missing"
SEVERITY = WARNING
TITLE = "GPU pod's RuntimeClass missing or unknown"
NEEDS = (NEEDS_CONFIG, NEEDS_TARGET)
REFERENCES = (
    "https://kubernetes.io/docs/concepts/containers/runtime-class/",
    "https://docs.nvidia.com/datacenter/cloud-native/gpu-operator/latest/getting-started.html",
)
REMEDIATION = "Set runtimeClassName to the RuntimeClass of the GPU pools (often 'nvidia')."

finding = FindingFactory(ID, NAME, SEVERITY, REMEDIATION)


def check(ctx: RuleContext) -> Iterator[Finding]:
    w = workload(ctx.facts, primary_only=True)
    if w is None or not w.pod_resources or not ctx.target.known:
        return
    where = w.scheduling_provenance or w.provenance
    available = set(ctx.target.runtime_classes) | {p.runtime_class for p in ctx.pools if p.runtime_class}
    if w.runtime_class_name:
        if ctx.target.runtime_classes and w.runtime_class_name not in available:
            yield finding(
                f"{w.kind}/{w.name} names runtimeClassName {w.runtime_class_name!r}, which the target does not "
                "have: admission fails with 'RuntimeClass not found'",
                where, details=[f"the target's runtime classes: {', '.join(sorted(available))}"], runtime_class=w.runtime_class_name,
            )
        return
    required = sorted({p.runtime_class for p in ctx.pools if p.runtime_class})
    if required and all(p.runtime_class for p in ctx.pools):
        yield finding(
            f"{w.kind}/{w.name} names no runtimeClassName: it would start without the NVIDIA runtime "
            "('no CUDA-capable device is detected')",
            where, details=[f"it asks for {', '.join(w.pod_resources)}, and the GPU pools need runtimeClassName "
                            f"{' or '.join(repr(r) for r in required)}"], required=",".join(required),
        )
