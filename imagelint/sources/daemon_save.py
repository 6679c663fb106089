"""Reading layers out of the daemon's ``docker save`` stream without spooling it.

The save stream is one tar, in name order: engine 20.10 writes the classic
layout (``<v1id>/layer.tar``, a repeated layer as a symlink to the first copy,
``<id>.json``, then ``manifest.json`` near the end); engine 25+ writes an OCI
layout (``blobs/sha256/<hex>``, ``index.json``, ``manifest.json``). Member names
say nothing about layer order, and manifest.json — which does — comes last.

So a ``SaveArchive`` learns the plan (layer index -> member name, digest to
verify) once, from one pass that reads only headers and manifest.json (layer
data is skipped as it streams by). Then:

  ``open_layer(i)``   a new stream, skipped forward to member i; the returned
                      reader owns the connection and closes it
  ``iter_layers()``   one new stream, yielding each planned member as it passes

Every layer stream is a VerifyingReader: a member that does not hash to its
diff_id (or blob digest) raises DigestMismatchError at EOF.
"""

from __future__ import annotations

import io
import posixpath
import re
import tarfile
import threading
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from typing import IO, Any, BinaryIO

from imagelint.digest import VerifyingReader
from imagelint.errors import DaemonError, ImageFormatError
from imagelint.sources.archive import SaveEntry, digest_from_name, parse_save_manifest
from imagelint.sources.blobstore import check_member_name
from imagelint.sources.manifest import MAX_DOCUMENT_BYTES

CLASSIC_LAYER_TYPE = "application/vnd.docker.image.rootfs.diff.tar"
_CHUNK = 1 << 20

# What the docker package raises when a daemon's answer is not what it expects (an error body
# without "message", a /version without "ApiVersion"): a bad answer, never a bug of ours.
GARBLED_ANSWER = (KeyError, TypeError, ValueError)

# Connection failures, from the innermost exception text to a short human reason.
_REASONS = (
    ("FileNotFoundError", "no such socket"),
    ("ConnectionRefusedError", "connection refused"),
    ("Connection refused", "connection refused"),
    ("PermissionError", "permission denied"),
    ("timed out", "timed out"),
    ("Name or service not known", "unknown host"),
)


def shown_host(host: str) -> str:
    """The daemon address for messages, without any user:password@ part."""
    return re.sub(r"^([A-Za-z0-9+.-]+://)[^/@]*@", r"\1", host)


def one_line_reason(exc: BaseException, host: str) -> str:
    text = " ".join(str(exc).split())
    for needle, reason in _REASONS:
        if needle in text:
            return reason
    if host:
        text = text.replace(host, shown_host(host))
    return text[:160] or exc.__class__.__name__


@dataclass(frozen=True)
class DaemonConnection:
    """How to reach the daemon again (each save stream gets its own client and connection)."""

    environment: Mapping[str, str] = field(repr=False)
    api_version: str
    timeout: float
    host: str

    def client(self) -> Any:
        import docker

        try:
            return docker.DockerClient.from_env(
                environment=dict(self.environment), version=self.api_version, timeout=int(self.timeout) or 1
            )
        except docker.errors.DockerException as exc:
            raise DaemonError(
                f"cannot reach the Docker daemon at {shown_host(self.host)}: {one_line_reason(exc, self.host)}"
            ) from None
        except GARBLED_ANSWER:
            raise DaemonError(f"the Docker daemon at {shown_host(self.host)} answered something the docker client cannot read") from None


@dataclass(frozen=True)
class PlannedLayer:
    """Where one layer is in the ``docker save`` stream, and what it must hash to (from a first pass)."""

    member: str  # a regular member (links resolved)
    digest: str  # what the member's bytes hash to: the diff_id, or the blob digest of blobs/<alg>/<hex>


