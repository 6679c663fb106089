"""The local Docker daemon (``docker:NAME``, and bare names through ``try_open_daemon``).

The image's metadata comes from the API (``images.get(name).attrs`` and its
history): no layer bytes are needed to build the Image. Layer bytes come from
``GET /images/{id}/get`` (``docker save``), streamed and parsed as a tar on the
fly, never written to disk nor held in memory (see ``daemon_save.py``):

  ``Layer.open()``               a fresh save stream, skipped forward to that layer's
                                 member; O(image) per layer, fine for a few layers
  ``iter_daemon_layers(image)``  every layer from one save stream, in archive order

``Layer.digest`` is the diff_id (a save archive has no registry blob digest).
Engines before 25 save uncompressed layers (media type set accordingly); 25+
may save the stored, compressed blob: the media type is then left empty (the
reader sniffs) and the stream is verified against the blob's own digest.
``Image.digest`` is the first RepoDigest's digest when the image came from a
registry, ``config_digest`` the image Id.
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Iterator
from datetime import datetime, timezone
from types import MappingProxyType
from typing import Any, BinaryIO

from imagelint.digest import parse_digest
from imagelint.errors import DaemonError, ImageFormatError
from imagelint.image import Image, Layer
from imagelint.reference import ImageReference
from imagelint.sources.daemon_save import (
    CLASSIC_LAYER_TYPE,
    GARBLED_ANSWER,
    DaemonConnection,
    DaemonLayerOpener,
    SaveArchive,
    one_line_reason,
    shown_host,
)
from imagelint.sources.manifest import parse_image_config
from imagelint.sources.options import SourceOptions

DEFAULT_DOCKER_HOST = "unix:///var/run/docker.sock"
# Engine 25 (API 1.44) may save compressed OCI blobs; older engines save uncompressed layer.tar.
_FIRST_OCI_SAVE_API = (1, 44)


def open_daemon(ref: ImageReference, options: SourceOptions) -> list[Image]:
    """``docker:NAME[:TAG|@DIGEST]``. DaemonError (exit 3) when unreachable or the image is absent."""
    conn = connect(options)
    return [_open(conn, ref)]


def try_open_daemon(ref: ImageReference, options: SourceOptions) -> list[Image] | None:
    """For bare names: the daemon's image, or None when no daemon answers or it lacks the image."""
    host = docker_host(options)
    if host.startswith("unix://") and not os.path.exists(host[len("unix://") :]):
        return None  # the common CI case: no daemon at all; skip the connection attempt
    try:
        conn = connect(options)
    except DaemonError:
        return None
    try:
        return [_open(conn, ref)]
    except MissingImage:
        return None


def iter_daemon_layers(image: Image) -> Iterator[tuple[Layer, BinaryIO]]:
    """Every layer of a daemon image from one ``docker save`` stream.

    Yields ``(layer, stream)`` in the order the archive holds them, which is not
    layer order (use ``layer.index``). Each stream is digest-verified at EOF and
    is only valid until the iterator advances: read (or abandon) it first. A
    layer whose bytes the archive shares with another (same diff_id) is opened
    through its own ``Layer.open()`` at the end. The member names are learnt
    once per image from the archive's manifest.json (one extra header pass).
    """
    openers = [layer.opener for layer in image.layers]
    if not openers:
        return
    if not all(isinstance(o, DaemonLayerOpener) for o in openers):
        raise ValueError(f"{image.ref} did not come from the Docker daemon")
    archive: SaveArchive = openers[0].archive  # type: ignore[attr-defined]  # all() above: a DaemonLayerOpener
    done: set[int] = set()
    for index, stream in archive.iter_layers():
        done.add(index)
        yield image.layers[index], stream
    for layer in image.layers:
        if layer.index not in done:
            with layer.open() as stream:
                yield layer, stream


class MissingImage(DaemonError):
    """The daemon answered but has no such image (try_open_daemon turns this into None)."""


def docker_host(options: SourceOptions) -> str:
    return options.docker_host or os.environ.get("DOCKER_HOST") or DEFAULT_DOCKER_HOST


def connect(options: SourceOptions) -> DaemonConnection:
    """Reach the daemon (negotiating the API version) or raise DaemonError naming the host."""
    import docker

    host = docker_host(options)
    environment = dict(os.environ)
    environment["DOCKER_HOST"] = host  # keeps DOCKER_TLS_VERIFY / DOCKER_CERT_PATH handling of from_env
    try:
        client = docker.DockerClient.from_env(environment=environment, version="auto", timeout=int(options.timeout) or 1)
    except docker.errors.DockerException as exc:
        raise DaemonError(f"cannot reach the Docker daemon at {shown_host(host)}: {one_line_reason(exc, host)}") from None
    except GARBLED_ANSWER:
        raise DaemonError(f"the Docker daemon at {shown_host(host)} answered /version with something the docker client cannot read") from None
    try:
        api_version = client.api.api_version
    finally:
        client.close()
    return DaemonConnection(environment=environment, api_version=api_version, timeout=options.timeout, host=host)


