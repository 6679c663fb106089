"""Build a :class:`~imagelint.target.Target` from flags, a target file, or both.

The live cluster lives in :mod:`imagelint.cluster` (it needs the ``kubernetes``
client, which is slow to import); :func:`build_target` calls it only when asked.

Target file format (TOML), also what :func:`dump_target_toml` writes::

    runtime-classes = ["nvidia"]

    [[pool]]
    name = "t4"
    driver = "535.104.05"
    gpus = ["T4", { product = "H100", compute-capability = "9.0", count = 8 }]
    arch = "amd64"
    toolkit = "1.17.3"
    runtime-mode = "legacy"
    device-plugin = "0.17.0"
    device-list-strategy = ["envvar"]
    mig-strategy = "none"
    resources = { "nvidia.com/gpu" = 4 }
    taints = [{ key = "nvidia.com/gpu", value = "present", effect = "NoSchedule" }]
    labels = { "nvidia.com/gpu.product" = "Tesla-T4" }
    runtime-class = "nvidia"
    node-count = 2

GPU names are resolved through the matrix (``matrix.gpu(name)``) into compute
capability, brand and family; values written in the file win over the matrix.
"""

from __future__ import annotations

import dataclasses
import difflib
import json
import re
from dataclasses import dataclass
from types import MappingProxyType
from typing import Any, Callable, Iterable, Mapping, Protocol, Sequence

from imagelint.errors import ConfigError, UsageError
from imagelint.tomlcompat import loads as toml_loads
from imagelint.tomlcompat import tomllib as toml_parser
from imagelint.target import GpuSpec, NodePool, Target, Taint



# --- what the matrix must offer (duck-typed: imagelint.matrix.Matrix fits) ----------


class GpuProductLike(Protocol):
    compute_capability: str | None
    brand: str | None
    family: str | None


class TargetMatrix(Protocol):
    """The part of ``imagelint.matrix.Matrix`` the target builders use."""

    def gpu(self, name: str) -> GpuProductLike | None: ...

    def cuda_for_driver(self, driver: str) -> str | None: ...


# --- value grammar -------------------------------------------------------------------

# NVIDIA driver versions: 535 / 535.104 / 535.104.05 (leading zeros are significant text).
_DRIVER_RE = re.compile(r"^\d{3}(?:\.\d{1,3}){0,2}$")
# Toolkit / device plugin release versions, with an optional leading v and pre-release.
_RELEASE_RE = re.compile(r"^v?(\d+\.\d+(?:\.\d+)?(?:-[0-9A-Za-z.]+)?)$")
_CC_RE = re.compile(r"^\d+\.\d+$")
_CUDA_RE = re.compile(r"^\d+\.\d+(?:\.\d+)?$")

# The enumerations the NodePool model documents (imagelint/target.py).
RUNTIME_MODES = ("legacy", "cdi", "jit-cdi", "csv")
ARCHES = ("amd64", "arm64")
_ARCH_ALIASES = {"x86_64": "amd64", "x86-64": "amd64", "aarch64": "arm64", "arm64/v8": "arm64"}
DEVICE_LIST_STRATEGIES = ("envvar", "volume-mounts", "cdi-annotations", "cdi-cri")
MIG_STRATEGIES = ("none", "single", "mixed")
TAINT_EFFECTS = ("NoSchedule", "PreferNoSchedule", "NoExecute")


def parse_driver_version(value: str, what: str = "--driver") -> str:
    text = str(value).strip()
    if not _DRIVER_RE.match(text):
        raise UsageError(f"{what}: {value!r} is not a driver version; expected NNN[.NN[.NN]], e.g. 535.104.05")
    return text


def parse_release_version(value: str, what: str) -> str:
    """``v1.17.3`` / ``1.17.3`` → ``1.17.3`` (the model stores versions without the ``v``)."""
    match = _RELEASE_RE.match(str(value).strip())
    if not match:
        raise UsageError(f"{what}: {value!r} is not a release version; expected X.Y[.Z], e.g. 1.17.3")
    return match.group(1)


def parse_compute_capability(value: str, what: str = "--compute-capability") -> str:
    text = str(value).strip()
    if not _CC_RE.match(text):
        raise UsageError(f"{what}: {value!r} is not a compute capability; expected MAJOR.MINOR, e.g. 8.0")
    return text


