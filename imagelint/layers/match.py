"""Compile CaptureRule globs into one regular expression, so matching 60k paths stays cheap.

Glob syntax (over normalised paths: no leading '/'):
  ``*``      any run of characters except '/'
  ``?``      one character except '/'
  ``[abc]``  ``[a-z]`` ``[!abc]``  a character class (never matches '/')
  ``**/``    zero or more whole directories (``usr/**/lib*.so`` matches ``usr/libx.so``)
  ``**``     elsewhere (e.g. a trailing ``usr/**``): anything, '/' included
A leading '/' in a pattern is ignored. Everything else is literal.

**First matching rule wins**: rules are tried in the spec's order and the
first whose glob matches the whole path decides the action. A spec that wants
a narrow rule to beat a broad one lists the narrow rule first. ``RuleMatcher``
indexes rules by the literal part of their last component so that a path only
runs the few regexes that can match it.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from functools import cached_property

from imagelint.layers.model import CaptureRule


def glob_to_regex(pattern: str) -> str:
    """The regex source (unanchored) for one glob."""
    p = pattern.lstrip("/")
    out: list[str] = []
    i = 0
    n = len(p)
    while i < n:
        c = p[i]
        if c == "*":
            if p.startswith("**", i):
                j = i + 2
                while j < n and p[j] == "*":  # '***' is '**'
                    j += 1
                at_component_start = i == 0 or p[i - 1] == "/"
                if at_component_start and j < n and p[j] == "/":
                    out.append("(?:[^/]*/)*")
                    i = j + 1
                else:
                    out.append(".*")
                    i = j
                continue
            out.append("[^/]*")
        elif c == "?":
            out.append("[^/]")
        elif c == "[":
            j = i + 1
            if j < n and p[j] in "!^":
                j += 1
            if j < n and p[j] == "]":
                j += 1
            while j < n and p[j] not in "]/":
                j += 1
            if j >= n or p[j] == "/":  # no closing bracket in this component: a literal '['
                out.append(re.escape(c))
            else:
                body = p[i + 1 : j]
                negate = body[:1] in ("!", "^")
                if negate:
                    body = body[1:]
                body = body.replace("\\", "\\\\").replace("]", "\\]").replace("[", "\\[")
                out.append(f"[^/{body}]" if negate else f"(?!/)[{body}]")
                i = j + 1
                continue
        else:
            out.append(re.escape(c))
        i += 1
    return "".join(out)


def compile_glob(pattern: str) -> re.Pattern[str]:
    return re.compile(glob_to_regex(pattern), re.DOTALL)


class RuleMatcher:
    """Which CaptureRule (first in rule order) matches a normalised path.

    Trying every rule's regex on every path would cost paths x rules regex runs
    (an image holds tens of thousands of paths, the spec ~150 rules), so rules are indexed: by the literal start
    (or, failing that, the literal end) of their last path component, and rules
    without one (``usr/bin/*``, ``app/**/*``) by their first directory. A path
    runs only the regexes of rules whose literals fit it, in rule order, so the
    first matching rule still wins.

    Most paths of an application layer (``app/**/*.py``, ``app/**/*``, ``**/*.so``) are then
    decided by their top directory and extension alone: when every rule their index could
    name is a ``LEAD/**/*SUFFIX`` (``deep_suffix``) with LEAD that top or nothing and SUFFIX
    that extension, and their base name meets no other literal, the answer is the same for
    every such path, worked out once per (top, extension) and kept (``_by_shape``).
    """

    def __init__(self, rules: Sequence[CaptureRule]) -> None:
        self.rules = tuple(rules)
        # Compiled on first use: with the native scanner most rules never see a path.
        self._regexes: list[re.Pattern[str] | None] = [None] * len(self.rules)
        # Every match starts with the pattern's literal lead ("app/" for "app/**/*.py").
        self._leads = [literal_prefix(r.pattern.lstrip("/")) for r in self.rules]
        # The first ``_prefix_key`` characters of a literal basename prefix -> [(prefix, rule index)]:
        # one dict lookup and a few startswith() per path (a key of one character would put the
        # many "lib…" rules behind one key, each tried on every "lib*" name). Suffixes (".txt", ".py") go by their
        # extension (the suffix from its last '.') -> [(suffix, rule index)]: one lookup per path.
        self._by_prefix: dict[str, list[tuple[str, int]]] = {}
        # Keyed by (extension, first directory of the rule's lead, "" for none): a ".py" path
        # under usr/ never tries the dozen "ROOT/**/*.py" rules of other roots.
        self._by_ext: dict[tuple[str, str], list[tuple[str, int]]] = {}
        self._by_suffix: list[tuple[str, int]] = []  # suffixes without a '.'
        # A literal inside the basename ("*.so.[0-9]*" holds ".so."): tried with ``in``.
        self._by_infix: list[tuple[str, int]] = []
        # Rules with no usable basename literal: by the first directory of their lead; rules
        # of one component ("*") only for top-level names; the rest tried for every path.
        self._by_top: dict[str, list[int]] = {}
        self._top_level: list[int] = []
        self._anywhere: list[int] = []
        prefixed: list[tuple[str, int]] = []
        for i, rule in enumerate(self.rules):
            pattern = rule.pattern.lstrip("/")
            last = _last_component(rule.pattern)
            prefix = suffix = infix = ""
            if last is not None and "**" not in last:
                prefix = literal_prefix(last)
                suffix = literal_suffix(last)
                infix = max(literal_runs(last), key=len, default="")
            if prefix and len(prefix) >= len(suffix):
                prefixed.append((prefix, i))
            elif suffix and "." in suffix:
                top = self._leads[i].split("/", 1)[0] if "/" in self._leads[i] else ""
                self._by_ext.setdefault((suffix[suffix.rfind("."):], top), []).append((suffix, i))
            elif suffix:
                self._by_suffix.append((suffix, i))
            elif "/" in self._leads[i]:
                self._by_top.setdefault(self._leads[i].split("/", 1)[0], []).append(i)
            elif last is not None and last == pattern and "**" not in last:  # one component: top-level names only
                self._top_level.append(i)
            elif infix:
                self._by_infix.append((infix, i))
            else:
                self._anywhere.append(i)
        # Every prefix is at least this long, so a name's first characters pick its bucket (a
        # shorter name cannot start with any of them).
        self._prefix_key = min((len(prefix) for prefix, _ in prefixed), default=1)
        for prefix, i in prefixed:
            self._by_prefix.setdefault(prefix[: self._prefix_key], []).append((prefix, i))
        # ``_by_ext`` as ``candidates`` reads it, one lookup per path: extension -> (its rules for any
        # top directory, {top directory: those and the top's own}).
        self._ext_index: dict[str, tuple[list[tuple[str, int]], dict[str, list[tuple[str, int]]]]] = {}
        for (ext, top), own in self._by_ext.items():
            anywhere, by_top = self._ext_index.setdefault(ext, (self._by_ext.get((ext, ""), []), {}))
            if top:
                by_top[top] = anywhere + own
        # (top directory, extension or None) -> the rule (or None) every path of that shape matches,
        # or _UNDECIDED when its rules need the whole path; bounded (hostile layers may hold a
        # million extensions): past the bound, new shapes take the general way.
        self._by_shape: dict[tuple[str, str | None], CaptureRule | None | object] = {}
        self._deep = [deep_suffix(r.pattern) for r in self.rules]

    @cached_property
    def prefilter(self) -> tuple:
        """The index's buckets for the native tar scanner (``_tarscan.c``): it hands back a member
        only when some bucket may hold a rule for its path, so every member it drops is one
        ``candidates`` returns nothing for. (return_all, {top directory: one regex of the rules
        indexed by it}, prefix length, prefixes, extensions, {"top\\0extension": the leads of its rules},
        suffixes, infixes.)"""
        exts = frozenset(ext for ext, top in self._by_ext if not top)
        ext_tops: dict[str, tuple[str, ...]] = {}  # "top\0.ext" -> the leads of its rules
        for (ext, top), rules in self._by_ext.items():
            if top:
                ext_tops[f"{top}\0{ext}"] = tuple(sorted({self._leads[i] for _, i in rules}))
        tops = {
            top: re.compile("|".join(f"(?:{glob_to_regex(self.rules[i].pattern)})" for i in rules), re.DOTALL)
            for top, rules in self._by_top.items()
        }
        return (
            bool(self._anywhere),
            tops,
            self._prefix_key,
            frozenset(self._by_prefix),
            exts,
            ext_tops,
            tuple(suffix for suffix, _ in self._by_suffix),
            tuple(infix for infix, _ in self._by_infix),
        )

    @cached_property
    def shapes(self) -> tuple[int, tuple[str, ...], tuple[str, ...], tuple[str, ...], dict, object] | None:
        """What ``match`` decides by a path's shape alone, as it decides it, for the reader's native
        loop (``_tarscan.take``): (prefix length, the basename prefixes, suffixes and infixes that
        single a path out, the shape cache ``match`` fills, the marker of a shape it does not
        decide). A path with a slash past its first character, whose base name starts with none of
        the prefixes and holds none of the suffixes and infixes, has the rule its (top directory,
        extension) shape has in the cache; a shape not there yet is ``match``'s to work out. None
        when a rule may match anywhere (no path is decided by its shape)."""
        if self._anywhere:
            return None
        return (self._prefix_key, tuple(self._by_prefix), tuple(s for s, _ in self._by_suffix),
                tuple(i for i, _ in self._by_infix), self._by_shape, _UNDECIDED)

    def candidates(self, path: str) -> list[int]:
        """Indices of the rules that may match ``path``, in rule order."""
        slash = path.rfind("/")
        if slash < 0:
            base = top = path
            found = self._anywhere + self._top_level
        else:
            base = path[slash + 1 :]
            top = path[: path.find("/")]
            found = list(self._anywhere) if self._anywhere else []
        by_top = self._by_top.get(top)
        if by_top:
            found += by_top
        if base:
            by_prefix = self._by_prefix.get(base[: self._prefix_key])
            if by_prefix:
                for prefix, i in by_prefix:
                    if base.startswith(prefix):
                        found.append(i)
            dot = base.rfind(".")
            if dot >= 0:
                by_ext = self._ext_index.get(base[dot:])
                if by_ext is not None:
                    for suffix, i in by_ext[1].get(top, by_ext[0]) if slash >= 0 else by_ext[0]:
                        if base.endswith(suffix):
                            found.append(i)
            for suffix, i in self._by_suffix:
                if base.endswith(suffix):
                    found.append(i)
            for infix, i in self._by_infix:
                if infix in base:
                    found.append(i)
        if not found:
            return found
        if len(found) > 1:
            found.sort()
        leads = self._leads
        return [i for i in found if path.startswith(leads[i])]

    def match(self, path: str) -> CaptureRule | None:
        slash = path.rfind("/")
        if slash > 0 and not self._anywhere:
            # The usual path: decided by its shape when no basename literal singles it out.
            base = path[slash + 1 :]
            if base and base[: self._prefix_key] not in self._by_prefix:
                for suffix, _ in self._by_suffix:
                    if base.endswith(suffix):
                        break
                else:
                    for infix, _ in self._by_infix:
                        if infix in base:
                            break
                    else:
                        dot = base.rfind(".")
                        shape = (path[: path.find("/")], base[dot:] if dot >= 0 else None)
                        found = self._by_shape.get(shape, _UNSEEN)
                        if found is _UNSEEN:
                            found = self._shape_rule(*shape)
                            if len(self._by_shape) < MAX_SHAPES:
                                self._by_shape[shape] = found
                        if found is not _UNDECIDED:
                            return found  # type: ignore[return-value]  # a rule or None
        regexes = self._regexes
        for i in self.candidates(path):
            regex = regexes[i]
            if regex is None:
                regex = regexes[i] = compile_glob(self.rules[i].pattern)
            if regex.fullmatch(path):
                return self.rules[i]
        return None


    def _shape_rule(self, top: str, ext: str | None) -> CaptureRule | None | object:
        """What every path under ``top`` whose base name has extension ``ext`` (and meets no prefix,
        suffix or infix literal) matches, or _UNDECIDED when a rule its index names needs more of
        the path than that. Such a path's candidates are ``top``'s rules and its extension's; each
        must be a ``LEAD/**/*SUFFIX`` that every such path matches (LEAD ``top`` or nothing, SUFFIX
        the whole extension or nothing): then the first of them is the match."""
        indices = list(self._by_top.get(top, ()))
        if ext is not None:
            by_ext = self._ext_index.get(ext)
            if by_ext is not None:
                indices += [i for _, i in by_ext[1].get(top, by_ext[0])]
        for i in indices:
            deep = self._deep[i]
            if deep is None or deep[0] not in ("", top) or deep[1] not in ("", ext):
                return _UNDECIDED
        return self.rules[min(indices)] if indices else None


# Distinct (top directory, extension) shapes a matcher keeps.
MAX_SHAPES = 4096
_UNSEEN = object()
_UNDECIDED = object()


def deep_suffix(pattern: str) -> tuple[str, str] | None:
    """(LEAD, SUFFIX) of a glob ``LEAD/**/*SUFFIX`` or ``**/*SUFFIX`` whose LEAD and SUFFIX are
    literal (SUFFIX without '/'), else None. Its regex, ``LEAD/(?:[^/]*/)*[^/]*SUFFIX``, matches
    exactly the paths that start with ``LEAD/`` (any, for no LEAD) and whose base name ends with
    SUFFIX."""
    head, sep, suffix = pattern.lstrip("/").rpartition("**/*")
    if not sep or any(c in suffix for c in "*?[]/"):
        return None
    if not head:
        return "", suffix
    lead = head[:-1]
    if not head.endswith("/") or not lead or any(c in lead for c in "*?[]"):
        return None
    return lead, suffix


def _literal_run(text: str, stops: str) -> str:
    for i, c in enumerate(text):
        if c in stops:
            return text[:i]
    return text


def literal_prefix(glob: str) -> str:
    """The characters of a glob before its first wildcard or character class."""
    return _literal_run(glob, "*?[")


def literal_suffix(glob: str) -> str:
    """The characters of a glob after its last wildcard or character class."""
    return _literal_run(glob[::-1], "*?]")[::-1]


def literal_runs(text: str) -> list[str]:
    """The literal runs of a glob component (between wildcards and bracket classes)."""
    return [run for run in re.split(r"[*?]|\[[^\]]*\]", text) if run and "[" not in run and "]" not in run]


def _last_component(pattern: str) -> str | None:
    """The glob's last path component, '/' inside a bracket class not counting; None if unclosed."""
    last_slash = -1
    i = 0
    n = len(pattern)
    while i < n:
        c = pattern[i]
        if c == "[":
            j = i + 1
            if j < n and pattern[j] in "!^":
                j += 1
            if j < n and pattern[j] == "]":
                j += 1
            while j < n and pattern[j] != "]":
                j += 1
            if j >= n:
                return None  # an unclosed '[' is a literal: too odd to index, try it everywhere
            i = j + 1
            continue
        if c == "/":
            last_slash = i
        i += 1
    return pattern[last_slash + 1 :]