def _open(conn: DaemonConnection, ref: ImageReference) -> Image:
    import docker
    import requests

    name = ref.value
    where = f"the Docker daemon at {shown_host(conn.host)}"
    client = conn.client()
    try:
        try:
            attrs = client.images.get(name).attrs
            history = client.api.history(attrs.get("Id", name))
        except docker.errors.NotFound:
            raise MissingImage(f"{where} has no image {name!r}") from None
        except docker.errors.APIError as exc:
            if exc.status_code == 400:  # an invalid name for the daemon: it cannot hold it
                raise MissingImage(f"{where} has no image {name!r} ({one_line_reason(exc, conn.host)})") from None
            raise DaemonError(f"{where}: inspecting {name!r} failed: {one_line_reason(exc, conn.host)}") from None
        except (docker.errors.DockerException, requests.RequestException) as exc:
            raise DaemonError(f"cannot reach {where}: {one_line_reason(exc, conn.host)}") from None
        except GARBLED_ANSWER:
            raise DaemonError(f"{where}: inspecting {name!r} failed: the daemon answered with an error the docker "
                              "client cannot read (no 'message')") from None
    finally:
        client.close()
    return image_from_attrs(conn, ref, attrs, history)


def image_from_attrs(conn: DaemonConnection, ref: ImageReference, attrs: dict[str, Any], history: Any) -> Image:
    """Build the Image from ``docker inspect`` attributes; layers open lazily through save streams."""
    what = f"docker image {ref.value!r}"
    image_id = attrs.get("Id")
    if not isinstance(image_id, str):
        raise ImageFormatError(f"{what}: the daemon gave no image Id")
    parse_digest(image_id)
    rootfs = attrs.get("RootFS") or {}
    diff_ids = rootfs.get("Layers") or [] if isinstance(rootfs, dict) else []
    config_doc = {
        "config": attrs.get("Config") or {},
        "rootfs": {"type": "layers", "diff_ids": diff_ids},
        "os": attrs.get("Os") or "",
        "architecture": attrs.get("Architecture") or "",
        "variant": attrs.get("Variant") or None,
        "history": _history_entries(history, len(diff_ids)),
    }
    config = parse_image_config(json.dumps(config_doc).encode(), what)
    for d in config.diff_ids:
        parse_digest(d)
    archive = SaveArchive(conn, image_id, config.diff_ids, what)
    media_type = CLASSIC_LAYER_TYPE if _api_tuple(conn.api_version) < _FIRST_OCI_SAVE_API else ""
    layers = tuple(
        Layer(
            index=i,
            digest=diff_id,
            size=None,
            media_type=media_type,  # "" = unknown: a 25+ engine may save compressed blobs; the reader sniffs
            diff_id=diff_id,
            opener=DaemonLayerOpener(archive, i),
        )
        for i, diff_id in enumerate(config.diff_ids)
    )
    return Image(
        ref=str(ref),
        source="docker",
        platform=config.platform,
        config=config,
        layers=layers,
        digest=_repo_digest(attrs.get("RepoDigests")),
        config_digest=image_id,
        annotations=MappingProxyType({}),
    )


def _repo_digest(repo_digests: Any) -> str | None:
    for item in repo_digests or []:
        digest = str(item).rpartition("@")[2]
        try:
            parse_digest(digest)
        except ImageFormatError:
            continue
        return digest
    return None


def _history_entries(history: Any, layer_count: int) -> list[dict[str, Any]]:
    """The API's history (newest first) as config history (oldest first).

    The API has no ``empty_layer`` flag; an entry is marked empty when it added 0
    bytes and exactly ``layer_count`` entries did add bytes (otherwise none is marked).
    """
    if not isinstance(history, list):
        return []
    rows = [h for h in reversed(history) if isinstance(h, dict)]
    sized = [h for h in rows if (h.get("Size") or 0) > 0]
    mark_empty = len(sized) == layer_count
    out = []
    for h in rows:
        created = h.get("Created")
        entry: dict[str, Any] = {"created_by": str(h.get("CreatedBy") or ""), "comment": str(h.get("Comment") or "")}
        if isinstance(created, int) and created > 0:
            entry["created"] = datetime.fromtimestamp(created, timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")
        if mark_empty and not (h.get("Size") or 0) > 0:
            entry["empty_layer"] = True
        out.append(entry)
    return out


def _api_tuple(version: str) -> tuple[int, ...]:
    return tuple(int(p) for p in re.findall(r"[0-9]{1,9}", version or "0")[:2]) or (0,)


__all__ = ["open_daemon", "try_open_daemon", "iter_daemon_layers"]
