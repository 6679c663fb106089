"""Parse and validate manifests, indexes and configs; choose platforms.

Shared by every source that reads OCI/Docker documents (registry, OCI layouts,
Docker 25+ archives). All input is untrusted: size-capped, type-checked, and
every failure is an ImageFormatError with a one-line reason.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any

from imagelint.digest import parse_digest
from imagelint.errors import ImageFormatError, LimitExceededError, SourceError
from imagelint.image import (
    DOCKER_MANIFEST,
    DOCKER_MANIFEST_LIST,
    INDEX_MEDIA_TYPES,
    MANIFEST_MEDIA_TYPES,
    OCI_INDEX,
    OCI_MANIFEST,
    HistoryEntry,
    ImageConfig,
    Platform,
    normalize_arch,
)
from imagelint.untrusted import loads_json

MAX_DOCUMENT_BYTES = 8 * 1024 * 1024  # manifests and configs; real ones are < 100 KiB
MAX_INDEX_DEPTH = 4
# An index names each platform once; real ones have < 50 entries (a few hundred with attestations).
# Bounds on entries per index and on distinct manifests an index walk may fetch keep a small nested
# index from fanning out into thousands of requests.
MAX_INDEX_ENTRIES = 1024
MAX_INDEX_FETCHES = 64
# Docker's overlay storage stops at 128 layers; OCI sets no bound, this one keeps requests finite.
MAX_LAYERS = 1000

ACCEPT_MANIFESTS = ", ".join((OCI_INDEX, OCI_MANIFEST, DOCKER_MANIFEST_LIST, DOCKER_MANIFEST))


@dataclass(frozen=True)
class Descriptor:
    """An OCI/Docker content descriptor: a blob or manifest by digest, and its platform in an index."""

    media_type: str
    digest: str
    size: int | None
    platform: Platform | None = None
    annotations: Mapping[str, str] = field(default_factory=lambda: MappingProxyType({}))


@dataclass(frozen=True)
class Manifest:
    """An image manifest (OCI or Docker v2), validated: the config blob and the layer blobs in order."""

    media_type: str
    config: Descriptor
    layers: tuple[Descriptor, ...]
    annotations: Mapping[str, str] = field(default_factory=lambda: MappingProxyType({}))


@dataclass(frozen=True)
class Index:
    """An OCI image index or Docker manifest list, validated: a manifest descriptor per platform."""

    media_type: str
    manifests: tuple[Descriptor, ...]
    annotations: Mapping[str, str] = field(default_factory=lambda: MappingProxyType({}))


def load_json_object(data: bytes, what: str) -> dict[str, Any]:
    """Decode a JSON document that must be an object, bounded in size."""
    if len(data) > MAX_DOCUMENT_BYTES:
        raise ImageFormatError(f"{what}: document too large ({len(data)} bytes, limit {MAX_DOCUMENT_BYTES})")
    try:
        doc = loads_json(data)
    except (ValueError, UnicodeDecodeError, RecursionError) as exc:
        raise ImageFormatError(f"{what}: not valid JSON ({str(exc)[:80]})") from None
    if not isinstance(doc, dict):
        raise ImageFormatError(f"{what}: expected a JSON object, got {type(doc).__name__}")
    return doc


def _str_map(value: Any, what: str) -> Mapping[str, str]:
    if value is None:
        return MappingProxyType({})
    if not isinstance(value, dict):
        raise ImageFormatError(f"{what}: expected an object of strings")
    return MappingProxyType({str(k): str(v) for k, v in value.items()})


def _platform(value: Any, what: str) -> Platform | None:
    if value is None:
        return None
    if not isinstance(value, dict):
        raise ImageFormatError(f"{what}: platform is not an object")
    os_ = value.get("os")
    arch = value.get("architecture")
    if not isinstance(os_, str) or not isinstance(arch, str) or not os_ or not arch:
        return None  # missing platform fields: the entry cannot be selected by platform
    variant = value.get("variant")
    return Platform(os_.lower(), normalize_arch(arch), variant if isinstance(variant, str) and variant else None)


def parse_descriptor(value: Any, what: str) -> Descriptor:
    if not isinstance(value, dict):
        raise ImageFormatError(f"{what}: descriptor is not an object")
    media_type = value.get("mediaType")
    digest = value.get("digest")
    size = value.get("size")
    if not isinstance(digest, str):
        raise ImageFormatError(f"{what}: descriptor has no digest")
    parse_digest(digest)
    if size is not None and (not isinstance(size, int) or isinstance(size, bool) or size < 0):
        raise ImageFormatError(f"{what}: descriptor size is not a non-negative integer")
    return Descriptor(
        media_type=media_type if isinstance(media_type, str) else "",
        digest=digest,
        size=size,
        platform=_platform(value.get("platform"), what),
        annotations=_str_map(value.get("annotations"), what),
    )


def media_type_of(doc: Mapping[str, Any], header_type: str | None = None) -> str:
    """The document's media type: its own field, else the transport's Content-Type, else by shape."""
    mt = doc.get("mediaType")
    if isinstance(mt, str) and mt:
        return mt
    if header_type:
        ht = header_type.split(";")[0].strip()
        if ht in INDEX_MEDIA_TYPES or ht in MANIFEST_MEDIA_TYPES:
            return ht
    if "manifests" in doc:
        return OCI_INDEX
    if "config" in doc and "layers" in doc:
        return OCI_MANIFEST
    return ""


def parse_document(data: bytes, what: str, header_type: str | None = None) -> Manifest | Index:
    """Parse bytes as an image manifest or an index; reject everything else."""
    doc = load_json_object(data, what)
    if doc.get("schemaVersion") != 2:
        if doc.get("schemaVersion") == 1:
            raise ImageFormatError(f"{what}: Docker schema 1 manifests are not supported (deprecated; re-push the image)")
        raise ImageFormatError(f"{what}: unsupported schemaVersion {str(doc.get('schemaVersion'))[:20]!r}")
    mt = media_type_of(doc, header_type)
    if mt in INDEX_MEDIA_TYPES:
        entries = doc.get("manifests")
        if not isinstance(entries, list):
            raise ImageFormatError(f"{what}: index has no manifests list")
        if len(entries) > MAX_INDEX_ENTRIES:
            raise LimitExceededError(f"{what}: index has {len(entries)} entries (limit {MAX_INDEX_ENTRIES})")
        return Index(
            media_type=mt,
            manifests=tuple(parse_descriptor(e, f"{what} manifests[{i}]") for i, e in enumerate(entries)),
            annotations=_str_map(doc.get("annotations"), what),
        )
    if mt in MANIFEST_MEDIA_TYPES:
        layers = doc.get("layers")
        if not isinstance(layers, list):
            raise ImageFormatError(f"{what}: manifest has no layers list")
        if len(layers) > MAX_LAYERS:
            raise LimitExceededError(f"{what}: manifest has {len(layers)} layers (limit {MAX_LAYERS})")
        return Manifest(
            media_type=mt,
            config=parse_descriptor(doc.get("config"), f"{what} config"),
            layers=tuple(parse_descriptor(e, f"{what} layers[{i}]") for i, e in enumerate(layers)),
            annotations=_str_map(doc.get("annotations"), what),
        )
    raise ImageFormatError(f"{what}: unsupported media type {mt[:100]!r}")


def _str_tuple(value: Any, what: str) -> tuple[str, ...] | None:
    if value is None:
        return None
    if isinstance(value, str):
        return (value,)
    if not isinstance(value, list):
        raise ImageFormatError(f"{what}: expected a list of strings")
    return tuple(str(v) for v in value)


def parse_image_config(data: bytes, what: str = "image config") -> ImageConfig:
    """Parse an image config blob (OCI or Docker; both share the fields we read)."""
    doc = load_json_object(data, what)
    cfg = doc.get("config") or doc.get("container_config") or {}
    if not isinstance(cfg, dict):
        raise ImageFormatError(f"{what}: 'config' is not an object")
    env: list[tuple[str, str]] = []
    raw_env = cfg.get("Env") or []
    if not isinstance(raw_env, list):
        raise ImageFormatError(f"{what}: Env is not a list")
    for item in raw_env:
        if isinstance(item, str):
            name, _, value = item.partition("=")
            env.append((name, value))
    rootfs = doc.get("rootfs") or {}
    diff_ids = rootfs.get("diff_ids") if isinstance(rootfs, dict) else None
    if diff_ids is not None and (not isinstance(diff_ids, list) or not all(isinstance(d, str) for d in diff_ids)):
        raise ImageFormatError(f"{what}: rootfs.diff_ids is not a list of digests")
    history = []
    raw_history = doc.get("history") or []
    if isinstance(raw_history, list):
        for h in raw_history:
            if isinstance(h, dict):
                history.append(
                    HistoryEntry(
                        created_by=str(h.get("created_by") or ""),
                        created=str(h["created"]) if h.get("created") else None,
                        comment=str(h["comment"]) if h.get("comment") else None,
                        empty_layer=bool(h.get("empty_layer")),
                    )
                )
    variant = doc.get("variant")
    return ImageConfig(
        env=tuple(env),
        entrypoint=_str_tuple(cfg.get("Entrypoint"), f"{what} Entrypoint"),
        cmd=_str_tuple(cfg.get("Cmd"), f"{what} Cmd"),
        working_dir=str(cfg.get("WorkingDir") or ""),
        user=str(cfg.get("User") or ""),
        labels=_str_map(cfg.get("Labels"), f"{what} Labels"),
        history=tuple(history),
        diff_ids=tuple(diff_ids or ()),
        os=str(doc.get("os") or ""),
        architecture=str(doc.get("architecture") or ""),
        variant=variant if isinstance(variant, str) and variant else None,
    )


def select_platforms(index: Index, platform: Platform, all_platforms: bool, where: str) -> list[Descriptor]:
    """Pick the index entries to read. Attestation manifests (unknown/unknown) are never images."""
    images = [
        d
        for d in index.manifests
        if d.annotations.get("vnd.docker.reference.type") != "attestation-manifest"
        and not (d.platform and d.platform.os == "unknown")
    ]
    if all_platforms:
        if not images:
            raise SourceError(f"{where}: the index lists no image manifests")
        return images
    matching = [d for d in images if d.platform and platform.matches(d.platform)]
    if not matching:
        available = ", ".join(sorted({str(d.platform) for d in images if d.platform})) or "none"
        raise SourceError(f"{where}: no image for platform {platform} (available: {available})")
    # Prefer an exact variant match, then the first listed (as containerd does).
    exact = [d for d in matching if d.platform == platform]
    return [(exact or matching)[0]]


def check_diff_ids(config: ImageConfig, layer_count: int, what: str) -> None:
    """A config whose diff_ids do not match the layers is refused (the image is inconsistent)."""
    if config.diff_ids and len(config.diff_ids) != layer_count:
        raise ImageFormatError(
            f"{what}: config lists {len(config.diff_ids)} diff_ids but the manifest has {layer_count} layers"
        )
