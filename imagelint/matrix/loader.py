"""Finding, reading, validating and overlaying matrix files.

Shipped matrices are ``matrices/<data_version>.toml`` (one file per version, the newest is the
default). Installed, they live in the ``imagelint.matrices`` package; from a source checkout
(pytest puts the repo root on sys.path, where that package mapping does not apply) the repo's
``matrices/`` directory beside the ``imagelint`` package is used instead. Files in that directory
whose ``[meta] kind`` is not a matrix (e.g. ``driver-libraries.toml``, another team's data) are
ignored.
"""

from __future__ import annotations

import functools
import json
import os
import re
import zlib
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any, TypeGuard

from imagelint import __version__
from imagelint.errors import ConfigError
from imagelint.matrix.compiled import compiled_document
from imagelint.matrix.model import Matrix
from imagelint.matrix.schema import (
    KIND_MATRIX,
    KIND_OVERLAY,
    SECTIONS,
    row_key,
    validate_document,
)
from imagelint.tomlcompat import loads as toml_loads
from imagelint.tomlcompat import tomllib as toml_parser
from imagelint.untrusted import loads_json


def _file_version(name: str) -> str | None:
    """``YYYY-MM-DD`` of a matrix file named ``YYYY-MM-DD.toml``, else None (ASCII digits only).

    String tests, not a regex: the shipped directory is looked for at every start."""
    stem, ext = name[:-5], name[-5:]
    digits = stem[:4] + stem[5:7] + stem[8:]
    if ext != ".toml" or len(stem) != 10 or stem[4] != "-" or stem[7] != "-":
        return None
    return stem if digits.isascii() and digits.isdigit() else None


def _has_versions(directory: Path) -> bool:
    try:
        return directory.is_dir() and any(_file_version(p.name) for p in directory.iterdir())
    except OSError:
        return False


def _shipped_dir() -> Path:
    # A wheel installs matrices/ as the package imagelint.matrices, a directory beside this one;
    # a source checkout (or an editable install) has <repo>/matrices. Both are looked at
    # directly, since importlib.resources costs start-up; it is asked only when neither exists.
    package = Path(__file__).resolve().parent.parent
    for candidate in (package / "matrices", package.parent / "matrices"):
        if _has_versions(candidate):
            return candidate
    try:
        from importlib import resources

        packaged = Path(str(resources.files("imagelint.matrices")))
        if _has_versions(packaged):
            return packaged
    except (ModuleNotFoundError, TypeError, OSError):
        pass
    return package.parent / "matrices"


def shipped_data_file(name: str) -> Path:
    """A data file shipped beside the matrices (``driver-libraries.toml``); it may not exist."""
    return _shipped_dir() / name


def _shipped_files() -> dict[str, Path]:
    directory = _shipped_dir()
    if not directory.is_dir():
        return {}
    found: dict[str, Path] = {}
    for path in directory.iterdir():
        version = _file_version(path.name)
        if version:
            found[version] = path
    return found


def shipped_versions() -> list[str]:
    """Versions of the matrices shipped with imagelint, oldest first (the last is the default)."""
    return sorted(_shipped_files())


def parse_text(text: str, origin: str) -> dict[str, Any]:
    tomllib = toml_parser()
    try:
        return toml_loads(text)
    except tomllib.TOMLDecodeError as exc:
        # tomllib's message ends with "(at line N, column M)"; keep it as the location.
        message = str(exc)
        line_match = re.search(r"at line (\d+)", message)
        raise ConfigError(f"not valid TOML: {message}", origin, int(line_match.group(1)) if line_match else None) from None


def _read(path: Path) -> str:
    from imagelint.localfile import read_regular_file

    try:
        return read_regular_file(path).decode("utf-8")
    except FileNotFoundError:
        raise ConfigError("no such matrix file", str(path)) from None
    except UnicodeDecodeError:
        raise ConfigError("not UTF-8 text", str(path)) from None
    except OSError as exc:
        raise ConfigError(f"cannot read: {exc.strerror or exc}", str(path)) from None


