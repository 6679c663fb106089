"""``docker save`` archives (``docker-archive:PATH``), read in place through a TarBlobStore.

Two layouts share ``manifest.json`` (``[{"Config", "RepoTags", "Layers"}]``):

  classic (engines before 25)  ``<hex>.json`` config, ``<id>/layer.tar`` uncompressed
                               layers; no manifest, so ``Layer.digest`` is the
                               diff_id and each layer stream is verified against it
  Docker 25+                   an OCI layout (``index.json``, ``blobs/sha256/...``) whose
                               manifest.json points into ``blobs/``; the OCI manifest
                               for the config is found in index.json and read by the
                               layout code, so media types and digests are the real ones

Without a tag the first entry is read; ``ref.tag`` (a ``repo:tag`` or a bare
tag) selects among several.
"""

from __future__ import annotations

import functools
import hashlib
from dataclasses import dataclass
from typing import Any

from imagelint.digest import compute_digest, parse_digest, verify_bytes
from imagelint.errors import (
    ImageFormatError,
    LimitExceededError,
    SourceError,
    UsageError,
)
from imagelint.image import Image, Layer
from imagelint.lazyre import lazy_pattern
from imagelint.reference import ImageReference, parse_registry_name
from imagelint.sources.blobstore import (
    BlobStore,
    check_member_name,
    open_blob,
    read_small,
    sniff_compression,
)
from imagelint.sources.layout import ImageOrigin, build_image, find_manifest_for_config
from imagelint.sources.manifest import MAX_DOCUMENT_BYTES, parse_image_config
from imagelint.sources.options import SourceOptions
from imagelint.untrusted import loads_json

# A docker-save archive carries no media types: what we sniff maps to Docker's names.
SNIFFED_LAYER_TYPE = {
    "none": "application/vnd.docker.image.rootfs.diff.tar",
    "gzip": "application/vnd.docker.image.rootfs.diff.tar.gzip",
    "zstd": "application/vnd.docker.image.rootfs.diff.tar.zstd",
}
_BLOB_NAME_RE = lazy_pattern(r"^blobs/(sha256|sha512)/([a-f0-9]+)$")
_CLASSIC_CONFIG_RE = lazy_pattern(r"^([a-f0-9]{64})\.json$")


@dataclass(frozen=True)
class SaveEntry:
    """One ``manifest.json`` entry: member names of the config and layers, and the image's tags."""

    config: str
    repo_tags: tuple[str, ...]
    layers: tuple[str, ...]


def open_docker_archive(ref: ImageReference, options: SourceOptions) -> list[Image]:
    from imagelint.sources.spool import open_tar_store

    store = open_tar_store(ref.value, options)
    entries = read_save_manifest(store)
    entry = select_save_entry(entries, ref.tag, store.where)
    return [image_from_save_entry(ImageOrigin(store, str(ref), "docker-archive", options), entry)]


def read_save_manifest(store: BlobStore) -> list[SaveEntry]:
    what = f"{store.where}/manifest.json"
    if store.size("manifest.json") is None:
        raise ImageFormatError(f"{store.where}: not a docker-save archive (no manifest.json)")
    return parse_save_manifest(read_small(store, "manifest.json", what), what, store.where)


def parse_save_manifest(raw: bytes, what: str, where: str) -> list[SaveEntry]:
    """Decode manifest.json (shared with the daemon's save stream); member names are checked."""
    if len(raw) > MAX_DOCUMENT_BYTES:
        raise LimitExceededError(f"{what}: document too large ({len(raw)} bytes, limit {MAX_DOCUMENT_BYTES})")
    try:
        items = loads_json(raw)
    except (ValueError, UnicodeDecodeError, RecursionError) as exc:
        raise ImageFormatError(f"{what}: not valid JSON ({str(exc)[:80]})") from None
    if not isinstance(items, list) or not items:
        raise ImageFormatError(f"{what}: expected a non-empty list of images")
    return [_save_entry(item, f"{what}[{i}]", where) for i, item in enumerate(items)]


def _save_entry(item: Any, what: str, where: str) -> SaveEntry:
    if not isinstance(item, dict):
        raise ImageFormatError(f"{what}: not an object")
    config, tags, layers = item.get("Config"), item.get("RepoTags") or [], item.get("Layers")
    if not isinstance(config, str) or not isinstance(layers, list) or not all(isinstance(x, str) for x in layers):
        raise ImageFormatError(f"{what}: needs a Config name and a Layers list")
    if not isinstance(tags, list):
        raise ImageFormatError(f"{what}: RepoTags is not a list")
    return SaveEntry(
        config=check_member_name(config, where),
        repo_tags=tuple(str(t) for t in tags),
        layers=tuple(check_member_name(x, where) for x in layers),
    )