class SaveStream(io.RawIOBase):
    """``GET /images/{id}/get`` as a raw byte stream; close() drops the connection (the daemon stops)."""

    def __init__(self, conn: DaemonConnection, image_id: str, what: str) -> None:
        super().__init__()
        self._conn = conn
        self._what = what
        self._client = conn.client()
        self._chunks = self._client.api.get_image(image_id, chunk_size=_CHUNK)
        self._buf = memoryview(b"")

    def readable(self) -> bool:
        return True

    def readinto(self, b) -> int:
        if not self._buf:
            self._buf = memoryview(self._next_chunk())
            if not self._buf:
                return 0
        n = min(len(b), len(self._buf))
        b[:n] = self._buf[:n]
        self._buf = self._buf[n:]
        return n

    def _next_chunk(self) -> bytes:
        import docker
        import requests

        try:
            return next(self._chunks, b"")
        except docker.errors.NotFound:
            raise DaemonError(f"{self._what}: the daemon no longer has the image") from None
        except (docker.errors.DockerException, requests.RequestException, OSError) as exc:
            raise DaemonError(
                f"{self._what}: the save stream from the Docker daemon at {shown_host(self._conn.host)} failed: "
                f"{one_line_reason(exc, self._conn.host)}"
            ) from None
        except GARBLED_ANSWER:
            raise DaemonError(f"{self._what}: the Docker daemon at {shown_host(self._conn.host)} answered the save "
                              "with an error the docker client cannot read") from None

    def close(self) -> None:
        if not self.closed:
            try:
                self._chunks.close()
            finally:
                self._client.close()
        super().close()


class MemberReader(io.RawIOBase):
    """One member of a streaming tar; closing it closes ``owner`` (the whole save stream) if given."""

    def __init__(self, member: IO[bytes], what: str, owner: SaveStream | None) -> None:
        super().__init__()
        self._member = member
        self._what = what
        self._owner = owner

    def readable(self) -> bool:
        return True

    def readinto(self, b) -> int:
        try:
            return self._member.readinto(b)  # type: ignore[attr-defined]  # extractfile's IO[bytes] is a BufferedReader
        except (tarfile.TarError, EOFError):
            raise ImageFormatError(f"{self._what}: the save stream ended inside the layer") from None

    def close(self) -> None:
        if not self.closed and self._owner is not None:
            self._owner.close()
        super().close()


def _open_tar(stream: SaveStream, what: str) -> tarfile.TarFile:
    try:
        return tarfile.open(fileobj=stream, mode="r|")
    except tarfile.TarError as exc:
        raise ImageFormatError(f"{what}: the save stream is not a tar ({str(exc)[:60]})") from None


def _members(tf: tarfile.TarFile, what: str) -> Iterator[tuple[str, tarfile.TarInfo]]:
    """(normalised name, info) for every member; hostile names refused; a torn stream is an ImageFormatError."""
    while True:
        try:
            info = tf.next()
        except (tarfile.TarError, EOFError) as exc:
            raise ImageFormatError(f"{what}: the save stream is truncated or malformed ({str(exc)[:60]})") from None
        if info is None:
            return
        yield check_member_name(info.name, what), info


