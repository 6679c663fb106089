"""The shipped TOML data, compiled to JSON when the package is built.

A CI runner starts with an empty cache, so without this every run there would parse the ~330 KB
shipped matrix with tomli and validate it (0.05-0.15 s, more than the rest of a small check's
fixed cost). ``setup.py``'s ``build_py`` step calls ``compile_directory`` on the package's copy
of ``matrices/``: each ``NAME.toml`` gets a ``NAME.toml.json`` beside it in the built package
(never in the source tree, so nothing generated is committed and the TOML stays the only source
of truth: rows another change adds to ``matrices/*.toml`` are compiled by the next build without
any code here knowing them).

Why JSON and not pickle, marshal or a Python module of literals: JSON is what the matrix cache
already stores, is read by the C accelerated ``json`` module in a few ms, cannot run code, and does
not depend on the interpreter's version (one wheel serves every Python the package supports).

A compiled file is used only when it belongs to the very TOML text beside it: it carries the
SHA-256 of that text, and a mismatch (a TOML edited after the build, a file copied from another
version) is a miss, so the loader falls back to parsing. Matrix files are validated at build time
(an invalid shipped matrix fails the build) and say so (``"validated": true``); the loader then
skips validation too. ``tests/matrix/test_compiled.py`` builds the package's data the way
``build_py`` does and checks every compiled document against the TOML parsed at test time.
"""

from __future__ import annotations

import functools
import json
from pathlib import Path
from typing import Any

from imagelint.untrusted import loads_json

FORMAT = 1
SUFFIX = ".json"  # NAME.toml -> NAME.toml.json


def compiled_path(toml_path: Path) -> Path:
    return toml_path.with_name(toml_path.name + SUFFIX)


def _digest(text: str) -> str:
    import hashlib  # not at start-up: a run that reads no shipped data never needs it

    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def compile_text(text: str, origin: str) -> bytes | None:
    """The compiled form of one TOML text, or None when JSON cannot hold it (a TOML date or time).

    Matrix documents (``[meta] kind`` a matrix or overlay) are validated first; an invalid one
    raises ``ConfigError`` (a build that ships a broken matrix fails).
    """
    # tomlcompat, not the loader (which imports this module): the build fails on bad TOML anyway.
    from imagelint.matrix.schema import KIND_MATRIX, KIND_OVERLAY, validate_document
    from imagelint.tomlcompat import loads

    doc = loads(text)
    meta = doc.get("meta")
    kind = meta.get("kind") if isinstance(meta, dict) else None
    validated = kind in (KIND_MATRIX, KIND_OVERLAY)
    if validated:
        validate_document(doc, origin, text, overlay_ok=kind == KIND_OVERLAY)
    try:
        body = json.dumps({"format": FORMAT, "sha256": _digest(text), "validated": validated, "doc": doc},
                          separators=(",", ":"), ensure_ascii=False)
    except (TypeError, ValueError):
        return None
    return body.encode("utf-8")


def compile_directory(directory: Path) -> list[Path]:
    """Write ``NAME.toml.json`` beside every ``NAME.toml`` in ``directory``; returns what it wrote."""
    written = []
    for toml_path in sorted(directory.glob("*.toml")):
        text = toml_path.read_text(encoding="utf-8")
        body = compile_text(text, f"matrices/{toml_path.name}")
        target = compiled_path(toml_path)
        if body is None:
            target.unlink(missing_ok=True)
            continue
        target.write_bytes(body)
        written.append(target)
    return written


def compiled_document(toml_path: Path, text: str, *, validated: bool) -> dict[str, Any] | None:
    """The compiled document of ``toml_path`` when it was compiled from exactly ``text`` (and, when
    ``validated`` is asked, validated at build time); else None. Never raises for a bad file.
    The caller must not change what it gets (it is shared within the process)."""
    try:
        stat = compiled_path(toml_path).stat()
    except OSError:
        return None
    entry = _read_compiled(str(compiled_path(toml_path)), stat.st_mtime_ns, stat.st_size)
    if entry is None or entry.get("sha256") != _digest(text):
        return None
    if validated and entry.get("validated") is not True:
        return None
    return entry["doc"]


@functools.lru_cache(maxsize=8)
def _read_compiled(path: str, mtime_ns: int, size: int) -> dict[str, Any] | None:
    # Several callers (the matrix, shipped_section's tables, the driver-library table) ask for the
    # same file within one run: read and decode it once.
    try:
        # No depth pre-scan: the file is checked field by field below and by the TOML text's digest,
        # and is read on every run; a hostile one is still refused (as not JSON), never a crash.
        entry = loads_json(Path(path).read_bytes(), max_depth=None)
    except (OSError, ValueError):
        return None
    if not isinstance(entry, dict) or entry.get("format") != FORMAT or not isinstance(entry.get("doc"), dict):
        return None
    return entry


__all__ = ["compile_directory", "compile_text", "compiled_document", "compiled_path"]