def _freeze(doc: Mapping[str, Any]) -> dict[str, tuple[dict[str, Any], ...]]:
    return {name: tuple(dict(r) for r in doc.get(name, ())) for name in SECTIONS if doc.get(name)}


def matrix_from_text(text: str, origin: str, compiled_from: Path | None = None) -> Matrix:
    """A validated ``Matrix`` from TOML text; ``origin`` names it in errors (path, ConfigMap...).

    ``compiled_from``: the shipped file the text was read from, whose build-time compiled form
    (``imagelint.matrix.compiled``) stands for parsing and validating when it matches the text.
    """
    doc: Mapping[str, Any] | None = (
        compiled_document(compiled_from, text, validated=True) if compiled_from is not None else None
    )
    if doc is None:
        doc = _validated_document(text, origin)
    meta = dict(doc["meta"])
    return Matrix(meta["data_version"], meta["schema_version"], origin, _freeze(doc), meta)


def _validated_document(text: str, origin: str) -> Mapping[str, Any]:
    """Parse and validate, through a small on-disk cache of validated documents.

    Parsing and validating the shipped matrix is most of what a warm `imagelint lint` (the
    pre-commit hook) would otherwise spend; the cached JSON is validated already and loads
    fast. A cache that cannot be written only makes the next run slower.
    """
    cached = _cached_document("matrix", text)
    if cached is not None and isinstance(cached.get("meta"), dict):
        return cached
    doc = parse_text(text, origin)
    validate_document(doc, origin, text, overlay_ok=False)
    _store_document("matrix", text, doc)
    return doc


def parse_text_cached(text: str, origin: str, compiled_from: Path | None = None) -> dict[str, Any]:
    """``parse_text`` through the same cache: for the other TOML data shipped with the matrices
    (``driver-libraries.toml``), which ``imagelint lint`` reads on every run. ``compiled_from``
    as for ``matrix_from_text``."""
    if compiled_from is not None:
        compiled = compiled_document(compiled_from, text, validated=False)
        if compiled is not None:
            return compiled
    cached = _cached_document("toml", text)
    if cached is not None:
        return cached
    doc = parse_text(text, origin)
    _store_document("toml", text, doc)
    return doc


def shipped_document(name: str, what: str) -> dict[str, Any]:
    """A TOML data file shipped beside the matrices (``shipped_data_file``), parsed through the
    parsed-TOML cache; an unreadable file is a ConfigError naming ``what``."""
    path = shipped_data_file(name)
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError):
        raise ConfigError(f"cannot read the shipped {what} (is the installation complete?)", str(path)) from None
    return parse_text_cached(text, f"matrices/{name}", compiled_from=path)


# --- the parsed-document cache ---------------------------------------------------------
# One file per (kind, text) under <cache dir>/matrix: MAGIC + crc32(body) + body, where body is
# JSON holding imagelint's version, the kind ("matrix": parsed and validated; "toml": parsed),
# the TOML text and the document. A hit needs the same version, kind and the very same text, so a
# name collision or a foreign, torn or corrupt file is only a miss. Entries are read through
# imagelint.cachedir.read_entry (a regular file of this user's, not writable by others, capped):
# an entry another user planted is a miss. The directory follows --cache-dir, and --no-cache /
# IMAGELINT_NO_CACHE turn the cache off. Reading one needs neither tomllib, hashlib nor the layer
# cache (start-up of the hook).

_CACHE_MAGIC = b"ILM1"
_CACHE_KEEP = 16  # newest entries kept: the shipped matrices, their sliced sections, a few of the user's own
_ENTRY_SLACK = 4096  # an entry holds its text, the document (a few times the text) and framing


