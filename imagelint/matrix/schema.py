"""The matrix file format: one spec that drives the runtime validator and the JSON Schema.

A matrix file is TOML::

    [meta]
    kind = "imagelint-matrix"        # overlays use "imagelint-matrix-overlay"
    schema_version = 1
    data_version = "2026-11-29"      # a date; the matrix version

    [[cuda_releases]]
    version = "12.4.1"
    ...
    source = "https://..."           # EVERY row names where it comes from
    confidence = "uncertain"         # optional; absent = as documented by the source

The runtime validator below is plain Python (``jsonschema`` is a test-only dependency); the
shipped ``imagelint/schemas/matrix.schema.json`` is generated from the same ``SECTIONS`` spec and a
test keeps the two from drifting.
"""

from __future__ import annotations

import datetime as _dt
import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from imagelint.errors import ConfigError

SCHEMA_VERSION = 1
KIND_MATRIX = "imagelint-matrix"
KIND_OVERLAY = "imagelint-matrix-overlay"
KNOWN_KINDS = (KIND_MATRIX, KIND_OVERLAY)
CONFIDENCE_VALUES = ("documented", "uncertain")

_NUMERIC_VERSION = r"^[0-9]+(\.[0-9]+)*$"
_TOOL_VERSION = r"^v?[0-9]+(\.[0-9]+)*$"
_DATE = r"^[0-9]{4}-[0-9]{2}-[0-9]{2}$"
_ENV_ENTRY = r"^[A-Za-z_][A-Za-z0-9_]*="
_MIG_STRATEGIES = ("none", "single", "mixed")


@dataclass(frozen=True)
class Field:
    """One key of a row: its JSON type, whether it is required and an optional pattern/enum."""

    type: str  # "string" | "integer" | "boolean" | "array:string" | "array:integer"
    required: bool = False
    pattern: str | None = None
    enum: tuple[str, ...] | None = None


def _common() -> dict[str, Field]:
    return {
        "source": Field("string", required=True),
        "confidence": Field("string", enum=CONFIDENCE_VALUES),
        "note": Field("string"),
    }


def _section(key: tuple[str, ...], **fields: Field) -> Section:
    return Section(key=key, fields={**fields, **_common()})


@dataclass(frozen=True)
class Section:
    """An array of tables; ``key`` names the fields that identify a row (for overlays and diff)."""

    key: tuple[str, ...]
    fields: Mapping[str, Field]


