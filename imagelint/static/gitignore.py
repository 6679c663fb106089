"""``.gitignore`` for ``imagelint lint DIR``: leave out what git itself would ignore, without git.

A linted tree is untrusted: running git inside it makes git read *that tree's* ``.git/config``
(``core.fsmonitor``, hooks, pagers and external diff commands are programs it names). So the
ignore files are read here as data and matched with git's documented rules (gitignore(5)):
blank lines and ``#`` comments, ``\\`` escapes, trailing spaces, ``!`` negation, a trailing ``/``
for directories only, a ``/`` anywhere else anchoring the pattern to its file's directory,
``*``/``?``/``[...]`` never matching ``/``, ``**/``, ``/**/`` and ``/**``; the deeper file wins
over the shallower, ``.git/info/exclude`` and the global file (``$XDG_CONFIG_HOME/git/ignore``,
the default ``core.excludesFile``; a ``core.excludesFile`` setting is not read) come last; nothing
under an ignored directory comes back. As ``git check-ignore`` does, a file git tracks (it is in
the index) is never left out.

Outside a work tree nothing is filtered. Bounded: every file read is a regular, non-linked file
read to a cap; work is the candidates times the patterns on their path.

Why not ``pathspec``: it compiles each line to a backtracking regular expression, and an ignore
file in a linted tree is written by whoever wrote the tree. The 25-character line
``*a*a*a*a*a*a*a*a*a*a*a*a*b`` against a 28-character name took pathspec 1.1.1 4 s, ten times more
for every four characters more. Here a line with several wildcard runs is matched by simulating
its automaton (``wildmatch``): at most (text length + 1) × (2 × tokens + 2) steps.
"""

from __future__ import annotations

import os
import re
import stat
from collections.abc import Collection, Iterable, Sequence
from dataclasses import dataclass

from imagelint.deadline import check as deadline_check
from imagelint.localfile import read_regular_file

MAX_IGNORE_FILE_BYTES = 4 << 20
MAX_INDEX_BYTES = 512 << 20
_POSIX_CLASSES = {
    "alnum": "a-zA-Z0-9", "alpha": "a-zA-Z", "blank": " \\t", "cntrl": "\\x00-\\x1f\\x7f", "digit": "0-9",
    "graph": "!-~", "lower": "a-z", "print": " -~", "punct": "!-/:-@\\[-`{-~", "space": " \\t\\n\\r\\f\\v",
    "upper": "A-Z", "xdigit": "0-9a-fA-F",
}


@dataclass(frozen=True)
class Pattern:
    """One line of an ignore file, compiled."""

    regex: re.Pattern[str] | None  # None: more than one wildcard run, matched by ``wildmatch`` instead
    negated: bool
    directory_only: bool
    anchored: bool  # matched against the path from its file's directory, not the last name
    tokens: tuple[tuple[str, object], ...] = ()

    def matches(self, relative: str, is_dir: bool) -> bool:
        if self.directory_only and not is_dir:
            return False
        subject = relative if self.anchored else relative.rpartition("/")[2]
        if self.regex is None:
            return wildmatch(self.tokens, subject)[0]
        return self.regex.fullmatch(subject) is not None


def parse_patterns(text: str) -> tuple[Pattern, ...]:
    """The patterns of one ignore file's text, in file order."""
    out = []
    for line in text.removeprefix("\ufeff").split("\n"):
        pattern = _parse_line(line)
        if pattern is not None:
            out.append(pattern)
    return tuple(out)


def _parse_line(line: str) -> Pattern | None:
    if not line or line.startswith("#"):
        return None
    end = len(line)
    while end > 0 and line[end - 1] == " ":  # trailing spaces go unless the last is escaped
        if end >= 2 and line[end - 2] == "\\":
            break
        end -= 1
    line = line[:end]
    negated = line.startswith("!")
    if negated:
        line = line[1:]
    directory_only = line.endswith("/")
    if directory_only:
        line = line[:-1]
    if not line:
        return None
    anchored = "/" in line
    if line.startswith("/"):
        line = line[1:]
    tokens = _wildmatch_tokens(line)
    if sum(kind in _UNBOUNDED for kind, _ in tokens) <= 1:  # one wildcard run cannot backtrack past O(n·m)
        return Pattern(re.compile(_wildmatch_regex(tokens), re.DOTALL), negated, directory_only, anchored)
    return Pattern(None, negated, directory_only, anchored, tokens)


# A regex of several ``[^/]*`` runs backtracks exponentially (``*a*a*a*a*a*a*a*a*a*a*a*b`` against
# 48 letters runs for minutes). Such patterns are matched by simulating their automaton instead:
# every position of the pattern that the text so far can reach, advanced one character at a time,
# so the work is at most (text length + 1) × (2 × tokens + 2) steps, whatever the pattern.
_UNBOUNDED = frozenset({"star", "dirs", "all"})


