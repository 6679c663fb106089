"""A container asks for an ``nvidia.com/*`` resource that no target pool advertises.

The NVIDIA device plugin decides which resource names a node offers: plain
``nvidia.com/gpu`` by default and under the ``single`` MIG strategy;
``nvidia.com/mig-<g>g.<mem>gb`` names only under the ``mixed`` strategy;
``<name>.shared`` only when time-slicing/MPS renames shared GPUs; other names
only when the plugin config renames them. A pod asking for a name no node has
stays ``Pending`` forever ("Insufficient nvidia.com/mig-1g.5gb").

A pool's names are its listed ``resources`` (from the cluster or the target
file) when known; otherwise the plugin's default naming for the pool's MIG
strategy and MIG profiles.

Remediation: request a resource name the cluster's device plugin advertises,
or change the plugin's MIG strategy / sharing config.

Anti-pattern::

    limits: {nvidia.com/mig-1g.5gb: 1}   # cluster runs migStrategy=none

Best practice::

    limits: {nvidia.com/gpu: 1}
"""

from __future__ import annotations

from typing import Iterator

from imagelint.rules.base import ERROR, NEEDS_CONFIG, NEEDS_TARGET, Finding, FindingFactory, RuleContext
from imagelint.rules._kube import workload
from imagelint.target import NodePool

ID = "IL602"
NAME = "gpu-resource-unknown"
SEVERITY = ERROR
TITLE = "GPU resource name not advertised by the target"
NEEDS = (NEEDS_CONFIG, NEEDS_TARGET)
REFERENCES = (
    "https://github.com/NVIDIA/k8s-device-plugin#configuration-option-details",
    "https://docs.nvidia.com/datacenter/cloud-native/kubernetes/latest/index.html",
)
REMEDIATION = "Request a resource name the device plugin advertises (see the target's pools), or change its config."

finding = FindingFactory(ID, NAME, SEVERITY, REMEDIATION)

# k8s-device-plugin naming (README "Configuration option details"; api/config/v1/consts.go).
# TODO(lead): move these into the matrix (device plugin resource naming) when it has a table for them.
DEFAULT_RESOURCE = "nvidia.com/gpu"
MIG_RESOURCE_PREFIX = "nvidia.com/mig-"
SHARED_SUFFIX = ".shared"


def advertised(pool: NodePool) -> tuple[set[str], bool]:
    """Resource names the pool offers, and whether they are known (listed) or derived."""
    if pool.resources:
        return {n for n in pool.resources if n.startswith("nvidia.com/")}, True
    names: set[str] = set()
    mixed = (pool.mig_strategy or "none") == "mixed"
    for gpu in pool.gpus or ():
        if mixed and gpu.mig_profiles:
            names.update(MIG_RESOURCE_PREFIX + p for p in gpu.mig_profiles)
        else:
            names.add(DEFAULT_RESOURCE)
    if not pool.gpus:
        names.add(DEFAULT_RESOURCE)
    return names, False


def _why(name: str, pool: NodePool) -> str:
    strategy = pool.mig_strategy or "none"
    if name.startswith(MIG_RESOURCE_PREFIX) and strategy != "mixed":
        return f"MIG resources exist only under the mixed MIG strategy (pool {pool.name}: {strategy})"
    if name.endswith(SHARED_SUFFIX):
        return f"'{SHARED_SUFFIX}' names exist only when GPU sharing renames resources (pool {pool.name} does not)"
    return ""


def check(ctx: RuleContext) -> Iterator[Finding]:
    w = workload(ctx.facts)
    if w is None or not ctx.target.known:
        return
    for r in w.resources:
        offers = {p.name: advertised(p) for p in ctx.pools}
        if any(r.name in names for names, _ in offers.values()):
            continue
        listing = "; ".join(
            f"{pool}: {', '.join(sorted(names)) or 'none'}{'' if known else ' (default naming)'}"
            for pool, (names, known) in offers.items()
        )
        hints = [h for h in (_why(r.name, p) for p in ctx.pools) if h]
        hint = f" ({hints[0]})" if hints else ""
        yield finding(
            f"container {w.container} of {w.kind}/{w.name} asks for {r.name}, which no target pool advertises"
            f"{hint}; the pod would stay Pending. Pools offer: {listing}",
            r.provenance, resource=r.name,
        )
