"""The merged view of an image's layers: whiteouts applied, symlinks resolved in-root.

INTERFACE CONTRACT (the facts modules code against exactly this):

    fs = ImageFilesystem.from_extracts(extracts)   # list[LayerExtract] in layer order
    fs.entry(path) -> Entry | None        # no link resolution; None if absent/whited out
    fs.resolve(path) -> str | None        # follow symlinks (absolute ones are relative to
                                          # the image root, '..' clamps at '/'), loop-safe;
                                          # the final normalised path, or None if it
                                          # dangles/loops. Intermediate components too.
    fs.lookup(path) -> Entry | None       # entry(resolve(path)), hardlinks followed to target
    fs.read(path) -> bytes | None         # captured content of the resolved file
    fs.head(path) -> bytes | None         # captured head bytes of the resolved file
    fs.scan(path) -> Any | None           # scanner result of the resolved file
    fs.glob(pattern) -> list[Entry]       # visible entries whose own path matches (CaptureRule
                                          # glob syntax), sorted by path
    fs.entries() -> Iterator[Entry]       # every visible entry, sorted by path
    fs.listdir(path) -> list[str]         # names of visible recorded entries directly below
                                          # the resolved directory
    fs.aliases(path) -> list[str]         # recorded paths (incl. via directory symlinks
                                          # that were recorded) that resolve to ``path``
    fs.warnings -> tuple[str, ...]        # from the extracts and from merging

Paths are accepted with or without a leading '/', and returned without one.
Only what the CaptureSpec recorded is visible: this is not a full filesystem.
"""

from __future__ import annotations

from bisect import bisect_left
from collections.abc import Iterable, Iterator, Sequence
from typing import Any

from imagelint.layers.match import (
    compile_glob,
    literal_prefix,
    literal_runs,
    literal_suffix,
)
from imagelint.layers.model import DIRECTORY, HARDLINK, SYMLINK, Entry, LayerExtract

# Linux follows at most 40 symlinks per lookup (MAXSYMLINKS); past that a path "loops".
MAX_SYMLINK_HOPS = 40
# Directory symlinks that point at an ancestor make infinitely many aliases; list this many.
MAX_ALIASES = 256


class _Record:
    """A visible entry and the data its layer captured for it.

    ``link_target``, for hardlinks: the record the link pointed at when its layer was applied
    (a later layer replacing the target does not change the link's data).
    """

    __slots__ = ("entry", "content", "head", "scan", "truncated", "link_target")

    def __init__(self, entry: Entry, content: bytes | None = None, head: bytes | None = None, scan: Any = None,
                 truncated: bool = False) -> None:
        self.entry = entry
        self.content = content
        self.head = head
        self.scan = scan
        self.truncated = truncated
        self.link_target: _Record | None = None


class _Node:
    __slots__ = ("children", "record")

    def __init__(self) -> None:
        self.children: dict[str, _Node] = {}
        self.record: _Record | None = None


def _parts(path: str) -> list[str]:
    """Lexically normalised components: '' and '.' dropped, '..' clamped at the root."""
    if "/." not in path and "//" not in path and not path.startswith((".", "/")) and not path.endswith("/") and path:
        return path.split("/")  # already normalised (what the layer reader records): nothing to drop
    out: list[str] = []
    for part in path.split("/"):
        if part == "" or part == ".":
            continue
        if part == "..":
            if out:
                out.pop()
            continue
        out.append(part)
    return out


