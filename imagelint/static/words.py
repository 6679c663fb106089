"""Dockerfile word processing: quotes, the escape character and variable expansion.

Follows BuildKit's shell lexer (``frontend/dockerfile/shell/lex.go``) for what a
linter needs: single quotes are literal, double quotes allow ``$`` expansion and
escape ``"``/``$``/escape, the escape character (``\\`` or a backtick set by the
``# escape=`` directive) quotes the next character, and ``$VAR``, ``${VAR}``,
``${VAR:-word}``, ``${VAR-word}``, ``${VAR:+word}``, ``${VAR+word}``,
``${VAR:?msg}`` expand against the variables in scope. An unset variable
expands to the empty string, as BuildKit does when no ``--build-arg`` is given.

Expansion is bounded where BuildKit's is not: values that repeat each other
(``ARG A2=${A1}${A1}``, doubled forty times) would grow past any memory, so one word
may expand to at most ``MAX_WORD_CHARS`` characters and a whole file's expansions (an
``ExpansionBudget``) to ``MAX_EXPANDED_CHARS``; past either, ``ExpansionLimit``.
"""

from __future__ import annotations

from collections.abc import Mapping

_NAME_START = set("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ_")
_NAME_CHARS = _NAME_START | set("0123456789")
_MAX_DEPTH = 16  # nested ${a:-${b:-...}} beyond this is refused (kept literal)
MAX_WORD_CHARS = 1 << 20
MAX_EXPANDED_CHARS = 64 << 20


class ExpansionLimit(ValueError):
    """Variable expansion went past its bound; the message says which."""


class ExpansionBudget:
    """What variable expansion may still produce for one file, in characters of substituted values."""

    def __init__(self, total: int = MAX_EXPANDED_CHARS) -> None:
        self.total = total
        self.left = total

    def charge(self, size: int) -> None:
        self.left -= size
        if self.left < 0:
            raise ExpansionLimit(f"variable expansion in this file produces more than {self.total} characters "
                                 "(ARG/ENV values that repeat each other); refusing to expand")


class _Meter:
    """One word's substituted characters, and the file's budget they are also charged to."""

    def __init__(self, budget: ExpansionBudget | None) -> None:
        self.budget = budget if budget is not None else ExpansionBudget()
        self.word_left = MAX_WORD_CHARS

    def value(self, text: str) -> str:
        self.word_left -= len(text)
        if self.word_left < 0:
            raise ExpansionLimit(f"a word expands to more than {MAX_WORD_CHARS} characters "
                                 "(ARG/ENV values that repeat each other); refusing to expand")
        self.budget.charge(len(text))
        return text


def split_raw(text: str, escape: str = "\\") -> list[str]:
    """Split on unquoted whitespace, keeping quotes and escapes for ``process_word``."""
    words: list[str] = []
    cur: list[str] = []
    quote: str | None = None
    in_word = False
    i = 0
    while i < len(text):
        ch = text[i]
        if quote is None and ch in " \t\r\n":
            if in_word:
                words.append("".join(cur))
                cur, in_word = [], False
            i += 1
            continue
        in_word = True
        cur.append(ch)
        if ch == escape and quote != "'" and i + 1 < len(text):
            cur.append(text[i + 1])
            i += 2
            continue
        if quote is None and ch in "'\"":
            quote = ch
        elif ch == quote:
            quote = None
        i += 1
    if in_word:
        words.append("".join(cur))
    return words


