"""A container asks for an ``nvidia.com/*`` resource that no target pool advertises.

The NVIDIA device plugin decides which resource names a node offers: plain
``nvidia.com/gpu`` by default and under the ``single`` MIG strategy;
``nvidia.com/mig-<g>g.<mem>gb`` names only under the ``mixed`` strategy;
``<name>.shared`` only when time-slicing/MPS renames shared GPUs; other names
only when the plugin config renames them. A pod asking for a name no node has
stays ``Pending`` forever ("Insufficient nvidia.com/mig-1g.5gb").

A pool's names are its listed ``resources`` (from the cluster or the target
file) and ``shared-resources`` when known; otherwise the plugin's default naming
for the pool's MIG strategy and MIG profiles. MIG names include the suffixed
profiles of newer plugins (``nvidia.com/mig-1g.10gb+me``, ``mig-1g.24gb``...).

With flags only (``--driver``/``--gpu``) the MIG strategy and sharing config are
unknown: a MIG, ``.shared`` or HAMi (``nvidia.com/gpumem``, ``gpucores``) name is
then an info note ("strategy unknown"), another unknown name a warning; with a
target file or ``--cluster`` the verdict is exact.

Remediation: request a resource name the cluster's device plugin advertises,
or change the plugin's MIG strategy / sharing config.

Anti-pattern::

    limits: {nvidia.com/mig-1g.5gb: 1}   # cluster runs migStrategy=none

Best practice::

    limits: {nvidia.com/gpu: 1}
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import TYPE_CHECKING

from imagelint.deploytarget import NodePool
from imagelint.kube.scheduler import workload
from imagelint.rules._resources import nearest_resource
from imagelint.rules._verdict import fit
from imagelint.rules.base import (
    ERROR,
    INFO,
    NEEDS_CONFIG,
    NEEDS_TARGET,
    WARNING,
    Finding,
    FindingFactory,
    RuleContext,
)

if TYPE_CHECKING:
    from imagelint.matrix.answers.stack import DevicePluginNaming
    from imagelint.matrix.model import Matrix

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


def _naming(matrix: Matrix | None) -> DevicePluginNaming:
    # The device plugin's naming is matrix data (device_plugin_resource_names); a matrix without
    # that table (an old or minimal --matrix file, or none at all) falls back to the shipped one.
    from imagelint.matrix.shipped import device_plugin_naming

    return device_plugin_naming(matrix)


# HAMi's vGPU device plugin publishes these next to nvidia.com/gpu (HAMi docs, "Use NVIDIA vGPU":
# https://github.com/Project-HAMi/HAMi/blob/master/docs/develop/resources.md); they are not NVIDIA's.
HAMI_RESOURCES = frozenset({"nvidia.com/gpumem", "nvidia.com/gpumem-percentage", "nvidia.com/gpucores",
                            "nvidia.com/priority"})


def naming_known(pool: NodePool) -> bool:
    """Whether the pool says how its device plugin names resources (a cluster, a target file with
    resources / MIG strategy / sharing), as opposed to a pool made from --driver/--gpu flags."""
    return bool(pool.resources) or pool.mig_strategy is not None or bool(pool.shared_resources) or \
        not pool.source.startswith(("flags", "config:"))


def advertised(pool: NodePool, naming: DevicePluginNaming | None = None) -> tuple[set[str], bool]:
    """Resource names the pool offers, and whether they are known (listed) or derived."""
    naming = naming or _naming(None)
    prefix = naming.prefix + "/"
    if pool.resources:
        return {n for n in pool.resources if n.startswith(prefix)} | set(pool.shared_resources), True
    names: set[str] = set(pool.shared_resources)
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
    if name in HAMI_RESOURCES:
        return f"a HAMi vGPU resource: only nodes running HAMi's device plugin offer it (pool {pool.name} does not)"
    return ""


def _unjudged(r, w, naming: DevicePluginNaming):
    """The finding for a name no pool advertises when every pool comes from flags (naming unknown)."""
    who = f"container {w.container} of {w.shape or w.kind} {w.name}"
    if r.name in HAMI_RESOURCES:
        return finding(
            fit([f"{who} asks for {r.name}, a HAMi vGPU resource: not checked", f"a container asks for {r.name}, "
                 "a HAMi vGPU resource: not checked"]),
            r.provenance, severity=INFO, remediation="", resource=r.name, strategy="unknown",
            details=["it exists only where HAMi's device plugin runs, which the flags do not say (give a target "
                     "file with the pool's resources to check it)"],
        )
    if naming.is_mig_resource(r.name) or naming.is_shared(r.name):
        kind = "MIG" if naming.is_mig_resource(r.name) else "shared (time-slicing/MPS renamed)"
        needs = "the mixed MIG strategy" if kind == "MIG" else "sharing with renameByDefault (or a rename)"
        return finding(
            fit([f"{who} asks for the {kind} resource {r.name}: the strategy is unknown",
                 f"a container asks for the {kind} resource {r.name}: the strategy is unknown"]),
            r.provenance, severity=INFO, remediation="", resource=r.name, strategy="unknown",
            details=[f"the device plugin advertises it only under {needs}; with --driver/--gpu alone the "
                     "strategy is unknown (give a target file or --cluster for a verdict)"],
        )
    return finding(
        fit([f"{who} asks for {r.name}, which the NVIDIA device plugin does not advertise by default",
             f"a container asks for {r.name}, which the NVIDIA device plugin does not advertise by default"]),
        r.provenance, severity=WARNING, resource=r.name, strategy="unknown",
        details=["only a renamed resource would have it; with --driver/--gpu alone the plugin's config is unknown"],
    )


def _hint(name: str, pools: Sequence[NodePool], offers: dict[str, tuple[set[str], bool]],
          naming: DevicePluginNaming) -> list[str]:
    """The nearest name a pool offers, and why the asked-for name is missing, said about that pool."""
    near = nearest_resource(name, ((pool, n) for pool, (names, _) in offers.items() for n in sorted(names)))
    if near is None:
        return []
    pool = next(p for p in pools if p.name == near[0])
    why = _why(name, pool, naming)
    return [f"nearest: {near[1]} on pool {pool.name}", *([why] if why else [])]


def check(ctx: RuleContext) -> Iterator[Finding]:
    w = workload(ctx.facts)
    if w is None or not ctx.target.known:
        return
    naming = _naming(ctx.matrix)
    judged = [p for p in ctx.pools if naming_known(p)]
    for r in w.resources:
        offers = {p.name: advertised(p, naming) for p in ctx.pools}
        if any(r.name in names for names, _ in offers.values()):
            continue
        if not judged:
            yield _unjudged(r, w, naming)
            continue
        offers = {p.name: offers[p.name] for p in judged}
        listing = [
            f"pool {pool} offers {', '.join(sorted(names)) or 'no GPU resource'}{'' if known else ' (default naming)'}"
            for pool, (names, known) in offers.items()
        ]
        who = f"{w.shape or w.kind} {w.name}"
        yield finding(
            fit([f"container {w.container} of {who} asks for {r.name}, which no target pool advertises: "
                 "the pod would stay Pending", f"{who} asks for {r.name}, which no target pool advertises",
                 f"a container asks for {r.name}, which no target pool advertises"]),
            r.provenance, resource=r.name, details=[*_hint(r.name, judged, offers, naming), *listing],
        )
