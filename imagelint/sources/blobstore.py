"""Where a local image's files live: a directory, or the members of a tar read in place.

The OCI-layout and docker-save readers work on a ``BlobStore``: a read-only
namespace of relative, '/'-separated names (``index.json``,
``blobs/sha256/<hex>``, ``<id>/layer.tar``). Two stores, one reader:

  ``DirBlobStore``  files below a directory (symlinks may not leave it)
  ``TarBlobStore``  members of an uncompressed tar, indexed once (name -> byte
                    range) and read through bounded readers over the tar file;
                    nothing is ever extracted to disk

Names are located by exact match only. A name that is absolute or contains
``..`` is refused (ImageFormatError), both as a lookup and, for tars, as a
member of the archive: a real image archive never holds one.
"""

from __future__ import annotations

import io
import os
import posixpath
from dataclasses import dataclass
from typing import TYPE_CHECKING, BinaryIO, Protocol

from imagelint.digest import VerifyingReader, parse_digest, verify_bytes
from imagelint.errors import (
    DigestMismatchError,
    ImageFormatError,
    LimitExceededError,
    SourceError,
)
from imagelint.sources.manifest import MAX_DOCUMENT_BYTES

if TYPE_CHECKING:  # tarfile is imported where an archive is indexed: an OCI directory never needs it
    import tarfile

MAX_ARCHIVE_MEMBERS = 1_000_000  # real archives have a few hundred; this bounds the index
_MAX_LINK_HOPS = 8
_SNIFF_BYTES = 6

GZIP_MAGIC = b"\x1f\x8b"
ZSTD_MAGIC = b"\x28\xb5\x2f\xfd"


class BlobStore(Protocol):
    """A read-only set of named files. ``where`` names the store in messages (a path)."""

    where: str

    def size(self, name: str) -> int | None:
        """The file's size, or None when there is no such file."""

    def open(self, name: str) -> BinaryIO:
        """A stream of the file's bytes; ImageFormatError when it is missing."""


def check_member_name(name: str, where: str) -> str:
    """Normalise a member name (``./a//b`` -> ``a/b``); refuse absolute and ``..`` names."""
    if not isinstance(name, str) or not name:
        raise ImageFormatError(f"{where}: empty member name")
    if name.startswith("/") or "\\" in name or "\x00" in name:
        raise ImageFormatError(f"{where}: refusing member name {name[:120]!r} (absolute or odd path)")
    parts = [p for p in name.split("/") if p not in ("", ".")]
    if any(p == ".." for p in parts):
        raise ImageFormatError(f"{where}: refusing member name {name[:120]!r} ('..' leaves the archive)")
    if not parts:
        raise ImageFormatError(f"{where}: refusing member name {name[:120]!r}")
    return "/".join(parts)


def blob_name(digest: str) -> str:
    """``sha256:<hex>`` -> ``blobs/sha256/<hex>``. parse_digest guarantees the name stays in ``blobs/``."""
    algo, hexd = parse_digest(digest)
    return f"blobs/{algo}/{hexd}"


def read_small(store: BlobStore, name: str, what: str, limit: int = MAX_DOCUMENT_BYTES) -> bytes:
    """Read a whole (document-sized) file, refusing one larger than ``limit``."""
    size = store.size(name)
    if size is None:
        raise ImageFormatError(f"{store.where}: missing {name}")
    if size > limit:
        raise LimitExceededError(f"{what}: {size} bytes, limit {limit}")
    with store.open(name) as fh:
        return fh.read(limit + 1)


def read_blob(store: BlobStore, digest: str, what: str, size: int | None = None) -> bytes:
    """Read a document blob by digest and verify it (digest and, when given, size)."""
    name = blob_name(digest)
    if store.size(name) is None:
        raise ImageFormatError(f"{store.where}: {what}: blob {digest} is missing")
    data = read_small(store, name, what)
    if size is not None and len(data) != size:
        raise DigestMismatchError(f"{what}: {len(data)} bytes but the descriptor says {size}")
    return verify_bytes(data, digest, what)


def open_blob(store: BlobStore, digest: str, what: str, size: int | None = None, name: str | None = None) -> BinaryIO:
    """A stream of a blob that raises DigestMismatchError at EOF unless it hashes to ``digest``."""
    member = name or blob_name(digest)
    return VerifyingReader(store.open(member), digest, what, size)  # type: ignore[return-value]  # read and closed like a BinaryIO; not all of one


def sniff_compression(store: BlobStore, name: str) -> str:
    """``gzip``, ``zstd`` or ``none`` from the first bytes (for archives that carry no media type)."""
    with store.open(name) as fh:
        head = fh.read(_SNIFF_BYTES)
    if head.startswith(GZIP_MAGIC):
        return "gzip"
    if head.startswith(ZSTD_MAGIC):
        return "zstd"
    return "none"


# --- a directory --------------------------------------------------------------------


class DirBlobStore:
    """Files below ``root``. A name resolving (through symlinks) outside ``root`` is refused."""

    def __init__(self, root: str) -> None:
        if not os.path.isdir(root):
            raise SourceError(f"{root}: not a directory")
        self.where = root
        self._real_root = os.path.realpath(root)

    def _path(self, name: str) -> str:
        rel = check_member_name(name, self.where)
        real = os.path.realpath(os.path.join(self._real_root, rel))
        if real != self._real_root and not real.startswith(self._real_root + os.sep):
            raise ImageFormatError(f"{self.where}: {rel} is a link that leaves the layout")
        return real

    def size(self, name: str) -> int | None:
        path = self._path(name)
        return os.path.getsize(path) if os.path.isfile(path) else None

    def open(self, name: str) -> BinaryIO:
        path = self._path(name)
        try:
            return open(path, "rb")
        except FileNotFoundError:
            raise ImageFormatError(f"{self.where}: missing {name}") from None
        except OSError as exc:
            raise SourceError(f"{self.where}: cannot read {name}: {exc.strerror or exc}") from None


