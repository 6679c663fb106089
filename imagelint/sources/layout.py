"""OCI image layouts, as a directory (``oci-dir:``) or inside a tar (``oci-archive:``).

One reader over a ``BlobStore`` serves both (and Docker 25+ save archives, see
``archive.py``): ``oci-layout`` + ``index.json`` -> the entry named by the tag
(``org.opencontainers.image.ref.name``, or containerd's full
``io.containerd.image.name``) or the only entry -> nested indexes resolved by
platform -> manifest -> config + layers. Every document is digest-verified
when read; every layer stream is verified at EOF (``VerifyingReader``).
"""

from __future__ import annotations

import functools
from dataclasses import dataclass
from types import MappingProxyType

from imagelint.errors import ImageFormatError, SourceError, UsageError
from imagelint.image import LAYER_COMPRESSION, OCI_INDEX, Image, Layer
from imagelint.reference import ImageReference, parse_registry_name
from imagelint.sources.blobstore import (
    BlobStore,
    DirBlobStore,
    blob_name,
    open_blob,
    read_blob,
    read_small,
)
from imagelint.sources.manifest import (
    MAX_INDEX_DEPTH,
    Descriptor,
    Index,
    Manifest,
    check_diff_ids,
    load_json_object,
    parse_document,
    parse_image_config,
    select_platforms,
)
from imagelint.sources.options import SourceOptions

REF_NAME = "org.opencontainers.image.ref.name"
CONTAINERD_NAME = "io.containerd.image.name"


def open_oci_dir(ref: ImageReference, options: SourceOptions) -> list[Image]:
    """``oci-dir:PATH[:TAG]``: an OCI image layout directory."""
    return images_from_layout(DirBlobStore(ref.value), ref, options, "oci-dir")


def open_oci_archive(ref: ImageReference, options: SourceOptions) -> list[Image]:
    """``oci-archive:PATH[:TAG]``: an OCI image layout in an uncompressed tar, read in place."""
    from imagelint.sources.spool import open_tar_store

    return images_from_layout(open_tar_store(ref.value, options), ref, options, "oci-archive")


@dataclass(frozen=True)
class ImageOrigin:
    """What every Image built from one store shares: how the user named it and the source kind."""

    store: BlobStore
    ref_text: str
    source: str
    options: SourceOptions


def images_from_layout(store: BlobStore, ref: ImageReference, options: SourceOptions, source: str) -> list[Image]:
    origin = ImageOrigin(store, str(ref), source, options)
    check_layout_marker(store)
    index = read_top_index(store)
    images: list[Image] = []
    for entry in select_entries(index, ref.tag, options, store.where):
        images.extend(images_from_descriptor(origin, entry, depth=0, index_digest=None, seen=frozenset()))
    return images


def check_layout_marker(store: BlobStore) -> None:
    """``oci-layout`` must be a JSON object naming a layout version, when present."""
    if store.size("oci-layout") is None:
        return  # tolerated: some writers omit it, index.json is what matters
    doc = load_json_object(read_small(store, "oci-layout", f"{store.where}/oci-layout"), f"{store.where}/oci-layout")
    version = doc.get("imageLayoutVersion")
    if not isinstance(version, str) or not version.startswith("1."):
        raise ImageFormatError(f"{store.where}/oci-layout: unsupported imageLayoutVersion {str(version)[:20]!r}")


def read_top_index(store: BlobStore) -> Index:
    what = f"{store.where}/index.json"
    if store.size("index.json") is None:
        raise ImageFormatError(f"{store.where}: not an OCI image layout (no index.json)")
    doc = parse_document(read_small(store, "index.json", what), what, OCI_INDEX)
    if not isinstance(doc, Index):
        raise ImageFormatError(f"{what}: expected an image index")
    if not doc.manifests:
        raise ImageFormatError(f"{what}: lists no images")
    return doc


def entry_names(entry: Descriptor) -> list[str]:
    return [v for v in (entry.annotations.get(REF_NAME), entry.annotations.get(CONTAINERD_NAME)) if v]


def _names_match(name: str, wanted: str) -> bool:
    if name == wanted:
        return True
    # A full reference (containerd's name, or a ref.name holding one): compare normalised
    # names, and let a bare tag pick it ("12.4" selects "example.com/cuda:12.4").
    try:
        full = parse_registry_name(name)
    except UsageError:
        return False
    if full.tag == wanted and ("/" in name or ":" in name):
        return True
    try:
        return parse_registry_name(wanted) == full
    except UsageError:
        return False