SECTIONS: dict[str, Section] = {
    "cuda_releases": _section(
        ("version",),
        version=Field("string", True, _NUMERIC_VERSION),
        label=Field("string", True),
        release_kind=Field("string", True, enum=("ga", "update", "rc")),
        min_driver=Field("string", True, _NUMERIC_VERSION),
        min_driver_windows=Field("string"),
    ),
    "minor_version_compat": _section(
        ("cuda_major",),
        cuda_major=Field("integer", True),
        min_driver=Field("string", True, _NUMERIC_VERSION),
        below_branch=Field("integer"),
    ),
    "driver_branches": _section(
        ("branch",),
        branch=Field("integer", True),
        max_cuda=Field("string", True, _NUMERIC_VERSION),
    ),
    "driver_lifecycle": _section(
        ("branch",),
        branch=Field("integer", True),
        designation=Field("string", True),
        eol=Field("string", True),
        eol_date=Field("string", pattern=_DATE),
    ),
    "driver_gpu_support": _section(
        ("architecture",),
        architecture=Field("string", True),
        compute_capabilities=Field("array:string", True),
        first_branch=Field("integer"),
        last_branch=Field("integer"),
    ),
    "forward_compat": _section(
        ("package",),
        package=Field("string", True, r"^cuda-compat-[0-9]+-[0-9]+$"),
        cuda=Field("string", True, _NUMERIC_VERSION),
        compatible_branches=Field("array:integer", True),
        not_needed_branches=Field("array:integer", True),
        incompatible_branches=Field("array:integer", True),
        eligible_kinds=Field("array:string", True),
    ),
    "forward_compat_brands": _section(
        ("brand",),
        brand=Field("string", True),
        nvml_brand_id=Field("integer", True),
        eligible=Field("boolean", True),
    ),
    "gpus": _section(
        ("name",),
        name=Field("string", True),
        aliases=Field("array:string", True),
        compute_capability=Field("string", True, _NUMERIC_VERSION),
        family=Field("string", True),
        brand=Field("string", True),
        brand_confidence=Field("string", True, enum=CONFIDENCE_VALUES),
        kind=Field("string", True, enum=("datacenter", "workstation", "geforce", "jetson")),
        datacenter=Field("boolean", True),
        # Jetson rows: the driver stack its images need. "tegra": the integrated GPU driven by Jetson
        # Linux's own driver (L4T); only Jetson (L4T, -igpu) images run, never dGPU/SBSA ones.
        driver_stack=Field("string", enum=("tegra",)),
        # ... up to this driver branch (the newest its Jetson Linux documents): past it, a newer
        # Jetson Linux may run other images, and a verdict on them is not certain.
        tegra_last_branch=Field("integer"),
    ),
    "toolkit_releases": _section(
        ("version",),
        version=Field("string", True, _TOOL_VERSION),
        date=Field("string", True, _DATE),
        notable=Field("string"),
    ),
    "toolkit_features": _section(
        ("name",),
        name=Field("string", True),
        since=Field("string", True, _TOOL_VERSION),
        description=Field("string", True),
        default_runtime_mode=Field("string", enum=("legacy", "csv", "cdi", "jit-cdi")),
    ),
    "device_plugin_releases": _section(
        ("version",),
        version=Field("string", True, _TOOL_VERSION),
        date=Field("string", True, _DATE),
        notable=Field("string"),
    ),
    "device_plugin_features": _section(
        ("name",),
        name=Field("string", True),
        since=Field("string", True, _TOOL_VERSION),
        description=Field("string", True),
    ),
    "device_plugin_requirements": _section(
        ("name",),
        name=Field("string", True),
        value=Field("string", True),
    ),
    "gpu_operator_releases": _section(
        ("version",),
        version=Field("string", True, _TOOL_VERSION),
        drivers=Field("array:string", True),
        default_driver=Field("string"),
        recommended_drivers=Field("array:string"),
        container_toolkit=Field("string", True),
        device_plugin=Field("string", True),
        gfd=Field("string"),
        dcgm=Field("string"),
        dcgm_exporter=Field("string"),
        nfd=Field("string"),
        mig_manager=Field("string"),
        driver_manager=Field("string"),
        # CVE numbers whose record names this release as affected (NVIDIA's CVE records).
        affected_by=Field("array:string", pattern=r"^CVE-[0-9]{4}-[0-9]{4,}$"),
    ),
    "ngc_images": _section(
        ("repository", "tag"),
        repository=Field("string", True),
        tag=Field("string", True),
        release=Field("string", True),
        cuda=Field("string", True, _NUMERIC_VERSION),
        framework_version=Field("string"),
        min_driver_branch=Field("integer"),
    ),
    # NGC monthly releases (YY.MM): the CUDA every framework container of that release is built
    # on (PyTorch, TensorFlow, Triton, TensorRT, MXNet, PaddlePaddle, Kaldi, JAX...), per the
    # framework release notes ("Release YY.MM is based on CUDA X.Y.Z"). ``repositories`` lists the
    # NGC repositories that follow the cadence; a per-image ``ngc_images`` row wins over this.
    "ngc_releases": _section(
        ("release",),
        release=Field("string", True, r"^[0-9]{2}\.[0-9]{2}$"),
        cuda=Field("string", True, _NUMERIC_VERSION),
        min_driver_branch=Field("integer"),
        repositories=Field("array:string", True),
        driver_requirements=Field("string"),
        datacenter_compat_drivers=Field("array:string", pattern=_NUMERIC_VERSION),
        driver_requirements_source=Field("string"),
        # True when the notes name no data-centre driver list and send the reader to NVIDIA's
        # CUDA Compatibility guide instead ("requires the NVIDIA Driver release. Please see CUDA
        # Compatibility"): the forward-compatibility table of the release's CUDA decides.
        drivers_defer_to_forward_compat=Field("boolean"),
        # The lowest compute capability the release's framework builds carry kernels for
        # (``TORCH_CUDA_ARCH_LIST`` / "supports CUDA compute capability X and later"), and where
        # that is stated; a GPU below it has no kernel image (IL401).
        min_compute_capability=Field("string", pattern=r"^[0-9]+\.[0-9]+$"),
        compute_capability_source=Field("string"),
    ),
    # Image tags that state their CUDA version (third-party conventions: pytorch/pytorch
    # "2.5.0-cuda12.4-...", Ray "cu128", NVIDIA's cuda-sample "vectoradd-cuda12.5.0").
    # ``pattern`` is a regex over the tag with named groups major, minor (and optionally patch)
    # or ``digits`` ("cu121" -> 12.1); ``repository`` is a glob ("*" = any).
    "image_cuda_tags": _section(
        ("name",),
        name=Field("string", True),
        repository=Field("string", True),
        pattern=Field("string", True),
    ),
    # NVIDIA DRA driver (k8s-dra-driver-gpu) DeviceClasses and what a claim of each gives.
    "dra_device_classes": _section(
        ("name",),
        name=Field("string", True),
        device=Field("string", True, enum=("gpu", "mig", "vfio", "imex")),
        since=Field("string", True, _TOOL_VERSION),
    ),
    # NVIDIA DRA driver releases and what they need.
    "dra_driver_releases": _section(
        ("version",),
        version=Field("string", True, _TOOL_VERSION),
        released=Field("string", pattern=_DATE),
        min_kubernetes=Field("string", True, _NUMERIC_VERSION),
        resource_apis=Field("array:string", True),
        min_driver_branch=Field("integer"),
        features=Field("array:string"),
    ),
    # Image repositories built for fixed platforms (Jetson's L4T images are linux/arm64 only) and
    # where the CUDA they carry is read: from the L4T release in the tag (``jetson_releases``),
    # from the tag's own major.minor (``l4t-cuda:12.2.12-runtime``), or nowhere (``none``).
    "image_platforms": _section(
        ("repository",),
        repository=Field("string", True),
        platforms=Field("array:string", True, r"^linux/(amd64|arm64)$"),
        cuda_from=Field("string", True, enum=("l4t-release", "tag-major-minor", "none")),
    ),
    # Image references built for a Jetson's integrated GPU and its L4T driver stack only (they do not
    # run on a discrete GPU, whatever the CPU architecture): repository glob and tag regex.
    "jetson_images": _section(
        ("repository", "pattern"),
        repository=Field("string", True),
        pattern=Field("string", True),
    ),
    # Jetson Linux (L4T) releases -> the JetPack they belong to and the CUDA that JetPack ships.
    "jetson_releases": _section(
        ("l4t",),
        l4t=Field("string", True, _NUMERIC_VERSION),
        jetpack=Field("string", True, _NUMERIC_VERSION),
        cuda=Field("string", True, _NUMERIC_VERSION),
    ),
    # Env of the official nvidia/cuda images: one row per version, arch ("any" when amd64 and
    # arm64 agree) and flavor; ``env`` holds "NAME=value" strings, as an image config does.
    "cuda_image_env": _section(
        ("version", "arch", "flavor"),
        version=Field("string", True, _NUMERIC_VERSION),
        arch=Field("string", True, enum=("amd64", "arm64", "any")),
        flavor=Field("string", True),
        os=Field("string"),
        env=Field("array:string", True, _ENV_ENTRY),
    ),
    # How the image flavors build on each other (runtime FROM base, devel FROM runtime ...)
    # and what env each adds on top of its parent.
    "cuda_image_flavors": _section(
        ("flavor",),
        flavor=Field("string", True),
        parent=Field("string"),
        env=Field("array:string", True, _ENV_ENTRY),
    ),
    # k8s-device-plugin resource naming; ``value`` may hold "{profile}" (a MIG profile "1g.5gb").
    "device_plugin_resource_names": _section(
        ("name",),
        name=Field("string", True),
        value=Field("string", True),
        mig_strategies=Field("array:string", enum=_MIG_STRATEGIES),
    ),
    # PTX ISA version (the ``.version`` directive of PTX) -> the first CUDA release that emits
    # and loads it; a driver older than that CUDA cannot JIT the PTX.
    "ptx_isa_versions": _section(
        ("ptx_isa",),
        ptx_isa=Field("string", True, _NUMERIC_VERSION),
        min_cuda=Field("string", True, _NUMERIC_VERSION),
    ),
    # Architecture names a build tool expands in its arch list (PyTorch's TORCH_CUDA_ARCH_LIST:
    # "Ampere" -> "8.0;8.6+PTX"). ``expands_to`` is in the tool's own syntax; IL401 reads a
    # named list as secondary evidence of an image's GPU code.
    "gpu_arch_names": _section(
        ("tool", "name"),
        tool=Field("string", True, enum=("pytorch",)),
        name=Field("string", True),
        expands_to=Field("string", True),
    ),
    # Names NVIDIA software and images use (GFD node labels, image env/labels, workload image
    # names). ``values`` may hold "{profile}"/"{product}" placeholders or "*" globs (kind *-pattern).
    "nvidia_names": _section(
        ("name",),
        name=Field("string", True),
        kind=Field("string", True, enum=("node-label", "node-label-pattern", "image-env", "image-env-pattern",
                                         "image-label", "product-suffix", "image-name")),
        values=Field("array:string", True),
        deprecated=Field("boolean"),
    ),
    # MIG profiles per GPU product and memory size (NVIDIA Multi-Instance GPU User Guide,
    # "Supported MIG Profiles"): ``gpu`` is a ``gpus`` row's name, ``memory_gb`` tells the
    # memory variants of one product apart (A100 40 GB / 80 GB), ``profiles`` are the names
    # without the ``mig-`` prefix (``3g.40gb``, ``1g.10gb+me``).
    "mig_profiles": _section(
        ("gpu", "memory_gb"),
        gpu=Field("string", True),
        memory_gb=Field("integer", True),
        profiles=Field("array:string", True),
        products=Field("array:string"),  # product names (GFD's gpu.product, --gpu) that are this variant
    ),
}

