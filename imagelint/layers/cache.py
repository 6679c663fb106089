"""The layer cache: what was extracted from a layer, keyed by layer digest + extractor.

A second image on the same base reads only its own new layers. The same store keeps an image's
facts (``imagelint.facts.cache``) and, whole, the configs a registry sent (``document_key``), so
a warm check of a registry image asks the registry for its manifest alone. Entries are
written atomically (temp file + rename in the same directory), so parallel CI
jobs can share one cache directory; a torn or foreign file is treated as a miss.
The cache is bounded: after a write that may have taken it over ``max_bytes``, the least
recently used entries are evicted until the total size is under it. Whether a write may have:
the directory is walked at a process's first write, and its own writes are added after that,
so a run that writes an entry per layer walks a large cache once, not once per entry (entries
other processes write meanwhile are seen at the next walk: they may pass the bound until then).

Nothing but extract files is ever written, and only inside ``directory``.

Every entry is bound to the key it was written under (the key is part of the file and
compared on read), so an entry copied or renamed into another slot is a miss; the
layer extract also records its layer digest, which must match the layer asked for.
Files are read through ``imagelint.cachedir.read_entry`` (regular files of this user
only, size-capped, never following links); a file removed by a concurrent
``imagelint cache clean`` is a miss. What a writer of the cache directory can still
forge is stated in docs/robustness.md.
"""

from __future__ import annotations

import functools
import hashlib
import os
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # the model is imported where layers are read; a warm run reads none
    from imagelint.layers.model import CaptureSpec, LayerExtract

DEFAULT_MAX_BYTES = 512 * 1024 * 1024
# file = MAGIC + key (32 bytes) + CRC-32 of the payload (4 bytes, big-endian) + payload. The
# CRC catches a torn or damaged file (the payload's own zlib stream and lengths check it again);
# it is no seal: what a writer of the directory can forge is in docs/robustness.md.
_MAGIC = b"ILX3"
_HEAD = 4 + 32 + 4
_SUFFIX = ".ilx"
DOCUMENT_KEY_VERSION = "document-1"  # keys of whole documents (document_key), apart from extracts


@dataclass(frozen=True)
class CacheInfo:
    """The layer cache as one walk of its directory found it: entries, total size, and the size limit."""

    directory: str
    entries: int
    total_bytes: int
    max_bytes: int


class LayerCache:
    def __init__(self, directory: str | os.PathLike[str], max_bytes: int = DEFAULT_MAX_BYTES) -> None:
        self.directory = Path(directory)
        self.max_bytes = max_bytes
        self.hits = 0
        self.misses = 0
        self._total: int | None = None  # the bytes the last walk found, plus this process's writes since
        self._lock = threading.Lock()  # layer workers write at the same time

    @staticmethod
    def key(layer_digest: str, spec: CaptureSpec) -> str:
        from imagelint.layers.model import EXTRACTOR_VERSION

        h = hashlib.sha256()
        h.update(f"{EXTRACTOR_VERSION}\0{layer_digest}\0{spec.key()}".encode())
        return h.hexdigest()

    def _path(self, key: str) -> Path:
        return self.directory / key[:2] / (key + _SUFFIX)

    def get(self, key: str) -> bytes | None:
        from imagelint.cachedir import read_entry

        path = self._path(key)
        data = read_entry(path, self.max_bytes + _HEAD)
        raw_key = _raw(key)
        if data is None or raw_key is None:
            self.misses += 1
            return None
        payload = data[_HEAD:]
        if data[:4] != _MAGIC or data[4:36] != raw_key or _crc32(payload) != int.from_bytes(data[36:_HEAD], "big"):
            self.misses += 1
            return None
        try:
            os.utime(path)  # LRU: a hit makes the entry recent
        except OSError:
            pass
        self.hits += 1
        return payload

    def put(self, key: str, payload: bytes) -> None:
        from imagelint.cachedir import write_entry

        path = self._path(key)
        raw_key = _raw(key)
        if raw_key is None:
            return
        entry = _MAGIC + raw_key + _crc32(payload).to_bytes(4, "big") + payload
        try:
            write_entry(path, entry)
        except OSError:
            return  # a cache that cannot be written is only slower, never an error
        with self._lock:
            if self._total is None or self._total + len(entry) > self.max_bytes:
                self.evict()
            else:
                self._total += len(entry)

    def _files(self) -> list[tuple[float, int, Path]]:
        # Another process may clean or evict at the same time: anything that vanished is skipped.
        out: list[tuple[float, int, Path]] = []
        for sub in _listdir(self.directory):
            if len(sub.name) != 2 or not sub.is_dir():
                continue
            for f in _listdir(sub):
                if f.suffix == _SUFFIX:
                    try:
                        st = f.stat()
                    except OSError:
                        continue
                    out.append((st.st_mtime, st.st_size, f))
        return out

    def evict(self) -> int:
        files = self._files()
        total = sum(size for _, size, _ in files)
        removed = 0
        for _, size, f in sorted(files):
            if total <= self.max_bytes:
                break
            try:
                f.unlink()
                total -= size
                removed += 1
            except OSError:
                pass
        self._total = total
        return removed

    def info(self) -> CacheInfo:
        files = self._files()
        return CacheInfo(str(self.directory), len(files), sum(s for _, s, _ in files), self.max_bytes)

    def clean(self) -> int:
        removed = 0
        for _, _, f in self._files():
            try:
                f.unlink()
                removed += 1
            except OSError:
                pass
        for sub in _listdir(self.directory):
            if sub.is_dir():
                for stale in _listdir(sub):
                    if not stale.name.startswith(".tmp-"):
                        continue
                    try:  # a temp file a running check is still writing is young: left alone
                        if time.time() - stale.stat().st_mtime > 3600:
                            stale.unlink()
                    except OSError:
                        pass
                try:
                    sub.rmdir()
                except OSError:
                    pass
        return removed


