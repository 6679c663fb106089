"""The Dockerfile parser: text in, instructions with line numbers out. No evaluation here.

Follows BuildKit's Dockerfile frontend (``frontend/dockerfile/parser``):

- parser directives (``# syntax=``, ``# escape=``, ``# check=``) only before the
  first comment, blank line or instruction; ``escape`` may be ``\\`` or a backtick;
- a line ending with the escape character continues on the next line; comment
  lines and blank lines inside a continuation are dropped;
- heredocs (``<<EOF``, ``<<-EOF``, ``<<"EOF"``) on RUN/COPY/ADD take the following
  lines up to the terminator;
- keywords are case-insensitive; leading ``--flag[=value]`` words of FROM, RUN,
  COPY and ADD are split off; a JSON array of strings is the exec form.

``# imagelint ignore=IL302[,IL301] reason`` on the comment line(s) right before an
instruction suppresses those rules for findings on that instruction.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from types import MappingProxyType

from imagelint.errors import ConfigError
from imagelint.lazyre import lazy_pattern
from imagelint.static.words import split_raw
from imagelint.untrusted import loads_json

_DIRECTIVE_RE = lazy_pattern(r"^#\s*([a-zA-Z][a-zA-Z0-9]*)\s*=\s*(.*?)\s*$")
# BuildKit (parser.go reHeredoc): a heredoc is a whole shell word "[fd]<<[-]WORD" whose WORD has no "<".
_HEREDOC_WORD_RE = lazy_pattern(r"^(\d*)<<(-?)\s*([^<]*)$")
_IGNORE_RE = lazy_pattern(r"^#\s*imagelint\s*:?\s*ignore\s*=\s*([A-Za-z0-9_,\s]+?)(?:\s+(.*))?$", re.IGNORECASE)
_RULE_ID_RE = lazy_pattern(r"^[A-Za-z]+[0-9]*$")
HEREDOC_KEYWORDS = frozenset({"RUN", "COPY", "ADD"})
FLAG_KEYWORDS = frozenset({"FROM", "RUN", "COPY", "ADD", "HEALTHCHECK"})
KNOWN_KEYWORDS = frozenset({
    "ADD", "ARG", "CMD", "COPY", "ENTRYPOINT", "ENV", "EXPOSE", "FROM", "HEALTHCHECK", "LABEL",
    "MAINTAINER", "ONBUILD", "RUN", "SHELL", "STOPSIGNAL", "USER", "VOLUME", "WORKDIR",
})
MAX_DOCKERFILE_BYTES = 4 * 1024 * 1024  # a larger "Dockerfile" is not one a person wrote


@dataclass(frozen=True)
class Heredoc:
    """One here-document: ``name`` is the terminator word, ``line`` its first content line."""

    name: str
    content: str
    line: int
    strip_tabs: bool = False
    quoted: bool = False


@dataclass(frozen=True)
class Instruction:
    """One instruction. ``args`` is the text after the keyword and flags, continuations joined.

    ``line``/``end_line`` are 1-based physical lines (``end_line`` includes heredoc
    bodies). ``flags`` keeps ``--name=value`` words in order (value ``None`` for a
    bare ``--link``). ``ignores`` maps rule IDs to the reason given in a preceding
    ``# imagelint ignore=`` comment.
    """

    keyword: str
    args: str
    line: int
    end_line: int
    original: str
    flags: tuple[tuple[str, str | None], ...] = ()
    heredocs: tuple[Heredoc, ...] = ()
    ignores: Mapping[str, str] = field(default_factory=lambda: MappingProxyType({}))

    @property
    def exec_form(self) -> tuple[str, ...] | None:
        """The JSON-array (exec) form's items, or None for the shell form."""
        text = self.args.strip()
        if not text.startswith("["):
            return None
        try:
            value = loads_json(text)
        except ValueError:
            return None
        if isinstance(value, list) and all(isinstance(v, str) for v in value):
            return tuple(value)
        return None

    def flag(self, name: str) -> str | None:
        found = None
        for key, value in self.flags:
            if key == name:
                found = value if value is not None else ""
        return found


@dataclass(frozen=True)
class Dockerfile:
    """A parsed Dockerfile: its instructions in order, its parser directives, and the parser's warnings."""

    path: str
    instructions: tuple[Instruction, ...]
    escape: str = "\\"
    directives: Mapping[str, str] = field(default_factory=lambda: MappingProxyType({}))
    warnings: tuple[str, ...] = ()


def _parse_ignore(comment: str) -> dict[str, str]:
    m = _IGNORE_RE.match(comment.strip())
    if not m:
        return {}
    ids = [i.strip().upper() for i in re.split(r"[,\s]+", m.group(1)) if i.strip()]
    reason = (m.group(2) or "").strip()
    return {i: reason for i in ids if _RULE_ID_RE.match(i)}