META_FIELDS: dict[str, Field] = {
    "kind": Field("string", True, enum=KNOWN_KINDS),
    "schema_version": Field("integer", True),
    "data_version": Field("string", True, _DATE),
    "description": Field("string"),
}


def row_key(section: str, row: Mapping[str, Any]) -> tuple[Any, ...]:
    return tuple(row.get(k) for k in SECTIONS[section].key)


# --- runtime validation (no jsonschema at runtime) ---------------------------------------------

def _type_ok(value: Any, kind: str) -> bool:
    if kind == "string":
        return isinstance(value, str)
    if kind == "integer":
        return isinstance(value, int) and not isinstance(value, bool)
    if kind == "boolean":
        return isinstance(value, bool)
    if kind.startswith("array:"):
        inner = kind.split(":", 1)[1]
        return isinstance(value, list) and all(_type_ok(v, inner) for v in value)
    raise AssertionError(kind)


class _RowProblem(Exception):
    """What is wrong with one row; turned into a ConfigError with file and line by the caller."""


def _check_fields(where: str, row: Any, fields: Mapping[str, Field]) -> None:
    if not isinstance(row, dict):
        raise _RowProblem(f"{where}: expected a table")
    for name in row:
        if name not in fields:
            raise _RowProblem(f"{where}: unknown key {name!r}")
    for name, spec in fields.items():
        if name not in row:
            if spec.required:
                raise _RowProblem(f"{where}: missing {name!r}")
            continue
        value = row[name]
        if isinstance(value, (_dt.date, _dt.datetime, _dt.time)):
            raise _RowProblem(f"{where}: {name!r} must be a quoted string, not a TOML date")
        if not _type_ok(value, spec.type):
            raise _RowProblem(f"{where}: {name!r} must be {spec.type.replace('array:', 'an array of ')}")
        if spec.type == "string" and not value.strip():
            raise _RowProblem(f"{where}: {name!r} must not be empty")
        # On an array, pattern and enum apply to every item.
        for item in value if isinstance(value, list) else (value,):
            if spec.pattern and len(item) > MAX_PATTERNED_CHARS:  # a version of 5,000 digits: int() past its limit later
                raise _RowProblem(f"{where}: {name!r} is longer than {MAX_PATTERNED_CHARS} characters (a matrix value's limit)")
            if spec.pattern and not re.match(spec.pattern, item):
                raise _RowProblem(f"{where}: {name!r} = {item!r} does not look like {_pattern_hint(spec.pattern)}")
            if spec.enum and item not in spec.enum:
                raise _RowProblem(f"{where}: {name!r} must be one of {', '.join(spec.enum)}")


