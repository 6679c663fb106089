"""Kubernetes scheduling semantics the IL60x rules share (API behaviour, not NVIDIA facts).

Toleration matching follows ``k8s.io/api/core/v1`` ``Toleration.ToleratesTaint``;
node selectors and required node affinity follow the scheduler's
``NodeAffinity`` filter; quantities follow ``resource.Quantity`` (decimal SI and
binary suffixes). A pool whose labels are not known cannot be judged against a
selector: ``match_pool`` then says ``None`` (unknown) rather than guessing.
"""

from __future__ import annotations

import functools
from typing import TYPE_CHECKING, Mapping

from imagelint.facts.model import ImageFacts, NodeSelectorRequirement, Toleration, WorkloadFacts
from imagelint.lazyre import lazy_pattern
from imagelint.target import NodePool, Taint

if TYPE_CHECKING:
    from fractions import Fraction

# Well-known labels that name one node (kubernetes.io/docs/reference/labels-annotations-taints/):
# a pool's labels never hold them, so a selector on them cannot be judged against a pool.
NODE_IDENTITY_LABELS = frozenset({"kubernetes.io/hostname", "node.kubernetes.io/instance-id"})

# Taint effects that keep a pod off a node (PreferNoSchedule only discourages).
BLOCKING_EFFECTS = frozenset({"NoSchedule", "NoExecute"})


# A quantity's number as Kubernetes writes one, its exponent bounded (real quantities use none).
_QUANTITY_NUMBER = lazy_pattern(r"[+-]?(?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+)(?:[eE][+-]?[0-9]{1,2})?")


@functools.cache
def _suffixes() -> dict[str, Fraction]:
    # fractions (and the decimal module it loads) is imported on first use: only manifests
    # with GPU quantities need it, and ``imagelint lint Dockerfile`` starts faster without.
    from fractions import Fraction

    return {
        "": Fraction(1), "m": Fraction(1, 1000), "k": Fraction(10**3), "M": Fraction(10**6), "G": Fraction(10**9),
        "T": Fraction(10**12), "P": Fraction(10**15), "E": Fraction(10**18),
        "Ki": Fraction(2**10), "Mi": Fraction(2**20), "Gi": Fraction(2**30), "Ti": Fraction(2**40),
        "Pi": Fraction(2**50), "Ei": Fraction(2**60),
    }


def parse_quantity(text: str | None) -> Fraction | None:
    """``"1"`` → 1, ``"1000m"`` → 1, ``"2Ki"`` → 2048; None when not a quantity."""
    from fractions import Fraction

    if text is None:
        return None
    s = str(text).strip()
    suffixes = _suffixes()
    for suffix in sorted(suffixes, key=len, reverse=True):
        if suffix and s.endswith(suffix):
            number, mult = s[: -len(suffix)], suffixes[suffix]
            break
    else:
        number, mult = s, Fraction(1)
    if len(number) > 64 or not _QUANTITY_NUMBER.fullmatch(number):  # Fraction("1e3000000") alone takes 16 s
        return None
    try:
        return Fraction(number) * mult
    except (ValueError, ZeroDivisionError):
        return None


def workload(facts: ImageFacts, primary_only: bool = False) -> WorkloadFacts | None:
    """The workload facts of a manifest container (None for any other input)."""
    w = facts.workload
    if w is None or (primary_only and not w.primary):
        return None
    return w


def tolerates(toleration: Toleration, taint: Taint) -> bool:
    if toleration.effect and toleration.effect != taint.effect:
        return False
    if toleration.key and toleration.key != taint.key:
        return False
    if toleration.operator == "Exists":
        return True
    if not toleration.key:  # an empty key is only valid with Exists
        return False
    return (toleration.value or "") == (taint.value or "")


def untolerated_taints(pool: NodePool, tolerations: tuple[Toleration, ...]) -> list[Taint]:
    return [
        t for t in pool.taints
        if t.effect in BLOCKING_EFFECTS and not any(tolerates(tol, t) for tol in tolerations)
    ]


def labels_complete(pool: NodePool) -> bool:
    """Whether the pool's labels are every label its nodes carry (read from a cluster, or a target
    file that is a snapshot of one), so that a label it lacks is absent, not merely undescribed."""
    from imagelint.target.file import SNAPSHOT_OF

    return pool.source == "cluster" or pool.source.startswith("cluster:") or f"({SNAPSHOT_OF}cluster:" in pool.source


