"""The target flags as plain values (``TargetOptions``) and ``build_target``: flags + file + cluster → one Target.

``target_from_flags`` turns ``--driver``/``--gpu``/... into pools (one per
driver); ``build_target`` combines them with a target file
(:mod:`imagelint.deploytarget.file`) and the live cluster, read by the ``cluster_reader`` its caller
hands in (the CLI passes :mod:`imagelint.cluster`'s reader, imported only when ``--cluster`` asks
for it; the target sits below the cluster reader in the package order). The typer flags that fill ``TargetOptions`` are in
``imagelint/cli/target_options.py``.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from imagelint.deploytarget.file import load_target_file
from imagelint.deploytarget.model import GpuSpec, NodePool, Target, merge_targets
from imagelint.deploytarget.values import (
    cuda_for,
    gpus_from_flags,
    parse_arch,
    parse_compute_capability,
    parse_driver_version,
    parse_release_version,
    parse_runtime_mode,
)
from imagelint.errors import UsageError

if TYPE_CHECKING:
    from imagelint.matrix.model import Matrix

# --- flags ---------------------------------------------------------------------------


def target_from_flags(
    drivers: Sequence[str],
    gpus: Sequence[str],
    compute_capability: str | None,
    brand: str | None,
    arch: str | None,
    toolkit: str | None,
    device_plugin: str | None,
    runtime_mode: str | None,
    matrix: Matrix | None,
) -> Target:
    """One pool per ``--driver`` (each with every ``--gpu``); no flags → an empty Target."""
    driver_versions = [parse_driver_version(d) for d in drivers]
    gpu_specs = gpus_from_flags(gpus, compute_capability, brand, matrix)
    common: dict[str, Any] = {
        "gpus": gpu_specs,
        "arch": parse_arch(arch) if arch else None,
        "toolkit": parse_release_version(toolkit, "--toolkit") if toolkit else None,
        "device_plugin": parse_release_version(device_plugin, "--device-plugin") if device_plugin else None,
        "runtime_mode": parse_runtime_mode(runtime_mode) if runtime_mode else None,
        "source": "flags",
    }
    if not driver_versions:
        if not any(v for k, v in common.items() if k != "source") and not runtime_mode:
            return Target()
        return Target(pools=(NodePool(name="flags", **common),), source="flags")
    pools = [
        NodePool(name=f"driver-{driver}", driver=driver, cuda_driver_version=cuda_for(driver, matrix), **common)
        for driver in dict.fromkeys(driver_versions)  # a repeated --driver is one pool
    ]
    return Target(pools=tuple(pools), source="flags")


# --pool KEY=VALUE[,KEY=VALUE...]: the keys (as in a target file's [[pool]] and the flags).
POOL_KEYS = ("name", "driver", "gpu", "compute-capability", "brand", "arch", "toolkit", "device-plugin", "runtime-mode")


def pool_from_spec(spec: str, matrix: Matrix | None) -> NodePool:
    """``driver=535.104.05,gpu=T4`` → one pool (``gpu`` may repeat: ``gpu=T4,gpu=A10``).

    Unlike repeated ``--driver``/``--gpu`` (every driver pool gets every GPU: a product),
    each ``--pool`` is exactly one pool with exactly what it says.
    """
    values: dict[str, list[str]] = {}
    for item in spec.split(","):
        key, eq, value = item.partition("=")
        key, value = key.strip().lower(), value.strip()
        if not eq or not key or not value:
            raise UsageError(f"--pool {spec!r}: expected KEY=VALUE[,KEY=VALUE...], e.g. driver=535.104.05,gpu=T4")
        if key == "gpus":
            key = "gpu"
        if key not in POOL_KEYS:
            raise UsageError(f"--pool {spec!r}: unknown key {key!r} (expected one of: {', '.join(POOL_KEYS)})")
        if key != "gpu" and key in values:
            raise UsageError(f"--pool {spec!r}: {key} given twice")
        values.setdefault(key, []).append(value)
    one = {k: v[0] for k, v in values.items() if k != "gpu"}
    driver = parse_driver_version(one["driver"], "--pool driver") if "driver" in one else None
    gpus = gpus_from_flags(values.get("gpu", ()), one.get("compute-capability"), one.get("brand"), matrix)
    if driver is None and not gpus and len(one) == ("name" in one):
        raise UsageError(f"--pool {spec!r}: says nothing about the pool (give driver=, gpu=, ...)")
    label = "/".join([driver or "any-driver", *(g.product or f"cc{g.compute_capability}" for g in gpus)])
    return NodePool(
        name=one.get("name") or label,
        driver=driver,
        cuda_driver_version=cuda_for(driver, matrix),
        gpus=gpus,
        arch=parse_arch(one["arch"], "--pool arch") if "arch" in one else None,
        toolkit=parse_release_version(one["toolkit"], "--pool toolkit") if "toolkit" in one else None,
        device_plugin=parse_release_version(one["device-plugin"], "--pool device-plugin") if "device-plugin" in one else None,
        runtime_mode=parse_runtime_mode(one["runtime-mode"], "--pool runtime-mode") if "runtime-mode" in one else None,
        source="flags",
    )


@dataclass(frozen=True)
class TargetOptions:
    """The shared target flags as plain values (what ``cli/target_options.py`` collects).

    ``check``'s config file ``[target]`` table maps onto the same fields (:meth:`from_config`);
    combine them with :meth:`with_fallback` so that the command line beats the config.
    """

    drivers: tuple[str, ...] = ()
    gpus: tuple[str, ...] = ()
    pools: tuple[str, ...] = ()  # --pool specs, one pool each
    compute_capability: str | None = None
    brand: str | None = None
    arch: str | None = None
    toolkit: str | None = None
    device_plugin: str | None = None
    runtime_mode: str | None = None
    target_file: str | None = None
    cluster: bool = False
    context: str | None = None
    kubeconfig: str | None = None
    # The config file the pools come from (``[target]`` of .imagelint.toml), for ``source``.
    origin: str | None = None

    @property
    def wants_cluster(self) -> bool:
        return self.cluster

    @property
    def pool_overrides_given(self) -> bool:
        return any(
            (self.gpus, self.compute_capability, self.brand, self.arch, self.toolkit, self.device_plugin, self.runtime_mode)
        )

    @property
    def given(self) -> bool:
        return bool(self.drivers or self.pools or self.pool_overrides_given or self.target_file or self.cluster)

    @property
    def names_pools(self) -> bool:
        """Whether these options name where pools come from (``--driver``, ``--pool``,
        ``--target-file``, ``--cluster``), rather than only adjusting pools (``--gpu``, ``--toolkit``...)."""
        return bool(self.drivers or self.pools or self.target_file or self.cluster)

    def with_fallback(self, fallback: TargetOptions) -> TargetOptions:
        """These options over ``fallback`` (the config file's ``[target]``): one precedence,
        command line > target file > config. Options that name pools replace the fallback's target
        whole (``--target-file pools.toml`` is the target, as ``--driver`` is; nothing of the
        config's ``driver``/``gpu`` is added to or laid over it). Options that only adjust pools
        take each unset field from the fallback."""
        if self.names_pools:
            return self
        values = {}
        for f in dataclasses.fields(self):
            mine = getattr(self, f.name)
            values[f.name] = mine if mine else getattr(fallback, f.name)
        # The config's pools, adjusted by flags (--gpu over the config's driver): both are named.
        values["origin"] = (fallback.origin + (" with flags" if self.given else "")) if fallback.origin and fallback.names_pools else None
        return TargetOptions(**values)

    @classmethod
    def from_config(cls, table: Mapping[str, Any], origin: str | None = None) -> TargetOptions:
        """A config file's ``[target]`` table (keys as the flags: ``driver``, ``gpus``, ``pool``,
        ``file``...); ``origin``: the config file's path (the target's ``source`` names it)."""
        return cls(
            origin=origin if table else None,
            drivers=tuple(table.get("driver", ())),
            gpus=tuple(table.get("gpus", ())),
            pools=tuple(table.get("pool", ())),
            compute_capability=table.get("compute-capability"),
            brand=table.get("brand"),
            arch=table.get("arch"),
            toolkit=table.get("toolkit"),
            device_plugin=table.get("device-plugin"),
            runtime_mode=table.get("runtime-mode"),
            target_file=table.get("file"),
        )


ClusterReader = Callable[..., Target]


def build_target(
    options: TargetOptions,
    matrix: Matrix | None,
    cluster_reader: ClusterReader | None = None,
    *,
    cluster_matrix: bool = False,
) -> Target:
    """Flags + target file + live cluster → one Target (``_build_target``). Pools the config
    file's ``[target]`` describes with flag keys (``driver``, ``gpus``, ``pool``) say so: their
    ``source`` and the target's are ``config:PATH``, not ``flags``."""
    target = _build_target(options, matrix, cluster_reader, cluster_matrix=cluster_matrix)
    if not options.origin or not target.known:
        return target
    origin = f"config:{options.origin}"
    pools = tuple(dataclasses.replace(p, source=origin) if p.source == "flags" else p for p in target.pools)
    return dataclasses.replace(target, pools=pools, source=origin if target.source == "flags" else target.source)