MAX_PATTERNED_CHARS = 4096  # env entries such as NVIDIA_REQUIRE_CUDA run to ~1 KiB; 4,096 digits stay inside int()'s limit


def _pattern_hint(pattern: str) -> str:
    return {
        _NUMERIC_VERSION: "a numeric version", _TOOL_VERSION: "a version", _DATE: "a date YYYY-MM-DD",
        _ENV_ENTRY: "NAME=value",
    }.get(pattern, f"/{pattern}/")


def row_line(text: str, section: str, index: int) -> int | None:
    """The line of the ``index``-th ``[[section]]`` header in ``text`` (1-based), when findable."""
    header = re.compile(r"^[ \t]*\[\[[ \t]*" + re.escape(section) + r"[ \t]*\]\]", re.MULTILINE)
    for n, match in enumerate(header.finditer(text)):
        if n == index:
            return text.count("\n", 0, match.start()) + 1
    return None


def validate_document(doc: Mapping[str, Any], path: str, text: str = "", *, overlay_ok: bool = True) -> str:
    """Check a parsed matrix (or overlay) document; returns its kind. Raises ``ConfigError``."""
    meta = doc.get("meta")
    if not isinstance(meta, dict):
        raise ConfigError("missing [meta] table", path, None)
    try:
        _check_fields("meta", meta, META_FIELDS)
    except _RowProblem as exc:
        raise ConfigError(str(exc), path, _table_line(text, "meta")) from None
    kind = meta["kind"]
    if kind == KIND_OVERLAY and not overlay_ok:
        raise ConfigError("meta: this is an overlay, not a matrix", path)
    if meta["schema_version"] != SCHEMA_VERSION:
        raise ConfigError(
            f"meta: schema_version {meta['schema_version']} is not supported (this imagelint reads {SCHEMA_VERSION})", path
        )
    try:
        _dt.date.fromisoformat(meta["data_version"])
    except ValueError:
        raise ConfigError(f"meta: data_version {meta['data_version']!r} is not a real date", path) from None
    for name, value in doc.items():
        if name == "meta":
            continue
        if name not in SECTIONS:
            raise ConfigError(f"unknown section {name!r} (known: {', '.join(SECTIONS)})", path)
        if not isinstance(value, list):
            raise ConfigError(f"{name}: must be an array of tables ([[{name}]])", path)
        seen: dict[tuple[Any, ...], int] = {}
        for index, row in enumerate(value):
            try:
                _check_fields(f"{name}[{index}]", row, SECTIONS[name].fields)
            except _RowProblem as exc:  # the line is only looked up when something is wrong
                raise ConfigError(str(exc), path, row_line(text, name, index)) from None
            key = row_key(name, row)
            if key in seen:
                message = f"{name}[{index}]: duplicate of {name}[{seen[key]}] ({', '.join(map(str, key))})"
                raise ConfigError(message, path, row_line(text, name, index))
            seen[key] = index
    if kind == KIND_MATRIX:
        for name in REQUIRED_SECTIONS:
            if not doc.get(name):
                raise ConfigError(f"missing section [[{name}]]", path)
    return kind


