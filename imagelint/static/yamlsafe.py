"""YAML loading for manifests: safe types only, bounded, and with line numbers kept.

``yaml.safe_load_all`` alone is not enough for files from a repository: a few
lines of anchors and aliases ("billion laughs") expand into gigabytes once a
consumer walks them. The composer here counts aliases and nodes per document and
refuses past fixed limits, and a document larger than ``MAX_DOCUMENT_BYTES`` is
refused before parsing. Mappings and sequences come back as ``LineDict`` /
``LineList`` that remember the 1-based line of each key or item.

libyaml (PyYAML's C loader) parses and composes when PyYAML has it (``yaml.__with_libyaml__``)
and the bounds can be known to hold without the counting composer: every document nests less
than ``_C_SAFE_DEPTH`` deep and is short enough that it cannot hold ``MAX_NODES`` nodes, and the
text holds no anchor (else libyaml's event stream is counted first). Both loaders build the same
``LineDict``/``LineList`` with the same lines and raise the same errors; documents are yielded one
at a time (``iter_documents``), so memory is one document's, not the file's.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import yaml

from imagelint.errors import ConfigError
from imagelint.lazyre import lazy_pattern

MAX_DOCUMENT_BYTES = 8 * 1024 * 1024
MAX_ALIASES = 100
MAX_NODES = 200_000


class LineDict(dict):
    """A mapping with ``line`` (where it starts) and ``key_lines`` (key → line)."""

    line: int = 0

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.key_lines: dict[Any, int] = {}

    def line_of(self, key: Any) -> int:
        return self.key_lines.get(key, self.line)


class LineList(list):
    """A sequence with ``line`` and ``item_lines`` (index → line)."""

    line: int = 0

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.item_lines: list[int] = []

    def line_of(self, index: int) -> int:
        return self.item_lines[index] if 0 <= index < len(self.item_lines) else self.line


class _BoundedLoader(yaml.SafeLoader):
    """SafeLoader whose composer enforces alias and node limits per document."""

    compose_tags = False  # Compose's merge tags are read (``_ComposeBoundedLoader``)
    # No mapping of the text holds a merge ("<<") or value ("=") key, which ``flatten_mapping``
    # rewrites: then it is work for nothing (libyaml's loader knows; this one always flattens).
    flat = False

    def __init__(self, stream: str, path: str) -> None:
        super().__init__(stream)
        self._path = path
        self._aliases = 0
        self._nodes = 0

    def compose_document(self) -> Any:
        self._aliases = 0
        self._nodes = 0
        return super().compose_document()

    def compose_node(self, parent: Any, index: Any) -> Any:
        if self.check_event(yaml.AliasEvent):
            self._aliases += 1
            if self._aliases > MAX_ALIASES:
                mark = self.peek_event().start_mark
                raise ConfigError(f"more than {MAX_ALIASES} YAML aliases in one document; refusing to expand",
                                  self._path, mark.line + 1)
        self._nodes += 1
        if self._nodes > MAX_NODES:
            raise ConfigError(f"more than {MAX_NODES} YAML nodes in one document", self._path)
        return super().compose_node(parent, index)


_STR_TAG = "tag:yaml.org,2002:str"
_MAP_TAG = "tag:yaml.org,2002:map"
_SEQ_TAG = "tag:yaml.org,2002:seq"
_FLATTENED_TAGS = ("tag:yaml.org,2002:merge", "tag:yaml.org,2002:value")  # the keys flatten_mapping rewrites


def _construct(loader: Any, node: yaml.Node) -> Any:
    """``construct_object(node, deep=True)``; a string scalar (most of a manifest) is its value
    as that would make it, without the per-node bookkeeping only collections need."""
    if node.__class__ is yaml.ScalarNode and node.tag == _STR_TAG:
        return node.value
    return loader.construct_object(node, deep=True)


def _tree(loader: Any, node: Any) -> Any:  # a yaml.Node: its class is compared with ``is`` (no subclass is built)
    """What ``_construct`` makes of ``node``, built directly: for a document that holds no alias
    (no node is shared, none recursive), PyYAML's bookkeeping of constructed nodes (a dict entry
    and a generator a collection) is work for nothing. Other tags go through the constructors."""
    cls = node.__class__
    if cls is yaml.ScalarNode and node.tag == _STR_TAG:
        return node.value
    if cls is yaml.MappingNode and node.tag == _MAP_TAG:
        mapping = _new_mapping(node)
        _fill_mapping(loader, node, mapping, _tree)
        return mapping
    if cls is yaml.SequenceNode and node.tag == _SEQ_TAG:
        sequence = _new_sequence(node)
        _fill_sequence(loader, node, sequence, _tree)
        return sequence
    return loader.construct_object(node, deep=True)


def _new_mapping(node: yaml.MappingNode) -> LineDict:
    data = LineDict()
    data.line = node.start_mark.line + 1
    return data


def _fill_mapping(loader: Any, node: yaml.MappingNode, data: LineDict, construct: Any) -> None:
    if not loader.flat:
        loader.flatten_mapping(node)
    compose_tags = loader.compose_tags
    key_lines = data.key_lines
    for key_node, value_node in node.value:
        if compose_tags and value_node.tag == RESET_TAG:
            continue  # Compose's ``!reset``: the attribute is removed, as if never written
        # A string scalar (most keys and values) is its value, as ``construct`` makes it.
        if key_node.__class__ is yaml.ScalarNode and key_node.tag == _STR_TAG:
            key = key_node.value
        else:
            key = construct(loader, key_node)
            try:
                hash(key)
            except TypeError:
                raise ConfigError("a mapping key that is not a scalar", loader._path,
                                  key_node.start_mark.line + 1) from None
        if value_node.__class__ is yaml.ScalarNode and value_node.tag == _STR_TAG:
            data[key] = value_node.value
        else:
            data[key] = construct(loader, value_node)
        key_lines[key] = key_node.start_mark.line + 1


def _new_sequence(node: yaml.SequenceNode) -> LineList:
    data = LineList()
    data.line = node.start_mark.line + 1
    return data


def _fill_sequence(loader: Any, node: yaml.SequenceNode, data: LineList, construct: Any) -> None:
    for item in node.value:
        data.append(construct(loader, item))
        data.item_lines.append(item.start_mark.line + 1)


def _construct_mapping(loader: _BoundedLoader, node: yaml.MappingNode) -> Iterator[LineDict]:
    data = _new_mapping(node)
    yield data
    _fill_mapping(loader, node, data, _construct)


def _construct_sequence(loader: _BoundedLoader, node: yaml.SequenceNode) -> Iterator[LineList]:
    data = _new_sequence(node)
    yield data
    _fill_sequence(loader, node, data, _construct)


_BoundedLoader.add_constructor("tag:yaml.org,2002:map", _construct_mapping)
_BoundedLoader.add_constructor("tag:yaml.org,2002:seq", _construct_sequence)

# The Compose specification's merge tags (compose-spec "merge.md": "Reset value", "Replace value").
# In one file nothing is merged: ``!override X`` is X, and ``!reset X`` removes the attribute.
# Only a Compose file's loader knows them; any other tag is refused as before.
OVERRIDE_TAG = "!override"
RESET_TAG = "!reset"


def _construct_untagged(loader: Any, node: yaml.Node) -> Any:
    """The node as it would be constructed without its (merge) tag."""
    if isinstance(node, yaml.MappingNode):
        return _construct_mapping(loader, node)
    if isinstance(node, yaml.SequenceNode):
        return _construct_sequence(loader, node)
    assert isinstance(node, yaml.ScalarNode)  # the third kind of node
    tag = loader.resolve(yaml.ScalarNode, node.value, (not node.style, False))  # plain: resolved as untagged
    return loader.construct_object(yaml.ScalarNode(tag, node.value, node.start_mark, node.end_mark, node.style))


def _construct_reset(loader: Any, node: yaml.Node) -> Any:
    return None  # only reached where no mapping holds it (a sequence item, a whole document)


class _ComposeBoundedLoader(_BoundedLoader):
    compose_tags = True


_ComposeBoundedLoader.add_constructor(OVERRIDE_TAG, _construct_untagged)
_ComposeBoundedLoader.add_constructor(RESET_TAG, _construct_reset)

# libyaml's loaders, None when PyYAML was built without it.
_REMEMBERED_TAGS, _REMEMBERED_TEXT = 4096, 64  # plain scalars whose tag a stream's loader keeps
_FastLoader: type[_LibyamlLoader] | None = None
_ComposeFastLoader: type[_LibyamlLoader] | None = None
if hasattr(yaml, "CSafeLoader"):
    class _LibyamlLoader(yaml.CSafeLoader):
        """libyaml's parser with the same constructors: only for text that cannot hold an alias
        (no anchor) and is too short to hold more than MAX_NODES nodes, so the bounds still hold."""

        no_alias = False  # the text holds no anchor: documents are built straight from the nodes (_tree)

        compose_tags = False

        def __init__(self, stream: str, path: str) -> None:
            super().__init__(stream)
            self._path = path
            self._plain_tags: dict[str, str] = {}
            # Without "!" the text has no explicit tag, so a merge or value key can only be a plain
            # scalar, whose tag ``resolve`` sees: until it sees one, nothing is to flatten.
            self.flat = "!" not in stream

        # No path resolver is registered (yaml.add_path_resolver): libyaml's composer still calls
        # these two for every node, and the tag of a plain scalar depends on its text alone.
        def descend_resolver(self, current_node: Any, current_index: Any) -> None:
            pass

        def ascend_resolver(self) -> None:
            pass

        def resolve(self, kind: Any, value: Any, implicit: Any) -> Any:
            """As SafeLoader resolves (no path resolver: a collection's tag is its kind's, a quoted
            scalar's str); a plain scalar's tag once per text: a manifest stream repeats the same
            keys and values (a text starting with n, y, o, t or f is two regexes)."""
            if kind is yaml.ScalarNode:
                if not implicit[0]:
                    return _STR_TAG
                tag = self._plain_tags.get(value) if len(value) <= _REMEMBERED_TEXT else None
                if tag is None:
                    tag = super().resolve(kind, value, implicit)
                    if tag in _FLATTENED_TAGS:
                        self.flat = False
                    if len(value) <= _REMEMBERED_TEXT and len(self._plain_tags) < _REMEMBERED_TAGS:
                        self._plain_tags[value] = tag
                return tag
            if kind is yaml.MappingNode:
                return _MAP_TAG
            if kind is yaml.SequenceNode:
                return _SEQ_TAG
            return super().resolve(kind, value, implicit)

    _LibyamlLoader.add_constructor("tag:yaml.org,2002:map", _construct_mapping)
    _LibyamlLoader.add_constructor("tag:yaml.org,2002:seq", _construct_sequence)

    class _ComposeLibyamlLoader(_LibyamlLoader):
        compose_tags = True

    _ComposeLibyamlLoader.add_constructor(OVERRIDE_TAG, _construct_untagged)
    _ComposeLibyamlLoader.add_constructor(RESET_TAG, _construct_reset)
    _FastLoader, _ComposeFastLoader = _LibyamlLoader, _ComposeLibyamlLoader

# An anchor can only start after a space, a flow indicator or a line start: "&" elsewhere
# (URLs, shell "&&" inside a plain scalar...) makes this test only more cautious.
_MAYBE_ANCHOR = lazy_pattern(r"(?:^|[\s\[\]{},:-])&")


def may_hold_anchors(text: str) -> bool:
    """Whether a YAML text may hold an anchor; without one, no alias can share a node between two
    places of a document."""
    return "&" in text and bool(_MAYBE_ANCHOR.search(text))  # "&" first: the regex takes ~50 ns a character


def _within_bounds(text: str, path: str) -> bool:
    """libyaml's event stream, counted per document: the alias and node bounds checked at C speed
    (raising the same errors as the bounded loader), so text with anchors may use libyaml too."""
    aliases = nodes = 0
    try:
        for event in yaml.parse(text, Loader=yaml.CSafeLoader):
            if isinstance(event, yaml.DocumentStartEvent):
                aliases = nodes = 0
            elif isinstance(event, yaml.AliasEvent):
                aliases += 1
                if aliases > MAX_ALIASES:
                    raise ConfigError(f"more than {MAX_ALIASES} YAML aliases in one document; refusing to expand",
                                      path, event.start_mark.line + 1 if event.start_mark else None)
            elif isinstance(event, (yaml.ScalarEvent, yaml.MappingStartEvent, yaml.SequenceStartEvent)):
                nodes += 1
                if nodes > MAX_NODES:
                    raise ConfigError(f"more than {MAX_NODES} YAML nodes in one document", path)
    except yaml.YAMLError:
        return False  # malformed: the bounded loader reports it with its line
    return True


# libyaml's composer recurses in C: nesting deep enough to exhaust the C stack kills the process
# (the pure-Python loader raises RecursionError instead). Text whose nesting cannot exceed this
# many levels (fewer flow brackets, shallower indentation) is safe for it.
_C_SAFE_DEPTH = 1000
_DEEP_INDENT = lazy_pattern(rf"(?m)^[ \t-]{{{_C_SAFE_DEPTH}}}")  # a line indented that far


# A document marker at the start of a line ends any document (a block scalar too; inside a
# quoted scalar it is an error), so the text between two is at most one document.
_DOCUMENT_MARKER = lazy_pattern(r"(?m)^(?:---|\.\.\.)(?=[ \t\r\n]|$)")
# A node takes at least half a character of text (``{a,b}``: five nodes in five characters;
# ``[?,?]``: seven in five), so a document this short cannot hold more than MAX_NODES.
_SHORT_DOCUMENT = MAX_NODES // 2


def _document_spans(text: str) -> list[tuple[int, int]]:
    starts = [0, *(m.start() for m in _DOCUMENT_MARKER.finditer(text)), len(text)]
    return list(zip(starts, starts[1:]))


def _shallow(text: str, spans: list[tuple[int, int]]) -> bool:
    """No document can nest _C_SAFE_DEPTH deep: fewer flow brackets than that in each (a bound,
    whatever is quoted), and no line indented that far."""
    for start, end in spans:
        if text.count("[", start, end) + text.count("{", start, end) >= _C_SAFE_DEPTH:
            return False
    return _DEEP_INDENT.search(text) is None


def _loader_for(text: str, path: str, use_libyaml: bool = True, compose_tags: bool = False) -> Any:
    spans = _document_spans(text)
    if use_libyaml and _FastLoader is not None and _ComposeFastLoader is not None and _shallow(text, spans):
        yaml.reader.Reader(text)  # the pure reader's printable check: the same error either way
        short = all(end - start <= _SHORT_DOCUMENT for start, end in spans)
        no_alias = not may_hold_anchors(text)
        if (short and no_alias) or _within_bounds(text, path):
            loader = (_ComposeFastLoader if compose_tags else _FastLoader)(text, path)
            loader.no_alias = no_alias
            return loader
    return (_ComposeBoundedLoader if compose_tags else _BoundedLoader)(text, path)


def load_documents(text: str, path: str, use_libyaml: bool = True, compose_tags: bool = False) -> list[Any]:
    """Every document of a YAML stream (``None`` for empty ones). Bad YAML → ConfigError with the line.
    ``compose_tags``: Compose's ``!override``/``!reset`` merge tags are read (other tags still refused)."""
    return list(iter_documents(text, path, use_libyaml, compose_tags))


def iter_documents(text: str, path: str, use_libyaml: bool = True, compose_tags: bool = False) -> Iterator[Any]:
    """The documents of a YAML stream one at a time, as ``load_documents`` (``use_libyaml=False``:
    the pure-Python loader whatever PyYAML was built with)."""
    if len(text) > MAX_DOCUMENT_BYTES:
        raise ConfigError(f"file is larger than {MAX_DOCUMENT_BYTES} bytes; not read as YAML", path)
    try:
        loader = _loader_for(text, path, use_libyaml, compose_tags)  # the reader refuses control characters up front
    except yaml.reader.ReaderError as exc:
        line = text.count("\n", 0, exc.position) + 1 if isinstance(exc.position, int) else None
        char = f"U+{exc.character:04X}" if isinstance(exc.character, int) else repr(exc.character)
        raise ConfigError(f"invalid YAML: control character {char} is not allowed", path, line) from None
    no_alias = getattr(loader, "no_alias", False)
    try:
        while loader.check_data():
            if no_alias:  # built directly (``_tree``), as construct_document would, but for its bookkeeping
                yield _tree(loader, loader.get_node())
                loader.constructed_objects.clear()  # what construct_document forgets after each document
            else:
                yield loader.get_data()
    except yaml.MarkedYAMLError as exc:
        mark = exc.problem_mark or exc.context_mark
        line = mark.line + 1 if mark else None
        raise ConfigError(f"invalid YAML: {exc.problem or exc.context}", path, line) from None
    except yaml.YAMLError as exc:
        raise ConfigError(f"invalid YAML: {str(exc).splitlines()[0][:200]}", path) from None
    except RecursionError:
        raise ConfigError("YAML nested too deeply", path) from None
    finally:
        loader.dispose()
