"""A GPU pod does not name the RuntimeClass the target needs, or names one the cluster lacks.

A RuntimeClass is needed only where the pod would otherwise start without the NVIDIA
runtime *and* nothing else injects the GPUs:

* the NVIDIA runtime is the node's default handler (GPU Operator before 25.10, most hand-built
  setups): every pod runs under it, no RuntimeClass needed;
* the device plugin injects devices through CDI in the CRI (``DEVICE_LIST_STRATEGY`` with
  ``cdi-cri``: the GPU Operator's default from 25.10 with CDI on, pods run under runc): none needed;
* a DRA claim's devices are always injected through CDI by the container runtime: none needed;
* otherwise (for example the ``envvar`` strategy with a non-default NVIDIA runtime) the pod must
  say ``runtimeClassName: nvidia``, or it starts under ``runc`` without the driver and CUDA
  reports "no CUDA-capable device is detected".

The pool's setup comes from the cluster (toolkit ``NVIDIA_RUNTIME_SET_AS_DEFAULT`` /
``CONTAINERD_SET_AS_DEFAULT``, the device plugin's ``DEVICE_LIST_STRATEGY``) or the target file
(``nvidia-runtime-default``, ``device-list-strategy``). When the pool has an NVIDIA RuntimeClass
but whether its runtime is the default is unknown, the rule says so at info level. With flags
only nothing is known and nothing is reported. Naming a RuntimeClass that does not exist fails
admission ("RuntimeClass ... not found").

Remediation: set ``runtimeClassName`` to the RuntimeClass the GPU pools use.

Anti-pattern::

    # pool: nvidia-runtime-default = false, device-list-strategy = ["envvar"], runtime-class = "nvidia"
    containers:
    - {name: c, image: nvidia/cuda:12.2.2-base-ubuntu22.04, resources: {limits: {nvidia.com/gpu: 1}}}

Best practice::

    runtimeClassName: nvidia
    containers:
    - {name: c, image: nvidia/cuda:12.2.2-base-ubuntu22.04, resources: {limits: {nvidia.com/gpu: 1}}}
"""

from __future__ import annotations

from collections.abc import Iterator

from imagelint.deploytarget import NodePool
from imagelint.kube.scheduler import workload
from imagelint.rules.base import (
    INFO,
    NEEDS_CONFIG,
    NEEDS_TARGET,
    WARNING,
    Finding,
    FindingFactory,
    RuleContext,
)

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


def needs_runtime_class(pool: NodePool, dra_only: bool) -> bool | None:
    """True: pods must name the pool's RuntimeClass; False: they need none; None: unknown."""
    if not pool.runtime_class or dra_only or "cdi-cri" in pool.device_list_strategy:
        return False
    if pool.nvidia_runtime_default is None:
        return None
    return not pool.nvidia_runtime_default


def check(ctx: RuleContext) -> Iterator[Finding]:
    w = workload(ctx.facts, primary_only=True)
    if w is None or not w.requests_gpu or not ctx.target.known:
        return
    where = w.scheduling_provenance or w.provenance
    available = set(ctx.target.runtime_classes) | {p.runtime_class for p in ctx.pools if p.runtime_class}
    what = ", ".join(w.pod_resources + tuple(f"claim {c.name}" for c in w.gpu_claims) + w.cdi_devices)
    shape = w.shape or w.kind
    if w.runtime_class_name:
        if ctx.target.runtime_classes and w.runtime_class_name not in available:
            yield finding(
                f"{shape} {w.name} names runtimeClassName {w.runtime_class_name!r}, which the target does not "
                "have: admission fails with 'RuntimeClass not found'",
                where, details=[f"the target's runtime classes: {', '.join(sorted(available))}"],
                runtime_class=w.runtime_class_name,
            )
        return
    dra_only = bool(w.gpu_claims) and not w.pod_resources and not w.cdi_devices
    verdicts = {p.name: needs_runtime_class(p, dra_only) for p in ctx.pools}
    required = sorted({p.runtime_class for p in ctx.pools if verdicts[p.name] and p.runtime_class})
    if required and all(v is True for v in verdicts.values()):
        yield finding(
            f"{shape} {w.name} names no runtimeClassName: it would start without the NVIDIA runtime "
            "('no CUDA-capable device is detected')",
            where, required=",".join(required),
            details=[f"it asks for {what}, and on the GPU pools the NVIDIA runtime is not the default and devices are "
                     f"not injected through CDI: it needs runtimeClassName {' or '.join(repr(r) for r in required)}"],
        )
        return
    unknown = [p for p in ctx.pools if verdicts[p.name] is None]
    if unknown and not any(v is False for v in verdicts.values()):
        names = sorted({p.runtime_class for p in unknown if p.runtime_class})
        yield finding(
            f"{shape} {w.name} names no runtimeClassName: whether its GPU pools need one is not known",
            where, severity=INFO, remediation="",
            details=[f"it asks for {what}; pools {', '.join(p.name for p in unknown)} have the RuntimeClass "
                     f"{' / '.join(names)}, but whether the NVIDIA runtime is their default (then none is needed) "
                     "is not known: set nvidia-runtime-default in the target file, or read the cluster"],
        )
