"""A GPU pod tolerates none of the taints on the target's GPU pools.

GPU node pools are commonly tainted (``nvidia.com/gpu=present:NoSchedule``,
the GPU Operator's and cloud providers' defaults) so that only GPU workloads
land there. A pod without a matching toleration is never scheduled on them:
it stays ``Pending`` with "node(s) had untolerated taint". Kubernetes'
``ExtendedResourceToleration`` admission plugin (enabled in GKE and other managed
clusters) adds a toleration for ``NoSchedule`` taints keyed by an extended
resource the pod requests (``nvidia.com/gpu``): where those are the only blocking
taints the finding is a warning, since a manifest linted before deploy cannot see
whether the plugin is on; any other taint (``dedicated=gpu:NoSchedule``) is an error.

Remediation: add a toleration for each ``NoSchedule``/``NoExecute`` taint of
the GPU pool the pod should run on.

Anti-pattern::

    # pool taint nvidia.com/gpu=present:NoSchedule, pod has no tolerations (warning)

Best practice::

    tolerations:
    - {key: nvidia.com/gpu, operator: Exists, effect: NoSchedule}
"""

from __future__ import annotations

from collections.abc import Iterator

from imagelint.deploytarget import Taint
from imagelint.kube.scheduler import asks_for, untolerated_taints, workload
from imagelint.rules.base import (
    ERROR,
    NEEDS_CONFIG,
    NEEDS_TARGET,
    WARNING,
    Finding,
    FindingFactory,
    RuleContext,
)

ID = "IL603"
NAME = "gpu-taint-not-tolerated"
SEVERITY = ERROR
TITLE = "GPU pod tolerates no GPU pool's taints"
NEEDS = (NEEDS_CONFIG, NEEDS_TARGET)
REFERENCES = ("https://kubernetes.io/docs/concepts/scheduling-eviction/taint-and-toleration/",)
REMEDIATION = "Add tolerations for the taints of the GPU pool the pod should run on."

finding = FindingFactory(ID, NAME, SEVERITY, REMEDIATION)


def _taint_text(t: Taint) -> str:
    key, value, effect = t.key, t.value, t.effect
    return f"{key}={value}:{effect}" if value else f"{key}:{effect}"


def check(ctx: RuleContext) -> Iterator[Finding]:
    w = workload(ctx.facts, primary_only=True)
    if w is None or not w.requests_gpu or not ctx.target.known:
        return
    blocked = {p.name: untolerated_taints(p, w.tolerations) for p in ctx.pools}
    if any(not taints for taints in blocked.values()):
        return
    listing = "; ".join(f"{pool}: {', '.join(_taint_text(t) for t in taints)}" for pool, taints in blocked.items())
    # Kubernetes' ExtendedResourceToleration admission plugin (on in GKE and other managed
    # clusters) tolerates NoSchedule taints keyed by an extended resource the pod requests.
    admitted = [pool for pool, taints in blocked.items()
                if all(t.key in w.pod_resources and t.effect == "NoSchedule" for t in taints)]
    if admitted:
        yield finding(
            f"{w.shape or w.kind} {w.name} tolerates no taint of the GPU pools: it stays Pending unless "
            "ExtendedResourceToleration is enabled",
            w.scheduling_provenance or w.provenance, severity=WARNING, taints=listing,
            details=[f"it asks for {asks_for(w)}; on {', '.join(admitted)} the only taints are keyed by a resource it "
                     "requests, which the ExtendedResourceToleration admission plugin tolerates where it is enabled "
                     "(GKE and other managed clusters)", f"untolerated: {listing}"],
        )
        return
    yield finding(
        f"{w.shape or w.kind} {w.name} asks for {asks_for(w)} but tolerates the taints of no GPU pool: it would "
        "stay Pending",
        w.scheduling_provenance or w.provenance, taints=listing, details=[f"untolerated: {listing}"],
    )