def parse_arch(value: str, what: str = "--arch") -> str:
    text = str(value).strip().lower()
    text = _ARCH_ALIASES.get(text, text)
    if text not in ARCHES:
        raise UsageError(f"{what}: {value!r} is not a node architecture; expected one of {', '.join(ARCHES)}")
    return text


def parse_runtime_mode(value: str, what: str = "--runtime-mode") -> str | None:
    text = str(value).strip().lower()
    if text == "auto":
        # "auto" is the toolkit's own setting: the mode then follows the toolkit
        # version, which is exactly what None means in the model.
        return None
    if text not in RUNTIME_MODES:
        raise UsageError(f"{what}: {value!r} is not a runtime mode; expected one of {', '.join(RUNTIME_MODES)} or auto")
    return text


def _enum(value: str, allowed: Sequence[str], what: str) -> str:
    if value not in allowed:
        raise UsageError(f"{what}: {value!r} is not valid; expected one of {', '.join(allowed)}")
    return value


# --- GPUs ----------------------------------------------------------------------------


def _known_gpu_names(matrix: Any) -> list[str]:
    """Every name the matrix knows, for "did you mean" hints (optional matrix API)."""
    names: list[str] = []
    for attr in ("gpu_names", "gpus", "gpu_products"):
        source = getattr(matrix, attr, None)
        if source is None:
            continue
        items = source() if callable(source) else source
        for item in items or ():
            if isinstance(item, str):
                names.append(item)
            else:
                names.append(str(getattr(item, "product", None) or getattr(item, "name", "")))
                names.extend(str(alias) for alias in getattr(item, "aliases", ()) or ())
        if names:
            break
    return [n for n in names if n]


def unknown_gpu_message(name: str, matrix: Any, what: str) -> str:
    known = _known_gpu_names(matrix)
    by_key = {_gpu_key(n): n for n in known}
    close = difflib.get_close_matches(_gpu_key(name), list(by_key), n=3, cutoff=0.5)
    hint = f"; did you mean {', '.join(by_key[c] for c in close)}?" if close else ""
    return (
        f"{what}: unknown GPU {name!r}{hint} "
        "(give its compute capability with --compute-capability, or compute-capability in a target file)"
    )


def _gpu_key(name: str) -> str:
    return re.sub(r"[\s_\-]+", "", name).lower()


def resolve_gpu(spec: GpuSpec, matrix: TargetMatrix | None) -> tuple[GpuSpec, bool]:
    """Fill what the matrix knows about ``spec.product`` into the fields left empty.

    Returns the spec and whether the matrix knew the product. Idempotent: values
    already set are never replaced, so resolving twice gives the same spec.
    """
    if matrix is None or not spec.product:
        return spec, False
    product = matrix.gpu(spec.product)
    if product is None:
        return spec, False
    return (
        dataclasses.replace(
            spec,
            compute_capability=spec.compute_capability or getattr(product, "compute_capability", None),
            brand=spec.brand or getattr(product, "brand", None),
            family=spec.family or getattr(product, "family", None),
        ),
        True,
    )


def gpus_from_flags(
    gpus: Sequence[str],
    compute_capability: str | None,
    brand: str | None,
    matrix: TargetMatrix | None,
) -> tuple[GpuSpec, ...]:
    """``--gpu`` names (resolved through the matrix), with ``--compute-capability`` /
    ``--brand`` overriding them, or describing the one GPU when no name is given."""
    cc = parse_compute_capability(compute_capability) if compute_capability else None
    brand = brand.strip() if brand else None
    specs: list[GpuSpec] = []
    for raw in gpus:
        name = raw.strip()
        if not name:
            raise UsageError("--gpu: empty GPU name")
        spec = GpuSpec(product=name, compute_capability=cc, brand=brand)
        resolved, known = resolve_gpu(spec, matrix)
        if matrix is not None and not known and cc is None:
            raise UsageError(unknown_gpu_message(name, matrix, "--gpu"))
        specs.append(resolved)
    if not specs and (cc or brand):
        specs.append(GpuSpec(compute_capability=cc, brand=brand))
    return tuple(specs)


