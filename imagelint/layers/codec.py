"""A ``LayerExtract`` as bytes, for the layer cache: ``extract_to_bytes`` / ``extract_from_bytes``.

The encoding is exact (``extract_from_bytes(extract_to_bytes(x)) == x``, key order included)
and compact: a header, then zlib (level 1) of JSON metadata followed by the captured bytes back
to back. The metadata is by column, since a cached layer is read on every check of an image
that has it (a second image reads its base image's layers from the cache, not the registry):

- entries as parallel lists (``paths``, ``kinds``, ``sizes``, ``modes``), links and entries of
  another layer as the few exceptions (``links``, ``layers``): no list and no copy of the
  layer digest per entry;
- scanner results as a table of distinct values (``results``; a result object the scanner
  shares between files, such as the text-facts scanner's "not a config", is stored once and
  shared again when read back) and, per scanned file, its entry's number (or its path, for a
  scan without an entry) and its row in the table;
- strings of a result at least ``_BLOB_STRING`` long (a script's text) with the blobs, as
  UTF-8: JSON-unescaping megabytes of them cost more than the rest of the entry.

Cache entries are untrusted input (docs/robustness.md): every field is checked for its type
and range, a declared length is never a reason to allocate, and anything off is an
``ImageFormatError`` ("corrupt"), which the layer cache counts as a miss.
"""

from __future__ import annotations

import io
import json
import struct
from types import MappingProxyType
from typing import Any

from imagelint.errors import ImageFormatError
from imagelint.layers.decompress import ISAL_ERROR
from imagelint.layers.model import (
    DIRECTORY,
    EXTRACTOR_VERSION,
    FILE,
    HARDLINK,
    OTHER,
    SYMLINK,
    Entry,
    LayerExtract,
)
from imagelint.untrusted import loads_json

try:  # ISA-L's zlib: the same format, faster to inflate and to deflate at level 1
    from isal import isal_zlib as _zlib
except ImportError:  # pragma: no cover - isal is a declared dependency
    import zlib as _zlib  # type: ignore[no-redef]  # the stdlib module isal_zlib mirrors

_BLOB_STRING = 256  # a scan result's string this long or longer is stored with the blobs
_MAGIC = b"ILXE"
_HEADER = struct.Struct(">4sIIQ")  # magic, extractor version, JSON length, body length before zlib
# The body is at most what one layer may capture plus its metadata: a cache entry that says more
# (or inflates to more than it says) is corrupt, never a reason to allocate.
_MAX_BODY = 1 << 30
# The kinds an entry can have, each as one string object (the JSON decoder makes a new one per entry).
_KINDS = {k: k for k in (FILE, SYMLINK, HARDLINK, DIRECTORY, OTHER)}
_STR, _INT = {str}, {int}


def extract_to_bytes(x: LayerExtract) -> bytes:
    """The cache entry for ``x`` (see the module docstring).

    Scanner results must be JSON values (dict with str keys, list, str, int, float, bool,
    None); they come back as such (tuples return as lists).
    """
    blobs = io.BytesIO()
    contents = []
    for path, data in x.contents.items():
        contents.append([path, len(data)])
        blobs.write(data)
    heads = []
    for path, data in x.heads.items():
        heads.append([path, len(data)])
        blobs.write(data)
    entries = x.entries
    number = {e.path: i for i, e in enumerate(entries)}
    results: list[Any] = []
    row_of: dict[int, int] = {}  # id(result) -> its row, for results shared between files
    scans: list[list[Any]] = []  # [key, row] or [key, row, [[name, length], ...]]
    for path, result in x.scans.items():
        key: int | str = number.get(path, path)
        # A result already in the table has no long string (one that has is never shared): most
        # files of a tree share a handful of results, each looked at once.
        row = row_of.get(id(result))
        if row is not None:
            scans.append([key, row])
            continue
        long = [k for k, v in result.items() if isinstance(v, str) and len(v) >= _BLOB_STRING] if isinstance(result, dict) else []
        if not long:
            row = row_of[id(result)] = len(results)
            results.append(result)
            scans.append([key, row])
            continue
        # A script's text (up to 1 MiB) goes with the blobs; its key stays in place, as null.
        refs = []
        for name in long:
            data = result[name].encode("utf-8", "surrogatepass")
            refs.append([name, len(data)])
            blobs.write(data)
        scans.append([key, len(results), refs])
        results.append({k: None if k in long else v for k, v in result.items()})
    meta = {
        "index": x.index,
        "digest": x.digest,
        "paths": [e.path for e in entries],
        "kinds": [e.kind for e in entries],
        "sizes": [e.size for e in entries],
        "modes": [e.mode for e in entries],
        "links": [[i, e.linkname] for i, e in enumerate(entries) if e.linkname is not None],
        # Entries normally carry their own layer's index and digest; any other is listed.
        "layers": [[i, e.layer_index, e.layer_digest] for i, e in enumerate(entries)
                   if e.layer_index != x.index or e.layer_digest != x.digest],
        "whiteouts": list(x.whiteouts),
        "opaque_dirs": list(x.opaque_dirs),
        "contents": contents,
        "heads": heads,
        "results": results,
        "scans": scans,
        "truncated": list(x.truncated),
        "warnings": list(x.warnings),
    }
    text = json.dumps(meta, separators=(",", ":"), allow_nan=True).encode("ascii")
    body = text + blobs.getvalue()
    return _HEADER.pack(_MAGIC, EXTRACTOR_VERSION, len(text), len(body)) + _zlib.compress(body, 1)