def _table_line(text: str, table: str) -> int | None:
    match = re.search(r"^[ \t]*\[[ \t]*" + re.escape(table) + r"[ \t]*\]", text, re.MULTILINE)
    return text.count("\n", 0, match.start()) + 1 if match else None


REQUIRED_SECTIONS = ("cuda_releases", "minor_version_compat", "driver_branches")


# --- JSON Schema (for editors, CI and the drift test) ------------------------------------------

def _field_schema(spec: Field) -> dict[str, Any]:
    if spec.type.startswith("array:"):
        items = _field_schema(Field(spec.type.split(":", 1)[1], pattern=spec.pattern, enum=spec.enum))
        items.pop("minLength", None)  # array items may be empty strings (an env value "A=")
        return {"type": "array", "items": items}
    out: dict[str, Any] = {"type": spec.type}
    if spec.type == "string":
        out["minLength"] = 1
    if spec.pattern:
        out["pattern"] = spec.pattern
    if spec.enum:
        out["enum"] = list(spec.enum)
    return out


def _object_schema(fields: Mapping[str, Field]) -> dict[str, Any]:
    return {
        "type": "object",
        "additionalProperties": False,
        "required": [n for n, f in fields.items() if f.required],
        "properties": {n: _field_schema(f) for n, f in fields.items()},
    }


def json_schema() -> dict[str, Any]:
    """The JSON Schema equivalent of the runtime checks (shipped as schemas/matrix.schema.json)."""
    return {
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "$id": "https://imagelint.invalid/schemas/matrix.schema.json",
        "title": "imagelint compatibility matrix",
        "description": "A versioned NVIDIA compatibility matrix (TOML, shown here as JSON). Every row carries 'source'.",
        "type": "object",
        "additionalProperties": False,
        "required": ["meta"],
        "properties": {
            "meta": _object_schema(META_FIELDS),
            **{name: {"type": "array", "items": _object_schema(s.fields)} for name, s in SECTIONS.items()},
        },
    }


__all__ = [
    "CONFIDENCE_VALUES",
    "KIND_MATRIX",
    "KIND_OVERLAY",
    "SCHEMA_VERSION",
    "SECTIONS",
    "json_schema",
    "row_key",
    "row_line",
    "validate_document",
]
