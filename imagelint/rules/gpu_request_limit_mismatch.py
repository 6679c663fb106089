"""A container's GPU request and limit disagree, or a GPU request has no limit.

GPUs are extended resources: Kubernetes does not overcommit them, so the API
server rejects a pod whose ``nvidia.com/*`` request differs from its limit
("must be equal to ... limit") and one that requests without a limit. Setting
only the limit is fine (the request defaults to it).

Quantities are compared as Kubernetes reads them (``1`` = ``1000m``); the same text on both sides
is equal even when it is a placeholder (``$GPU_PER_NODE``, ``PLACEHOLDER_NUM_GPU_PER_NODE``,
``{{ .Values.gpus }}``); different text that is not a quantity cannot be compared (info).

Remediation: set ``limits`` (and, if you like, the same value under
``requests``) for every ``nvidia.com/*`` resource.

Anti-pattern::

    resources:
      requests: {nvidia.com/gpu: 1}
      limits:   {nvidia.com/gpu: 2}

Best practice::

    resources:
      limits: {nvidia.com/gpu: 1}
"""

from __future__ import annotations

from collections.abc import Iterator

from imagelint.kube.scheduler import parse_quantity, workload
from imagelint.rules.base import (
    ERROR,
    INFO,
    NEEDS_CONFIG,
    Finding,
    FindingFactory,
    RuleContext,
)

ID = "IL601"
NAME = "gpu-request-limit-mismatch"
SEVERITY = ERROR
TITLE = "GPU resource request without an equal limit"
NEEDS = (NEEDS_CONFIG,)
REFERENCES = (
    "https://kubernetes.io/docs/tasks/manage-gpus/scheduling-gpus/",
    "https://kubernetes.io/docs/concepts/configuration/manage-resources-containers/#extended-resources",
)
REMEDIATION = "Set limits for every nvidia.com/* resource; requests, if given, must equal the limits."

finding = FindingFactory(ID, NAME, SEVERITY, REMEDIATION)


def check(ctx: RuleContext) -> Iterator[Finding]:
    w = workload(ctx.facts)
    if w is None:
        return
    for r in w.resources:
        if r.request is None:
            continue
        if r.limit is None:
            yield finding(
                f"container {w.container} of {w.kind}/{w.name} requests {r.name}: {r.request} without a limit; "
                f"the API server rejects GPU requests that have no equal limit",
                r.provenance, resource=r.name, request=r.request,
            )
            continue
        if r.request.strip() == r.limit.strip():
            continue  # the same text: equal, even a placeholder ($GPU_PER_NODE, {{ .Values.gpus }})
        req, lim = parse_quantity(r.request), parse_quantity(r.limit)
        if req is None or lim is None:
            unresolved = [q for q, v in ((r.request, req), (r.limit, lim)) if v is None]
            yield finding(
                f"container {w.container} of {w.kind}/{w.name}: {r.name} request {r.request} and limit {r.limit} "
                f"cannot be compared ({', '.join(unresolved)} is not a quantity; a placeholder filled in later?)",
                r.provenance, severity=INFO, resource=r.name, request=r.request, limit=r.limit,
                details=["the API server rejects the pod unless they are equal once filled in"],
            )
        elif req != lim:
            yield finding(
                f"container {w.container} of {w.kind}/{w.name} requests {r.name}: {r.request} but limits it to "
                f"{r.limit}; GPUs cannot be overcommitted, so requests must equal limits",
                r.provenance, resource=r.name, request=r.request, limit=r.limit,
            )
