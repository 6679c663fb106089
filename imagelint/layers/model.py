"""What the layer reader keeps from a layer, and what it is asked to keep.

The reader walks each layer's tar stream once. A ``CaptureSpec`` (the union of
what every fact module needs) decides, per member path, whether to record the
entry's metadata, keep its whole content (bounded), keep only its first bytes
(``head``, e.g. for ELF headers and notes), or run a streaming ``scanner`` over
its content (e.g. fatbin headers inside a 1 GB library).

Everything here is independent of other layers and of the image config, so a
``LayerExtract`` can be cached by layer digest + ``EXTRACTOR_VERSION``.
Paths are normalised: no leading '/', no '.' or '..' components, '/'-separated.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any, Protocol

# Bump whenever what is captured or how it is stored changes: it keys the layer cache.
EXTRACTOR_VERSION = 4

FILE = "file"
SYMLINK = "symlink"
HARDLINK = "hardlink"
DIRECTORY = "dir"
OTHER = "other"  # device nodes, fifos: recorded, never read


@dataclass(frozen=True)
class Entry:
    """One tar member that the capture spec asked about (or any symlink/hardlink)."""

    path: str
    kind: str
    size: int
    mode: int
    linkname: str | None
    layer_index: int
    layer_digest: str


class MemberScanner(Protocol):
    """Consumes one member's content in chunks; ``result()`` must be JSON-serialisable.

    A scanner may also have ``skippable() -> int``: how many of the next bytes it would
    only count (e.g. a payload whose length a header gave). The reader then drops up to
    that many bytes unread and calls ``skipped(n)`` instead of ``feed``; the result must
    be the same either way.
    Optional too: ``begin(path, size)``, called before the first ``feed`` with the member's
    normalised path and size; ``reads_at_most``, how many bytes it reads at most (the per-member
    read limit is checked against that, not the member's size); ``held_bytes() -> int``, what its
    result keeps in memory (counted against the per-layer capture limit); ``first_read``, the size of
    the first chunk it wants (later chunks are 64 KiB).
    A scanner *class* may offer ``decide_head(path, size, head) -> result | None`` (a static
    method, with ``first_read`` and ``reads_at_most`` on the class): the reader then reads the
    member's first ``first_read`` bytes (all of it when shorter) and asks it first; a result is
    the member's scan result with no scanner built and the rest skipped unread (it must be what
    the scanner would give fed the whole member); None builds the scanner and feeds it ``head``
    first (the text-facts scanner: most candidates are data files settled by their first 4 KiB).
    Such a class may also offer ``scan_whole(path, size, data) -> (result, held_bytes)`` (a static or
    class method): when the member's whole content is in hand after its head (at most 64 KiB more),
    the reader calls it instead of building a scanner and feeding it; it must give what
    ``begin``, ``feed(data)``, ``result()`` and ``held_bytes()`` would (most sources are that small).
    A member the reader has in hand whole (its first read holds it, or the tar window it is in
    does) goes to ``scan_whole`` without ``decide_head``, so it must also give what
    ``decide_head`` would have settled (with 0 held bytes).
    Such a class may also offer ``settle_whole() -> (sniff, binary, keywords, search, by_extension)
    | None``: how the reader's native window loop (``_tarscan.take``) settles a member held whole
    with no Python per member, which must be what ``scan_whole`` gives it. A member whose first
    ``sniff`` bytes hold a NUL is ``binary``; one that does not start with "#!", whose extension
    (after its base name's last dot, when one follows its leading dots; case kept)
    ``by_extension`` maps to ``(result, max_size)``, of at most ``max_size`` bytes, in which
    ``search(data, keywords, True)`` finds nothing, is ``result``; every other member goes to
    ``scan_whole``.
    """

    def feed(self, chunk: bytes) -> None: ...

    def result(self) -> Any: ...


@dataclass(frozen=True)
class CaptureRule:
    """A glob over normalised paths and what to keep for matches.

    ``pattern`` uses fnmatch syntax where ``*`` does not cross '/', and
    ``**/`` matches zero or more directories. ``action`` is:
      ``record``   the entry's metadata only
      ``content``  metadata + whole content if size <= max_bytes (else metadata only,
                   with ``truncated`` noted)
      ``head``     metadata + the first max_bytes bytes
      ``scan``     metadata + scanner(name).result() over the full content
    ``name`` names a scanner for ``scan`` rules (see ``scanner_factory``).
    """

    pattern: str
    action: str = "record"
    max_bytes: int = 1 << 20
    name: str | None = None


@dataclass(frozen=True)
class CaptureSpec:
    """What reading a layer keeps: the fact modules' capture rules, in order (the first match wins)."""

    rules: tuple[CaptureRule, ...]
    # name -> factory for ``scan`` rules; not part of the cache key (the name is).
    scanner_factory: Mapping[str, Callable[[], MemberScanner]] = field(
        default_factory=lambda: MappingProxyType({}), compare=False, hash=False
    )

    def key(self) -> str:
        """A stable string for the cache key: the rules, in order."""
        return "|".join(f"{r.action}:{r.max_bytes}:{r.name or ''}:{r.pattern}" for r in self.rules)


@dataclass(frozen=True)
class LayerExtract:
    """What one layer contributed, in tar order.

    ``whiteouts``: paths removed by ``.wh.NAME`` members (the NAME path).
    ``opaque_dirs``: directories whose lower-layer contents an ``.wh..wh..opq`` hides.
    ``contents``/``heads``: captured bytes by path; ``scans``: scanner results by path.
    ``truncated``: content paths whose size exceeded the rule's max_bytes.
    ``warnings``: one-line notes about members that were skipped or suspicious
    (absolute/`..` paths, links out of root, oversized members...).
    """

    index: int
    digest: str
    entries: tuple[Entry, ...]
    whiteouts: tuple[str, ...] = ()
    opaque_dirs: tuple[str, ...] = ()
    contents: Mapping[str, bytes] = field(default_factory=lambda: MappingProxyType({}))
    heads: Mapping[str, bytes] = field(default_factory=lambda: MappingProxyType({}))
    scans: Mapping[str, Any] = field(default_factory=lambda: MappingProxyType({}))
    truncated: tuple[str, ...] = ()
    warnings: tuple[str, ...] = ()
