"""The target model: what an image will meet — node pools with their driver, GPUs, toolkit and device plugin.

One model whatever it came from: flags (``--driver``, ``--gpu``...), a target
file (TOML), or a live cluster (``imagelint.cluster``). Rules read only this.
Frozen dataclasses; ``merge_targets`` combines targets from several sources.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from types import MappingProxyType

from imagelint.versions import CudaVersion, DriverVersion


@dataclass(frozen=True)
class GpuSpec:
    """A GPU model in a pool. ``brand`` is the NVML brand string libnvidia-container
    reports (``Tesla``, ``Nvidia``, ``GeForce``...); ``compute_capability`` is ``X.Y``."""

    product: str | None = None
    compute_capability: str | None = None
    brand: str | None = None
    family: str | None = None
    count: int | None = None
    mig_profiles: tuple[str, ...] = ()


@dataclass(frozen=True)
class Taint:
    """A node taint (from the node spec or a target file) that a pod must tolerate to be scheduled there."""

    key: str
    value: str | None = None
    effect: str = "NoSchedule"


@dataclass(frozen=True)
class NodePool:
    """Nodes that share one GPU stack.

    ``driver`` is the full driver version (``535.104.05``); ``cuda_driver_version``
    the CUDA version the driver reports (``12.2``), derived from the matrix
    when not given. ``toolkit`` / ``device_plugin`` are versions without a
    leading ``v``. ``runtime_mode`` is the container toolkit's mode
    (``legacy``, ``cdi``, ``jit-cdi``, ``csv``; None = derive from the toolkit
    version). ``device_list_strategy`` / ``mig_strategy`` are the device
    plugin's. ``resources`` maps advertised resource names to allocatable
    counts. ``runtime_classes`` are RuntimeClass handler names available.
    """

    name: str
    driver: DriverVersion | None = None
    cuda_driver_version: CudaVersion | None = None
    gpus: tuple[GpuSpec, ...] = ()
    arch: str | None = None  # amd64 | arm64
    toolkit: str | None = None
    runtime_mode: str | None = None
    accept_envvar_unprivileged: bool | None = None
    device_plugin: str | None = None
    device_list_strategy: tuple[str, ...] = ()
    mig_strategy: str | None = None
    resources: Mapping[str, int] = field(default_factory=lambda: MappingProxyType({}))
    taints: tuple[Taint, ...] = ()
    labels: Mapping[str, str] = field(default_factory=lambda: MappingProxyType({}))
    runtime_class: str | None = None
    # Whether the NVIDIA runtime is the container runtime's default handler (GPU Operator
    # before 25.10, most hand-built setups): then GPU pods need no RuntimeClass. None = unknown.
    nvidia_runtime_default: bool | None = None
    # Device-plugin GPU sharing (time-slicing / MPS): shared resource name → replicas, and
    # ``failRequestsGreaterThanOne`` (a request > 1 of a shared resource fails admission).
    shared_resources: Mapping[str, int] = field(default_factory=lambda: MappingProxyType({}))
    fail_requests_greater_than_one: bool | None = None
    node_count: int | None = None  # None: not said (flags, a target file without node-count)
    source: str = "flags"  # flags | file:PATH | cluster:CONTEXT

    def __post_init__(self) -> None:
        # The edges hand over parsed values; text given directly (tests, library callers) is
        # parsed here once, so every pool carries its versions typed.
        if self.driver is not None and not isinstance(self.driver, DriverVersion):
            object.__setattr__(self, "driver", DriverVersion(self.driver))
        if self.cuda_driver_version is not None and not isinstance(self.cuda_driver_version, CudaVersion):
            object.__setattr__(self, "cuda_driver_version", CudaVersion(self.cuda_driver_version))


@dataclass(frozen=True)
class Target:
    """All the pools an image may land on. Empty ``pools`` means no target was given."""

    pools: tuple[NodePool, ...] = ()
    runtime_classes: tuple[str, ...] = ()
    source: str = "none"
    # What could not be read but did not stop the target being built
    # (e.g. 403 on ClusterPolicy). Reports show them; rules may not rely on them.
    warnings: tuple[str, ...] = ()

    @property
    def known(self) -> bool:
        return bool(self.pools)


def merge_targets(targets: Iterable[Target]) -> Target:
    """Pools of every target, in order; pool names made unique (``name``, ``name-2``...)."""
    parts = [t for t in targets if t.pools or t.runtime_classes or t.warnings]
    if not parts:
        return Target()
    if len(parts) == 1:
        return parts[0]
    seen: dict[str, int] = {}
    pools: list[NodePool] = []
    for target in parts:
        for pool in target.pools:
            name = pool.name
            if name in seen:
                seen[name] += 1
                name = f"{pool.name}-{seen[pool.name]}"
                while name in seen:
                    seen[pool.name] += 1
                    name = f"{pool.name}-{seen[pool.name]}"
            seen.setdefault(name, 1)
            pools.append(pool if name == pool.name else dataclasses.replace(pool, name=name))
    return Target(
        pools=tuple(pools),
        runtime_classes=tuple(dict.fromkeys(rc for t in parts for rc in t.runtime_classes)),
        source="+".join(dict.fromkeys(t.source for t in parts)),
        warnings=tuple(w for t in parts for w in t.warnings),
    )
