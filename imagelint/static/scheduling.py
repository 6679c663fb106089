"""``lint --image``: the target pools a manifest's own scheduling reaches.

An image named next to manifests is checked against the pools its GPU pods can
land on: pools whose blocking taints the pod tolerates and whose labels its
nodeSelector / required affinity select (a pool whose labels are unknown is
kept: it may match). Kubernetes matching lives in ``imagelint.kube.scheduler``
so that IL603/IL604 and this narrowing agree.
"""

from __future__ import annotations

from dataclasses import replace

from imagelint.deploytarget import Target
from imagelint.facts.model import ImageFacts
from imagelint.kube.scheduler import match_pool, untolerated_taints


def reaches(w, pool) -> bool:
    """Whether a pod can land on the pool: taints tolerated, selectors and claim selectors not
    excluding it (unknown labels or GPU models keep the pool: it may match)."""
    from imagelint.kube.cel import claim_can_be_allocated

    if untolerated_taints(pool, w.tolerations) or match_pool(w, pool)[0] is False:
        return False
    for c in w.gpu_claims:
        reqs = tuple(r.selectors for r in c.requests)
        if claim_can_be_allocated(reqs, pool.gpus, pool.driver, pool.cuda_driver_version) is False:
            return False
    return True


def pod_target(facts: ImageFacts, target: Target) -> Target:
    """For a GPU pod's container: the target narrowed to the pools the pod can reach, when that is
    some but not all of them (none reached: every pool, so IL603/IL604 can say why)."""
    w = facts.workload
    if w is None or not w.requests_gpu or len(target.pools) < 2:
        return target
    reached = tuple(p for p in target.pools if reaches(w, p))
    if not reached or len(reached) == len(target.pools):
        return target
    names = ", ".join(p.name for p in reached)
    return replace(target, pools=reached, source=f"{target.source} (pools the pod reaches: {names})")


class ReachedPools:
    """The target's pools some GPU workload of the manifests reaches, gathered workload by workload
    (no workload is kept: ``lint`` of a manifest stream holds one pod's facts at a time)."""

    def __init__(self, target: Target) -> None:
        self.target = target
        self.gpu_workloads = False
        self._reached: set[int] = set()  # indexes into target.pools

    def add(self, facts: ImageFacts) -> None:
        w = facts.workload
        if not self.target.known or w is None or not w.primary or not w.requests_gpu:
            return
        self.gpu_workloads = True
        for i, pool in enumerate(self.target.pools):
            if i not in self._reached and reaches(w, pool):
                self._reached.add(i)

    def update(self, other: ReachedPools) -> None:
        self.gpu_workloads = self.gpu_workloads or other.gpu_workloads
        self._reached |= other._reached

    def scheduled_target(self) -> tuple[Target, str | None]:
        """The target narrowed to the pools reached, and a note."""
        target = self.target
        if not target.known:
            return target, None
        if not self.gpu_workloads:
            return target, "--image: no GPU workload in the manifests; the image is checked against every pool"
        reached = [pool for i, pool in enumerate(target.pools) if i in self._reached]
        if not reached:
            return target, ("--image: the manifests' GPU workloads reach no target pool (see IL603/IL604); "
                            "the image is checked against every pool")
        names = ", ".join(p.name for p in reached)
        return replace(target, pools=tuple(reached), source=f"{target.source} (pools the manifests reach: {names})"), None
