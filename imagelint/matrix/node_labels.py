"""``matrices/node-labels.toml``: the node labels that name a node's GPU, and the instance types.

Clouds and GPU providers put the GPU on the node as labels (GKE's
``cloud.google.com/gke-accelerator``, Karpenter's ``karpenter.k8s.aws/instance-gpu-name``,
CoreWeave's ``gpu.nvidia.com/class``, GPU Feature Discovery's ``nvidia.com/gpu.product``...), and
``node.kubernetes.io/instance-type`` names it too (``p4de.24xlarge`` is eight A100 80 GB). Those
are provider facts, so they are data beside the matrices, each row with its ``source``.
``load_node_labels()`` reads and validates the file once; a wrong row is a ``ConfigError`` naming
it, never a silently skipped row. :func:`NodeLabels.describe` turns one label value into the
:class:`GpuDescription` it says (or None: the value names nothing this table knows).
"""

from __future__ import annotations

import functools
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from imagelint.errors import ConfigError
from imagelint.lazyre import lazy_pattern

FILE = "node-labels.toml"
READS = (
    "gpu", "instance-type", "instance-family", "memory-gb", "memory-mib", "count", "family",
    "compute-major", "compute-minor", "mig-capable", "mig-profile", "vendor", "driver-major",
    "cuda-major", "cuda-minor",
)
CONFIDENCES = ("documented", "uncertain")
_LABEL_KEYS = {"key", "reads", "by-name", "vendor-values", "provider", "source", "confidence"}
_VALUE_KEYS = {"key", "values", "gpu", "memory-gb", "product", "source", "confidence"}
_INSTANCE_KEYS = {"provider", "names", "gpu", "product", "count", "memory-gb", "source", "confidence"}
# The memory a value spells: "nvidia-a100-80gb", "NVIDIA-A100-SXM4-80GB", "A100_PCIE_40GB".
_MEMORY_IN_NAME = lazy_pattern(r"(?<![0-9])([0-9]{1,3})\s*GB", re.IGNORECASE)
# GFD's suffixes after the product name: time-slicing/MPS sharing, MIG single strategy.
_GFD_SUFFIX = lazy_pattern(r"(?i)(?:-MIG-.*|-SHARED)$")
# Provider prefixes before a GPU's own name ("nvidia-tesla-t4", "nvidia-l4").
_NAME_PREFIX = lazy_pattern(r"^(?:nvidia[-_ ]?)?(?:tesla[-_ ]?)?", re.IGNORECASE)


@dataclass(frozen=True)
class GpuDescription:
    """What a label value or an instance type says about a node's GPU. ``gpu`` is the matrix's
    name when the matrix knows it (``known``); ``product`` the GFD spelling of the exact part
    when the source names it (``NVIDIA-A100-SXM4-80GB``); ``memory_gb`` per GPU; ``count`` per
    node; ``said_by`` what said it (``node.kubernetes.io/instance-type=p4de.24xlarge``)."""

    gpu: str
    known: bool
    memory_gb: int | None
    count: int | None
    product: str | None
    said_by: str
    source: str
    uncertain: bool


@dataclass(frozen=True)
class LabelRule:
    """A ``[[label]]`` row of ``node-labels.toml``: a node label key and what its value says of the GPU."""

    key: str
    reads: str
    by_name: bool
    vendor_values: tuple[str, ...]
    provider: str
    source: str
    uncertain: bool


@dataclass(frozen=True)
class _ValueRow:
    """A ``[[value]]`` row: the GPU one value of a ``gpu`` label names, and its memory when it says."""

    gpu: str
    memory_gb: int | None
    product: str | None
    source: str
    uncertain: bool


@dataclass(frozen=True)
class InstanceType:
    """One cloud instance type of an ``[[instance-type]]`` row: the GPU it carries and how many."""

    provider: str
    name: str
    gpu: str
    product: str | None
    count: int
    memory_gb: int | None
    source: str
    uncertain: bool


def _gpu_index() -> dict[str, str]:
    """Each GPU name's and alias's key -> the matrix's name (the shipped ``gpus`` section)."""
    from imagelint.matrix.rowstore import _gpu_key
    from imagelint.matrix.shipped import shipped_section

    index: dict[str, str] = {}
    for row in shipped_section("gpus"):
        for name in (row["name"], *row["aliases"]):
            index.setdefault(_gpu_key(name), row["name"])
    return index