def extract_from_bytes(b: bytes) -> LayerExtract:
    """Decode ``extract_to_bytes`` output; ``ImageFormatError`` if foreign, torn or of another version."""
    if len(b) < _HEADER.size:
        raise ImageFormatError("layer extract: too short")
    magic, version, meta_len, body_len = _HEADER.unpack_from(b)
    if magic != _MAGIC:
        raise ImageFormatError("layer extract: not an imagelint layer extract")
    if version != EXTRACTOR_VERSION:
        raise ImageFormatError(f"layer extract: version {version}, expected {EXTRACTOR_VERSION}")
    if body_len > _MAX_BODY or meta_len > body_len:
        raise ImageFormatError("layer extract: corrupt (lengths out of range)")
    inflater = _zlib.decompressobj()
    try:
        b = inflater.decompress(memoryview(b)[_HEADER.size :], body_len + 1)
    except ISAL_ERROR:  # _zlib.error: isal_zlib's, or zlib's where isal is missing
        raise ImageFormatError("layer extract: corrupt (zlib)") from None
    if len(b) != body_len or not inflater.eof or inflater.unused_data:
        raise ImageFormatError("layer extract: corrupt (torn or trailing bytes)")
    try:
        return _decode(loads_json(b[:meta_len].decode("ascii")), b, meta_len)
    except (ValueError, KeyError, TypeError, IndexError, UnicodeDecodeError) as exc:
        raise ImageFormatError(f"layer extract: corrupt ({type(exc).__name__})") from None


class _Blobs:
    """The captured bytes after the metadata, taken in order."""

    def __init__(self, body: bytes, start: int) -> None:
        self.body = body
        self.pos = start

    def take(self, pairs: Any) -> dict[str, bytes]:
        out: dict[str, bytes] = {}
        for path, n in _list(pairs):
            if type(path) is not str or type(n) is not int or n < 0 or self.pos + n > len(self.body):
                raise ValueError("blob length out of range")
            out[path] = bytes(self.body[self.pos : self.pos + n])
            self.pos += n
        return out


def _list(value: Any) -> list[Any]:
    if type(value) is not list:
        raise TypeError("not a list")
    return value


def _strings(value: Any) -> tuple[str, ...]:
    if not set(map(type, _list(value))) <= _STR:
        raise TypeError("not a list of strings")
    return tuple(value)


def _decode(meta: dict[str, Any], body: bytes, meta_len: int) -> LayerExtract:
    index, digest = meta["index"], meta["digest"]
    if type(index) is not int or type(digest) is not str:
        raise TypeError("layer index or digest")
    paths, sizes, modes = _strings(meta["paths"]), _list(meta["sizes"]), _list(meta["modes"])
    kinds = [_KINDS[k] for k in _list(meta["kinds"])]  # a kind that is none: KeyError
    n = len(paths)
    if not len(kinds) == len(sizes) == len(modes) == n or not set(map(type, sizes)) | set(map(type, modes)) <= _INT:
        raise ValueError("entry columns")
    links: list[str | None] = [None] * n
    for i, target in _list(meta["links"]):
        if type(i) is not int or not 0 <= i < n or type(target) is not str:
            raise ValueError("link")
        links[i] = target
    layer_indices, layer_digests = [index] * n, [digest] * n
    for i, other_index, other_digest in _list(meta["layers"]):
        if type(i) is not int or not 0 <= i < n or type(other_index) is not int or type(other_digest) is not str:
            raise ValueError("entry layer")
        layer_indices[i], layer_digests[i] = other_index, other_digest
    entries = tuple(map(Entry, paths, kinds, sizes, modes, links, layer_indices, layer_digests))

    blobs = _Blobs(body, meta_len)
    contents = blobs.take(meta["contents"])
    heads = blobs.take(meta["heads"])
    results = _list(meta["results"])
    scans: dict[str, Any] = {}
    for item in _list(meta["scans"]):
        key, row = _list(item)[0], item[1]
        if type(row) is not int or not 0 <= row < len(results):
            raise ValueError("scan result row")
        if type(key) is int:
            if not 0 <= key < n:
                raise ValueError("scan entry number")
            path = paths[key]
        elif type(key) is str:
            path = key
        else:
            raise TypeError("scan key")
        result = results[row]
        if len(item) == 3:  # strings kept with the blobs: filled into a copy of its own
            if type(result) is not dict:
                raise ValueError("scan strings for a result that is not an object")
            result = dict(result)
            for name, text in blobs.take(item[2]).items():
                if result.get(name, ...) is not None:
                    raise ValueError("scan string for a key that is not a placeholder")
                result[name] = text.decode("utf-8", "surrogatepass")
        elif len(item) != 2:
            raise ValueError("scan entry of the wrong shape")
        scans[path] = result
    if blobs.pos != len(body):
        raise ValueError("trailing bytes")
    return LayerExtract(
        index=index,
        digest=digest,
        entries=entries,
        whiteouts=_strings(meta["whiteouts"]),
        opaque_dirs=_strings(meta["opaque_dirs"]),
        contents=MappingProxyType(contents),
        heads=MappingProxyType(heads),
        scans=MappingProxyType(scans),
        truncated=_strings(meta["truncated"]),
        warnings=_strings(meta["warnings"]),
    )
