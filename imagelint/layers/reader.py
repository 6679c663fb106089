"""Read an image's layers once and build the merged filesystem view.

``extract_layer`` streams one layer (decompress -> tar headers -> capture per the
CaptureSpec) and returns a ``LayerExtract``; it never holds more of the layer in
memory than what the spec captures, and never writes to disk.
``read_image_filesystem`` runs it over every layer with a small thread pool
(isal and zstandard release the GIL while inflating, which is most of the work)
and merges the results in layer order into an ``ImageFilesystem``.

Member paths are normalised (``./`` and leading ``/`` stripped, ``.`` dropped,
``..`` resolved); a name whose ``..`` would climb above the root is skipped with
a warning. Nothing from the image is ever executed.
"""

from __future__ import annotations

from collections.abc import Callable
from concurrent.futures import FIRST_EXCEPTION, Future, ThreadPoolExecutor, wait
from contextvars import ContextVar, copy_context
from functools import lru_cache
from types import MappingProxyType
from typing import Any, BinaryIO

from imagelint.errors import (
    ImageFormatError,
    ImagelintError,
    LimitExceededError,
    SourceError,
)
from imagelint.image import Image, Layer
from imagelint.layers import tarwalk
from imagelint.layers.decompress import (
    InflatedBudget,
    LayerCancelled,
    open_decompressed,
)
from imagelint.layers.filesystem import ImageFilesystem
from imagelint.layers.limits import DEFAULT_LIMITS, ReadLimits
from imagelint.layers.match import RuleMatcher
from imagelint.layers.model import (
    DIRECTORY,
    FILE,
    HARDLINK,
    OTHER,
    SYMLINK,
    CaptureRule,
    CaptureSpec,
    Entry,
    LayerExtract,
)
from imagelint.layers.prefetch import prefetched
from imagelint.layers.tarwalk import normalize_member_path

_native_take: Callable[..., int] | None
try:
    from imagelint.layers._tarscan import take as _native_take
except ImportError:  # not built: ``_take`` takes every member, one call each
    _native_take = None

# Two workers: inflating releases the GIL, so two layers read side by side on two cores, and
# more workers than cores only add contention (python3 -m tests.layers.bench_parallel measures it).
DEFAULT_WORKERS = 2
MAX_WARNINGS_PER_LAYER = 100
# Scanners are fed 64 KB at a time: small enough that a payload a scanner can skip is
# dropped soon after its header, and below malloc's mmap threshold (a 1 MB bytes object per
# read would cost page faults).
_SCAN_CHUNK = 1 << 16
_DRAIN_CHUNK = 1 << 20
ACTIONS = ("record", "content", "head", "scan")

_KIND_BY_TYPE = {
    tarwalk.REGULAR: FILE,
    tarwalk.CONTIGUOUS: FILE,
    tarwalk.HARDLINK: HARDLINK,
    tarwalk.SYMLINK: SYMLINK,
    tarwalk.DIRECTORY: DIRECTORY,
}
# The kinds besides a regular file that ``add_in_window`` takes: those with no data and no target to
# resolve now (a hard link's target is normalised, and warned about, by ``add``).
_KIND_IN_WINDOW = {flag: kind for flag, kind in _KIND_BY_TYPE.items() if kind is SYMLINK or kind is DIRECTORY}
OPAQUE_MARKER = ".wh..wh..opq"
WHITEOUT_PREFIX = ".wh."

# The per-image inflated-bytes budget, set by read_image_filesystem for each worker.
# A context variable (not a parameter) so an injected ``extract`` such as the layer
# cache's wrapper keeps the plain ``extract(layer, spec, limits)`` signature.
_IMAGE_BUDGET: ContextVar[InflatedBudget | None] = ContextVar("imagelint_image_budget", default=None)

Extractor = Callable[[Layer, CaptureSpec, ReadLimits], LayerExtract]