@dataclass(frozen=True)
class NodeLabels:
    """``node-labels.toml``, loaded and validated (``load_node_labels``): what node labels say of the GPU."""

    labels: Mapping[str, LabelRule]
    values: Mapping[tuple[str, str], _ValueRow]
    instance_types: Mapping[str, InstanceType]  # lower-cased name -> row
    origin: str

    def rule(self, key: str) -> LabelRule | None:
        return self.labels.get(key)

    def gpu_name(self, text: str) -> str | None:
        """The matrix's name of a GPU written any way the catalogue knows (None: unknown)."""
        from imagelint.matrix.rowstore import _gpu_key

        index = _cached_gpu_index()
        key = _gpu_key(text)
        if key in index:
            return index[key]
        bare = _gpu_key(_NAME_PREFIX.sub("", _MEMORY_IN_NAME.sub("", text).strip("-_ ")))
        return index.get(bare) if bare else None

    def describe(self, key: str, value: str) -> GpuDescription | None:
        """The GPU a ``gpu`` / ``instance-type`` / ``instance-family`` label value names."""
        rule = self.labels.get(key)
        if rule is None:
            return None
        said_by = f"{key}={value}"
        if rule.reads == "instance-type":
            row = self.instance_types.get(value.strip().lower())
            return None if row is None else self.instance_description(row, said_by)
        if rule.reads == "instance-family":
            family = value.strip().lower()
            rows = [r for n, r in self.instance_types.items() if n.split(".", 1)[0] == family]
            gpus = {(r.gpu, r.memory_gb) for r in rows}
            if len(gpus) != 1:
                return None
            row = rows[0]
            return GpuDescription(row.gpu, self.gpu_name(row.gpu) == row.gpu, row.memory_gb, None, row.product,
                                  said_by, row.source, row.uncertain)
        if rule.reads != "gpu":
            return None
        found = self.values.get((key, value.strip().lower()))
        if found is not None:
            return GpuDescription(found.gpu, self.gpu_name(found.gpu) == found.gpu, found.memory_gb, None,
                                  found.product, said_by, found.source, found.uncertain)
        if not rule.by_name:
            return None
        name = self.gpu_name(value)
        if name is None:
            return None
        exact, memory_gb = product_and_memory(value)
        # A GFD product value is the exact part (NVIDIA-A100-SXM4-80GB); a bare name ("a100") is not.
        product = exact if memory_gb is not None else None
        return GpuDescription(name, True, memory_gb, None, product, said_by, rule.source, rule.uncertain)

    def only_memory(self, gpu: str) -> int | None:
        """The memory per GPU every row of this table gives ``gpu``, when the rows agree (T4: 16,
        L4: 24); None when they give several sizes (A100: 40 and 80) or none."""
        rows: list[_ValueRow | InstanceType] = [*self.values.values(), *self.instance_types.values()]
        sizes = {r.memory_gb for r in rows if r.gpu == gpu}
        return next(iter(sizes)) if len(sizes) == 1 and None not in sizes else None

    def instance_description(self, row: InstanceType, said_by: str) -> GpuDescription:
        return GpuDescription(row.gpu, self.gpu_name(row.gpu) == row.gpu, row.memory_gb, row.count, row.product,
                              said_by, row.source, row.uncertain)


@functools.lru_cache(maxsize=1)
def product_and_memory(value: str) -> tuple[str, int | None]:
    """A GPU product as GFD or a target names it, without GFD's sharing/MIG suffix, and the memory
    (GB) its name spells, if any: "NVIDIA-A100-SXM4-80GB-SHARED" -> ("NVIDIA-A100-SXM4-80GB", 80)."""
    exact = _GFD_SUFFIX.sub("", value.strip())
    memory = _MEMORY_IN_NAME.search(exact)
    return exact, int(memory.group(1)) if memory else None


def _cached_gpu_index() -> dict[str, str]:
    return _gpu_index()


def _text(row: Mapping[str, Any], key: str, where: str, origin: str, required: bool = True) -> str | None:
    value = row.get(key)
    if value is None and not required:
        return None
    if not isinstance(value, str) or not value.strip():
        raise ConfigError(f"{where}: {key!r} must be a non-empty string", origin)
    return value.strip()


def _positive(row: Mapping[str, Any], key: str, where: str, origin: str) -> int | None:
    value = row.get(key)
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise ConfigError(f"{where}: {key!r} must be a whole number >= 1", origin)
    return value


def _strings(row: Mapping[str, Any], key: str, where: str, origin: str, required: bool = True) -> tuple[str, ...]:
    value = row.get(key, [] if not required else None)
    if not isinstance(value, list) or (required and not value) or not all(isinstance(v, str) and v.strip() for v in value):
        raise ConfigError(f"{where}: {key!r} must list non-empty strings", origin)
    return tuple(v.strip() for v in value)