def pool_labels(pool: NodePool) -> dict[str, str]:
    """The pool's node labels, plus the well-known arch label when the pool states its arch."""
    labels = dict(pool.labels)
    if pool.arch:
        labels.setdefault("kubernetes.io/arch", pool.arch)
        labels.setdefault("beta.kubernetes.io/arch", pool.arch)
    return labels


def _requirement(req: NodeSelectorRequirement, labels: Mapping[str, str]) -> bool:
    present = req.key in labels
    value = labels.get(req.key)
    op = req.operator
    if op == "In":
        return present and value in req.values
    if op == "NotIn":
        return not present or value not in req.values
    if op == "Exists":
        return present
    if op == "DoesNotExist":
        return not present
    if op in ("Gt", "Lt") and present and req.values:
        try:
            left, right = int(str(value)), int(req.values[0])
        except ValueError:
            return False
        return left > right if op == "Gt" else left < right
    return False


def match_pool(w: WorkloadFacts, pool: NodePool) -> tuple[bool | None, str]:
    """Whether the pod's nodeSelector and required affinity select the pool's nodes.

    Returns (True, "") / (False, why) / (None, why-unknown). Labels of a pool
    built from flags are unknown (only its arch is): any selector key other
    than the arch label makes the answer unknown.
    """
    if not w.node_selector and not w.affinity_terms:
        return True, ""
    keys = set(w.node_selector) | {r.key for term in w.affinity_terms for r in term}
    per_node = sorted(keys & NODE_IDENTITY_LABELS)
    if per_node:
        # A pool describes many nodes; one node's name cannot be judged against it.
        return None, f"pool {pool.name}: selects single nodes by {', '.join(per_node)}"
    labels = pool_labels(pool)
    undescribed = sorted(k for k in keys if k not in labels)
    if undescribed and not pool.labels:
        return None, f"pool {pool.name}: node labels unknown"
    if undescribed and not labels_complete(pool):
        # A target file names the labels its author thought of; the operator's own
        # (nvidia.com/gpu.deploy.*) and feature discovery's (nvidia.com/gpu.memory) may be on the
        # nodes all the same. Only a cluster's own node labels are the whole set.
        return None, f"pool {pool.name}: the target does not describe label(s) {', '.join(undescribed)}"
    for key, value in w.node_selector.items():
        if labels.get(key) != value:
            have = labels.get(key)
            return False, f"nodeSelector {key}={value} (pool {pool.name} has {key}={have})" if have is not None else \
                f"nodeSelector {key}={value} (pool {pool.name} has no {key} label)"
    # An empty node-selector term matches no node (core/v1 NodeSelectorTerm).
    if w.affinity_terms and not any(term and all(_requirement(r, labels) for r in term) for term in w.affinity_terms):
        return False, f"no required node-affinity term matches pool {pool.name}"
    return True, ""


def pod_gpu_count(facts: ImageFacts) -> int | None:
    """How many GPUs the container gets, when a manifest says (``nvidia.com/gpu`` limit, MIG
    resources, GPU claims of ExactCount); None when unknown (an image, a claim of ``All``...)."""
    w = facts.workload
    if w is None:
        return None
    total = 0
    known = False
    for r in w.resources:
        if r.name == "nvidia.com/gpu" or r.name.startswith("nvidia.com/mig-"):
            q = parse_quantity(r.limit if r.limit is not None else r.request)
            if q is None:
                return None
            total += int(q)
            known = True
    for claim in w.container_gpu_claims:
        for req in claim.requests:
            if (req.allocation_mode or "ExactCount") != "ExactCount":
                return None
            total += req.count or 1
            known = True
    return total if known else None


def asks_for(w: WorkloadFacts) -> str:
    """What GPUs a pod asks for, for messages: resources, GPU claims, CDI devices."""
    parts = list(w.pod_resources)
    parts += [f"ResourceClaim {c.name} ({c.device})" for c in w.gpu_claims]
    parts += [f"CDI device {d}" for d in w.cdi_devices]
    return ", ".join(parts)