def layer_label(layer: Layer) -> str:
    """How messages name a layer: ``layer 2 (sha256:ab12cd34ef56)``."""
    digest = layer.digest or "unknown digest"
    algo, _, hexd = digest.partition(":")
    short = f"{algo}:{hexd[:12]}" if hexd else digest[:19]
    return f"layer {layer.index} ({short})"


@lru_cache(maxsize=32)
def _matcher(rules: tuple[CaptureRule, ...]) -> RuleMatcher:
    return RuleMatcher(rules)


def _check_spec(spec: CaptureSpec) -> None:
    for rule in spec.rules:
        if rule.action not in ACTIONS:
            raise ValueError(f"CaptureRule {rule.pattern!r}: unknown action {rule.action!r}")
        if rule.action == "scan" and (rule.name is None or rule.name not in spec.scanner_factory):
            raise ValueError(f"CaptureRule {rule.pattern!r}: no scanner named {rule.name!r} in the spec")
        if rule.max_bytes < 0:
            raise ValueError(f"CaptureRule {rule.pattern!r}: negative max_bytes")


class _LayerCapture:
    """Accumulates one layer's extract while its tar stream is walked."""

    def __init__(self, layer: Layer, spec: CaptureSpec, limits: ReadLimits, label: str) -> None:
        self.layer = layer
        self.spec = spec
        self.limits = limits
        self.label = label
        self.matcher = _matcher(spec.rules)
        self._match = self.matcher.match
        self.entries: dict[str, Entry] = {}
        self.contents: dict[str, bytes] = {}
        self.heads: dict[str, bytes] = {}
        self.scans: dict[str, Any] = {}
        self.truncated: dict[str, None] = {}
        self.whiteouts: dict[str, None] = {}
        self.opaque_dirs: dict[str, None] = {}
        self.warnings: list[str] = []
        self.dropped_warnings = 0
        self.captured = 0
        self._plans: dict[str, tuple[Callable[[], Any], Any, int, int | None, Any]] = {}
        self._layer_index = layer.index
        self._layer_digest = layer.digest
        self._max_read = limits.max_member_read_bytes
        # The native window loop's state (``_tarscan.take``): the scan rules it settles itself, with
        # their scanner's policy, and what it records into.
        self._settled: list[tuple[CaptureRule, tuple[Any, ...]]] = []
        self._settling: set[int] = set()
        self._policies: dict[str, tuple[Any, ...]] = {}
        self._take_context = (self.entries, self.scans, self._match, self.matcher.shapes, self._settled, Entry, FILE,
                              DIRECTORY, SYMLINK, self._layer_index, self._layer_digest, self._max_read)

    def warn(self, text: str) -> None:
        if len(self.warnings) < MAX_WARNINGS_PER_LAYER:
            self.warnings.append(f"{self.label}: {text}")
        else:
            self.dropped_warnings += 1

    def forget(self, path: str) -> None:
        """A later member at the same path replaces the earlier one entirely."""
        if self.entries.pop(path, None) is not None:
            self.captured -= len(self.contents.pop(path, b"")) + len(self.heads.pop(path, b""))
            self.scans.pop(path, None)
            self.truncated.pop(path, None)

    def add(self, member: tarwalk.TarMember, walker: tarwalk.TarWalker) -> None:
        # Once per member the walker hands back (tens of thousands a layer): the usual member (a
        # plain name the native scanner already normalised, no whiteout, no earlier member at its
        # path) costs a few tests, the rule match and, when captured, its Entry and its scan.
        name = member.name
        if member.name_invalid:
            self.warn(f"member name is not UTF-8: {name!r}")
        path = member.path if member.path is not None else normalize_member_path(name)
        if path is None:
            self.warn(f"skipped member {name!r}: path escapes the root")
            return
        if name.startswith("/"):
            self.warn(f"absolute member name {name!r} read as {path!r}")
        if path == "":
            return  # the root directory itself
        if WHITEOUT_PREFIX in path:  # (a cheap superset of "the base name starts with .wh.")
            parent, _, base = path.rpartition("/")
            if base.startswith(WHITEOUT_PREFIX):
                self._whiteout(parent, base)
                return
        kind = _KIND_BY_TYPE.get(member.type, OTHER)
        linkname: str | None = None
        if kind is SYMLINK:
            linkname = member.linkname  # resolved later, in the merged view, inside the root
        elif kind is HARDLINK:
            target = normalize_member_path(member.linkname)
            if target is None or target == "":
                self.warn(f"skipped hardlink {path!r}: target {member.linkname!r} is outside the root")
                self.forget(path)
                return
            linkname = target
        entries = self.entries
        if path in entries:
            self.forget(path)
        if kind is SYMLINK or kind is HARDLINK:
            # A link is an entry whatever its rule (resolved in the merged view), with no data of
            # its own: no rule is asked.
            entries[path] = Entry(path, kind, member.size, member.mode, linkname, self._layer_index,
                                  self._layer_digest)
            return
        rule = self._match(path)
        if rule is None:
            return
        size = member.size
        entries[path] = Entry(path, kind, size, member.mode, None, self._layer_index, self._layer_digest)
        if kind is not FILE:
            return  # devices and fifos are never read; a directory has no data
        action = rule.action
        if action == "scan":
            self._scan(path, size, rule, walker)
        elif action != "record":
            self._capture(path, member, rule, walker)

    def add_in_window(self, items: list[tarwalk.ScannedMember], first: int, window: memoryview, base: int) -> int:
        """What ``add`` does, for the first of the native scan's ``items[first:]``
        (``TarWalker.scanned_in_window``) that are its usual candidate, without a ``TarMember``: a
        member at a path this layer has not had before, no whiteout, that the window holds whole,
        and that is a directory, a symlink, or a regular file that no rule matches or a rule scans
        with a scanner class that settles a member whole (``scan_whole``, for a member that
        ``first_read`` and one more scan chunk hold). Stops at the first that is not (``add`` takes
        that one, through the walker); returns how many it took.
        (An application's sources are tens of thousands of such members, a base layer's libraries
        as many symlinks, and a member through ``add`` costs the walker's hand-back, the member
        object and three more calls.)
        The native loop (``_tarscan.take``) takes the run of them it can without a Python frame per
        member: links, directories, files no rule wants, and files whose scanner class settles them
        held whole without Python (``settle_whole``: a source that holds no keyword); ``_take``
        takes the one it stops at, and is the reference it is held to."""
        end = base + len(window)
        take, context = _native_take, self._take_context
        i, n = first, len(items)
        while i < n:
            if take is not None:
                i += take(items, i, window, base, context)
                if i >= n:
                    break
            if not self._take(items[i], window, base, end):
                break
            i += 1
        return i - first

    def _take(self, item: tarwalk.ScannedMember, window: memoryview, base: int, end: int) -> bool:
        """``add_in_window`` for one member: False when it is not one the window step takes."""
        name, path, type_flag, size, mode, linkname, offset = item
        entries = self.entries
        start = offset + tarwalk.BLOCK
        # (A whiteout's name holds "/." or starts with ".", which the native scan hands to the
        # parser: the test here only keeps this path right whatever the scan hands back.)
        if not path or path in entries or WHITEOUT_PREFIX in path or name.startswith("/") or start + size > end:
            return False
        index, digest = self._layer_index, self._layer_digest
        if type_flag != tarwalk.REGULAR:
            # As ``add``: a symlink is an entry whatever its rule (none is asked), a directory
            # only when a rule records it; neither has data of its own to read.
            kind = _KIND_IN_WINDOW.get(type_flag)
            if kind is None:
                return False
            if kind is SYMLINK:
                entries[path] = Entry(path, kind, size, mode, linkname, index, digest)
            elif self._match(path) is not None:
                entries[path] = Entry(path, kind, size, mode, None, index, digest)
            return True
        rule = self._match(path)
        if rule is None:
            return True
        if rule.action != "scan":
            return False
        plan = self._plans.get(rule.name) or self._plan(rule.name)  # type: ignore[arg-type]  # a scan rule names its scanner
        _, decide_head, first_read, _, scan_whole = plan
        if decide_head is None or scan_whole is None or size > first_read + _SCAN_CHUNK or size > self._max_read:
            return False
        entries[path] = Entry(path, FILE, size, mode, None, index, digest)
        # The member is in hand whole: ``scan_whole`` alone, which gives what ``decide_head``
        # would have settled too (its contract), without a second look at the head.
        self._scan_whole(scan_whole, rule, path, size, bytes(window[start - base : start - base + size]))
        if id(rule) not in self._settling:
            self._settle_in_native_loop(rule, first_read)
        return True

    def _settle_in_native_loop(self, rule: CaptureRule, first_read: int) -> None:
        """Let the native loop settle this rule's next members, when its scanner class says how
        (``settle_whole``); its policy (and the extensions it has looked up) is shared by the rules
        of one scanner."""
        self._settling.add(id(rule))  # (the rule lives as long as the spec: its id stays its own)
        factory = self.spec.scanner_factory[rule.name]  # type: ignore[index]  # a scan rule names its scanner
        settle_whole = getattr(factory, "settle_whole", None)
        hooks = settle_whole() if settle_whole is not None else None
        if hooks is None:
            return
        policy = self._policies.get(rule.name)  # type: ignore[arg-type]
        if policy is None:
            sniff, binary, keywords, search, by_extension = hooks
            policy = self._policies[rule.name] = (  # type: ignore[index]
                first_read + _SCAN_CHUNK, sniff, binary, tuple(keywords), search, {}, by_extension)
        self._settled.append((rule, policy))

    def _whiteout(self, parent: str, base: str) -> None:
        if base == OPAQUE_MARKER:
            self.opaque_dirs[parent] = None
            return
        if base.startswith(WHITEOUT_PREFIX + WHITEOUT_PREFIX):
            return  # other aufs metadata (.wh..wh.plnk, .wh..wh.aufs): not content
        name = base[len(WHITEOUT_PREFIX) :]
        if name in ("", ".", ".."):
            self.warn(f"ignored malformed whiteout {parent + '/' + base if parent else base!r}")
            return
        self.whiteouts[f"{parent}/{name}" if parent else name] = None

    def _reserve(self, path: str, n: int) -> None:
        if n > self.limits.max_member_read_bytes:
            raise LimitExceededError(
                f"{self.label}: member {path!r} is {n} bytes, over the per-member read limit "
                f"of {self.limits.max_member_read_bytes}"
            )

    def _keep(self, path: str, n: int) -> None:
        self.captured += n
        if self.captured > self.limits.max_captured_bytes_per_layer:
            raise LimitExceededError(
                f"{self.label}: captured content exceeds {self.limits.max_captured_bytes_per_layer} bytes "
                f"(per-layer limit) at {path!r}"
            )

    def _capture(self, path: str, member: tarwalk.TarMember, rule: CaptureRule, walker: tarwalk.TarWalker) -> None:
        if rule.action == "content":
            if member.size > rule.max_bytes:
                self.truncated[path] = None
                return
            self._reserve(path, member.size)
            self._keep(path, member.size)
            self.contents[path] = walker.read_data()
        elif rule.action == "head":
            n = min(member.size, rule.max_bytes)
            self._reserve(path, n)
            self._keep(path, n)
            self.heads[path] = walker.read_data(n)

    def _plan(self, name: str) -> tuple[Callable[[], Any], Any, int, int | None, Any]:
        """A scanner's factory and, when its class decides on a member's head (``decide_head``), the
        hooks the tight path reads from the class, looked up once per layer: (factory,
        ``decide_head`` or None, ``first_read``, ``reads_at_most`` or None, ``scan_whole`` or None)."""
        factory = self.spec.scanner_factory[name]
        decide_head = getattr(factory, "decide_head", None)
        first_read, reads_at_most, scan_whole = _SCAN_CHUNK, None, None
        if decide_head is not None:
            first_read = int(getattr(factory, "first_read", _SCAN_CHUNK) or _SCAN_CHUNK)
            reads_at_most = getattr(factory, "reads_at_most", None)
            if reads_at_most is not None:
                reads_at_most = int(reads_at_most)
            scan_whole = getattr(factory, "scan_whole", None)
        plan = self._plans[name] = (factory, decide_head, first_read, reads_at_most, scan_whole)
        return plan

    def _scan(self, path: str, size: int, rule: CaptureRule, walker: tarwalk.TarWalker) -> None:
        plan = self._plans.get(rule.name) or self._plan(rule.name)  # type: ignore[arg-type]  # a scan rule names its scanner
        factory, decide_head, first_read, reads_at_most, scan_whole = plan
        if decide_head is None:
            scanner = factory()
            # A scanner that stops by itself says how much it may read, and may want a smaller first chunk.
            self._reserve(path, min(size, getattr(scanner, "reads_at_most", size)))
            first_read = int(getattr(scanner, "first_read", _SCAN_CHUNK) or _SCAN_CHUNK)
            self._feed_scanner(path, size, rule, walker, scanner, None, first_read)
            return
        # The tight path, once per candidate file (an image may hold tens of thousands): the
        # scanner's class decides on the head alone whether the file is read on (a data file is
        # not), so most candidates cost one read, one call and no scanner; the walker skips the rest.
        n = size if reads_at_most is None or size < reads_at_most else reads_at_most
        if n > self._max_read:
            self._reserve(path, n)
        head = walker.read_data(first_read)  # outside the try: a short stream is the layer's failure
        left = walker.remaining_data
        if left or scan_whole is None:  # (a member its first read holds whole goes to scan_whole alone)
            if self._head_decides(decide_head, rule, path, size, head):
                return
            # A file read on whose rest fits in one scan chunk (most sources) reaches the scanner in one
            # piece: one batch for its per-batch work (decoding, the keyword search) instead of two.
            if 0 < left <= _SCAN_CHUNK:
                head += walker.read_data(left)
                left = 0
        if left == 0 and scan_whole is not None:
            self._scan_whole(scan_whole, rule, path, size, head)
            return
        self._feed_scanner(path, size, rule, walker, factory(), head, _SCAN_CHUNK)

    def _head_decides(self, decide_head: Callable[[str, int, bytes], Any], rule: CaptureRule, path: str, size: int,
                      head: bytes) -> bool:
        """Did the scanner class's ``decide_head`` settle the member on its first bytes? Its result
        (a data file's, most often), or its failure, is then the member's, and the rest is not read."""
        try:
            result = decide_head(path, size, head)
        except Exception as exc:  # hostile bytes skip one file, no more (as the scanner's own would)
            self._scanner_failed(rule, path, f"{type(exc).__name__}: {exc}")
            return True
        if result is None:
            return False
        self.scans[path] = result
        return True

    def _scan_whole(self, scan_whole: Callable[[str, int, bytes], tuple[Any, int]], rule: CaptureRule, path: str,
                    size: int, data: bytes) -> None:
        """The scan result of a member whose whole content is ``data``: one call to its scanner
        class's ``scan_whole``, no scanner fed chunk by chunk."""
        try:
            result, held = scan_whole(path, size, data)
        except Exception as exc:  # hostile bytes skip one file, no more (as the scanner's own would)
            self._scanner_failed(rule, path, f"{type(exc).__name__}: {exc}")
            return
        self.scans[path] = result
        if held:  # (nothing to count for most: their result holds no text)
            self._keep(path, int(held))

    def _feed_scanner(self, path: str, size: int, rule: CaptureRule, walker: tarwalk.TarWalker, scanner: Any,
                      head: bytes | None, chunk_size: int) -> None:
        """Stream the rest of the member through ``scanner`` (``head``: its first bytes, already read)."""
        # (The scanner's optional methods are looked up once here, not per chunk.)
        failed: str | None = None
        begin = getattr(scanner, "begin", None)
        if begin is not None:
            try:
                begin(path, size)
            except Exception as exc:
                failed = f"{type(exc).__name__}: {exc}"
        if head and failed is None:
            try:
                scanner.feed(head)
            except Exception as exc:
                failed = f"{type(exc).__name__}: {exc}"
        skippable = getattr(scanner, "skippable", None)
        left = walker.remaining_data
        while left > 0:
            if failed is not None:
                walker.discard_data(left)
                break
            # Bytes the scanner would only count (a fatbin payload) are dropped unread.
            n = min(_skippable(skippable), left) if skippable is not None else 0
            # The walker's reads stay outside the try: a truncated stream or a dropped connection
            # is the layer's failure, not the scanner's.
            if n > 0:
                walker.discard_data(n)
            else:
                chunk = walker.read_data(chunk_size)
                chunk_size = _SCAN_CHUNK
            try:
                if n > 0:
                    scanner.skipped(n)
                else:
                    scanner.feed(chunk)
            except Exception as exc:  # a scanner choking on hostile bytes skips one file, no more
                failed = f"{type(exc).__name__}: {exc}"
            left = walker.remaining_data
        if failed is None:
            try:
                self.scans[path] = scanner.result()
                held_bytes = getattr(scanner, "held_bytes", None)
                if held_bytes is not None:
                    self._keep(path, int(held_bytes()))
            except LimitExceededError:
                raise
            except Exception as exc:
                failed = f"{type(exc).__name__}: {exc}"
        if failed is not None:
            self._scanner_failed(rule, path, failed)

    def _scanner_failed(self, rule: CaptureRule, path: str, failed: str) -> None:
        self.warn(f"scanner {rule.name!r} failed on {path!r} ({failed.splitlines()[0][:160]})")

    def extract(self) -> LayerExtract:
        warnings = list(self.warnings)
        if self.dropped_warnings:
            warnings.append(f"{self.label}: {self.dropped_warnings} more warnings not shown")
        return LayerExtract(
            index=self.layer.index,
            digest=self.layer.digest,
            entries=tuple(self.entries.values()),
            whiteouts=tuple(self.whiteouts),
            opaque_dirs=tuple(self.opaque_dirs),
            contents=MappingProxyType(dict(self.contents)),
            heads=MappingProxyType(dict(self.heads)),
            scans=MappingProxyType(dict(self.scans)),
            truncated=tuple(p for p in self.truncated if p in self.entries),
            warnings=tuple(warnings),
        )