def _uncertain(row: Mapping[str, Any], where: str, origin: str) -> bool:
    confidence = row.get("confidence", "documented")
    if confidence not in CONFIDENCES:
        raise ConfigError(f"{where}: confidence must be one of {list(CONFIDENCES)}", origin)
    return confidence == "uncertain"


def _table(row: Any, allowed: set[str], where: str, origin: str) -> Mapping[str, Any]:
    if not isinstance(row, Mapping):
        raise ConfigError(f"{where}: not a table", origin)
    unknown = set(row) - allowed
    if unknown:
        raise ConfigError(f"{where}: unknown keys {sorted(unknown)}", origin)
    return row


def node_labels_from_document(doc: Mapping[str, Any], origin: str) -> NodeLabels:
    if doc.get("schema") != 1:
        raise ConfigError("schema must be 1", origin)
    extra = set(doc) - {"schema", "label", "value", "instance-type"}
    if extra:
        raise ConfigError(f"unknown tables {sorted(extra)}", origin)
    labels: dict[str, LabelRule] = {}
    for i, raw in enumerate(_rows(doc, "label", origin)):
        row = _table(raw, _LABEL_KEYS, f"label #{i + 1}", origin)
        key = str(_text(row, "key", f"label #{i + 1}", origin))
        where = f"label {key!r}"
        reads = _text(row, "reads", where, origin)
        if reads not in READS:
            raise ConfigError(f"{where}: reads must be one of {list(READS)}", origin)
        if key in labels:
            raise ConfigError(f"{where}: listed twice", origin)
        by_name = row.get("by-name", False)
        if not isinstance(by_name, bool):
            raise ConfigError(f"{where}: by-name must be true or false", origin)
        vendor_values = _strings(row, "vendor-values", where, origin, required=reads == "vendor")
        labels[key] = LabelRule(key, reads, by_name, tuple(v.lower() for v in vendor_values),
                                str(_text(row, "provider", where, origin)), str(_text(row, "source", where, origin)),
                                _uncertain(row, where, origin))
    values: dict[tuple[str, str], _ValueRow] = {}
    for i, raw in enumerate(_rows(doc, "value", origin)):
        where = f"value #{i + 1}"
        row = _table(raw, _VALUE_KEYS, where, origin)
        key = str(_text(row, "key", where, origin))
        if key not in labels or labels[key].reads != "gpu":
            raise ConfigError(f"{where}: {key!r} is not a [[label]] that reads a gpu", origin)
        entry = _ValueRow(str(_text(row, "gpu", where, origin)), _positive(row, "memory-gb", where, origin),
                          _text(row, "product", where, origin, required=False),
                          str(_text(row, "source", where, origin)), _uncertain(row, where, origin))
        for value in _strings(row, "values", where, origin):
            if (key, value.lower()) in values:
                raise ConfigError(f"{where}: {key}={value} listed twice", origin)
            values[(key, value.lower())] = entry
    instances: dict[str, InstanceType] = {}
    for i, raw in enumerate(_rows(doc, "instance-type", origin)):
        where = f"instance-type #{i + 1}"
        row = _table(raw, _INSTANCE_KEYS, where, origin)
        count = _positive(row, "count", where, origin)
        if count is None:
            raise ConfigError(f"{where}: 'count' is required", origin)
        for name in _strings(row, "names", where, origin):
            if name.lower() in instances:
                raise ConfigError(f"{where}: instance type {name!r} listed twice", origin)
            instances[name.lower()] = InstanceType(
                str(_text(row, "provider", where, origin)), name, str(_text(row, "gpu", where, origin)),
                _text(row, "product", where, origin, required=False), count,
                _positive(row, "memory-gb", where, origin), str(_text(row, "source", where, origin)),
                _uncertain(row, where, origin),
            )
    return NodeLabels(labels, values, instances, origin)


def _rows(doc: Mapping[str, Any], table: str, origin: str) -> Sequence[Any]:
    rows = doc.get(table, [])
    if not isinstance(rows, list):
        raise ConfigError(f"[[{table}]] must be an array of tables", origin)
    return rows


@functools.lru_cache(maxsize=1)
def load_node_labels() -> NodeLabels:
    """The shipped node-label knowledge (cached for the process)."""
    from imagelint.matrix.loader import shipped_document

    return node_labels_from_document(shipped_document(FILE, "node-label table"), f"matrices/{FILE}")


__all__ = ["FILE", "READS", "GpuDescription", "InstanceType", "LabelRule", "NodeLabels", "load_node_labels",
           "node_labels_from_document"]