class SaveArchive:
    """The save archive of one daemon image, shared by its layers' openers (thread-safe plan)."""

    def __init__(self, conn: DaemonConnection, image_id: str, diff_ids: tuple[str, ...], what: str) -> None:
        self.conn = conn
        self.image_id = image_id
        self.diff_ids = diff_ids
        self.what = what
        self._lock = threading.Lock()
        self._plan: tuple[PlannedLayer, ...] | None = None

    def plan(self) -> tuple[PlannedLayer, ...]:
        with self._lock:
            if self._plan is None:
                self._plan = self._read_plan()
            return self._plan

    def _read_plan(self) -> tuple[PlannedLayer, ...]:
        links: dict[str, str] = {}
        regular: set[str] = set()
        manifest: bytes | None = None
        with SaveStream(self.conn, self.image_id, self.what) as stream:
            tf = _open_tar(stream, self.what)
            for name, info in _members(tf, self.what):
                if info.issym():
                    target = posixpath.normpath(posixpath.join(posixpath.dirname(name), info.linkname))
                    links[name] = check_member_name(target, self.what)
                elif info.islnk():
                    links[name] = check_member_name(info.linkname, self.what)
                elif info.isreg():
                    regular.add(name)
                    if name == "manifest.json":
                        if info.size > MAX_DOCUMENT_BYTES:
                            raise ImageFormatError(f"{self.what}: manifest.json is {info.size} bytes")
                        fh = tf.extractfile(info)
                        manifest = fh.read() if fh is not None else b""
        if manifest is None:
            raise ImageFormatError(f"{self.what}: the save stream has no manifest.json")
        entry = self._entry(parse_save_manifest(manifest, f"{self.what} manifest.json", self.what))
        if len(entry.layers) != len(self.diff_ids):
            raise ImageFormatError(
                f"{self.what}: the save stream lists {len(entry.layers)} layers but the image has {len(self.diff_ids)}"
            )
        plan = []
        for name, diff_id in zip(entry.layers, self.diff_ids):
            resolved = name
            for _ in range(8):
                if resolved not in links:
                    break
                resolved = links[resolved]
            if resolved not in regular:
                raise ImageFormatError(f"{self.what}: the save stream has no layer member {name}")
            plan.append(PlannedLayer(resolved, digest_from_name(name) or diff_id))
        return tuple(plan)

    def _entry(self, entries: list[SaveEntry]) -> SaveEntry:
        for entry in entries:
            if digest_from_name(entry.config) == self.image_id:
                return entry
        if len(entries) == 1:
            return entries[0]
        raise ImageFormatError(f"{self.what}: the save stream has no entry for {self.image_id[:19]}")

    def open_layer(self, index: int) -> BinaryIO:
        target = self.plan()[index]
        what = f"{self.what} layer {index}"
        stream = SaveStream(self.conn, self.image_id, self.what)
        try:
            tf = _open_tar(stream, self.what)
            for name, info in _members(tf, self.what):
                if name == target.member and info.isreg():
                    member = tf.extractfile(info)
                    assert member is not None
                    reader = MemberReader(member, what, owner=stream)
                    return VerifyingReader(reader, target.digest, what, info.size)  # type: ignore[return-value]  # read and closed like a BinaryIO; not all of one
        except BaseException:
            stream.close()
            raise
        stream.close()
        raise ImageFormatError(f"{what}: the save stream has no member {target.member}")

    def iter_layers(self) -> Iterator[tuple[int, BinaryIO]]:
        """(layer index, verified stream) for each planned member as it passes; shared members once."""
        plan = self.plan()
        wanted: dict[str, int] = {}
        for i, planned in enumerate(plan):
            wanted.setdefault(planned.member, i)
        with SaveStream(self.conn, self.image_id, self.what) as stream:
            tf = _open_tar(stream, self.what)
            for name, info in _members(tf, self.what):
                index = wanted.pop(name, None)
                if index is None or not info.isreg():
                    continue
                member = tf.extractfile(info)
                assert member is not None
                what = f"{self.what} layer {index}"
                yield index, VerifyingReader(  # type: ignore[misc]  # read and closed like a BinaryIO; not all of one
                    MemberReader(member, what, owner=None), plan[index].digest, what, info.size
                )
                if not wanted:
                    return  # the rest of the stream holds nothing we need
        if wanted:
            raise ImageFormatError(f"{self.what}: the save stream lacks {', '.join(sorted(wanted))[:120]}")


class DaemonLayerOpener:
    """``Layer.opener`` for daemon images: a fresh save stream positioned on the layer's member."""

    def __init__(self, archive: SaveArchive, index: int) -> None:
        self.archive = archive
        self.index = index

    def __call__(self) -> BinaryIO:
        return self.archive.open_layer(self.index)

    def __repr__(self) -> str:
        return f"DaemonLayerOpener({self.archive.image_id[:19]}, {self.index})"
