"""A GPU pod's nodeSelector or required node affinity matches no target GPU pool.

A selector such as ``nvidia.com/gpu.product: Tesla-T4`` (a GPU Feature
Discovery label), ``cloud.google.com/gke-accelerator: nvidia-l4`` or
``kubernetes.io/arch: arm64`` that no GPU node carries leaves the pod ``Pending``
("didn't match Pod's node affinity/selector"); a DaemonSet whose selector matches
no node runs no pods at all.

Each requirement (``In``, ``NotIn``, ``Exists``, ``DoesNotExist``, ``Gt``, ``Lt``) is judged
against each pool:

- a label the pool lists (from the cluster, or the target file's ``labels``; a pool's ``arch``
  gives ``kubernetes.io/arch``) is compared as the scheduler does; a label a pool read from a
  cluster (``--cluster``, or a snapshot file) lacks is absent;
- a label that names the GPU is judged against the pool's GPU even when the target does not list
  it (``matrices/node-labels.toml``, each row with its source): GKE's
  ``cloud.google.com/gke-accelerator`` and ``gke-gpu-partition-size``, EKS/Karpenter's
  ``k8s.amazonaws.com/accelerator`` and ``karpenter.k8s.aws/instance-gpu-name`` / ``-count`` /
  ``-memory`` / ``instance-family``, AKS's ``accelerator``, CoreWeave's ``gpu.nvidia.com/class`` /
  ``vram``, NFD's ``feature.node.kubernetes.io/pci-10de.present``, GFD's ``nvidia.com/gpu.product``
  / ``.memory`` / ``.count`` / ``.family`` / ``.compute.major`` / ``mig.capable``, and
  ``node.kubernetes.io/instance-type`` (AWS, GCP, Azure, OCI instance types with GPU model, count
  and memory). Values that all name another GPU, memory size or count never match (certain,
  whether the label is on the nodes or not); ``Exists`` / ``DoesNotExist`` on such a label and
  values the table does not know cannot be told;
- any other label (a compute class, a site label) cannot be told, nor can a placeholder value
  (``PLACEHOLDER_INSTANCE_TYPE``, ``${INSTANCE_TYPE}``) or ``kubernetes.io/hostname``.

When every pool is certainly excluded: an error. When none certainly takes the pod and some cannot
be told: one info on the workload naming the labels, and how to describe them
(``imagelint target snapshot --cluster`` writes every node label, or ``labels`` in the target
file). A DRA claim's CEL device selectors are judged the same way against the pools' GPU models and
drivers (``productName``, MIG ``profile``, ``architecture``, ``driverVersion`` /
``cudaComputeCapability`` / ``cudaDriverVersion`` compared with ``semver``; other expressions are
not guessed).

Remediation: select labels the GPU nodes carry (``kubectl get nodes
--show-labels``), or drop the selector and let the GPU request place the pod.

Anti-pattern::

    nodeSelector: {cloud.google.com/gke-accelerator: nvidia-l4}   # the pool's nodes have T4s

Best practice::

    nodeSelector: {cloud.google.com/gke-accelerator: nvidia-tesla-t4}
"""

from __future__ import annotations

from collections.abc import Iterator

from imagelint.kube.scheduler import NODE_IDENTITY_LABELS, asks_for, selection, workload
from imagelint.rules.base import (
    ERROR,
    HEADLINE_LIMIT,
    INFO,
    NEEDS_CONFIG,
    NEEDS_TARGET,
    Finding,
    FindingFactory,
    RuleContext,
)

ID = "IL604"
NAME = "gpu-node-selector-unsatisfiable"
SEVERITY = ERROR
TITLE = "GPU pod's node selector matches no GPU pool"
NEEDS = (NEEDS_CONFIG, NEEDS_TARGET)
REFERENCES = (
    "https://kubernetes.io/docs/concepts/scheduling-eviction/assign-pod-node/",
    "https://github.com/NVIDIA/k8s-device-plugin/tree/main/docs/gpu-feature-discovery",
)
REMEDIATION = "Select labels the target's GPU nodes carry, or remove the selector."

