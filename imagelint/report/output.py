"""Writing a rendered report to the file a user named.

Two promises, for every format: the write never fails on what the text holds (an image's label
can carry a lone surrogate, a legal JSON escape, that UTF-8 cannot encode: it is written as the
``\\udc80`` escape, which is also the JSON spelling of the same character), and a path that is
not a regular file is refused before the run starts and again when written (exit 4): a FIFO
would block the write until its deadline, a device would take the report somewhere else.
A report path that is a symbolic link is refused the same way (the file is opened ``O_NOFOLLOW``),
and so is a file this run read as an input: a repository can plant ``imagelint.sarif ->
~/.bashrc`` or ``out.json -> Dockerfile`` where a CI step writes its report. Refusing, rather than
replacing the link with a file, leaves the repository's own link alone and says so in one line,
so the step's author sees the plant instead of a report that went somewhere unexpected.
The standard streams by name (``/dev/stdout``, ``/dev/stderr``, ``/dev/fd/N``) and
``/dev/null`` are what a user asks for on purpose and are written as given.
"""

from __future__ import annotations

import errno
import os
import stat
from collections.abc import Iterable, Iterator

from imagelint.errors import OutputError
from imagelint.lazyre import lazy_pattern
from imagelint.localfile import is_input

_STREAM_PATHS = lazy_pattern(r"/dev/(?:stdout|stderr|null|fd/\d+)|/proc/self/fd/\d+")


def encoded(text: str) -> bytes:
    """``text`` as UTF-8, any character UTF-8 cannot hold written as its backslash escape."""
    return text.encode("utf-8", "backslashreplace")


def check_report_path(path: str) -> None:
    """Refuse (``OutputError``) a report path that exists and is not a regular file or a stream."""
    if _STREAM_PATHS.fullmatch(path):
        return
    try:
        st = os.lstat(path)
    except OSError:
        return  # absent (it is created) or unreachable (the write says why)
    if stat.S_ISLNK(st.st_mode):
        raise OutputError(f"cannot write {path}: " + _LINK)
    if not stat.S_ISREG(st.st_mode):
        raise OutputError(f"cannot write {path}: " + _kind(st.st_mode))
    if is_input(st):
        raise OutputError(f"cannot write {path}: " + _INPUT)


_WRITE_BYTES = 1 << 16  # pieces of a report are joined up to this size per write


def batched(pieces: Iterable[str]) -> Iterator[str]:
    """``pieces`` joined into texts of about ``_WRITE_BYTES`` characters: one write per batch, not per
    piece (a report of 60,000 results comes a result at a time)."""
    batch: list[str] = []
    size = 0
    for piece in pieces:
        batch.append(piece)
        size += len(piece)
        if size >= _WRITE_BYTES:
            yield "".join(batch)
            batch, size = [], 0
    if batch:
        yield "".join(batch)


def write_report(path: str, text: str | Iterable[str], append: bool = False) -> None:
    """Write (or append) ``text`` (or its pieces, ``report.render_pieces``) to ``path``;
    ``OutputError`` with one line when it cannot be."""
    check_report_path(path)
    stream = _STREAM_PATHS.fullmatch(path) is not None
    flags = os.O_WRONLY | os.O_CREAT | (os.O_APPEND if append else os.O_TRUNC if stream else 0) | getattr(os, "O_CLOEXEC", 0)
    if not stream:
        flags |= getattr(os, "O_NONBLOCK", 0)  # a FIFO put there since the check: ENXIO, not a wait
        flags |= os.O_NOFOLLOW  # a link put there since the check: ELOOP, never written through
    try:
        if not stream:
            os.makedirs(os.path.dirname(path) or ".", exist_ok=True)
        fd = os.open(path, flags, 0o666)
    except OSError as exc:
        raise OutputError(f"cannot write {path}: {_reason(exc)}") from None
    try:
        st = os.fstat(fd)
        if not stream and not stat.S_ISREG(st.st_mode):
            raise OutputError(f"cannot write {path}: " + _kind(st.st_mode))
        if not stream and is_input(st):  # checked before truncating: the input is left as it was
            raise OutputError(f"cannot write {path}: " + _INPUT)
        if not append and not stream:
            os.ftruncate(fd, 0)
        for batch in batched((text,) if isinstance(text, str) else text):
            data = memoryview(encoded(batch))
            while data:
                written = os.write(fd, data)
                data = data[written:]
    except OSError as exc:
        raise OutputError(f"cannot write {path}: {_reason(exc)}") from None
    finally:
        os.close(fd)


def _kind(mode: int) -> str:
    if stat.S_ISDIR(mode):
        return "is a directory"
    return "not a regular file (a FIFO, socket or device); reports are written to regular files only"


_LINK = "a symbolic link; reports are never written through one (remove it, or name the file it points to)"
_INPUT = "it is an input of this run; a report is never written over one"


def _reason(exc: OSError) -> str:
    if exc.errno == errno.ELOOP:
        return _LINK
    if exc.errno == errno.ENXIO:
        return _kind(stat.S_IFIFO)
    return exc.strerror or str(exc)
