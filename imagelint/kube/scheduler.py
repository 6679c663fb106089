"""Kubernetes scheduling semantics the IL60x rules share (API behaviour, not NVIDIA facts).

Toleration matching follows ``k8s.io/api/core/v1`` ``Toleration.ToleratesTaint``;
node selectors and required node affinity follow the scheduler's
``NodeAffinity`` filter; quantities follow ``resource.Quantity`` (decimal SI and
binary suffixes). A pool whose labels are not known cannot be judged against a
selector: ``match_pool`` then says ``None`` (unknown) rather than guessing.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING

from imagelint.deploytarget import NodePool, Taint
from imagelint.facts.model import ImageFacts
from imagelint.lazyre import lazy_pattern

# Only a file's workload has the static model's types (rules import this module; a check of an
# image has no workload, so it never defines them): in annotations, and imported where built.
if TYPE_CHECKING:
    from fractions import Fraction

    from imagelint.facts.static_model import (
        NodeSelectorRequirement,
        Toleration,
        WorkloadFacts,
    )

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


@functools.cache
def _suffixes_longest_first() -> tuple[str, ...]:
    return tuple(s for s in sorted(_suffixes(), key=len, reverse=True) if s)


# A manifest stream repeats a handful of quantities ("1", "2", "80Gi") on every pod: each text is
# parsed once. Bounded: an entry is a string of the input and a Fraction; the oldest go first.
def parse_quantity(text: object) -> Fraction | None:
    """``"1"`` → 1, ``"1000m"`` → 1, ``"2Ki"`` → 2048; None when not a quantity."""
    return None if text is None else _parse_quantity(str(text).strip())


@functools.lru_cache(maxsize=1024)
def _parse_quantity(s: str) -> Fraction | None:
    from fractions import Fraction

    suffixes = _suffixes()
    for suffix in _suffixes_longest_first():
        if s.endswith(suffix):
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
    from imagelint.deploytarget.file import SNAPSHOT_OF

    return pool.source == "cluster" or pool.source.startswith("cluster:") or f"({SNAPSHOT_OF}cluster:" in pool.source


def pool_labels(pool: NodePool) -> dict[str, str]:
    """The pool's node labels, plus the well-known arch label when the pool states its arch."""
    labels = dict(pool.labels)
    if pool.arch:
        labels.setdefault("kubernetes.io/arch", pool.arch)
        labels.setdefault("beta.kubernetes.io/arch", pool.arch)
    return labels


def _literal(op: str, values: tuple[str, ...], present: bool, value: str | None) -> bool:
    """``core/v1`` NodeSelectorRequirement against a label the node has (or certainly lacks)."""
    if op == "In":
        return present and value in values
    if op == "NotIn":
        return not present or value not in values
    if op == "Exists":
        return present
    if op == "DoesNotExist":
        return not present
    if op in ("Gt", "Lt") and present and values:
        try:
            left, right = int(str(value)), int(values[0])
        except ValueError:
            return False
        return left > right if op == "Gt" else left < right
    return False


def _described(op: str, values: tuple[str, ...], rule, pool: NodePool) -> bool | None:
    """A requirement on a label the target does not list but the pool's GPU describes
    (``imagelint.deploytarget.gpu_labels``). Whether the label is on the nodes at all depends on the
    provider, so only a value the pool's GPU rules out is certain: ``In`` of values that all name
    other GPUs never matches (present or not), ``Gt``/``Lt`` beyond the pool's range never match."""
    from imagelint.deploytarget.gpu_labels import judge_value, numeric_range

    if op == "In":
        verdicts = [judge_value(rule, v, pool) for v in values]
        if any(v is True for v in verdicts):
            return True
        return False if verdicts and all(v is False for v in verdicts) else None
    if op == "NotIn":
        # Absent matches NotIn; present, the value is the pool's: excluded only if listed, and
        # "consistent" is not "equal", so only "every listed value names another GPU" is certain.
        verdicts = [judge_value(rule, v, pool) for v in values]
        return True if all(v is False for v in verdicts) else None
    if op in ("Gt", "Lt") and values:
        span = numeric_range(rule, pool)
        try:
            bound = int(values[0])
        except ValueError:
            return False  # the API server rejects it; no node matches
        if span is None:
            return None
        low, high = span
        if op == "Gt":
            return True if low > bound else (False if high <= bound else None)
        return True if high < bound else (False if low >= bound else None)
    return None  # Exists / DoesNotExist: whether the provider sets the label is not described


_PLACEHOLDER = lazy_pattern(r"\$\{?[A-Za-z_]|\{\{|^<[^<>]+>$|PLACEHOLDER|^REPLACE[_-]?ME$", re.IGNORECASE)


def is_placeholder(value: str) -> bool:
    """A selector value a template or a README fills in (``$INSTANCE_TYPE``, ``<gpu-type>``)."""
    return bool(_PLACEHOLDER.search(str(value)))


@dataclass(frozen=True)
class Selection:
    """Whether a pod's node selection takes in a pool: ``ok`` True / False (certain) / None
    (cannot be told); ``why`` for messages; ``unknown`` the label keys nothing could judge."""

    ok: bool | None
    why: str = ""
    unknown: tuple[str, ...] = ()


