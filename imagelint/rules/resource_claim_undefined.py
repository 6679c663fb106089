"""A pod's DRA claim is not defined, or a container uses a claim the pod does not list.

With Dynamic Resource Allocation a pod lists its claims in ``spec.resourceClaims`` (each from a
``resourceClaimTemplateName`` or a ``resourceClaimName``) and each container names the ones it
uses in ``resources.claims``. The API server rejects a container claim the pod does not list, and
a pod claim with neither source ("must specify one of resourceClaimName,
resourceClaimTemplateName"; the pre-1.31 ``source:`` wrapper is read too). A template or claim
that does not exist leaves the pod Pending ("resourceclaimtemplate ... not found").

The objects are looked up across every file of one ``imagelint lint`` run (namespaces are not
compared: manifests often omit them). A template a ComputeDomain creates counts as defined. One
that is not in the files linted is reported at info level: it may be applied from elsewhere (a
pre-commit run sees only the staged files), but it must exist in the pod's namespace.

Remediation: define the ResourceClaimTemplate / ResourceClaim the pod names, and list every
claim a container uses under the pod's ``spec.resourceClaims``.

Anti-pattern::

    containers:
    - name: ctr
      resources: {claims: [{name: gpu}]}
    resourceClaims:
    - name: gpus                      # "gpu" is not listed
      resourceClaimTemplateName: single-gpu

Best practice::

    containers:
    - name: ctr
      resources: {claims: [{name: gpu}]}
    resourceClaims:
    - name: gpu
      resourceClaimTemplateName: single-gpu   # defined in the same change
"""

from __future__ import annotations

from collections.abc import Iterator

from imagelint.kube.scheduler import workload
from imagelint.rules.base import (
    ERROR,
    INFO,
    NEEDS_CONFIG,
    Finding,
    FindingFactory,
    RuleContext,
)

ID = "IL606"
NAME = "resource-claim-undefined"
SEVERITY = ERROR
TITLE = "DRA claim not defined or not listed by the pod"
NEEDS = (NEEDS_CONFIG,)
REFERENCES = (
    "https://kubernetes.io/docs/concepts/scheduling-eviction/dynamic-resource-allocation/",
    "https://github.com/NVIDIA/k8s-dra-driver-gpu",
)
REMEDIATION = "Define the ResourceClaimTemplate/ResourceClaim and list each container claim in spec.resourceClaims."

finding = FindingFactory(ID, NAME, SEVERITY, REMEDIATION)


def check(ctx: RuleContext) -> Iterator[Finding]:
    w = workload(ctx.facts)
    if w is None:
        return
    listed = {c.name for c in w.pod_claims}
    for name in w.claims:
        if name not in listed:
            yield finding(
                f"container {w.container} of {w.shape or w.kind} {w.name} uses claim {name!r}, which the pod's "
                "spec.resourceClaims does not list: the API server rejects the pod",
                w.provenance, claim=name, details=[f"the pod's claims: {', '.join(sorted(listed)) or 'none'}"],
            )
    if not w.primary:
        return
    for c in w.pod_claims:
        if not c.template and not c.claim:
            yield finding(
                f"{w.shape or w.kind} {w.name}: resourceClaims entry {c.name!r} names neither "
                "resourceClaimTemplateName nor resourceClaimName; the API server rejects the pod",
                c.provenance, claim=c.name,
            )
        elif c.defined_in is None:
            kind, ref = ("ResourceClaimTemplate", c.template) if c.template else ("ResourceClaim", c.claim)
            yield finding(
                f"{w.shape or w.kind} {w.name}: claim {c.name!r} comes from {kind} {ref!r}, which none of the "
                "files linted defines",
                c.provenance, details=["it must exist in the pod's namespace (else the pod stays Pending), and "
                                       "imagelint cannot tell which devices it gives"], severity=INFO, remediation="", claim=c.name, reference=ref,
            )