def _tag_matches(repo_tag: str, wanted: str) -> bool:
    if repo_tag == wanted or repo_tag.rpartition(":")[2] == wanted:
        return True
    try:
        return parse_registry_name(repo_tag) == parse_registry_name(wanted)
    except UsageError:
        return False


def select_save_entry(entries: list[SaveEntry], tag: str | None, where: str) -> SaveEntry:
    if tag is None:
        return entries[0]
    exact = [e for e in entries if tag in e.repo_tags]
    matching = exact or [e for e in entries if any(_tag_matches(t, tag) for t in e.repo_tags)]
    if not matching:
        tags = sorted({t for e in entries for t in e.repo_tags}) or ["<untagged>"]
        raise SourceError(f"{where}: no image tagged {tag!r} (available: {', '.join(tags[:20])})")
    if len(matching) > 1:
        raise UsageError(f"{where}: {len(matching)} images match {tag!r}; give the full repo:tag")
    return matching[0]


def digest_from_name(name: str) -> str | None:
    """The digest a member name encodes: ``blobs/sha256/<hex>`` or a classic ``<hex>.json`` config."""
    m = _BLOB_NAME_RE.match(name)
    if m:
        digest = f"{m.group(1)}:{m.group(2)}"
        parse_digest(digest)  # the hex length must fit the algorithm
        return digest
    m = _CLASSIC_CONFIG_RE.match(name)
    return f"sha256:{m.group(1)}" if m else None


def image_from_save_entry(origin: ImageOrigin, entry: SaveEntry) -> Image:
    store = origin.store
    what = f"{store.where}: config {entry.config}"
    config_bytes = read_small(store, entry.config, what)
    config_digest = digest_from_name(entry.config)
    if config_digest is not None:
        verify_bytes(config_bytes, config_digest, what)
    else:
        config_digest = compute_digest(config_bytes)

    if entry.layers and all(_BLOB_NAME_RE.match(n) for n in entry.layers):
        found = find_manifest_for_config(store, config_digest)
        if found is not None:
            manifest, manifest_digest = found
            listed = [digest_from_name(n) for n in entry.layers]
            if listed != [d.digest for d in manifest.layers]:
                raise ImageFormatError(f"{store.where}: manifest.json and the OCI manifest list different layers")
            return build_image(origin, manifest, manifest_digest, None)

    config = parse_image_config(config_bytes, what)
    if len(config.diff_ids) != len(entry.layers):
        raise ImageFormatError(
            f"{store.where}: config lists {len(config.diff_ids)} diff_ids but manifest.json has {len(entry.layers)} layers"
        )
    layers = tuple(_save_layer(store, i, name, config.diff_ids[i]) for i, name in enumerate(entry.layers))
    return Image(
        ref=origin.ref_text,
        source=origin.source,
        platform=config.platform,
        config=config,
        layers=layers,
        digest=None,
        config_digest=config_digest,
    )


def _save_layer(store: BlobStore, index: int, name: str, diff_id: str) -> Layer:
    what = f"{store.where}: layer {index} ({name})"
    parse_digest(diff_id)
    size = store.size(name)
    if size is None:
        raise ImageFormatError(f"{what}: member is missing")
    compression = sniff_compression(store, name)
    blob_digest = digest_from_name(name)
    if compression == "none":
        # The uncompressed tar *is* the diff: its digest must be the config's diff_id.
        if blob_digest is not None and blob_digest != diff_id:
            raise ImageFormatError(f"{what}: uncompressed layer does not match the config's diff_id {diff_id[:19]}")
        digest = diff_id
    else:
        digest = blob_digest or _hash_member(store, name)
    return Layer(
        index=index,
        digest=digest,
        size=size,
        media_type=SNIFFED_LAYER_TYPE[compression],
        diff_id=diff_id,
        opener=functools.partial(open_blob, store, digest, what, size, name),
    )


def _hash_member(store: BlobStore, name: str) -> str:
    """A compressed classic layer.tar (docker load accepts them) has no recorded blob digest: compute it."""
    h = hashlib.sha256()
    with store.open(name) as fh:
        for chunk in iter(lambda: fh.read(1 << 20), b""):
            h.update(chunk)
    return f"sha256:{h.hexdigest()}"