def _heredoc_markers(args: str) -> list[tuple[bool, str, str]]:
    """(strip tabs, quote, name) of each heredoc the instruction opens, as BuildKit finds them
    (``heredocsFromLine``): the line's shell words (quotes kept, ``\\`` escapes) that are a whole
    ``<<WORD``; none in the JSON (exec) form. ``cat<<EOF`` and ``<<<`` are no heredoc there either."""
    stripped = args.strip()
    if stripped.startswith("["):
        try:
            value = loads_json(stripped)
        except ValueError:
            value = None
        if isinstance(value, list) and all(isinstance(v, str) for v in value):
            return []
    if "<<" not in args:
        return []
    out: list[tuple[bool, str, str]] = []
    for word in split_raw(args, "\\"):
        m = _HEREDOC_WORD_RE.match(word)
        if not m or not m.group(3):
            continue
        rest = m.group(3)
        if len(split_raw(rest, "\\")) != 1:
            continue
        quote = next((q for q in ("'", '"') if q in rest), "")
        name = re.sub(r"\\(.)", r"\1", rest.replace("'", "").replace('"', ""))
        if name:
            out.append((m.group(2) == "-", quote, name))
    return out


def _split_flags(keyword: str, rest: str, escape: str) -> tuple[tuple[tuple[str, str | None], ...], str]:
    if keyword not in FLAG_KEYWORDS:
        return (), rest
    flags: list[tuple[str, str | None]] = []
    text = rest.lstrip()
    while text.startswith("--"):
        word = split_raw(text, escape)[0]
        name, sep, value = word[2:].partition("=")
        flags.append((name, value if sep else None))
        text = text[len(word):].lstrip()
    return tuple(flags), text


def parse_dockerfile(text: str, path: str = "Dockerfile") -> Dockerfile:
    """Parse a Dockerfile. Raises ConfigError (exit 2) for input that is not text at all, or that
    ``docker build`` refuses (``imagelint.static.dockerfile_syntax``: file, line and BuildKit's reason)."""
    if len(text) > MAX_DOCKERFILE_BYTES:
        raise ConfigError(f"file is larger than {MAX_DOCKERFILE_BYTES} bytes; not parsed as a Dockerfile", path)
    if "\x00" in text:
        raise ConfigError("file contains NUL bytes; not a Dockerfile", path)
    lines = text.removeprefix("\ufeff").splitlines()  # BuildKit drops a byte-order mark too
    directives: dict[str, str] = {}
    warnings: list[str] = []
    i = 0
    # Parser directives: only at the very top, before any other line.
    while i < len(lines):
        m = _DIRECTIVE_RE.match(lines[i].strip()) if lines[i].strip().startswith("#") else None
        if not m or m.group(1).lower() in directives:
            break
        directives[m.group(1).lower()] = m.group(2)
        i += 1
    escape = directives.get("escape", "\\")
    if escape not in ("\\", "`"):
        at = next((n + 1 for n, ln in enumerate(lines[:i]) if "escape" in ln.lower()), 1)
        raise ConfigError(f"invalid escape token {escape[:10]!r} does not match ` or \\ (docker build refuses it)",
                          path, at)

    instructions: list[Instruction] = []
    pending_ignores: dict[str, str] = {}
    while i < len(lines):
        raw = lines[i]
        stripped = raw.strip()
        if not stripped:
            pending_ignores = {}
            i += 1
            continue
        if stripped.startswith("#"):
            pending_ignores.update(_parse_ignore(stripped))
            i += 1
            continue
        start = i
        parts: list[str] = []
        original: list[str] = []
        # Join continuation lines: escape at end of line (after trailing whitespace).
        while True:
            line = lines[i]
            original.append(line)
            body = line.rstrip()
            i += 1
            if body.endswith(escape):
                parts.append(body[: -len(escape)])
                # Skip comment and blank lines inside the continuation, as BuildKit does.
                while i < len(lines) and (not lines[i].strip() or lines[i].lstrip().startswith("#")):
                    original.append(lines[i])
                    i += 1
                if i >= len(lines):
                    break
                continue
            parts.append(line)
            break
        logical = "".join(parts).strip()
        keyword, _, rest = logical.partition(" ")
        if "\t" in keyword:
            keyword, _, more = keyword.partition("\t")
            rest = more + " " + rest
        keyword_upper = keyword.upper()
        flags, args = _split_flags(keyword_upper, rest.strip(), escape)
        heredocs: list[Heredoc] = []
        if keyword_upper in HEREDOC_KEYWORDS or (keyword_upper == "ONBUILD" and args.split(" ", 1)[0].upper() in HEREDOC_KEYWORDS):
            for strip_tabs, quote, name in _heredoc_markers(args):
                heredoc_lines: list[str] = []
                first = i + 1
                while i < len(lines):
                    line = lines[i]
                    original.append(line)
                    i += 1
                    check = line.lstrip("\t") if strip_tabs else line
                    if check == name:
                        break
                    heredoc_lines.append(check)
                else:
                    raise ConfigError(f"unterminated heredoc {name[:40]!r} (docker build refuses it)", path, start + 1)
                content = "\n".join(heredoc_lines) + ("\n" if heredoc_lines else "")
                heredocs.append(Heredoc(name, content, first, strip_tabs, bool(quote)))
        instructions.append(
            Instruction(
                keyword=keyword_upper,
                args=args,
                line=start + 1,
                end_line=i,
                original="\n".join(original),
                flags=flags,
                heredocs=tuple(heredocs),
                ignores=MappingProxyType(dict(pending_ignores)),
            )
        )
        pending_ignores = {}
    from imagelint.static.dockerfile_syntax import check_instructions

    check_instructions(tuple(instructions), escape, path, KNOWN_KEYWORDS)  # what docker build refuses: exit 2
    return Dockerfile(path, tuple(instructions), escape, MappingProxyType(directives), tuple(warnings))
