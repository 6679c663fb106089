"""The target file (TOML): read and validated, each problem located by file and line.

Format, also what :mod:`imagelint.deploytarget.toml_writer` writes::

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
    nvidia-runtime-default = false          # is the NVIDIA runtime containerd's/CRI-O's default?
    shared-resources = { "nvidia.com/gpu" = 4 }   # time-slicing/MPS replicas per resource
    fail-requests-greater-than-one = true
    node-count = 2

GPU names are resolved through the matrix (``matrix.gpu(name)``) into compute
capability, brand and family; values written in the file win over the matrix.
Errors are ``ConfigError`` (exit 2) with the file and the line of the key.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from types import MappingProxyType
from typing import TYPE_CHECKING, Any

from imagelint.deploytarget.gpu_labels import PoolContradiction, refine_pool
from imagelint.deploytarget.model import GpuSpec, NodePool, Taint, Target
from imagelint.deploytarget.values import (
    DEVICE_LIST_STRATEGIES,
    MIG_STRATEGIES,
    TAINT_EFFECTS,
    cuda_for,
    parse_arch,
    parse_choice,
    parse_compute_capability,
    parse_cuda_version,
    parse_driver_version,
    parse_release_version,
    parse_runtime_mode,
    resolve_gpu,
    unknown_gpu_message,
)
from imagelint.errors import ConfigError, UsageError
from imagelint.tomlcompat import loads as toml_loads
from imagelint.tomlcompat import tomllib as toml_parser

if TYPE_CHECKING:
    from imagelint.matrix.model import Matrix

_TOP_KEYS = ("runtime-classes", "pool", "snapshot-of")
# A snapshot of a cluster (``imagelint target snapshot --cluster``) says so: its pools carry every
# label the nodes had, so a label a pool lacks is absent, not merely undescribed.
SNAPSHOT_OF = "snapshot of "
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
    "nvidia-runtime-default",
    "shared-resources",
    "fail-requests-greater-than-one",
    "node-count",
)
_GPU_KEYS = ("product", "compute-capability", "brand", "family", "count", "mig-profiles")
_TAINT_KEYS = ("key", "value", "effect")


class _TargetFileReader:
    """Validates a parsed target file, locating each problem's line in the text."""

    def __init__(self, path: str, text: str, matrix: Matrix | None) -> None:
        self.path = path
        self.source = f"file:{path}"
        self.lines = text.splitlines()
        self.matrix = matrix
        self.warnings: list[str] = []

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
        snapshot = data.get("snapshot-of")
        if snapshot is not None and (not isinstance(snapshot, str) or not snapshot.startswith(("cluster:", "dump:"))):
            raise self.error("snapshot-of must be the cluster or dump it was read from (\"cluster:CONTEXT\", \"dump:PATH\")",
                             "snapshot-of", None)
        self.source = f"file:{self.path}" + (f" ({SNAPSHOT_OF}{snapshot})" if snapshot else "")
        raw_pools = data.get("pool", [])
        if not isinstance(raw_pools, list) or not all(isinstance(p, dict) for p in raw_pools):
            raise self.error("'pool' must be an array of tables ([[pool]])", "pool", None)
        pools = [self.pool(raw, index) for index, raw in enumerate(raw_pools)]
        names = [p.name for p in pools]
        for index, name in enumerate(names):
            if name in names[:index]:
                raise self.error(f"pool name {name!r} is used twice; names must be unique", "name", index)
        return Target(pools=tuple(pools), runtime_classes=tuple(runtime_classes), source=self.source,
                      warnings=tuple(self.warnings))

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
        cuda = checked("cuda-driver-version", lambda v: parse_cuda_version(v, "cuda-driver-version"))
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
        flags: dict[str, bool | None] = {}
        for key in ("nvidia-runtime-default", "fail-requests-greater-than-one"):
            value = raw.get(key)
            if value is not None and not isinstance(value, bool):
                raise self.error(f"pool {index + 1}: {key} must be true or false, not {_type_name(value)}", key, index)
            flags[key] = value
        node_count = raw.get("node-count")
        if node_count is not None and (isinstance(node_count, bool) or not isinstance(node_count, int) or node_count < 1):
            raise self.error(f"pool {index + 1}: node-count must be a whole number >= 1, not {node_count!r}", "node-count", index)
        pool = NodePool(
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
            mig_strategy=checked("mig-strategy", lambda v: parse_choice(v, MIG_STRATEGIES, "mig-strategy")),
            resources=MappingProxyType(self.int_table(raw.get("resources", {}), "resources", index)),
            taints=self.taints(raw.get("taints", []), index),
            labels=MappingProxyType(self.str_table(raw.get("labels", {}), "labels", index)),
            runtime_class=get_str("runtime-class"),
            nvidia_runtime_default=flags["nvidia-runtime-default"],
            shared_resources=MappingProxyType(self.int_table(raw.get("shared-resources", {}), "shared-resources", index)),
            fail_requests_greater_than_one=flags["fail-requests-greater-than-one"],
            node_count=node_count,
            source=self.source,
        )
        # The most specific description wins: labels naming the exact GPU (GFD's product, the
        # instance type, a provider's accelerator label) refine a bare "A100"; labels that
        # contradict the pool's GPUs or each other make every verdict on the pool meaningless.
        try:
            return refine_pool(pool, self.matrix)
        except PoolContradiction as exc:
            snapshot = SNAPSHOT_OF in self.source
            if not exc.uncertain and not snapshot:
                raise self.error(f"pool {index + 1} ({name}): {exc}", "labels", index) from None
            # A snapshot's labels are what the nodes carry (its gpus were read from the GPUs
            # themselves), and an uncertain row of the label table may be the wrong one: the pool
            # stays as written, and the contradiction is said.
            why = "the nodes' own labels" if snapshot else "the label table's row is uncertain"
            self.warnings.append(f"{self.source}: pool {name}: {exc} ({why}; its gpus are used as written)")
            return pool

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
        if cc is not None:
            try:
                cc = parse_compute_capability(cc, f"{where}: compute-capability")  # 8.0, 9, sm_90: as the flag
            except UsageError:
                raise self.error(f"{where}: compute-capability {cc!r} is not MAJOR.MINOR (8.0), MAJOR (9) or sm_90",
                                 "gpus", index) from None
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


def _type_name(value: Any) -> str:
    return {bool: "a boolean", int: "an integer", float: "a number", str: "a string", list: "a list", dict: "a table"}.get(
        type(value), type(value).__name__
    )


def parse_target_text(text: str, path: str, matrix: Matrix | None) -> Target:
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


def load_target_file(path: str, matrix: Matrix | None) -> Target:
    try:
        from imagelint.localfile import read_regular_file

        text = read_regular_file(path).decode("utf-8")
    except OSError as exc:
        raise ConfigError(f"cannot read target file: {exc.strerror or exc}", str(path)) from None
    except UnicodeDecodeError:
        raise ConfigError("target file is not UTF-8 text", str(path)) from None
    return parse_target_text(text, str(path), matrix)


__all__ = ["load_target_file", "parse_target_text"]
