"""Driver-owned library names, for Dockerfile ``COPY``/``ADD`` destinations.

The names are NVIDIA facts and live in ``matrices/driver-libraries.toml`` (shared
with the image facts); this module only reads that table and classifies a path
the way the image facts do: ``stub`` under a ``stubs`` directory, ``compat``
under ``.../cuda*/compat/``, else ``real``.
"""

from __future__ import annotations

import fnmatch
import functools
import posixpath
from collections.abc import Iterable

from imagelint.facts.model import DriverLibrary, Provenance
from imagelint.lazyre import lazy_pattern

_VERSION_RE = lazy_pattern(r"\.so\.(\d+(?:\.\d+)+)$")
_COMPAT_RE = lazy_pattern(r"(^|/)cuda[^/]*/compat(/|$)")


@functools.lru_cache(maxsize=1)
def patterns() -> tuple[str, ...]:
    """File-name globs of driver-owned libraries (``libcuda.so*``...)."""
    # Through the matrix loader's cache of parsed TOML: most Dockerfiles COPY something, and
    # the pre-commit hook should not import and run a TOML parser on every run for this table.
    from imagelint.matrix.loader import parse_text_cached, shipped_data_file

    path = shipped_data_file("driver-libraries.toml")
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError):
        text = ""
    rows = parse_text_cached(text, str(path), compiled_from=path).get("library", []) if text else []
    found = tuple(str(r["pattern"]) for r in rows if isinstance(r, dict) and r.get("pattern"))
    return found or ("libcuda.so*",)


def is_driver_library(name: str, globs: Iterable[str] | None = None) -> bool:
    # The literal head is checked first: a COPY of ordinary files then compiles none of the ~30 globs.
    return any(name.startswith(_literal_head(g)) and fnmatch.fnmatchcase(name, g)
               for g in (globs if globs is not None else patterns()))


@functools.cache
def _literal_head(glob: str) -> str:
    """The text before the glob's first wildcard: every name the glob matches starts with it."""
    cut = min((i for i in (glob.find(c) for c in "*?[") if i >= 0), default=len(glob))
    return glob[:cut]


def library_at(path: str, provenance: Provenance, loader_dirs: Iterable[str]) -> DriverLibrary:
    """A driver library a Dockerfile puts at ``path`` (absolute, in the image)."""
    directory, name = posixpath.split(path)
    parts = directory.strip("/").split("/")
    if "stubs" in parts:
        role = "stub"
    elif _COMPAT_RE.search(directory.strip("/") + "/"):
        role = "compat"
    else:
        role = "real"
    m = _VERSION_RE.search(name)
    on_path = posixpath.normpath(directory) in {posixpath.normpath(d) for d in loader_dirs}
    return DriverLibrary(name, path.lstrip("/"), role, m.group(1) if m else None, on_path, provenance)
