"""Reading a local input file (a Dockerfile, manifest, config, target file, matrix) without
letting its kind or size decide how long or how much a run takes.

A repository can hold a FIFO named ``Dockerfile`` or a device node named ``.imagelint.toml``:
a plain ``open`` blocks on the first until a writer comes, and reads the second forever. Here
the file is opened non-blocking, checked on the open descriptor to be a regular file (links
are followed: a repository's symlinked Dockerfile is its own business), and read no further
than the cap. Failures are ``OSError``s with a ``strerror`` fit for a message, so each caller
keeps its own "cannot read ..." wording.
"""

from __future__ import annotations

import errno
import os
import stat

MAX_INPUT_BYTES = 16 * 1024 * 1024  # config, target and matrix files: the shipped matrix is ~200 KiB
# (st_dev, st_ino) of every file read here in this process: a report is never written over one.
_inputs_read: set[tuple[int, int]] = set()


def is_input(st: os.stat_result) -> bool:
    """Whether the file ``st`` describes was read as an input by this process."""
    return (st.st_dev, st.st_ino) in _inputs_read


def read_regular_file(path: str | os.PathLike[str], max_bytes: int = MAX_INPUT_BYTES) -> bytes:
    """The bytes of the regular file at ``path``; OSError for anything else or anything larger."""
    fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_CLOEXEC", 0))
    try:
        st = os.fstat(fd)
        if stat.S_ISDIR(st.st_mode):
            raise IsADirectoryError(errno.EISDIR, "is a directory", str(path))
        if not stat.S_ISREG(st.st_mode):
            raise OSError(errno.EINVAL, "not a regular file (a FIFO, socket or device)", str(path))
        if st.st_size > max_bytes:
            raise OSError(errno.EFBIG, f"larger than {max_bytes} bytes", str(path))
        _inputs_read.add((st.st_dev, st.st_ino))
        chunks: list[bytes] = []
        total = 0
        while True:
            chunk = os.read(fd, 1 << 20)
            if not chunk:
                return b"".join(chunks)
            total += len(chunk)
            if total > max_bytes:  # grew while being read
                raise OSError(errno.EFBIG, f"larger than {max_bytes} bytes", str(path))
            chunks.append(chunk)
    finally:
        os.close(fd)


def enclosing_repository(start: str) -> str | None:
    """The nearest directory at or above ``start`` that holds ``.git`` (a checkout's root), if any."""
    d = start
    while True:
        if os.path.exists(os.path.join(d, ".git")):
            return d
        parent = os.path.dirname(d)
        if parent == d:
            return None
        d = parent