def cuda_for(driver: str | None, matrix: TargetMatrix | None) -> str | None:
    if not driver or matrix is None:
        return None
    return matrix.cuda_for_driver(driver)


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
    matrix: TargetMatrix | None,
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


# --- merging -------------------------------------------------------------------------


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


@dataclass(frozen=True)
class TargetOptions:
    """The shared target flags as plain values (what ``cli/target_options.py`` collects).

    ``check``'s config file ``[target]`` table maps onto the same fields; combine
    them with :meth:`with_fallback` so that flags beat the config.
    """

    drivers: tuple[str, ...] = ()
    gpus: tuple[str, ...] = ()
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
        return bool(self.drivers or self.pool_overrides_given or self.target_file or self.cluster)

    def with_fallback(self, fallback: TargetOptions) -> TargetOptions:
        """Each field unset here (empty / None / False) taken from ``fallback``."""
        values = {}
        for f in dataclasses.fields(self):
            mine = getattr(self, f.name)
            values[f.name] = mine if mine else getattr(fallback, f.name)
        return TargetOptions(**values)


ClusterReader = Callable[..., Target]


def build_target(
    options: TargetOptions,
    matrix: TargetMatrix | None,
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
    if options.target_file:
        parts.append(load_target_file(options.target_file, matrix))
    if options.cluster:
        reader = cluster_reader
        if reader is None:
            from imagelint.cluster import target_from_cluster as reader  # slow import: only when asked
        parts.append(reader(options.context, options.kubeconfig, matrix))
    elif (options.context or options.kubeconfig) and not cluster_matrix:
        raise UsageError("--context/--kubeconfig need --cluster (or --matrix cluster)")

    flag_args = dict(
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
        return target_from_flags(options.drivers, **flag_args)
    if options.drivers:
        parts.append(target_from_flags(options.drivers, **flag_args))
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


def override_pool(pool: NodePool, options: TargetOptions, matrix: TargetMatrix | None) -> NodePool:
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


# --- target file ---------------------------------------------------------------------

_TOP_KEYS = ("runtime-classes", "pool")
_POOL_KEYS = (
    "name",
    "driver",
    "cuda-driver-version",
    "gpus",
    "arch",
    "toolkit",
    "runtime-mode",
    "accept-envvar-unprivileged",
    "device-plugin",
    "device-list-strategy",
    "mig-strategy",
    "resources",
    "taints",
    "labels",
    "runtime-class",
    "node-count",
)
_GPU_KEYS = ("product", "compute-capability", "brand", "family", "count", "mig-profiles")
_TAINT_KEYS = ("key", "value", "effect")


class _TargetFileReader:
    """Validates a parsed target file, locating each problem's line in the text."""

    def __init__(self, path: str, text: str, matrix: TargetMatrix | None) -> None:
        self.path = path
        self.lines = text.splitlines()
        self.matrix = matrix

    # Where a key is: tomllib gives no positions, so scan the text for the key
    # inside the right table (top level, or the N-th [[pool]] and its sub-tables).
    def line_of(self, key: str, pool_index: int | None) -> int | None:
        key_re = re.compile(r"^\s*(?:" + re.escape(key) + r'|"' + re.escape(key) + r"\"|'" + re.escape(key) + r"')\s*[=.]")
        header_re = re.compile(r"^\s*\[\[?\s*([^\]]+?)\s*\]\]?\s*(?:#.*)?$")
        pool_seen = -1
        in_region = pool_index is None
        region_header: int | None = None
        for number, line in enumerate(self.lines, start=1):
            header = header_re.match(line)
            if header:
                table = header.group(1).strip()
                if table == "pool" and line.lstrip().startswith("[["):
                    pool_seen += 1
                    in_region = pool_index is not None and pool_seen == pool_index
                    region_header = number if in_region else None
                elif table.startswith("pool.") and pool_index is not None and pool_seen == pool_index:
                    in_region = True
                    if table[len("pool."):].strip().strip("\"'") == key:
                        return number
                else:
                    in_region = False
                continue
            if in_region and key_re.match(line):
                return number
        return region_header

    def error(self, message: str, key: str, pool_index: int | None) -> ConfigError:
        return ConfigError(message, self.path, self.line_of(key, pool_index))

    def read(self, data: Mapping[str, Any]) -> Target:
        for key in data:
            if key not in _TOP_KEYS:
                raise self.error(
                    f"unknown key {key!r}; expected {', '.join(_TOP_KEYS)} at the top level", key, None
                )
        runtime_classes = self.string_list(data.get("runtime-classes", []), "runtime-classes", None)
        raw_pools = data.get("pool", [])
        if not isinstance(raw_pools, list) or not all(isinstance(p, dict) for p in raw_pools):
            raise self.error("'pool' must be an array of tables ([[pool]])", "pool", None)
        pools = [self.pool(raw, index) for index, raw in enumerate(raw_pools)]
        names = [p.name for p in pools]
        for index, name in enumerate(names):
            if name in names[:index]:
                raise self.error(f"pool name {name!r} is used twice; names must be unique", "name", index)
        return Target(pools=tuple(pools), runtime_classes=tuple(runtime_classes), source=f"file:{self.path}")

    def pool(self, raw: Mapping[str, Any], index: int) -> NodePool:
        for key in raw:
            if key not in _POOL_KEYS:
                raise self.error(
                    f"pool {index + 1}: unknown key {key!r}; expected one of {', '.join(_POOL_KEYS)}", key, index
                )

        def get_str(key: str) -> str | None:
            value = raw.get(key)
            if value is not None and not isinstance(value, str):
                raise self.error(f"pool {index + 1}: {key} must be a string, not {_type_name(value)}", key, index)
            return value

        def checked(key: str, parse: Callable[[str], Any]) -> Any:
            value = get_str(key)
            if value is None:
                return None
            try:
                return parse(value)
            except UsageError as exc:
                raise self.error(f"pool {index + 1}: {exc.message}", key, index) from None

        name = get_str("name") or f"pool-{index + 1}"
        driver = checked("driver", lambda v: parse_driver_version(v, "driver"))
        cuda = checked("cuda-driver-version", lambda v: _parse_cuda(v, "cuda-driver-version"))
        accept = raw.get("accept-envvar-unprivileged")
        if accept is not None and not isinstance(accept, bool):
            raise self.error(
                f"pool {index + 1}: accept-envvar-unprivileged must be true or false, not {_type_name(accept)}",
                "accept-envvar-unprivileged",
                index,
            )
        strategies = raw.get("device-list-strategy", [])
        if isinstance(strategies, str):
            strategies = [s.strip() for s in strategies.split(",") if s.strip()]
        strategy_list = self.string_list(strategies, "device-list-strategy", index)
        for strategy in strategy_list:
            if strategy not in DEVICE_LIST_STRATEGIES:
                raise self.error(
                    f"pool {index + 1}: device-list-strategy {strategy!r} is not valid; "
                    f"expected one of {', '.join(DEVICE_LIST_STRATEGIES)}",
                    "device-list-strategy",
                    index,
                )
        node_count = raw.get("node-count", 1)
        if isinstance(node_count, bool) or not isinstance(node_count, int) or node_count < 1:
            raise self.error(f"pool {index + 1}: node-count must be a whole number >= 1, not {node_count!r}", "node-count", index)
        return NodePool(
            name=name,
            driver=driver,
            cuda_driver_version=cuda or cuda_for(driver, self.matrix),
            gpus=self.gpus(raw.get("gpus", []), index),
            arch=checked("arch", lambda v: parse_arch(v, "arch")),
            toolkit=checked("toolkit", lambda v: parse_release_version(v, "toolkit")),
            runtime_mode=checked("runtime-mode", lambda v: parse_runtime_mode(v, "runtime-mode")),
            accept_envvar_unprivileged=accept,
            device_plugin=checked("device-plugin", lambda v: parse_release_version(v, "device-plugin")),
            device_list_strategy=tuple(strategy_list),
            mig_strategy=checked("mig-strategy", lambda v: _enum(v, MIG_STRATEGIES, "mig-strategy")),
            resources=MappingProxyType(self.int_table(raw.get("resources", {}), "resources", index)),
            taints=self.taints(raw.get("taints", []), index),
            labels=MappingProxyType(self.str_table(raw.get("labels", {}), "labels", index)),
            runtime_class=get_str("runtime-class"),
            node_count=node_count,
            source=f"file:{self.path}",
        )

    def gpus(self, raw: Any, index: int) -> tuple[GpuSpec, ...]:
        where = f"pool {index + 1}: gpus"
        if not isinstance(raw, list):
            raise self.error(f"{where} must be a list of GPU names or tables, not {_type_name(raw)}", "gpus", index)
        specs = []
        for n, item in enumerate(raw):
            if isinstance(item, str):
                spec, known = resolve_gpu(GpuSpec(product=item), self.matrix)
                if self.matrix is not None and not known:
                    raise self.error(unknown_gpu_message(item, self.matrix, f"{where}[{n}]"), "gpus", index)
                specs.append(spec)
            elif isinstance(item, dict):
                specs.append(self.gpu_table(item, f"{where}[{n}]", index))
            else:
                raise self.error(f"{where}[{n}] must be a GPU name or a table, not {_type_name(item)}", "gpus", index)
        return tuple(specs)

    def gpu_table(self, item: Mapping[str, Any], where: str, index: int) -> GpuSpec:
        for key in item:
            if key not in _GPU_KEYS:
                raise self.error(f"{where}: unknown key {key!r}; expected one of {', '.join(_GPU_KEYS)}", "gpus", index)
        for key in ("product", "compute-capability", "brand", "family"):
            if key in item and not isinstance(item[key], str):
                raise self.error(f"{where}: {key} must be a string, not {_type_name(item[key])}", "gpus", index)
        count = item.get("count")
        if count is not None and (isinstance(count, bool) or not isinstance(count, int) or count < 0):
            raise self.error(f"{where}: count must be a whole number >= 0, not {count!r}", "gpus", index)
        cc = item.get("compute-capability")
        if cc is not None and not _CC_RE.match(cc):
            raise self.error(f"{where}: compute-capability {cc!r} is not MAJOR.MINOR, e.g. 8.0", "gpus", index)
        spec = GpuSpec(
            product=item.get("product"),
            compute_capability=cc,
            brand=item.get("brand"),
            family=item.get("family"),
            count=count,
            mig_profiles=tuple(self.string_list(item.get("mig-profiles", []), "gpus", index, f"{where}: mig-profiles")),
        )
        spec, known = resolve_gpu(spec, self.matrix)
        if self.matrix is not None and spec.product and not known and spec.compute_capability is None:
            raise self.error(unknown_gpu_message(spec.product, self.matrix, where), "gpus", index)
        return spec

    def taints(self, raw: Any, index: int) -> tuple[Taint, ...]:
        where = f"pool {index + 1}: taints"
        if not isinstance(raw, list):
            raise self.error(f"{where} must be a list of {{key, value, effect}} tables", "taints", index)
        taints = []
        for n, item in enumerate(raw):
            if not isinstance(item, dict):
                raise self.error(f"{where}[{n}] must be a {{key, value, effect}} table, not {_type_name(item)}", "taints", index)
            for key in item:
                if key not in _TAINT_KEYS:
                    raise self.error(f"{where}[{n}]: unknown key {key!r}; expected key, value, effect", "taints", index)
            key = item.get("key")
            value = item.get("value")
            effect = item.get("effect", "NoSchedule")
            if not isinstance(key, str) or not key:
                raise self.error(f"{where}[{n}]: 'key' must be a non-empty string", "taints", index)
            if value is not None and not isinstance(value, str):
                raise self.error(f"{where}[{n}]: 'value' must be a string, not {_type_name(value)}", "taints", index)
            if effect not in TAINT_EFFECTS:
                raise self.error(
                    f"{where}[{n}]: effect {effect!r} is not valid; expected one of {', '.join(TAINT_EFFECTS)}", "taints", index
                )
            taints.append(Taint(key=key, value=value, effect=effect))
        return tuple(taints)

    def string_list(self, raw: Any, key: str, index: int | None, where: str | None = None) -> list[str]:
        where = where or (f"pool {index + 1}: {key}" if index is not None else key)
        if not isinstance(raw, list) or not all(isinstance(v, str) for v in raw):
            raise self.error(f"{where} must be a list of strings", key, index)
        return list(raw)

    def int_table(self, raw: Any, key: str, index: int) -> dict[str, int]:
        where = f"pool {index + 1}: {key}"
        if not isinstance(raw, dict):
            raise self.error(f"{where} must be a table of name = count", key, index)
        for name, value in raw.items():
            if isinstance(value, bool) or not isinstance(value, int) or value < 0:
                raise self.error(f"{where}: {name!r} must be a whole number >= 0, not {value!r}", key, index)
        return dict(raw)

    def str_table(self, raw: Any, key: str, index: int) -> dict[str, str]:
        where = f"pool {index + 1}: {key}"
        if not isinstance(raw, dict) or not all(isinstance(v, str) for v in raw.values()):
            raise self.error(f"{where} must be a table of name = \"value\" strings", key, index)
        return dict(raw)


def _parse_cuda(value: str, what: str) -> str:
    if not _CUDA_RE.match(value.strip()):
        raise UsageError(f"{what}: {value!r} is not a CUDA version; expected MAJOR.MINOR, e.g. 12.2")
    return value.strip()


def _type_name(value: Any) -> str:
    return {bool: "a boolean", int: "an integer", float: "a number", str: "a string", list: "a list", dict: "a table"}.get(
        type(value), type(value).__name__
    )


def parse_target_text(text: str, path: str, matrix: TargetMatrix | None) -> Target:
    tomllib = toml_parser()
    try:
        data = toml_loads(text)
    except tomllib.TOMLDecodeError as exc:
        line = None
        match = re.search(r"line (\d+)", str(exc))
        if match:
            line = int(match.group(1))
        elif "end of document" in str(exc):
            line = max(1, len(text.splitlines()))
        reason = re.sub(r"\s*\((at line \d+, column \d+|at end of document)\)", "", str(exc)) or "invalid TOML"
        raise ConfigError(f"not valid TOML: {reason}", path, line) from None
    return _TargetFileReader(path, text, matrix).read(data)


def load_target_file(path: str, matrix: TargetMatrix | None) -> Target:
    try:
        with open(path, encoding="utf-8") as handle:
            text = handle.read()
    except OSError as exc:
        raise ConfigError(f"cannot read target file: {exc.strerror or exc}", str(path)) from None
    except UnicodeDecodeError:
        raise ConfigError("target file is not UTF-8 text", str(path)) from None
    return parse_target_text(text, str(path), matrix)


# --- dump ----------------------------------------------------------------------------

_BARE_KEY = re.compile(r"^[A-Za-z0-9_-]+$")


def _toml_str(value: str) -> str:
    # JSON string escapes are a subset of TOML basic-string escapes.
    return json.dumps(value, ensure_ascii=False)


def _toml_key(key: str) -> str:
    return key if _BARE_KEY.match(key) else _toml_str(key)


def _toml_value(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, str):
        return _toml_str(value)
    if isinstance(value, (list, tuple)):
        return "[" + ", ".join(_toml_value(v) for v in value) + "]"
    if isinstance(value, Mapping):
        return "{ " + ", ".join(f"{_toml_key(k)} = {_toml_value(v)}" for k, v in value.items()) + " }" if value else "{}"
    raise TypeError(f"cannot write {type(value).__name__} to TOML")


def _gpu_table(gpu: GpuSpec) -> dict[str, Any]:
    table: dict[str, Any] = {}
    for key, value in (
        ("product", gpu.product),
        ("compute-capability", gpu.compute_capability),
        ("brand", gpu.brand),
        ("family", gpu.family),
        ("count", gpu.count),
    ):
        if value is not None:
            table[key] = value
    if gpu.mig_profiles:
        table["mig-profiles"] = list(gpu.mig_profiles)
    return table


def dump_target_toml(target: Target) -> str:
    """The target as a target file; ``load_target_file`` reads it back to an equal Target
    (apart from ``source``)."""
    out = [f"# imagelint target (from {target.source})"]
    for warning in target.warnings:
        out.append(f"# warning: {warning}")
    if target.runtime_classes:
        out.append(f"runtime-classes = {_toml_value(list(target.runtime_classes))}")
    for pool in target.pools:
        out.append("")
        out.append("[[pool]]")
        fields: list[tuple[str, Any]] = [
            ("name", pool.name),
            ("driver", pool.driver),
            ("cuda-driver-version", pool.cuda_driver_version),
            ("arch", pool.arch),
            ("toolkit", pool.toolkit),
            ("runtime-mode", pool.runtime_mode),
            ("accept-envvar-unprivileged", pool.accept_envvar_unprivileged),
            ("device-plugin", pool.device_plugin),
            ("device-list-strategy", list(pool.device_list_strategy) or None),
            ("mig-strategy", pool.mig_strategy),
            ("runtime-class", pool.runtime_class),
            ("node-count", pool.node_count),
        ]
        for key, value in fields:
            if value is not None:
                out.append(f"{key} = {_toml_value(value)}")
        if pool.gpus:
            out.append("gpus = [")
            out.extend(f"  {_toml_value(_gpu_table(g))}," for g in pool.gpus)
            out.append("]")
        if pool.taints:
            out.append("taints = [")
            for taint in pool.taints:
                table = {"key": taint.key, **({"value": taint.value} if taint.value is not None else {}), "effect": taint.effect}
                out.append(f"  {_toml_value(table)},")
            out.append("]")
        if pool.resources:
            out.append(f"resources = {_toml_value(dict(sorted(pool.resources.items())))}")
        if pool.labels:  # a sub-table: GFD label sets are long for one inline line
            out.append("")
            out.append("[pool.labels]")
            out.extend(f"{_toml_key(k)} = {_toml_str(v)}" for k, v in sorted(pool.labels.items()))
    return "\n".join(out) + "\n"


def describe_target(target: Target) -> str:
    """A readable multi-line summary (``imagelint target show``)."""
    if not target.known:
        return "no target: give --driver/--gpu, --target-file or --cluster"
    lines = [f"target from {target.source}: {len(target.pools)} pool(s)"]
    for pool in target.pools:
        lines.append(f"pool {pool.name} ({pool.node_count} node{'s' if pool.node_count != 1 else ''}, {pool.source})")
        driver = pool.driver or "unknown"
        cuda = f" (CUDA {pool.cuda_driver_version})" if pool.cuda_driver_version else ""
        lines.append(f"  driver        {driver}{cuda}")
        for gpu in pool.gpus or ():
            bits = [gpu.product or "unnamed GPU"]
            if gpu.compute_capability:
                bits.append(f"sm {gpu.compute_capability}")
            for extra in (gpu.brand, gpu.family):
                if extra:
                    bits.append(extra)
            if gpu.count is not None:
                bits.append(f"x{gpu.count}")
            if gpu.mig_profiles:
                bits.append("MIG " + ",".join(gpu.mig_profiles))
            lines.append(f"  gpu           {', '.join(bits)}")
        for label, value in (
            ("arch", pool.arch),
            ("toolkit", pool.toolkit),
            ("runtime mode", pool.runtime_mode),
            ("device plugin", pool.device_plugin),
            ("device lists", ",".join(pool.device_list_strategy) or None),
            ("mig strategy", pool.mig_strategy),
            ("runtime class", pool.runtime_class),
        ):
            if value:
                lines.append(f"  {label:<13} {value}")
        if pool.accept_envvar_unprivileged is not None:
            lines.append(f"  {'envvar unpriv':<13} {'accepted' if pool.accept_envvar_unprivileged else 'refused'}")
        for name, count in sorted(pool.resources.items()):
            lines.append(f"  resource      {name}={count}")
        for taint in pool.taints:
            value = f"={taint.value}" if taint.value is not None else ""
            lines.append(f"  taint         {taint.key}{value}:{taint.effect}")
    if target.runtime_classes:
        lines.append(f"runtime classes: {', '.join(target.runtime_classes)}")
    for warning in target.warnings:
        lines.append(f"warning: {warning}")
    return "\n".join(lines)


__all__ = [
    "TargetMatrix",
    "TargetOptions",
    "build_target",
    "describe_target",
    "dump_target_toml",
    "gpus_from_flags",
    "load_target_file",
    "merge_targets",
    "override_pool",
    "parse_target_text",
    "resolve_gpu",
    "target_from_flags",
]