def matrix_cache_dir() -> Path:
    """``<cache dir>/matrix`` (``imagelint.cachedir``)."""
    from imagelint.cachedir import default_cache_dir

    return default_cache_dir() / "matrix"


def _entry_path(kind: str, text: str) -> Path | None:
    from imagelint.cachedir import cache_disabled

    if cache_disabled():
        return None
    data = text.encode("utf-8")
    return matrix_cache_dir() / f"{kind}-{zlib.crc32(data):08x}-{len(data):x}.ilm"


def _cached_document(kind: str, text: str) -> dict[str, Any] | None:
    from imagelint.cachedir import read_entry

    path = _entry_path(kind, text)
    if path is None:
        return None
    data = read_entry(path, 8 * len(text) + _ENTRY_SLACK)
    if data is None:
        return None
    body = data[8:]
    if data[:4] != _CACHE_MAGIC or zlib.crc32(body) != int.from_bytes(data[4:8], "big"):
        return None
    try:
        entry = loads_json(body, max_depth=None)  # our own crc-checked entry, checked key by key below
    except ValueError:
        return None
    if not isinstance(entry, dict) or (entry.get("imagelint"), entry.get("kind"), entry.get("text")) != (__version__, kind, text):
        return None
    doc = entry.get("doc")
    if not isinstance(doc, dict):
        return None
    try:
        os.utime(path)  # recently used: kept by the eviction below
    except OSError:
        pass
    return doc


def _store_document(kind: str, text: str, doc: dict[str, Any]) -> None:
    try:
        body = json.dumps({"imagelint": __version__, "kind": kind, "text": text, "doc": doc}, separators=(",", ":")).encode()
    except (TypeError, ValueError, RecursionError):  # a TOML date or time (or absurd nesting): not cached
        return
    from imagelint.cachedir import write_entry

    path = _entry_path(kind, text)
    if path is None:
        return
    try:
        write_entry(path, _CACHE_MAGIC + zlib.crc32(body).to_bytes(4, "big") + body)
        _evict(path.parent)
    except OSError:
        return


def _evict(directory: Path) -> None:
    # Another run may evict or clean at the same time: an entry that vanished is skipped.
    dated = []
    for entry in directory.glob("*.ilm"):
        try:
            dated.append((entry.stat().st_mtime, entry))
        except OSError:
            continue
    for _, stale in sorted(dated, reverse=True)[_CACHE_KEEP:]:
        stale.unlink(missing_ok=True)


def clean_matrix_cache(directory: Path | None = None) -> int:
    """Remove the parsed-matrix entries under ``directory`` (default ``matrix_cache_dir()``),
    including the layer-cache-format ``xx/*.ilx`` entries earlier versions wrote there."""
    root = directory if directory is not None else matrix_cache_dir()
    removed = 0
    for pattern in ("*.ilm", "*/*.ilx", ".tmp-*", "*/.tmp-*"):
        for path in root.glob(pattern):
            try:
                path.unlink()
                removed += 1
            except OSError:
                pass
    for sub in root.glob("*/"):
        try:
            sub.rmdir()
        except OSError:
            pass
    return removed


def apply_overlay(matrix: Matrix, text: str, origin: str) -> Matrix:
    """Rows of an overlay replace rows with the same key and add new ones."""
    doc = parse_text(text, origin)
    validate_document(doc, origin, text, overlay_ok=True)
    sections = {name: list(rows) for name, rows in matrix.sections.items()}
    for name in SECTIONS:
        current = sections.setdefault(name, [])
        # Each key's first row, indexed once: a 12,000-row overlay is one pass, not a rescan per row.
        where: dict[Any, int] = {}
        for i, existing in enumerate(current):
            where.setdefault(row_key(name, existing), i)
        for row in doc.get(name, ()):
            key = row_key(name, row)
            if key in where:
                current[where[key]] = dict(row)
            else:
                where[key] = len(current)
                current.append(dict(row))
    frozen = {name: tuple(rows) for name, rows in sections.items()}
    return Matrix(matrix.version, matrix.schema_version, f"{matrix.origin}+{origin}", frozen, matrix.meta)


