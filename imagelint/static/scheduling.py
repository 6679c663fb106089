"""``lint --image``: the target pools a manifest's own scheduling reaches.

An image named next to manifests is checked against the pools its GPU pods can
land on: pools whose blocking taints the pod tolerates and whose labels its
nodeSelector / required affinity select (a pool whose labels are unknown is
kept: it may match). Kubernetes matching lives in ``imagelint.rules._kube``
so that IL603/IL604 and this narrowing agree.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Sequence

from imagelint.facts.model import ImageFacts
from imagelint.rules._kube import match_pool, untolerated_taints
from imagelint.target import Target


def scheduled_target(manifest_facts: Sequence[ImageFacts], target: Target) -> tuple[Target, str | None]:
    """The target narrowed to pools some GPU workload of the manifests reaches, and a note."""
    if not target.known:
        return target, None
    pods = [f.workload for f in manifest_facts if f.workload is not None and f.workload.primary and f.workload.requests_gpu]
    if not pods:
        return target, "--image: no GPU workload in the manifests; the image is checked against every pool"
    reached = []
    for pool in target.pools:
        if any(not untolerated_taints(pool, w.tolerations) and match_pool(w, pool)[0] is not False for w in pods):
            reached.append(pool)
    if not reached:
        return target, ("--image: the manifests' GPU workloads reach no target pool (see IL603/IL604); "
                        "the image is checked against every pool")
    names = ", ".join(p.name for p in reached)
    return replace(target, pools=tuple(reached), source=f"{target.source} (pools the manifests reach: {names})"), None