def extract_layer(layer: Layer, spec: CaptureSpec, limits: ReadLimits | None = None) -> LayerExtract:
    """Stream one layer once and keep what ``spec`` asks for.

    Raises ``ImageFormatError`` (corrupt compression, not a tar, truncated,
    bad headers) or ``LimitExceededError`` naming the layer; errors from the
    layer's source (e.g. a digest mismatch at EOF) pass through unchanged.
    """
    limits = limits or DEFAULT_LIMITS
    _check_spec(spec)
    label = layer_label(layer)
    try:
        raw = layer.open()
    except ImagelintError:
        raise
    except (OSError, ValueError) as exc:
        raise SourceError(f"{label}: cannot open layer ({type(exc).__name__}: {exc})") from None
    raw = prefetched(raw, layer.size, label)  # receive + hash on a thread of its own, while this one inflates
    try:
        stream = open_decompressed(
            raw, layer.compression, label, limits.max_layer_inflated_bytes, _IMAGE_BUDGET.get(), layer.index
        )
    except BaseException:
        _close_quietly(raw)
        raise
    try:
        capture = _LayerCapture(layer, spec, limits, label)
        walker = tarwalk.TarWalker(stream, label, limits.max_members_per_layer, limits.max_extension_header_bytes,
                                   capture.matcher.prefilter)
        while True:
            items, first, window, base = walker.scanned_in_window()
            if first < len(items):
                walker.took_scanned(capture.add_in_window(items, first, window, base))
            member = next(walker, None)
            if member is None:
                break
            capture.add(member, walker)
        if not walker.ended_cleanly:
            capture.warn("tar stream has no end-of-archive marker")
        _drain(stream)
        return capture.extract()
    finally:
        # A gzip reader does not close the file it was given: close both, quietly,
        # since the real error (if any) is already on its way up.
        _close_quietly(stream)
        _close_quietly(raw)


