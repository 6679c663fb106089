"""The TOML parser: ``tomli``, the maintained upstream of the standard library's ``tomllib``.

Its wheels are compiled with mypyc, several times faster than the pure-Python tomllib on the
shipped matrix, which every run whose cache is empty parses (a fresh CI runner), with the same
results and errors. Where no compiled wheel installs, tomli is the same pure Python as tomllib; if
it is missing altogether (a broken install), tomllib stands in on Python 3.11+.

Imported on first use, not at start-up: a run without a config, target file or matrix
to parse (a warm ``imagelint lint``) never loads it.
"""

from __future__ import annotations

import sys
from types import ModuleType


def tomllib() -> ModuleType:
    """The parser module (``loads``, ``TOMLDecodeError``): tomli, else the standard library's tomllib."""
    try:
        import tomli as parser
    except ImportError:  # pragma: no cover - tomli is a declared dependency
        if sys.version_info < (3, 11):
            raise
        import tomllib as parser
    return parser


def loads(text: str) -> dict:  # type: ignore[type-arg]
    """``tomli.loads``, with nesting too deep for the parser (``a = [[[[...]]]]``, which tomllib
    recurses into until ``RecursionError`` and tomli refuses past 400 levels with one) raised as
    the parser's own ``TOMLDecodeError`` ending "(at line N, column M)", as every caller reports."""
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