Extractor = Callable[..., "LayerExtract"]


def open_cache(directory: str | None, no_cache: bool) -> LayerCache | None:
    """The cache a run's options ask for: ``directory``, else the user cache directory
    (``imagelint.cachedir.default_cache_dir``); None with ``no_cache`` or ``IMAGELINT_NO_CACHE=1``."""
    from imagelint.cachedir import cache_disabled, cache_max_bytes, default_cache_dir

    if no_cache or cache_disabled():
        return None
    return _shared_cache(Path(directory) if directory else default_cache_dir(), cache_max_bytes(DEFAULT_MAX_BYTES))


@functools.cache
def _shared_cache(directory: Path, max_bytes: int) -> LayerCache:
    """One store per directory in a process, whoever asks (the registry source for configs, the
    layer reader, the facts cache): its size is walked at the process's first write and its own
    writes counted after that, so two stores of one directory would each walk it."""
    return LayerCache(directory, max_bytes)


def document_key(kind: str, digest: str) -> str | None:
    """The key of a small content-addressed document (an image config) kept whole in the cache,
    or None when ``digest`` names no content (nothing to key it on). A caller still checks the
    bytes it gets back against ``digest``: an entry is only as trustworthy as the directory."""
    if not content_addressed(digest):
        return None
    return hashlib.sha256(f"{DOCUMENT_KEY_VERSION}\0{kind}\0{digest}".encode()).hexdigest()


def caching_extractor(cache: LayerCache, extract: Extractor) -> Extractor:
    """Wrap ``extract(layer, spec, limits)`` so results are read from / written to ``cache``."""
    from imagelint.layers.codec import extract_from_bytes, extract_to_bytes

    def cached(layer, spec: CaptureSpec, limits):
        if not content_addressed(layer.digest):
            return extract(layer, spec, limits)  # no digest to key on: never cache a guess
        key = LayerCache.key(layer.digest, spec)
        payload = cache.get(key)
        if payload is not None:
            try:
                found = extract_from_bytes(payload)
            except Exception:  # a corrupt entry is a miss, never an error
                found = None
            if found is not None and found.digest != layer.digest:
                found = None  # an extract of another layer in this layer's slot
            if found is not None:
                # The same layer may sit at another index in this image.
                return _reindex(found, layer.index)
        result = extract(layer, spec, limits)
        cache.put(key, extract_to_bytes(result))
        return result

    return cached


try:  # ISA-L's CRC-32: the same checksum as zlib's, several times faster
    from isal.isal_zlib import crc32 as _crc32
except ImportError:  # pragma: no cover - isal is a declared dependency
    from zlib import crc32 as _crc32


def _raw(key: str) -> bytes | None:
    try:
        raw = bytes.fromhex(key)
    except ValueError:
        return None
    return raw if len(raw) == 32 else None


def _listdir(directory: Path) -> list[Path]:
    try:
        return list(directory.iterdir())
    except OSError:  # missing, or removed under us
        return []


def content_addressed(digest: str | None) -> bool:
    """A digest that names content (sha256/sha512 in full): safe to key a cache on."""
    algo, _, hexd = (digest or "").partition(":")
    return algo in ("sha256", "sha512") and len(hexd) in (64, 128) and all(c in "0123456789abcdef" for c in hexd)


def _reindex(x: LayerExtract, index: int) -> LayerExtract:
    if x.index == index:
        return x
    from dataclasses import replace

    return replace(x, index=index, entries=tuple(replace(e, layer_index=index) for e in x.entries))


__all__ = ["CacheInfo", "LayerCache", "caching_extractor", "content_addressed"]