def _close_quietly(stream: BinaryIO) -> None:
    try:
        stream.close()
    except Exception:
        pass


def _drain(stream: BinaryIO) -> None:
    """Read to EOF: sources verify the blob digest only when its stream is fully read."""
    buf = memoryview(bytearray(_DRAIN_CHUNK))
    while stream.readinto(buf):  # type: ignore[attr-defined]  # every layer stream is buffered or raw: both have readinto
        pass


def _skippable(skippable: Callable[[], int]) -> int:
    """What a scanner's ``skippable()`` hint says it would only count; 0 when the hint breaks."""
    try:
        return int(skippable())
    except Exception:  # a broken hint costs only speed: the bytes are fed instead
        return 0


def _extract_with_budget(
    budget: InflatedBudget, extract: Extractor, layer: Layer, spec: CaptureSpec, limits: ReadLimits
) -> LayerExtract:
    _IMAGE_BUDGET.set(budget)
    return extract(layer, spec, limits)


def read_image_filesystem(
    image: Image,
    spec: CaptureSpec,
    limits: ReadLimits | None = None,
    workers: int = DEFAULT_WORKERS,
    extract: Extractor = extract_layer,
) -> ImageFilesystem:
    """Extract every layer of ``image`` (``workers`` at a time) and merge them in layer order.

    ``extract`` is injectable (the layer cache wraps ``extract_layer``). The
    lowest failing layer decides the error; layers above it are cancelled at
    their next read. A layer the source cannot serve at all (a 404, a refused
    token, the deadline: a ``SourceError`` that is not about the bytes) cancels
    every other layer at once, so the run reports it at once instead of after the
    slowest sibling.
    """
    limits = limits or DEFAULT_LIMITS
    _check_spec(spec)
    budget = InflatedBudget(limits.max_image_inflated_bytes)
    layers = list(image.layers)
    if workers <= 1 or len(layers) <= 1:
        extracts = [copy_context().run(_extract_with_budget, budget, extract, layer, spec, limits) for layer in layers]
        return ImageFilesystem.from_extracts(extracts)
    with ThreadPoolExecutor(max_workers=min(workers, len(layers)), thread_name_prefix="imagelint-layer") as pool:
        # Largest layers first (longest-processing-time order): a 700 MB layer started last
        # leaves the other worker idle at the end. ``futures`` stays in layer order for merging
        # and for choosing the error.
        by_index: dict[int, Future[LayerExtract]] = {}
        for i in sorted(range(len(layers)), key=lambda i: -(layers[i].size or 0)):
            by_index[i] = pool.submit(copy_context().run, _extract_with_budget, budget, extract, layers[i], spec, limits)
        futures = [by_index[i] for i in range(len(layers))]
        try:
            pending = set(futures)
            while pending:
                done, pending = wait(pending, return_when=FIRST_EXCEPTION)
                failed = [i for i, f in enumerate(futures) if f in done and not f.cancelled() and f.exception() is not None]
                if failed:
                    # Layers above the lowest failure are abandoned; those below run on,
                    # since one of them may fail too and its error comes first, unless the
                    # source itself failed: then nothing below can change the outcome.
                    fatal = any(_source_failed(futures[i].exception()) for i in failed)
                    stop = -1 if fatal else failed[0]
                    budget.cancel_above(stop)
                    for f in futures[stop + 1 :]:
                        f.cancel()
        except BaseException:  # e.g. Ctrl-C: stop every worker at its next read
            budget.cancel_above(-1)
            raise
        for f in futures:
            if not f.cancelled() and (exc := f.exception()) is not None and not isinstance(exc, LayerCancelled):
                raise exc
        extracts = [f.result() for f in futures]
    return ImageFilesystem.from_extracts(extracts)


def _source_failed(exc: BaseException | None) -> bool:
    """A failure of the source (unreachable, refused, missing, out of time), not of a layer's bytes."""
    return isinstance(exc, SourceError) and not isinstance(exc, (ImageFormatError, LayerCancelled))