def _split_all(paths: list[str]) -> tuple[list[str], list[str | None]]:
    """Each path's parent directory and name, lexically normalised (``_parts``): ``"a/b/c"`` is
    (``"a/b"``, ``"c"``); a path that names the root is (``""``, None). The directory is the key
    of the merge's node lookups, split into its parts once per directory, not once per entry.

    One scan of them all finds the usual case, every path already normalised (as the layer
    reader records them): then a path is its parent and name as they stand. Joined by newlines,
    a path with an empty, '.' or '..' component shows "//", "/.", a '/' or '.' next to a newline,
    or an empty path as two adjacent newlines; a newline inside a name can only make a
    normalised path look otherwise, which costs the slow way, no more."""
    blob = "\n".join(paths)
    if (not paths or "/." in blob or "//" in blob or "\n/" in blob or "\n." in blob or "/\n" in blob or "\n\n" in blob
            or blob.startswith((".", "/", "\n")) or blob.endswith(("/", "\n")) or not blob):
        keys: list[str] = []
        names: list[str | None] = []
        for path in paths:
            parts = _parts(path)
            keys.append("/".join(parts[:-1]))
            names.append(parts[-1] if parts else None)
        return keys, names
    split = [p.rpartition("/") for p in paths]
    return [key for key, _, _ in split], [name for _, _, name in split]


def _key_parts(key: str) -> list[str]:
    """A directory key's parts (``_split_all``): ``""`` is the root."""
    return key.split("/") if key else []


_EMPTY: dict[str, Any] = {}
_UNSEEN: Any = object()  # a parent directory not looked up yet


def _prefix_range(keys: list[str], values: list[str], prefix: str) -> list[str]:
    """``values[i]`` for the run of sorted ``keys`` that start with ``prefix``."""
    out = []
    i = bisect_left(keys, prefix)
    while i < len(keys) and keys[i].startswith(prefix):
        out.append(values[i])
        i += 1
    return out


def _normalize(path: str) -> str:
    return "/".join(_parts(path))


