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

from typing import TYPE_CHECKING, Any, Iterator, Sequence

from imagelint.rules.base import ERROR, NEEDS_CONFIG, NEEDS_TARGET, Finding, FindingFactory, RuleContext
from imagelint.rules._kube import workload
from imagelint.rules._resources import nearest_resource
from imagelint.target import NodePool

if TYPE_CHECKING:
    from imagelint.matrix.model import DevicePluginNaming

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


def _naming(matrix: Any) -> DevicePluginNaming:
    # The device plugin's naming is matrix data (device_plugin_resource_names); a matrix without
    # that table (an old or minimal --matrix file, or none at all) falls back to the shipped one.
    from imagelint.matrix.shipped import device_plugin_naming

    return device_plugin_naming(matrix)


def advertised(pool: NodePool, naming: DevicePluginNaming | None = None) -> tuple[set[str], bool]:
    """Resource names the pool offers, and whether they are known (listed) or derived."""
    naming = naming or _naming(None)
    prefix = naming.prefix + "/"
    if pool.resources:
        return {n for n in pool.resources if n.startswith(prefix)}, True
    names: set[str] = set()
    for gpu in pool.gpus or ():
        names.update(naming.advertised(pool.mig_strategy, tuple(gpu.mig_profiles or ())))
    if not pool.gpus:
        names.add(naming.full_gpu)
    return names, False


def _why(name: str, pool: NodePool, naming: DevicePluginNaming) -> str:
    strategy = pool.mig_strategy or "none"
    if naming.is_mig_resource(name) and strategy != "mixed":
        return f"MIG resources exist only under the mixed MIG strategy (pool {pool.name}: {strategy})"
    if naming.is_shared(name):
        return f"'{naming.shared_suffix}' names exist only when GPU sharing renames resources (pool {pool.name} does not)"
    return ""


def _hint(name: str, pools: Sequence[NodePool], offers: dict[str, tuple[set[str], bool]], naming: DevicePluginNaming) -> str:
    """Why the name is missing, said about the pool offering the nearest name, and that name."""
    near = nearest_resource(name, ((pool, n) for pool, (names, _) in offers.items() for n in sorted(names)))
    if near is None:
        return ""
    pool = next(p for p in pools if p.name == near[0])
    why = _why(name, pool, naming)
    return f" ({why + '; ' if why else ''}nearest: {near[1]} on pool {pool.name})"


def check(ctx: RuleContext) -> Iterator[Finding]:
    w = workload(ctx.facts)
    if w is None or not ctx.target.known:
        return
    naming = _naming(ctx.matrix)
    for r in w.resources:
        offers = {p.name: advertised(p, naming) for p in ctx.pools}
        if any(r.name in names for names, _ in offers.values()):
            continue
        listing = "; ".join(
            f"{pool}: {', '.join(sorted(names)) or 'none'}{'' if known else ' (default naming)'}"
            for pool, (names, known) in offers.items()
        )
        hint = _hint(r.name, ctx.pools, offers, naming)
        yield finding(
            f"container {w.container} of {w.kind}/{w.name} asks for {r.name}, which no target pool advertises"
            f"{hint}; the pod would stay Pending. Pools offer: {listing}",
            r.provenance, resource=r.name,
        )
