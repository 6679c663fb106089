"""A Docker Compose service pins host GPUs by id.

``device_ids: ["1"]`` (in ``deploy.resources.reservations.devices`` or a ``gpus:`` entry) names a
GPU of the host (``NVIDIA_VISIBLE_DEVICES=1`` with ``runtime: nvidia`` is IL301's), as ``nvidia-smi`` there numbers it. The file then
works only on hosts with that many GPUs, and two services that pin the same id share one GPU
(memory and compute), which nothing warns about at start. Pinning is a deliberate way to split one
multi-GPU host between services: a single pin is info; the same id pinned by two services of a
file is a warning.

Remediation: request a count (``count: 1``) and let Docker pick, or give each service its own
ids (and document the host they are written for).

Anti-pattern::

    services:
      a: {deploy: {resources: {reservations: {devices: [{driver: nvidia, device_ids: ["0"], capabilities: [gpu]}]}}}}
      b: {deploy: {resources: {reservations: {devices: [{driver: nvidia, device_ids: ["0"], capabilities: [gpu]}]}}}}

Best practice::

    services:
      a: {deploy: {resources: {reservations: {devices: [{driver: nvidia, count: 1, capabilities: [gpu]}]}}}}
"""

from __future__ import annotations

from collections.abc import Iterator

from imagelint.rules.base import (
    INFO,
    NEEDS_CONFIG,
    WARNING,
    Finding,
    FindingFactory,
    RuleContext,
)
from imagelint.untrusted import is_digits

ID = "IL611"
NAME = "compose-gpu-pinned"
SEVERITY = WARNING
TITLE = "Docker Compose service pins host GPUs by id"
NEEDS = (NEEDS_CONFIG,)
REFERENCES = ("https://docs.docker.com/compose/how-tos/gpu-support/",)
REMEDIATION = "Request a GPU count and let Docker choose, or give each service GPUs of its own."

finding = FindingFactory(ID, NAME, SEVERITY, REMEDIATION)


def check(ctx: RuleContext) -> Iterator[Finding]:
    service = ctx.facts.compose
    if service is None:
        return
    for r in service.gpu_requests:
        ids = [i for i in r.device_ids if "$" not in i]
        if not ids:
            continue
        shared = {i: service.shared_ids[i] for i in ids if i in service.shared_ids}
        if shared:
            others = sorted({n for names in shared.values() for n in names})
            yield finding(
                f"service {service.name} pins host GPU(s) {', '.join(shared)}, which service(s) {', '.join(others)} "
                "pin too: they share one GPU's memory and compute", r.provenance, ids=list(ids))
            continue
        numeric = [int(i) for i in ids if is_digits(i, 4)]
        needs = f"; it needs a host with at least {max(numeric) + 1} GPUs" if numeric and max(numeric) > 0 else ""
        yield finding(f"service {service.name} pins host GPU(s) {', '.join(ids)}{needs}", r.provenance,
                      severity=INFO, ids=list(ids))