finding = FindingFactory(ID, NAME, SEVERITY, REMEDIATION)


def _claim_requests(w) -> list[tuple[str, tuple[tuple[str, ...], ...]]]:
    """(claim name, the CEL selectors of each of its requests) for GPU claims with selectors."""
    out = []
    for c in w.gpu_claims:
        reqs = tuple(r.selectors for r in c.requests)
        if any(reqs):
            out.append((c.name, reqs))
    return out


def _claims_check(ctx: RuleContext, w) -> Iterator[Finding]:
    from imagelint.kube.cel import claim_can_be_allocated

    claims = _claim_requests(w)
    if not claims:
        return
    verdicts = {p.name: [claim_can_be_allocated(reqs, p.gpus, p.driver, p.cuda_driver_version) for _, reqs in claims]
                for p in ctx.pools}
    if all(any(v is False for v in vs) for vs in verdicts.values()):
        shown = "; ".join(f"claim {name}: {' / '.join(' && '.join(r) for r in reqs if r)}" for name, reqs in claims)
        gpus = "; ".join(f"{p.name}: {', '.join(g.product or '?' for g in p.gpus) or 'GPU model unknown'}"
                         for p in ctx.pools)
        yield finding(
            f"{w.shape or w.kind} {w.name}: its ResourceClaims' device selectors match no GPU of any target pool: "
            "the pod stays Pending",
            w.scheduling_provenance or w.provenance, details=[shown, f"pools: {gpus}"],
        )


def check(ctx: RuleContext) -> Iterator[Finding]:
    w = workload(ctx.facts, primary_only=True)
    if w is None or not w.requests_gpu or not ctx.target.known:
        return
    yield from _claims_check(ctx, w)
    if not w.node_selector and not w.affinity_terms:
        return
    results = [selection(w, p) for p in ctx.pools]
    if any(r.ok is True for r in results):
        return  # some pool takes the pod
    where = w.scheduling_provenance or w.provenance
    if all(r.ok is False for r in results):
        outcome = ("the DaemonSet runs no pods (it places pods only on matching nodes)" if w.kind == "DaemonSet"
                   else "it would stay Pending")
        yield finding(
            f"{w.shape or w.kind} {w.name} asks for {asks_for(w)} but its node selection matches no GPU pool: {outcome}",
            where, details=[r.why for r in results],
        )
        return
    # No pool certainly takes the pod and some cannot be told: say which labels, once per
    # workload, and how to describe them (a certain "no" on the other pools is in the details).
    unknown = list(dict.fromkeys(k for r in results if r.ok is None for k in r.unknown))
    single = [k for k in unknown if k in NODE_IDENTITY_LABELS]
    labels = [k for k in unknown if k not in NODE_IDENTITY_LABELS]
    head = f"{w.shape or w.kind} {w.name} "
    tail = "): whether it reaches a GPU pool is unknown"
    for n in (3, 2, 1):  # as many label keys as the headline holds; every one is in the details
        shown = labels[:n] + ([f"{len(labels) - n} more"] if len(labels) > n else [])
        what = (f"selects on labels the target does not describe ({', '.join(shown)}" if labels
                else f"selects single nodes ({', '.join(single)}")
        if len(head + what + tail) <= HEADLINE_LIMIT:
            break
    yield finding(
        (head + what)[: HEADLINE_LIMIT - len(tail)] + tail,
        where, severity=INFO, details=[r.why for r in results if r.why],
        remediation=(f"Describe the label(s) in the target: `imagelint target snapshot --cluster` writes every node "
                     f"label, or add them to the pool in the target file "
                     f"(labels = {{ \"{(labels or single)[0]}\" = \"...\" }})."),
    )
