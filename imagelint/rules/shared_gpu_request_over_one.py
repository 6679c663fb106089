"""A container asks for more than one replica of a shared GPU where that fails admission.

With device-plugin GPU sharing (time-slicing or MPS) a node advertises each GPU as several
replicas of a resource (``nvidia.com/gpu``, or ``nvidia.com/gpu.shared`` with
``renameByDefault``). Asking for 2 replicas does not give 2 GPUs' worth of compute; with
``failRequestsGreaterThanOne: true`` the plugin rejects such a request and the pod fails with
``UnexpectedAdmissionError``. Needs a target that says how the pool shares its GPUs (target
file ``shared-resources`` / ``fail-requests-greater-than-one``).

Remediation: request one replica per container (or use whole GPUs / MIG for more compute).

Anti-pattern::

    limits: {nvidia.com/gpu.shared: 2}     # pool: failRequestsGreaterThanOne = true

Best practice::

    limits: {nvidia.com/gpu.shared: 1}
"""

from __future__ import annotations

from collections.abc import Iterator

from imagelint.kube.scheduler import parse_quantity, workload
from imagelint.rules.base import (
    ERROR,
    INFO,
    NEEDS_CONFIG,
    NEEDS_TARGET,
    Finding,
    FindingFactory,
    RuleContext,
)

ID = "IL608"
NAME = "shared-gpu-request-over-one"
SEVERITY = ERROR
TITLE = "More than one replica of a shared GPU requested"
NEEDS = (NEEDS_CONFIG, NEEDS_TARGET)
REFERENCES = ("https://github.com/NVIDIA/k8s-device-plugin#shared-access-to-gpus",)
REMEDIATION = "Request 1 replica of a shared GPU resource per container."

finding = FindingFactory(ID, NAME, SEVERITY, REMEDIATION)


def check(ctx: RuleContext) -> Iterator[Finding]:
    w = workload(ctx.facts)
    if w is None or not ctx.target.known:
        return
    for r in w.resources:
        amount = parse_quantity(r.limit if r.limit is not None else r.request)
        if amount is None or amount <= 1:
            continue
        sharing = [p for p in ctx.pools if r.name in p.shared_resources]
        if not sharing:
            continue
        failing = [p for p in sharing if p.fail_requests_greater_than_one]
        who = f"container {w.container} of {w.shape or w.kind} {w.name}"
        if failing and len(failing) == len(sharing):
            yield finding(
                f"{who} asks for {amount} of the shared resource {r.name}: the pod fails admission "
                "(UnexpectedAdmissionError)",
                r.provenance, resource=r.name,
                details=[f"it is a shared (time-sliced/MPS) resource on pool(s) {', '.join(p.name for p in failing)}, "
                         "with failRequestsGreaterThanOne"],
            )
        else:
            yield finding(
                f"{who} asks for {amount} of the shared resource {r.name}: no more GPU than 1",
                r.provenance, details=[f"on pool(s) {', '.join(p.name for p in sharing)} the replicas share one GPU's "
                                       "compute"], severity=INFO, remediation="", resource=r.name,
            )
