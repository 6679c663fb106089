"""The TOML parser: ``tomllib`` on Python 3.11+, ``tomli`` on 3.10.

Imported on first use, not at start-up: a run without a config, target file or matrix
to parse (a warm ``imagelint lint``) never loads it.
"""

from __future__ import annotations

import sys
from types import ModuleType


def tomllib() -> ModuleType:
    if sys.version_info >= (3, 11):
        import tomllib as parser
    else:  # pragma: no cover - exercised on Python 3.10 only
        import tomli as parser
    return parser


def loads(text: str) -> dict:  # type: ignore[type-arg]
    """``tomllib.loads``, with nesting too deep for the parser (``a = [[[[...]]]]``, which
    tomllib recurses into until ``RecursionError``) raised as the parser's own
    ``TOMLDecodeError`` ending "(at line N, column M)", as every caller already reports."""
    parser = tomllib()
    try:
        return parser.loads(text)  # type: ignore[no-any-return]
    except RecursionError:
        line, column = _deepest_point(text)
        raise parser.TOMLDecodeError(f"arrays or tables nested too deeply (at line {line}, column {column})") from None


_DEPTH_SHOWN = 100  # where to point at: real documents nest a few levels


def _deepest_point(text: str) -> tuple[int, int]:
    """Line and column where bracket nesting first passes ``_DEPTH_SHOWN`` (strings skipped, roughly)."""
    depth, line, column, quote = 0, 1, 0, ""
    deepest = (1, 1)
    for c in text:
        column += 1
        if c == "\n":
            line, column = line + 1, 0
            if quote in ('"', "'"):
                quote = ""
            continue
        if quote:
            if c == quote:
                quote = ""
            continue
        if c in "\"'":
            quote = c
        elif c in "[{":
            depth += 1
            if depth == _DEPTH_SHOWN:
                return line, column
            deepest = (line, column)
        elif c in "]}":
            depth -= 1
    return deepest