class _Lexer:
    def __init__(self, text: str, env: Mapping[str, str], escape: str, meter: _Meter, depth: int = 0) -> None:
        self.text = text
        self.env = env
        self.meter = meter
        self.escape = escape
        self.depth = depth
        self.pos = 0

    def peek(self) -> str:
        return self.text[self.pos] if self.pos < len(self.text) else ""

    def take(self) -> str:
        ch = self.peek()
        self.pos += 1
        return ch

    def word(self, stop: str = "") -> str:
        """Process until end of text or an unquoted character in ``stop`` (not consumed)."""
        out: list[str] = []
        while self.pos < len(self.text):
            ch = self.peek()
            if stop and ch in stop:
                break
            self.pos += 1
            if ch == self.escape:
                nxt = self.take()
                out.append(nxt if nxt else ch)
            elif ch == "'":
                out.append(self._single_quoted())
            elif ch == '"':
                out.append(self._double_quoted())
            elif ch == "$":
                out.append(self._dollar())
            else:
                out.append(ch)
        return "".join(out)

    def _single_quoted(self) -> str:
        end = self.text.find("'", self.pos)
        if end < 0:  # unterminated: BuildKit errors; a linter keeps the rest literally
            end = len(self.text)
        out = self.text[self.pos:end]
        self.pos = min(end + 1, len(self.text))
        return out

    def _double_quoted(self) -> str:
        out: list[str] = []
        while self.pos < len(self.text):
            ch = self.take()
            if ch == '"':
                break
            if ch == self.escape:
                nxt = self.peek()
                if nxt in ('"', "$", self.escape) and nxt:
                    out.append(self.take())
                else:
                    out.append(ch)
            elif ch == "$":
                out.append(self._dollar())
            else:
                out.append(ch)
        return "".join(out)

    def _name(self) -> str:
        start = self.pos
        if self.peek() and (self.peek() in _NAME_START):
            while self.peek() and self.peek() in _NAME_CHARS:
                self.pos += 1
        elif self.peek().isdigit() or (self.peek() and self.peek() in "@*#?$!-"):
            self.pos += 1  # positional/special parameter: always empty in a Dockerfile
        return self.text[start:self.pos]

    def _dollar(self) -> str:
        if self.peek() == "{":
            self.pos += 1
            return self._braced()
        name = self._name()
        if not name:
            return "$"
        return self.meter.value(self.env.get(name, ""))

    def _braced(self) -> str:
        name = self._name()
        if not name:
            # "${" with no name: keep literally up to the closing brace
            end = self.text.find("}", self.pos)
            end = len(self.text) if end < 0 else end
            raw = "${" + self.text[self.pos:end] + "}"
            self.pos = min(end + 1, len(self.text))
            return raw
        op = ""
        if self.peek() == ":" and self.pos + 1 < len(self.text) and self.text[self.pos + 1] in "-+?":
            op = self.text[self.pos:self.pos + 2]
            self.pos += 2
        elif self.peek() and self.peek() in "-+?":
            op = self.take()
        word = ""
        if op:
            if self.depth >= _MAX_DEPTH:
                word = ""
            else:
                sub = _Lexer(self.text, self.env, self.escape, self.meter, self.depth + 1)
                sub.pos = self.pos
                word = sub.word(stop="}")
                self.pos = sub.pos
        if self.peek() == "}":
            self.pos += 1
        value = self.env.get(name)
        # ``word`` was charged as it was expanded; a value is charged as it is used.
        if op == ":-":
            return self.meter.value(value) if value else word
        if op == "-":
            return self.meter.value(value) if value is not None else word
        if op == ":+":
            return word if value else ""
        if op == "+":
            return word if value is not None else ""
        return self.meter.value(value or "")


def process_word(word: str, env: Mapping[str, str], escape: str = "\\", budget: ExpansionBudget | None = None) -> str:
    """Remove quotes and expand variables in one word (or a whole legacy ENV value)."""
    return _Lexer(word, env, escape, _Meter(budget)).word()


def process_words(text: str, env: Mapping[str, str], escape: str = "\\",
                  budget: ExpansionBudget | None = None) -> list[str]:
    """Split ``text`` into words, then process each (quotes removed, variables expanded)."""
    return [process_word(w, env, escape, budget) for w in split_raw(text, escape)]


def parse_key_values(text: str, env: Mapping[str, str], escape: str = "\\", legacy_ok: bool = True,
                     budget: ExpansionBudget | None = None) -> list[tuple[str, str]]:
    """``ENV``/``LABEL``/``ARG`` arguments: ``k=v k2="v 2"`` or the legacy ``ENV key value...``.

    Each value is expanded against ``env`` *as it was before this instruction*
    (BuildKit expands all pairs of one ENV against the same environment).
    """
    raw = split_raw(text, escape)
    if not raw:
        return []
    if "=" not in raw[0] and legacy_ok:
        key = raw[0]
        rest = text.strip()[len(key):].strip()
        return [(key, process_word(rest, env, escape, budget))]
    out = []
    for item in raw:
        key, sep, value = item.partition("=")
        if not sep:
            out.append((process_word(key, env, escape, budget), ""))
            continue
        out.append((process_word(key, env, escape, budget), process_word(value, env, escape, budget)))
    return out


def parse_arg_declarations(text: str, env: Mapping[str, str], escape: str = "\\",
                           budget: ExpansionBudget | None = None) -> list[tuple[str, str | None]]:
    """``ARG a b=1 c="x y"`` → ``[("a", None), ("b", "1"), ("c", "x y")]``."""
    out: list[tuple[str, str | None]] = []
    for item in split_raw(text, escape):
        key, sep, value = item.partition("=")
        out.append((key, process_word(value, env, escape, budget) if sep else None))
    return out