def select_entries(index: Index, tag: str | None, options: SourceOptions, where: str) -> list[Descriptor]:
    """The top-level entries to read: by tag, else the only image; platform-select among equals."""
    entries = list(index.manifests)
    if tag is not None:
        entries = [e for e in entries if any(_names_match(n, tag) for n in entry_names(e))]
        if not entries:
            raise SourceError(f"{where}: no image named {tag!r} (available: {_list_names(index)})")
    if len(entries) == 1:
        return entries
    # Several entries may be one image for several platforms (the same name, each with a platform).
    distinct_names = {tuple(entry_names(e)) for e in entries}
    platforms = [e.platform for e in entries]
    if len(distinct_names) == 1 and all(platforms) and len(set(platforms)) == len(platforms):
        return select_platforms(Index(OCI_INDEX, tuple(entries)), options.platform, options.all_platforms, where)
    if tag is not None:
        raise UsageError(f"{where}: {len(entries)} different images are named {tag!r}; the layout is ambiguous")
    raise UsageError(f"{where} holds {len(entries)} images; choose one with {where}:TAG (tags: {_list_names(index)})")


def _list_names(index: Index) -> str:
    names = sorted({(entry_names(e) or ["<untagged>"])[0] for e in index.manifests})
    return ", ".join(names[:20]) + (", ..." if len(names) > 20 else "")


def images_from_descriptor(
    origin: ImageOrigin, desc: Descriptor, depth: int, index_digest: str | None, seen: frozenset[str]
) -> list[Image]:
    """Follow one descriptor: an index is platform-selected (bounded depth, no cycles), a manifest built."""
    if desc.digest in seen:
        raise ImageFormatError(f"{origin.store.where}: index {desc.digest} refers to itself")
    what = f"{origin.store.where}: {desc.digest[:19]}"
    doc = parse_document(read_blob(origin.store, desc.digest, what, desc.size), what, desc.media_type or None)
    if isinstance(doc, Manifest):
        return [build_image(origin, doc, desc.digest, index_digest)]
    if depth >= MAX_INDEX_DEPTH:
        raise ImageFormatError(f"{what}: indexes nested deeper than {MAX_INDEX_DEPTH}")
    chosen = select_platforms(doc, origin.options.platform, origin.options.all_platforms, what)
    # The same child named twice is one image: without this, nested indexes naming one child
    # many times fan out to entries^depth reads.
    chosen = list({c.digest: c for c in chosen}.values())
    images: list[Image] = []
    for child in chosen:
        images.extend(images_from_descriptor(origin, child, depth + 1, desc.digest, seen | {desc.digest}))
    return images


def build_image(origin: ImageOrigin, manifest: Manifest, manifest_digest: str, index_digest: str | None) -> Image:
    """An Image from a verified manifest: its config read and verified, its layers checked present."""
    store = origin.store
    config_what = f"{store.where}: config {manifest.config.digest[:19]}"
    config = parse_image_config(read_blob(store, manifest.config.digest, config_what, manifest.config.size), config_what)
    check_diff_ids(config, len(manifest.layers), f"{store.where}: manifest {manifest_digest[:19]}")
    layers = tuple(
        _layer(store, i, d, config.diff_ids[i] if config.diff_ids else None) for i, d in enumerate(manifest.layers)
    )
    return Image(
        ref=origin.ref_text,
        source=origin.source,
        platform=config.platform,
        config=config,
        layers=layers,
        digest=manifest_digest,
        config_digest=manifest.config.digest,
        index_digest=index_digest,
        manifest_media_type=manifest.media_type,
        annotations=MappingProxyType(dict(manifest.annotations)),
    )


def _layer(store: BlobStore, index: int, desc: Descriptor, diff_id: str | None) -> Layer:
    what = f"{store.where}: layer {index} ({desc.digest[:19]})"
    actual_size = store.size(blob_name(desc.digest))
    if actual_size is None:
        raise ImageFormatError(f"{what}: blob is missing")
    if desc.size is not None and actual_size != desc.size:
        raise ImageFormatError(f"{what}: blob is {actual_size} bytes but the manifest says {desc.size}")
    if LAYER_COMPRESSION.get(desc.media_type) == "none" and diff_id is not None and diff_id != desc.digest:
        raise ImageFormatError(f"{what}: uncompressed layer does not match the config's diff_id {diff_id[:19]}")
    return Layer(
        index=index,
        digest=desc.digest,
        size=actual_size,
        media_type=desc.media_type,
        diff_id=diff_id,
        opener=functools.partial(open_blob, store, desc.digest, what, actual_size),
    )


def find_manifest_for_config(store: BlobStore, config_digest: str) -> tuple[Manifest, str] | None:
    """In a layout's index.json (one level of nested indexes), the manifest whose config is ``config_digest``.

    Used by Docker 25+ save archives, whose manifest.json names the config but
    not the OCI manifest that carries the layers' media types.
    """
    if store.size("index.json") is None:
        return None
    pending = list(read_top_index(store).manifests)
    for depth in range(2):
        nested: list[Descriptor] = []
        for desc in pending:
            if store.size(blob_name(desc.digest)) is None:
                continue
            what = f"{store.where}: {desc.digest[:19]}"
            doc = parse_document(read_blob(store, desc.digest, what, desc.size), what, desc.media_type or None)
            if isinstance(doc, Manifest) and doc.config.digest == config_digest:
                return doc, desc.digest
            if isinstance(doc, Index) and depth == 0:
                nested.extend(doc.manifests)
        pending = nested
    return None