def _load_file(path: Path, origin: str, shipped: bool = False) -> Matrix:
    # Matrices are immutable; re-reading the same unchanged file (rules, CLI) reuses the result.
    try:
        stat = path.stat()
    except FileNotFoundError:
        raise ConfigError("no such matrix file", str(path)) from None
    except OSError as exc:
        raise ConfigError(f"cannot read: {exc.strerror or exc}", str(path)) from None
    return _load_file_cached(str(path.resolve()), stat.st_mtime_ns, stat.st_size, origin, shipped)


@functools.lru_cache(maxsize=8)
def _load_file_cached(path: str, mtime_ns: int, size: int, origin: str, shipped: bool = False) -> Matrix:
    # Only a shipped file's compiled form is trusted: one beside a user's file could claim anything.
    return matrix_from_text(_read(Path(path)), origin, compiled_from=Path(path) if shipped else None)


def is_cluster_matrix_selector(selector: str | None) -> TypeGuard[str]:
    """``--matrix cluster`` or ``--matrix cluster:NS/NAME``: the matrix published in the cluster."""
    return selector is not None and (selector == "cluster" or selector.startswith("cluster:"))


def _looks_like_path(selector: str) -> bool:
    return selector.endswith(".toml") or "/" in selector or "\\" in selector or Path(selector).exists()


def load_matrix(selector: str | None = None, overlays: Sequence[str] = ()) -> Matrix:
    """Load a matrix: ``None`` = newest shipped, ``"2026-11-29"`` = that shipped version, or a path.

    ``overlays`` are paths of overlay (or full matrix) files whose rows add to / override the base.
    Raises ``ConfigError`` naming the file (and row/line) for anything wrong.
    """
    shipped = _shipped_files()
    is_shipped = True
    if selector is None or selector in ("", "latest", "newest"):
        if not shipped:
            raise ConfigError("no shipped matrix found (is the installation complete?)")
        path = shipped[max(shipped)]
        origin = f"matrices/{path.name}"
    elif selector in shipped:
        path = shipped[selector]
        origin = f"matrices/{path.name}"
    elif _looks_like_path(selector):
        path = Path(selector)
        origin = selector
        is_shipped = False
    else:
        known = ", ".join(sorted(shipped)) or "none"
        raise ConfigError(f"unknown matrix version {selector!r} (shipped: {known}; or give a file path)")
    matrix = _load_file(path, origin, shipped=is_shipped)
    for overlay in overlays:
        matrix = apply_overlay(matrix, _read(Path(overlay)), overlay)
    return matrix


def is_matrix_document(text: str) -> bool:
    """True when TOML text declares ``[meta] kind`` of a matrix or overlay (others are not ours)."""
    tomllib = toml_parser()
    try:
        doc = toml_loads(text)
    except tomllib.TOMLDecodeError:
        return False
    meta = doc.get("meta")
    return isinstance(meta, dict) and meta.get("kind") in (KIND_MATRIX, KIND_OVERLAY)


__all__ = ["apply_overlay", "clean_matrix_cache", "is_matrix_document", "load_matrix", "matrix_cache_dir", "matrix_from_text", "parse_text_cached",
           "shipped_data_file", "shipped_versions", "validate_file"]


def validate_file(path: str) -> str:
    """Validate a matrix or overlay file; returns a one-line summary, raises ``ConfigError``."""
    text = _read(Path(path))
    doc = parse_text(text, path)
    kind = validate_document(doc, path, text, overlay_ok=True)
    rows = sum(len(v) for k, v in doc.items() if k in SECTIONS)
    label = "matrix" if kind == KIND_MATRIX else "overlay"
    return f"{label} {doc['meta']['data_version']}, {rows} rows"
