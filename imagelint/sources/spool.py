"""An archive that arrives on a pipe: ``docker save app | imagelint check docker-archive:/dev/stdin``.

A ``docker-archive:`` or ``oci-archive:`` tar is read in place, member by member and in any order
(``manifest.json`` comes last in a save stream, the layers it orders come first), which needs a
file that can be read at an offset. A pipe (``/dev/stdin``, a FIFO, a socket) is therefore copied
once into a temporary file, created 0600 in the temporary directory, no larger than the image
size limit (``--max-image-size``), and removed when the archive is closed or the run ends.

Waiting is bounded: each wait for the next bytes is at most ``--timeout``, so a FIFO nobody writes
to is refused after that long, not at the run's deadline. A terminal or device is no archive and
is refused at once.
"""

from __future__ import annotations

import errno
import os
import select
import stat
import tempfile
import weakref
from dataclasses import dataclass

from imagelint.errors import LimitExceededError, SourceError
from imagelint.sizes import human_size
from imagelint.sources.blobstore import TarBlobStore
from imagelint.sources.options import SourceOptions

_CHUNK = 1 << 20


@dataclass(frozen=True)
class ArchiveFile:
    """Where to read an archive (``path``), and how the user named it (``where``)."""

    path: str
    where: str
    spooled: bool = False

    def discard(self) -> None:
        """Remove a spooled copy now (nothing came to own it)."""
        if self.spooled:
            _remove(self.path)

    def remove_with(self, owner: object) -> None:
        """Remove a spooled copy when ``owner`` goes away (or, at the latest, when the run ends)."""
        if self.spooled:
            weakref.finalize(owner, _remove, self.path)


def open_tar_store(path: str, options: SourceOptions) -> TarBlobStore:
    """The tar archive at ``path`` (``docker-archive:``, ``oci-archive:``); one arriving on a pipe
    is read from its copy, which goes when the store does."""
    archive = archive_file(path, options)
    try:
        store = TarBlobStore(archive.path, archive.where)
    except BaseException:
        archive.discard()
        raise
    archive.remove_with(store)
    return store


def archive_file(path: str, options: SourceOptions) -> ArchiveFile:
    """``path`` itself when it is a regular file (or something the tar reader will refuse), else a
    bounded copy of what the pipe carries."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0))
    except OSError:
        return ArchiveFile(path, path)  # the tar reader says why, in its words
    try:
        mode = os.fstat(fd).st_mode
        if stat.S_ISFIFO(mode) or stat.S_ISSOCK(mode):
            return ArchiveFile(_spool(fd, path, options), path, spooled=True)
        if stat.S_ISCHR(mode) or stat.S_ISBLK(mode):
            raise SourceError(f"{path}: a terminal or device, not an archive (pipe one in: docker save IMAGE | "
                              f"imagelint ... docker-archive:/dev/stdin)")
        return ArchiveFile(path, path)
    finally:
        os.close(fd)


def _spool(fd: int, where: str, options: SourceOptions) -> str:
    from imagelint.layers.limits import DEFAULT_LIMITS

    limit = (options.limits or DEFAULT_LIMITS).max_image_inflated_bytes
    out, spooled = tempfile.mkstemp(prefix="imagelint-archive-", suffix=".tar")
    try:
        poller = select.poll()
        poller.register(fd, select.POLLIN)
        total = 0
        while True:
            if not poller.poll(max(options.timeout, 0.001) * 1000):
                raise SourceError(f"{where}: nothing to read for {options.timeout:g} s (--timeout); "
                                  f"is anything writing to it?")
            try:
                chunk = os.read(fd, _CHUNK)
            except BlockingIOError:
                continue
            if not chunk:
                return spooled
            total += len(chunk)
            if total > limit:
                raise LimitExceededError(f"{where}: the archive is larger than {human_size(limit)} "
                                         f"(--max-image-size); not read further")
            view = memoryview(chunk)
            while view:
                view = view[os.write(out, view):]
    except OSError as exc:
        _remove(spooled)
        if exc.errno == errno.ENOSPC:
            raise SourceError(f"{where}: cannot copy the archive to {tempfile.gettempdir()}: no space left "
                              f"(set TMPDIR to a larger directory)") from None
        raise SourceError(f"{where}: cannot read the archive: {exc.strerror or exc}") from None
    except BaseException:
        _remove(spooled)
        raise
    finally:
        os.close(out)


def _remove(path: str) -> None:
    try:
        os.unlink(path)
    except FileNotFoundError:
        pass