def _build_target(
    options: TargetOptions,
    matrix: Matrix | None,
    cluster_reader: ClusterReader | None = None,
    *,
    cluster_matrix: bool = False,
) -> Target:
    """Flags + target file + live cluster → one Target.

    ``cluster_matrix``: the matrix comes from the cluster, so ``--context`` /
    ``--kubeconfig`` mean something even without ``--cluster``.

    Pools come from each source. ``--driver`` always adds flag pools (carrying the
    other flags). Without ``--driver``, the other flags override the fields of the
    file/cluster pool when there is exactly one; with several pools that would be
    ambiguous and is a usage error.
    """
    parts: list[Target] = []
    if options.pools:
        if options.pool_overrides_given and not options.drivers:
            raise UsageError("--gpu/--toolkit/... describe --driver pools; with --pool, write them inside it "
                             "(--pool driver=535.104.05,gpu=T4,toolkit=1.17.3)")
        parts.append(Target(pools=tuple(pool_from_spec(s, matrix) for s in options.pools), source="flags"))
    if options.target_file:
        parts.append(load_target_file(options.target_file, matrix))
    if options.cluster:
        if cluster_reader is None:  # the caller's mistake, not the user's: the CLI always hands one in
            raise TypeError("build_target: --cluster needs a cluster_reader (imagelint.cluster.read_target.target_from_cluster)")
        parts.append(cluster_reader(options.context, options.kubeconfig, matrix))
    elif (options.context or options.kubeconfig) and not cluster_matrix:
        raise UsageError("--context/--kubeconfig need --cluster (or --matrix cluster)")

    def flag_pools() -> Target:
        return target_from_flags(
            options.drivers,
            gpus=options.gpus,
            compute_capability=options.compute_capability,
            brand=options.brand,
            arch=options.arch,
            toolkit=options.toolkit,
            device_plugin=options.device_plugin,
            runtime_mode=options.runtime_mode,
            matrix=matrix,
        )

    if not parts:
        return flag_pools()
    if options.drivers:
        parts.append(flag_pools())
        return merge_targets(parts)
    merged = merge_targets(parts)
    if not options.pool_overrides_given:
        return merged
    if len(merged.pools) != 1:
        names = ", ".join(p.name for p in merged.pools) or "none"
        raise UsageError(
            f"--gpu/--toolkit/... override a single pool, but the target has {len(merged.pools)} pools ({names}); "
            "add --driver to describe a pool of its own, or edit the target file"
        )
    overridden = override_pool(merged.pools[0], options, matrix)
    return dataclasses.replace(merged, pools=(overridden,))


