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
import re
from pathlib import Path
from typing import Iterable

from imagelint.facts.model import DriverLibrary, Provenance

_VERSION_RE = re.compile(r"\.so\.(\d+(?:\.\d+)+)$")
_COMPAT_RE = re.compile(r"(^|/)cuda[^/]*/compat(/|$)")


def _load_toml(text: str) -> dict:
    try:
        import tomllib
    except ModuleNotFoundError:  # Python 3.10
        import tomli as tomllib  # type: ignore[no-redef]
    return tomllib.loads(text)


@functools.lru_cache(maxsize=1)
def patterns() -> tuple[str, ...]:
    """File-name globs of driver-owned libraries (``libcuda.so*``...)."""
    text = None
    try:
        from importlib.resources import files

        text = (files("imagelint.matrices") / "driver-libraries.toml").read_text()
    except (ModuleNotFoundError, FileNotFoundError, OSError):
        pass
    if text is None:  # a source checkout: matrices/ sits beside the package
        path = Path(__file__).resolve().parents[2] / "matrices" / "driver-libraries.toml"
        text = path.read_text() if path.exists() else ""
    rows = _load_toml(text).get("library", []) if text else []
    found = tuple(str(r["pattern"]) for r in rows if isinstance(r, dict) and r.get("pattern"))
    return found or ("libcuda.so*",)


def is_driver_library(name: str, globs: Iterable[str] | None = None) -> bool:
    return any(fnmatch.fnmatchcase(name, g) for g in (globs if globs is not None else patterns()))


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
