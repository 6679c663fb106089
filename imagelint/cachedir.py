"""Where imagelint keeps its cache: one directory for layer extracts, image facts and parsed matrices.

Kept apart from the caches themselves so that finding the directory imports nothing
(the matrix is read on every ``imagelint lint``, the pre-commit path).
"""

from __future__ import annotations

import os
from pathlib import Path


def default_cache_dir() -> Path:
    """``$IMAGELINT_CACHE_DIR``, else ``$XDG_CACHE_HOME/imagelint``, else ``~/.cache/imagelint``."""
    env = os.environ.get("IMAGELINT_CACHE_DIR")
    if env:
        return Path(env)
    xdg = os.environ.get("XDG_CACHE_HOME")
    base = Path(xdg) if xdg else Path.home() / ".cache"
    return base / "imagelint"


CACHE_MAX_SIZE_ENV = "IMAGELINT_CACHE_MAX_SIZE"


def cache_max_bytes(default: int) -> int:
    """The cache's size limit: ``$IMAGELINT_CACHE_MAX_SIZE`` (``2G``, ``512M``) when set, else ``default``.
    A bad value is a UsageError (exit 2) naming the variable."""
    text = os.environ.get(CACHE_MAX_SIZE_ENV, "").strip()
    if not text:
        return default
    from imagelint.sizes import parse_size

    return parse_size(CACHE_MAX_SIZE_ENV, text)