def override_pool(pool: NodePool, options: TargetOptions, matrix: Matrix | None) -> NodePool:
    """Replace the fields of ``pool`` that the flags give."""
    changes: dict[str, Any] = {}
    if options.gpus or options.compute_capability or options.brand:
        if options.gpus:
            changes["gpus"] = gpus_from_flags(options.gpus, options.compute_capability, options.brand, matrix)
        else:  # keep the pool's GPUs, change what was asked
            cc = parse_compute_capability(options.compute_capability) if options.compute_capability else None
            base = pool.gpus or (GpuSpec(),)
            changes["gpus"] = tuple(
                dataclasses.replace(g, compute_capability=cc or g.compute_capability, brand=options.brand or g.brand)
                for g in base
            )
    if options.arch:
        changes["arch"] = parse_arch(options.arch)
    if options.toolkit:
        changes["toolkit"] = parse_release_version(options.toolkit, "--toolkit")
    if options.device_plugin:
        changes["device_plugin"] = parse_release_version(options.device_plugin, "--device-plugin")
    if options.runtime_mode:
        changes["runtime_mode"] = parse_runtime_mode(options.runtime_mode)
    return dataclasses.replace(pool, **changes)


__all__ = ["ClusterReader", "POOL_KEYS", "TargetOptions", "build_target", "override_pool", "pool_from_spec", "target_from_flags"]