def _wildmatch_tokens(pattern: str) -> tuple[tuple[str, object], ...]:
    """The pattern as tokens: lit, one, cls (a ``[...]`` class), star, dirs (``**/``), all (a final ``**``)."""
    out: list[tuple[str, object]] = []
    i, n = 0, len(pattern)
    while i < n:
        c = pattern[i]
        if c == "\\" and i + 1 < n:
            out.append(("lit", pattern[i + 1]))
            i += 2
        elif c == "*":
            j = i
            while j < n and pattern[j] == "*":
                j += 1
            at_segment_start = i == 0 or pattern[i - 1] == "/"
            if j - i >= 2 and at_segment_start and (j == n or pattern[j] == "/"):
                if j == n:
                    out.append(("all", None))
                else:
                    out.append(("dirs", None))
                    j += 1
            else:
                out.append(("star", None))
            i = j
        elif c == "?":
            out.append(("one", None))
            i += 1
        elif c == "[":
            cls, i = _bracket(pattern, i)
            out.append(("lit", "[") if cls == "\\[" else ("cls", re.compile(cls, re.DOTALL)))
        else:
            out.append(("lit", c))
            i += 1
    return tuple(out)


def wildmatch(tokens: Sequence[tuple[str, object]], text: str) -> tuple[bool, int]:
    """Whether ``text`` matches the tokens in full, and the steps it took (states advanced).

    States: ``2*i`` is "before token i"; ``2*i+1`` is "inside the ``**/`` of token i, after at
    least one character" (it may leave only right after a ``/``)."""
    n = len(tokens)
    steps = 0

    def closure(states: set[int]) -> set[int]:
        todo, seen = list(states), set(states)
        while todo:
            state = todo.pop()
            if state % 2 or state // 2 >= n:
                continue
            kind = tokens[state // 2][0]
            follow = (state + 2,) if kind in ("star", "all") else (state + 2, state + 1) if kind == "dirs" else ()
            for nxt in follow:
                if nxt not in seen:
                    seen.add(nxt)
                    todo.append(nxt)
        return seen

    current = closure({0})
    for c in text:
        following: set[int] = set()
        for state in current:
            steps += 1
            i = state // 2
            if i >= n:
                continue
            kind, arg = tokens[i]
            if state % 2:  # inside "**/"
                following.add(state)
                if c == "/":
                    following.add(state + 1)
            elif kind == "lit":
                if c == arg:
                    following.add(state + 2)
            elif kind == "one":
                if c != "/":
                    following.add(state + 2)
            elif kind == "cls":
                if arg.fullmatch(c):  # type: ignore[attr-defined]  # a cls token's arg is its compiled class
                    following.add(state + 2)
            elif kind == "star":
                if c != "/":
                    following.add(state)
            elif kind == "all":
                following.add(state)
        if not following:
            return False, steps
        current = closure(following)
    return 2 * n in current, steps


# The regex of each token kind but ``lit`` (escaped) and ``cls`` (its own compiled class).
_TOKEN_REGEX = {"one": "[^/]", "star": "[^/]*", "dirs": "(?:.*/)?", "all": ".*"}


def _wildmatch_regex(tokens: Sequence[tuple[str, object]]) -> str:
    """git's wildmatch with WM_PATHNAME as a Python regex (to be used with ``fullmatch``): "**/" is
    zero or more directories, "/**" at the end (or "**" alone) everything."""
    return "".join(re.escape(str(arg)) if kind == "lit" else arg.pattern if kind == "cls"  # type: ignore[attr-defined]  # a cls token's arg is its compiled class
                   else _TOKEN_REGEX[kind] for kind, arg in tokens)


def _bracket(pattern: str, start: int) -> tuple[str, int]:
    """A ``[...]`` class at ``start`` as a regex and the index after it; a lone ``[`` is literal."""
    i, n = start + 1, len(pattern)
    negated = i < n and pattern[i] in "!^"
    if negated:
        i += 1
    parts: list[str] = []
    first = True
    while i < n:
        c = pattern[i]
        if c == "]" and not first:
            return "(?!/)[" + ("^" if negated else "") + "".join(parts) + "]", i + 1
        first = False
        if c == "\\" and i + 1 < n:
            parts.append(re.escape(pattern[i + 1]))
            i += 2
        elif c == "[" and pattern.startswith("[:", i):
            close = pattern.find(":]", i + 2)
            name = pattern[i + 2:close] if close >= 0 else ""
            if name in _POSIX_CLASSES:
                parts.append(_POSIX_CLASSES[name])
                i = close + 2
            else:
                parts.append("\\[")
                i += 1
        elif c == "-" and parts and i + 1 < n and pattern[i + 1] != "]":
            parts.append("-")
            i += 1
        else:
            parts.append(re.escape(c) if c in "\\]^-[" else c)
            i += 1
    return "\\[", start + 1


def _read_ignore_file(path: str) -> tuple[Pattern, ...]:
    """Patterns of an ignore file; none when it is absent, a link (git does not follow those in
    a work tree either), not a regular file, too large or unreadable."""
    try:
        if stat.S_ISLNK(os.lstat(path).st_mode):
            return ()
        data = read_regular_file(path, MAX_IGNORE_FILE_BYTES)
    except OSError:
        return ()
    return parse_patterns(data.decode("utf-8", errors="surrogateescape"))


@dataclass(frozen=True)
class Repository:
    """A work tree's top directory and where its git directory keeps ``info/`` and ``index``."""

    top: str
    git_dir: str | None
    common_dir: str | None


def find_repository(start: str) -> Repository | None:
    """The work tree holding ``start`` (an absolute directory), found by its ``.git`` entry as git
    finds it: a directory with a ``HEAD``, or a ``gitdir: PATH`` file (worktrees, submodules)."""
    here = start
    while True:
        dot_git = os.path.join(here, ".git")
        if os.path.isdir(dot_git) and os.path.lexists(os.path.join(dot_git, "HEAD")):
            return Repository(here, dot_git, dot_git)
        if os.path.isfile(dot_git):
            git_dir = _gitfile_target(dot_git)
            if git_dir is None:
                return None  # git itself refuses a malformed .git file
            common = git_dir
            try:
                pointer = read_regular_file(os.path.join(git_dir, "commondir"), 4096).decode().strip()
                common = os.path.normpath(os.path.join(git_dir, pointer))
            except (OSError, UnicodeDecodeError):
                pass
            return Repository(here, git_dir, common)
        parent = os.path.dirname(here)
        if parent == here:
            return None
        here = parent


def _gitfile_target(path: str) -> str | None:
    try:
        text = read_regular_file(path, 4096).decode()
    except (OSError, UnicodeDecodeError):
        return None
    if not text.startswith("gitdir: "):
        return None
    target = text[len("gitdir: "):].strip()
    return os.path.normpath(os.path.join(os.path.dirname(path), target)) if target else None


class IgnoreRules:
    """The ignore files of one work tree, read lazily, one directory at a time."""

    def __init__(self, repo: Repository, global_excludes: str | None) -> None:
        self.repo = repo
        self._per_dir: dict[str, tuple[Pattern, ...]] = {}
        self._dir_ignored: dict[str, bool] = {}
        exclude = _read_ignore_file(os.path.join(repo.common_dir, "info", "exclude")) if repo.common_dir else ()
        self._outer = (exclude, _read_ignore_file(global_excludes) if global_excludes else ())

    def ignored(self, relative: str) -> bool:
        """Whether the file at ``relative`` (``/``-separated, from the top) is ignored."""
        parent = relative.rpartition("/")[0]
        return (parent != "" and self._directory_ignored(parent)) or self._match(relative, is_dir=False)

    def _directory_ignored(self, relative: str) -> bool:
        known = self._dir_ignored.get(relative)
        if known is None:
            parent = relative.rpartition("/")[0]
            known = (parent != "" and self._directory_ignored(parent)) or self._match(relative, is_dir=True)
            self._dir_ignored[relative] = known
        return known

    def _patterns_of(self, directory: str) -> tuple[Pattern, ...]:
        patterns = self._per_dir.get(directory)
        if patterns is None:
            path = os.path.join(self.repo.top, *directory.split("/"), ".gitignore") if directory else \
                os.path.join(self.repo.top, ".gitignore")
            patterns = self._per_dir[directory] = _read_ignore_file(path)
        return patterns

    def _match(self, relative: str, is_dir: bool) -> bool:
        directory = relative.rpartition("/")[0]
        while True:  # the deepest .gitignore first; within a file, the last matching line wins
            below = relative[len(directory) + 1:] if directory else relative
            for pattern in reversed(self._patterns_of(directory)):
                if pattern.matches(below, is_dir):
                    return not pattern.negated
            if not directory:
                break
            directory = directory.rpartition("/")[0]
        for patterns in self._outer:
            for pattern in reversed(patterns):
                if pattern.matches(relative, is_dir):
                    return not pattern.negated
        return False


def global_excludes_file() -> str | None:
    """git's default ``core.excludesFile``."""
    base = os.environ.get("XDG_CONFIG_HOME") or (os.path.join(os.path.expanduser("~"), ".config"))
    return os.path.join(base, "git", "ignore") if os.path.isabs(base) else None


def not_ignored(root: str, paths: Sequence[str]) -> tuple[str, ...]:
    """``paths`` (as given) without those git would ignore in the work tree holding ``root``."""
    if not paths:
        return ()
    start = os.path.abspath(root if os.path.isdir(root) else os.path.dirname(root) or ".")
    repo = find_repository(start)
    if repo is None:
        return tuple(paths)
    rules = IgnoreRules(repo, global_excludes_file())
    kept: list[str] = []
    ignored: list[tuple[int, str]] = []  # (index in kept, path from the top)
    for index, path in enumerate(paths):
        deadline_check("matching the linted tree against its ignore files")
        relative = os.path.relpath(os.path.abspath(path), repo.top)
        if relative.startswith(".." + os.sep) or relative == "..":
            kept.append(path)
            continue
        relative = relative.replace(os.sep, "/")
        if rules.ignored(relative):
            ignored.append((index, relative))
        kept.append(path)
    if ignored:  # only these are looked up in the index, so it is never held whole (it may be 512 MiB)
        tracked = tracked_paths(repo.git_dir, {relative for _, relative in ignored}) if repo.git_dir else frozenset()
        dropped = {index for index, relative in ignored if relative not in tracked}
        kept = [path for index, path in enumerate(kept) if index not in dropped]
    return tuple(kept)


def tracked_paths(git_dir: str, among: Collection[str] | None = None) -> frozenset[str]:
    """The paths in the index (``git_dir/index``, format versions 2–4, SHA-1 or SHA-256 object
    names), only those in ``among`` when given; empty when there is none or it cannot be read."""
    try:
        data = read_regular_file(os.path.join(git_dir, "index"), MAX_INDEX_BYTES)
    except OSError:
        return frozenset()
    for hash_size in _hash_sizes(data):
        try:
            return frozenset(_index_entries(data, hash_size, among))
        except (ValueError, IndexError, UnicodeDecodeError):
            continue
    return frozenset()


def _hash_sizes(data: bytes) -> tuple[int, ...]:
    """Object-name sizes to try, the one the trailing checksum proves first."""
    import hashlib  # only when an index is read: a lint that ignores nothing never needs it

    if len(data) > 32 and hashlib.sha256(data[:-32]).digest() == data[-32:]:
        return (32,)
    if len(data) > 20 and hashlib.sha1(data[:-20]).digest() == data[-20:]:
        return (20,)
    return (20, 32)


def _index_entries(data: bytes, hash_size: int, among: Collection[str] | None = None) -> Iterable[str]:
    """The index's path names (those in ``among`` when given). Version 4 names each path by the
    previous one less a suffix plus new bytes: the name is edited in place (a bytearray), so the
    work is linear in the file, and only kept names are copied: memory is the file plus the
    names kept, even when every name is thousands of bytes (a 2.5 MiB index of names growing a
    byte at a time held 846 MB as a list of names)."""
    if data[:4] != b"DIRC":
        raise ValueError("not an index")
    version = int.from_bytes(data[4:8], "big")
    count = int.from_bytes(data[8:12], "big")
    if version not in (2, 3, 4):
        raise ValueError("unknown index version")
    end = len(data) - hash_size
    pos, previous, names = 12, bytearray(), []
    wanted = {path.encode("utf-8", errors="surrogateescape") for path in among or ()}
    wanted_lengths = {len(path) for path in wanted}
    for _ in range(count):
        start = pos
        pos += 40 + hash_size
        flags = int.from_bytes(data[pos:pos + 2], "big")
        pos += 2
        if flags & 0x4000 and version >= 3:
            pos += 2
        if version == 4:
            strip, pos = _offset_varint(data, pos)
            if strip > len(previous):
                raise ValueError("bad prefix")
            nul = data.index(b"\0", pos, end)
            del previous[len(previous) - strip:]
            previous += data[pos:nul]
            name: bytes | bytearray = previous
            pos = nul + 1
        else:
            nul = data.index(b"\0", pos, end)
            name = data[pos:nul]
            pos = start + ((nul - start) // 8 + 1) * 8
        if pos > end:
            raise ValueError("truncated")
        if version != 4:
            previous = bytearray(name)
        if among is None:
            names.append(name.decode("utf-8", errors="surrogateescape"))
        elif len(name) in wanted_lengths and bytes(name) in wanted:  # a copy only as long as a wanted path
            names.append(bytes(name).decode("utf-8", errors="surrogateescape"))
    return names


def _offset_varint(data: bytes, pos: int) -> tuple[int, int]:
    byte = data[pos]
    pos += 1
    value = byte & 0x7F
    while byte & 0x80:
        byte = data[pos]
        pos += 1
        value = ((value + 1) << 7) | (byte & 0x7F)
    return value, pos
