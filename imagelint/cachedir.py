"""Where imagelint keeps its cache, and how an entry is read from it and written to it safely.

One directory holds layer extracts, image facts and parsed matrices, each cache a client of
the helpers here.

What the cache can be trusted with (docs/robustness.md, "cache writer"): an entry is
used only when it is a regular file (never a link, FIFO or device), owned by the user
running imagelint, not writable by group or others, and no larger than the reader's
cap; anything else is a miss. Directories imagelint creates are private (0700) and
entries are written 0600 with an atomic rename, so parallel runs (and a concurrent
``imagelint cache clean``) see an entry whole or not at all.
"""

from __future__ import annotations

import os
import stat
from pathlib import Path

_configured: tuple[Path | None, bool] | None = None


def configure(directory: str | os.PathLike[str] | None, disabled: bool) -> None:
    """The CLI's ``--cache-dir`` / ``--no-cache`` for everything in this process that caches
    (the matrix cache included, which is read far from the source options)."""
    global _configured
    _configured = (Path(directory) if directory else None, bool(disabled))


def cache_disabled() -> bool:
    """``--no-cache`` or ``IMAGELINT_NO_CACHE=1``: nothing is read from or written to any cache."""
    if _configured is not None and _configured[1]:
        return True
    return os.environ.get("IMAGELINT_NO_CACHE", "") not in ("", "0")


def default_cache_dir() -> Path:
    """``--cache-dir``, else ``$IMAGELINT_CACHE_DIR``, else ``$XDG_CACHE_HOME/imagelint``, else ``~/.cache/imagelint``."""
    if _configured is not None and _configured[0] is not None:
        return _configured[0]
    env = os.environ.get("IMAGELINT_CACHE_DIR")
    if env:
        return Path(env)
    xdg = os.environ.get("XDG_CACHE_HOME")
    base = Path(xdg) if xdg else Path.home() / ".cache"
    return base / "imagelint"


def make_private_dirs(path: Path) -> None:
    """``mkdir -p`` with new directories 0700 (existing ones are left as they are)."""
    path.mkdir(mode=0o700, parents=True, exist_ok=True)


def write_entry(path: Path, data: bytes) -> None:
    """Write a cache entry atomically: parallel runs see the old entry or the new one, never a
    torn one. The bytes go to a new 0600 file beside it (``tempfile.mkstemp``: created
    exclusively, never through a link), then renamed over ``path``; on any failure the new file
    is removed and the OSError raised."""
    import tempfile

    make_private_dirs(path.parent)
    fd, tmp = tempfile.mkstemp(prefix=".tmp-", dir=path.parent)
    try:
        with os.fdopen(fd, "wb") as fh:
            fh.write(data)
        os.replace(tmp, path)
    except BaseException:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise


def read_entry(path: Path, max_bytes: int) -> bytes | None:
    """The bytes of the cache entry at ``path``, or None when it is missing or not to be trusted.

    Opened without following a final symlink and without blocking (a FIFO would hang a
    plain open), then checked on the open descriptor: a regular file of this user's,
    not group/world-writable, at most ``max_bytes`` long; read no further than that.
    """
    flags = os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_CLOEXEC", 0)
    try:
        fd = os.open(path, flags)
    except OSError:  # missing, removed by a concurrent clean, a symlink (ELOOP)...: a miss
        return None
    try:
        st = os.fstat(fd)
        if (not stat.S_ISREG(st.st_mode) or st.st_mode & 0o022 or st.st_size > max_bytes
                or (hasattr(os, "geteuid") and st.st_uid != os.geteuid())):
            return None
        chunks, left = [], min(st.st_size, max_bytes) + 1
        while left > 0:
            chunk = os.read(fd, min(left, 1 << 20))
            if not chunk:
                break
            chunks.append(chunk)
            left -= len(chunk)
        data = b"".join(chunks)
        return data if len(data) <= max_bytes else None
    except OSError:
        return None
    finally:
        os.close(fd)


CACHE_MAX_SIZE_ENV = "IMAGELINT_CACHE_MAX_SIZE"


def cache_max_bytes(default: int) -> int:
    """The cache's size limit: ``$IMAGELINT_CACHE_MAX_SIZE`` (``2G``, ``512M``) when set, else ``default``.
    A bad value is a UsageError (exit 2) naming the variable."""
    text = os.environ.get(CACHE_MAX_SIZE_ENV, "").strip()
    if not text:
        return default
    from imagelint.sizes import parse_size

    return parse_size(CACHE_MAX_SIZE_ENV, text)