def _requirement(req: NodeSelectorRequirement, labels: Mapping[str, str], pool: NodePool,
                 complete: bool) -> tuple[bool | None, str]:
    """One requirement against a pool: (verdict, what decided it)."""
    from imagelint.deploytarget.gpu_labels import knowledge

    if complete:  # a cluster's nodes: what they carry is all there is (a live pod's value is real)
        return _literal(req.operator, tuple(req.values), req.key in labels, labels.get(req.key)), "label"
    if any(is_placeholder(v) for v in req.values):
        # ``PLACEHOLDER_INSTANCE_TYPE``, ``${INSTANCE_TYPE}`` in a manifest: filled in later.
        return None, "placeholder"
    if req.key in labels:
        return _literal(req.operator, tuple(req.values), req.key in labels, labels.get(req.key)), "label"
    rule = knowledge().rule(req.key)
    if rule is None:
        return None, "unknown"
    return _described(req.operator, tuple(req.values), rule, pool), "described"


def _shown(req: NodeSelectorRequirement) -> str:
    if req.operator == "In" and len(req.values) == 1:
        return f"{req.key}={req.values[0]}"
    values = f" [{', '.join(req.values)}]" if req.values else ""
    return f"{req.key} {req.operator}{values}"


def _term(reqs: tuple[NodeSelectorRequirement, ...], labels: Mapping[str, str], pool: NodePool,
          complete: bool) -> tuple[bool | None, list[str], list[str]]:
    """A conjunction: (verdict, requirements that exclude the pool, keys that cannot be judged)."""
    failed, unknown = [], []
    for req in reqs:
        ok, how = _requirement(req, labels, pool, complete)
        if ok is False:
            failed.append(_shown(req) + _pool_has(req.key, labels, pool, how))
        elif ok is None:
            unknown.append(req.key)
    if failed:
        return False, failed, unknown
    return (None if unknown else True), failed, unknown


def _pool_has(key: str, labels: Mapping[str, str], pool: NodePool, how: str) -> str:
    if how == "label":
        have = labels.get(key)
        return f" (pool {pool.name} has {key}={have})" if have is not None else f" (pool {pool.name} has no {key} label)"
    from imagelint.deploytarget.gpu_labels import pool_gpus

    gpus = ", ".join(g.shown() for g in pool_gpus(pool)) or "no GPU described"
    return f" (pool {pool.name} has {gpus})"


def selection(w: WorkloadFacts, pool: NodePool) -> Selection:
    """Whether the pod's nodeSelector and required affinity select the pool's nodes.

    A label the pool lists is compared as the scheduler does; with a pool read from a cluster
    (``labels_complete``) a label it lacks is absent. Otherwise a label that names the GPU
    (``matrices/node-labels.toml``: provider, GFD, NFD, instance type) is judged against the
    pool's GPU, and any other label cannot be told (``unknown``).
    """
    if not w.node_selector and not w.affinity_terms:
        return Selection(True)
    keys = set(w.node_selector) | {r.key for term in w.affinity_terms for r in term}
    per_node = sorted(keys & NODE_IDENTITY_LABELS)
    if per_node:
        # A pool describes many nodes; one node's name cannot be judged against it.
        return Selection(None, f"pool {pool.name}: selects single nodes by {', '.join(per_node)}", tuple(per_node))
    labels = pool_labels(pool)
    complete = labels_complete(pool)
    from imagelint.facts.static_model import NodeSelectorRequirement

    selector = tuple(NodeSelectorRequirement(k, "In", (v,)) for k, v in w.node_selector.items())
    ok, failed, unknown = _term(selector, labels, pool, complete)
    if ok is False:
        return Selection(False, f"nodeSelector {'; '.join(failed)}")
    if w.affinity_terms:
        # Terms are ORed; an empty node-selector term matches no node (core/v1 NodeSelectorTerm).
        verdicts = [_term(term, labels, pool, complete) if term else (False, [], []) for term in w.affinity_terms]
        if all(v is False for v, _, _ in verdicts):
            shown = "; ".join(", ".join(f) for _, f, _ in verdicts if f)
            return Selection(False, f"no required node-affinity term matches pool {pool.name}"
                             + (f": {shown}" if shown else ""))
        if not any(v is True for v, _, _ in verdicts):
            unknown += [k for v, _, u in verdicts if v is None for k in u]
            ok = None
    if ok is None or unknown:
        keys_unknown = tuple(dict.fromkeys(unknown))
        written = {r.key for term in (selector, *w.affinity_terms) for r in term if any(is_placeholder(v) for v in r.values)}
        described = [k for k in keys_unknown if k not in written]
        why = [f"the target does not describe label(s) {', '.join(described)}"] if described else []
        why += [f"{k} is selected by a placeholder value" for k in keys_unknown if k in written]
        return Selection(None, f"pool {pool.name}: {'; '.join(why)}", keys_unknown)
    return Selection(True)


def match_pool(w: WorkloadFacts, pool: NodePool) -> tuple[bool | None, str]:
    """(True, "") / (False, why) / (None, why-unknown): :func:`selection` without the keys."""
    result = selection(w, pool)
    return result.ok, result.why


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