# --- a tar file, read in place ----------------------------------------------------------


@dataclass(frozen=True)
class ArchiveMember:
    """One file or link of an image tar as ``TarBlobStore`` indexes it: where its data lies, or its target."""

    name: str
    offset: int  # of the data, in the tar file
    size: int
    link: str | None = None  # normalised target name for symlinks/hardlinks


class RangeReader(io.RawIOBase):
    """Reads ``size`` bytes at ``offset`` of a file, through its own handle (readers are independent)."""

    def __init__(self, path: str, offset: int, size: int) -> None:
        super().__init__()
        self._fh = open(path, "rb")
        self._fh.seek(offset)
        self._left = size

    def readable(self) -> bool:
        return True

    def readinto(self, buf) -> int:
        if self._left <= 0:
            return 0
        view = memoryview(buf)[: min(len(buf), self._left)]
        n = self._fh.readinto(view)
        if not n:
            raise ImageFormatError(f"{self._fh.name}: archive truncated inside a member")
        self._left -= n
        return n

    def close(self) -> None:
        if not self.closed:
            self._fh.close()
        super().close()


class TarBlobStore:
    """The members of an uncompressed tar file, indexed by one pass over its headers."""

    def __init__(self, path: str, where: str | None = None) -> None:
        self.where = where or path  # how the user named it (a spooled pipe is read from a copy)
        self._path = path
        self._members = self._index(path, self.where)

    @staticmethod
    def _index(real_path: str, path: str) -> dict[str, ArchiveMember]:
        import tarfile

        try:
            fh = open(real_path, "rb")
        except OSError as exc:
            raise SourceError(f"{path}: cannot open: {exc.strerror or exc}") from None
        with fh:
            if os.path.isdir(real_path):  # pragma: no cover - open() already refuses directories on Linux
                raise SourceError(f"{path}: a directory, not an archive")
            head = fh.read(_SNIFF_BYTES)
            if head.startswith(GZIP_MAGIC) or head.startswith(ZSTD_MAGIC):
                raise ImageFormatError(f"{path}: a compressed archive; decompress it first (members are read in place)")
            file_size = os.fstat(fh.fileno()).st_size
            fh.seek(0)
            members: dict[str, ArchiveMember] = {}
            try:
                with tarfile.open(fileobj=fh, mode="r:") as tf:
                    for info in tf:
                        if len(members) >= MAX_ARCHIVE_MEMBERS:
                            raise LimitExceededError(f"{path}: more than {MAX_ARCHIVE_MEMBERS} archive members")
                        member = _member_of(info, path)
                        if member is None:
                            continue
                        if member.offset + member.size > file_size:
                            raise ImageFormatError(f"{path}: archive truncated (member {member.name} is cut short)")
                        members[member.name] = member
            except tarfile.TarError as exc:
                raise ImageFormatError(f"{path}: not a readable tar archive ({str(exc)[:80]})") from None
            except EOFError:
                raise ImageFormatError(f"{path}: archive truncated") from None
        return members

    def names(self) -> list[str]:
        return list(self._members)

    def _resolve(self, name: str) -> ArchiveMember | None:
        current = self._members.get(check_member_name(name, self.where))
        for _ in range(_MAX_LINK_HOPS):
            if current is None or current.link is None:
                return current
            current = self._members.get(current.link)
        raise ImageFormatError(f"{self.where}: too many links resolving {name}")

    def size(self, name: str) -> int | None:
        member = self._resolve(name)
        return None if member is None else member.size

    def open(self, name: str) -> BinaryIO:
        member = self._resolve(name)
        if member is None:
            raise ImageFormatError(f"{self.where}: missing {name}")
        return io.BufferedReader(RangeReader(self._path, member.offset, member.size), 1 << 20)


def _is_root_entry(name: str) -> bool:
    """``.`` / ``./``: the root directory ``tar -C DIR -cf image.tar .`` writes first (harmless)."""
    return bool(name) and not name.startswith("/") and all(p in ("", ".") for p in name.split("/"))


def _member_of(info: tarfile.TarInfo, where: str) -> ArchiveMember | None:
    """A regular file or link as a ArchiveMember; directories and others are skipped (not blobs).
    The archive's root directory entry is skipped as every other reader does; a file or link
    named ``.`` is still refused."""
    if info.isdir():
        if not _is_root_entry(info.name):
            check_member_name(info.name, where)
        return None
    name = check_member_name(info.name, where)
    if info.isreg():
        return ArchiveMember(name, info.offset_data, info.size)
    if info.issym():
        # Docker's classic save symlinks a repeated layer: <id>/layer.tar -> ../<other>/layer.tar
        target = posixpath.normpath(posixpath.join(posixpath.dirname(name), info.linkname))
        return ArchiveMember(name, 0, 0, check_member_name(target, where))
    if info.islnk():
        return ArchiveMember(name, 0, 0, check_member_name(info.linkname, where))
    return None
