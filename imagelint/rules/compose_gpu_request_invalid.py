"""A Docker Compose GPU device request that Compose refuses.

Docker's GPU guide and the Compose specification: a device request under
``deploy.resources.reservations.devices`` must set ``capabilities`` (``[gpu]`` for NVIDIA GPUs) —
without it ``docker compose up`` fails on deployment — and ``count`` and ``device_ids`` are
mutually exclusive (one or the other). The service never starts.

Remediation: add ``capabilities: [gpu]``; keep either ``count`` or ``device_ids``.

Anti-pattern::

    deploy:
      resources:
        reservations:
          devices:
            - driver: nvidia
              count: 1

Best practice::

    deploy:
      resources:
        reservations:
          devices:
            - driver: nvidia
              count: 1
              capabilities: [gpu]
"""

from __future__ import annotations

from collections.abc import Iterator

from imagelint.rules.base import (
    ERROR,
    NEEDS_CONFIG,
    Finding,
    FindingFactory,
    RuleContext,
)

ID = "IL610"
NAME = "compose-gpu-request-invalid"
SEVERITY = ERROR
TITLE = "Docker Compose GPU request without capabilities, or with both count and device_ids"
NEEDS = (NEEDS_CONFIG,)
REFERENCES = (
    "https://docs.docker.com/compose/how-tos/gpu-support/",
    "https://docs.docker.com/reference/compose-file/deploy/#devices",
)
REMEDIATION = "Set capabilities: [gpu] on every GPU device request, and either count or device_ids, not both."

finding = FindingFactory(ID, NAME, SEVERITY, REMEDIATION)


def check(ctx: RuleContext) -> Iterator[Finding]:
    service = ctx.facts.compose
    if service is None:
        return
    for r in service.gpu_requests:
        if r.capabilities is None:
            yield finding(
                f"service {service.name}: GPU device request without capabilities; Compose refuses to deploy it "
                "(write capabilities: [gpu])", r.provenance, form=r.form)
        elif "gpu" not in r.capabilities and (r.driver in (None, "nvidia")):
            yield finding(
                f"service {service.name}: NVIDIA device request with capabilities {list(r.capabilities)} but not gpu; "
                "the NVIDIA runtime is selected by the gpu capability", r.provenance, form=r.form)
        if r.count is not None and r.device_ids:
            yield finding(
                f"service {service.name}: GPU device request sets both count ({r.count}) and device_ids "
                f"({', '.join(r.device_ids)}); Compose accepts only one of them", r.provenance, form=r.form)