class ImageFilesystem:
    """The merged view of an image's layers (see the module docstring for the contract).

    Built once by ``from_extracts``; read-only afterwards (safe to share between threads).
    """

    def __init__(self, root: _Node, warnings: Iterable[str]) -> None:
        self._root = root
        self._nodes: dict[str, _Node] = {}
        self._records: dict[str, _Record] = {}
        # Paths with a symlink among their proper ancestors (below a recorded link: rare). Every
        # other visible path that is not a link itself resolves to itself, without a walk.
        self._below_link: set[str] = set()
        self._index("", root)
        self._sorted_paths = sorted(self._records)
        self._resolved: dict[str, str | None] = {}
        self._symlinks_by_target: dict[str, list[str]] | None = None
        # Built on the first glob that wants them: (basenames sorted, their paths), and paths by extension.
        self._by_basename: tuple[list[str], list[str]] | None = None
        self._by_extension: dict[str, list[str]] | None = None
        self.warnings: tuple[str, ...] = tuple(warnings)

    # -- building ----------------------------------------------------------------------

    @classmethod
    def from_extracts(cls, extracts: Iterable[LayerExtract]) -> ImageFilesystem:
        """Apply layers in the order given (lowest first).

        For each layer: its whiteouts remove the path and everything below it,
        and its opaque dirs hide everything below them, from LOWER layers only;
        a non-directory entry (file, symlink...) replaces whatever lower layers
        had below that path, and a path this layer has something below is a
        directory in this layer, so a lower symlink there is dropped; then its
        entries are added in tar order, a later entry replacing an earlier one
        at the same path. Hardlinks are bound to the target's record as it is
        at that moment.
        """
        root = _Node()
        warnings: list[str] = []
        unbound: list[str] = []  # hardlinks whose target was not recorded
        for x in extracts:
            warnings.extend(x.warnings)
            for path in x.whiteouts:
                parts = _parts(path)
                if parts:
                    parent = _find(root, parts[:-1])
                    if parent is not None:
                        parent.children.pop(parts[-1], None)
            for path in x.opaque_dirs:
                node = _find(root, _parts(path))
                if node is not None:
                    node.children.clear()
            # Each entry's parent directory (its key: the node lookups below are one per directory,
            # not one per entry) and name.
            parent_keys, names = _split_all([e.path for e in x.entries])
            # A non-directory entry replaces whatever lower layers had below it. Only clearing
            # happens in this loop, so a parent looked up once stays right for its directory (a
            # parent cut off by an earlier clear is no longer in the tree: clearing below it
            # changes nothing, as finding nothing would).
            parents: dict[str, _Node | None] = {"": root}
            for e, parent_key, name in zip(x.entries, parent_keys, names):
                if e.kind != DIRECTORY:
                    if name is None:
                        root.children.clear()
                        continue
                    parent = parents.get(parent_key, _UNSEEN)
                    if parent is _UNSEEN:
                        parent = parents[parent_key] = _find(root, _key_parts(parent_key))
                    node = parent.children.get(name) if parent is not None else None
                    if node is not None:
                        node.children.clear()
            # Whatever this layer has entries, whiteouts or opaque markers below is a
            # directory in this layer (image builders write the parent directory entries),
            # so a lower layer's symlink or file at that path is replaced, not followed.
            # (Each directory once: demoting is idempotent, and thousands of entries share a parent.)
            implied_dirs = {tuple(_parts(p)[:-1]) for p in x.whiteouts}
            implied_dirs.update(tuple(_key_parts(key)) for key in set(parent_keys))
            implied_dirs.update(tuple(_parts(p)) for p in x.opaque_dirs)
            for implied in implied_dirs:
                _demote_non_directories(root, implied)
            truncated = set(x.truncated)
            # (A cached layer's extract usually captured no contents or heads: no lookups then.)
            contents, heads, scans = x.contents or _EMPTY, x.heads or _EMPTY, x.scans or _EMPTY
            # Only nodes are added from here to the layer's end, so a directory's node, once
            # found, stays in the tree: thousands of entries share a parent, walked once.
            made: dict[str, _Node] = {"": root}
            for e, parent_key, name in zip(x.entries, parent_keys, names):
                path = e.path
                record = _Record(e, contents.get(path), heads.get(path), scans.get(path), path in truncated)
                if e.kind == HARDLINK:
                    target = _find(root, _parts(e.linkname or ""))
                    record.link_target = target.record if target is not None else None
                    while record.link_target is not None and record.link_target.entry.kind == HARDLINK:
                        record.link_target = record.link_target.link_target
                    if record.link_target is None:
                        unbound.append(f"{path!r} -> {e.linkname!r}")
                if name is None:
                    root.record = record
                    continue
                node = made.get(parent_key)
                if node is None:
                    node = root
                    for part in _key_parts(parent_key):
                        child = node.children.get(part)
                        if child is None:
                            child = node.children[part] = _Node()
                        node = child
                    made[parent_key] = node
                child = node.children.get(name)
                if child is None:
                    child = node.children[name] = _Node()
                child.record = record
        if unbound:
            # One line, not one per link: pip and conda trees can hold thousands of hardlinks.
            more = f" and {len(unbound) - 1} more" if len(unbound) > 1 else ""
            warnings.append(f"hardlink {unbound[0]}{more}: target not recorded, so its content is not available")
        return cls(root, warnings)

    def _index(self, path: str, node: _Node) -> None:
        nodes, records, below = self._nodes, self._records, self._below_link
        # Directories to visit: (path, node, below a link). Leaves (no children: most nodes)
        # are indexed where they are met, without a trip through the stack.
        stack = [(path, node, False)]
        nodes[path] = node
        if node.record is not None:
            records[path] = node.record
        while stack:
            p, n, below_link = stack.pop()
            prefix = f"{p}/" if p else ""
            record = n.record
            children_below_link = below_link or (record is not None and record.entry.kind == SYMLINK)
            for name, child in n.children.items():
                child_path = prefix + name
                nodes[child_path] = child
                if children_below_link:
                    below.add(child_path)
                if child.record is not None:
                    records[child_path] = child.record
                if child.children:
                    stack.append((child_path, child, children_below_link))

    # -- queries -----------------------------------------------------------------------

    def entry(self, path: str) -> Entry | None:
        """The visible entry recorded at ``path`` itself (no link resolution)."""
        record = self._records.get(_normalize(path))
        return record.entry if record is not None else None

    def resolve(self, path: str) -> str | None:
        """Follow symlinks in every component, inside the image root.

        Absolute link targets start again at the image root; '..' never climbs
        above it. Returns the final normalised path if it exists in this view
        (a recorded entry or a directory holding recorded entries), None if a
        link dangles, the path is not visible, or more than 40 links are followed.
        """
        key = path.lstrip("/")
        if key in self._resolved:
            return self._resolved[key]
        if self._resolves_to_itself(key):
            return key
        result = self._walk(key)
        if len(self._resolved) < 100_000:
            self._resolved[key] = result
        return result

    def _resolves_to_itself(self, key: str) -> bool:
        """A visible path with no recorded link on it, itself included: what ``_walk`` returns
        unchanged. (A key of ``_nodes`` is normalised: tree names are never '', '.' or '..'.)"""
        if key in self._below_link or key not in self._nodes:
            return False
        record = self._records.get(key)
        return record is None or record.entry.kind != SYMLINK

    def _walk(self, path: str) -> str | None:
        pending = path.split("/")
        pending.reverse()
        current: list[str] = []
        hops = 0
        while pending:
            part = pending.pop()
            if part == "" or part == ".":
                continue
            if part == "..":
                if current:
                    current.pop()
                continue
            current.append(part)
            key = "/".join(current)
            record = self._records.get(key)
            if record is not None and record.entry.kind == SYMLINK:
                hops += 1
                target = record.entry.linkname or ""
                if hops > MAX_SYMLINK_HOPS or not target:
                    return None
                current.pop()
                if target.startswith("/"):
                    current = []
                more = target.split("/")
                more.reverse()
                pending.extend(more)
                continue
            if key not in self._nodes:
                return None  # nothing below an invisible path is visible either
        result = "/".join(current)
        return result if result in self._nodes else None

    def _final_record(self, path: str) -> _Record | None:
        resolved = self.resolve(path)
        if resolved is None:
            return None
        record = self._records.get(resolved)
        if record is not None and record.entry.kind == HARDLINK and record.link_target is not None:
            return record.link_target
        return record

    def lookup(self, path: str) -> Entry | None:
        """``entry(resolve(path))``, a hardlink replaced by the entry it links to (if recorded)."""
        record = self._final_record(path)
        return record.entry if record is not None else None

    def read(self, path: str) -> bytes | None:
        """The captured content of the file ``path`` resolves to (None if not captured or truncated)."""
        record = self._final_record(path)
        return record.content if record is not None else None

    def head(self, path: str) -> bytes | None:
        record = self._final_record(path)
        return record.head if record is not None else None

    def scan(self, path: str) -> Any | None:
        record = self._final_record(path)
        return record.scan if record is not None else None

    def truncated(self, path: str) -> bool:
        """True when ``path`` resolves to a file whose content was over its rule's max_bytes."""
        record = self._final_record(path)
        return bool(record is not None and record.truncated)

    def glob(self, pattern: str) -> list[Entry]:
        """Visible entries whose own path (not resolved) matches the CaptureRule glob, sorted by path."""
        p = pattern.lstrip("/")
        candidates = self._glob_candidates(p)
        if not candidates:
            return []  # most fact globs narrow to nothing: no regex to compile
        literal = literal_prefix(p)
        if p[len(literal):] in ("**", "**/*") and (not literal or literal.endswith("/")):
            # "DIR/**/*" and "DIR/**" match every path below DIR: the range by the literal is the answer.
            return [self._records[q].entry for q in candidates]
        regex = compile_glob(p)
        return [self._records[q].entry for q in candidates if regex.fullmatch(q)]

    def _glob_candidates(self, p: str) -> list[str]:
        """Sorted paths that can match the (leading-'/'-stripped) glob ``p``: not every path.

        Fact modules glob ~60 patterns over tens of thousands of entries. ``usr/local/cuda*/x``
        only needs the ``usr/local/cuda`` range of paths; a pattern that starts with a wildcard
        is narrowed by its last component: ``**/libcuda.so*`` and ``**/cuda*/version.json`` by
        basename (those starting ``libcuda.so``, those named ``version.json``), ``**/*.fatbin`` by
        extension, ``**/*.so.[0-9]*`` by the literal inside it. The regex still decides; this only
        narrows what it is run on.
        """
        literal = literal_prefix(p)
        if literal:
            return _prefix_range(self._sorted_paths, self._sorted_paths, literal)
        last = p.rpartition("/")[2]
        if "**" in last:
            return self._sorted_paths
        lead = literal_prefix(last)
        if lead:
            names, paths = self._basename_index()
            return sorted(_prefix_range(names, paths, lead))
        tail = literal_suffix(last)
        if "." in tail and not tail.endswith("."):
            return self._extension_index().get(tail.rpartition(".")[2], [])
        inner = max(literal_runs(last), key=len, default="")
        if len(inner) >= 2:
            names, paths = self._basename_index()
            return sorted(q for name, q in zip(names, paths) if inner in name)
        return self._sorted_paths

    def _basename_index(self) -> tuple[list[str], list[str]]:
        if self._by_basename is None:
            pairs = sorted((path.rpartition("/")[2], path) for path in self._sorted_paths)
            self._by_basename = ([b for b, _ in pairs], [q for _, q in pairs])
        return self._by_basename

    def _extension_index(self) -> dict[str, list[str]]:
        """Sorted paths by the extension of their basename (after its last '.')."""
        if self._by_extension is None:
            table: dict[str, list[str]] = {}
            for path in self._sorted_paths:
                name = path.rpartition("/")[2]
                if "." in name:
                    table.setdefault(name.rpartition(".")[2], []).append(path)
            self._by_extension = table
        return self._by_extension

    def entries(self) -> Iterator[Entry]:
        for p in self._sorted_paths:
            yield self._records[p].entry

    def listdir(self, path: str) -> list[str]:
        """Names directly below the resolved directory: recorded entries and directories implied
        by recorded entries below them. Empty if the path is not a visible directory."""
        resolved = self.resolve(path)
        if resolved is None:
            return []
        return sorted(self._nodes[resolved].children)

    def aliases(self, path: str) -> list[str]:
        """Paths that resolve to the same place as ``path``, itself included, sorted.

        Found through recorded symlinks: ``usr/local/cuda -> cuda-12.4`` makes
        ``usr/local/cuda/version.json`` an alias of ``usr/local/cuda-12.4/version.json``;
        chains of directory links are followed. At most 256 are listed.
        """
        target = self.resolve(path)
        if target is None:
            return []
        by_target = self._links_by_target()
        found = {target}
        queue = [target]
        while queue and len(found) < MAX_ALIASES:
            p = queue.pop()
            parts = p.split("/") if p else []
            for i in range(len(parts), 0, -1):  # p itself, then each ancestor (never the root)
                prefix = "/".join(parts[:i])
                rest = parts[i:]
                for link in by_target.get(prefix, ()):
                    alias = "/".join([link, *rest])
                    if alias not in found and len(found) < MAX_ALIASES and self.resolve(alias) == target:
                        found.add(alias)
                        queue.append(alias)
        return sorted(found)

    def _links_by_target(self) -> dict[str, list[str]]:
        if self._symlinks_by_target is None:
            table: dict[str, list[str]] = {}
            for p, record in self._records.items():
                if record.entry.kind == SYMLINK:
                    resolved = self.resolve(p)
                    if resolved is not None and resolved != p:
                        table.setdefault(resolved, []).append(p)
            self._symlinks_by_target = table
        return self._symlinks_by_target


def _demote_non_directories(root: _Node, parts: Sequence[str]) -> None:
    """Drop lower-layer non-directory records on ``parts`` and its ancestors (they are directories now)."""
    node = root
    for part in parts:
        child = node.children.get(part)
        if child is None:
            return
        if child.record is not None and child.record.entry.kind != DIRECTORY:
            child.record = None
        node = child


def _find(root: _Node, parts: list[str]) -> _Node | None:
    node = root
    for part in parts:
        child = node.children.get(part)
        if child is None:
            return None
        node = child
    return node
