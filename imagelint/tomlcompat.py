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
import warnings
from types import ModuleType

from imagelint.lazyre import lazy_pattern


def tomllib() -> ModuleType:
    """The parser module (``loads``, ``TOMLDecodeError``): tomli, else the standard library's tomllib."""
    try:
        import tomli as parser
    except ImportError:  # pragma: no cover - tomli is a declared dependency
        if sys.version_info >= (3, 11):
            import tomllib

            return tomllib
        raise
    return parser


def loads(text: str) -> dict:
    """``tomli.loads``, with nesting too deep for the parser (``a = [[[[...]]]]``, which tomllib
    recurses into until ``RecursionError`` and tomli refuses past 400 levels with one) raised as
    the parser's own ``TOMLDecodeError`` ending "(at line N, column M)", as every caller reports."""
    parser = tomllib()
    try:
        return parser.loads(text)
    except RecursionError:
        line, column = _deepest_point(text)
        raise parser.TOMLDecodeError(f"arrays or tables nested too deeply (at line {line}, column {column})") from None
    except ValueError as exc:
        if isinstance(exc, parser.TOMLDecodeError):
            raise
        # int() past CPython's 4,300-digit limit, raised from inside the parser as a bare ValueError.
        line, column = _long_number_point(text)
        with warnings.catch_warnings():  # tomli 2.1+ deprecates the one-argument form tomllib still needs
            warnings.simplefilter("ignore", DeprecationWarning)
            error = parser.TOMLDecodeError(f"a number of more than {MAX_TOML_DIGITS} digits (at line {line}, column {column})")
        raise error from None


MAX_TOML_DIGITS = 4300  # CPython's int() limit (sys.get_int_max_str_digits), which tomllib and tomli call
_LONG_NUMBER = lazy_pattern(f"[0-9_]{{{MAX_TOML_DIGITS + 1},}}")


def _long_number_point(text: str) -> tuple[int, int]:
    """Line and column of the first run of digits past the limit (1, 1 when none is found)."""
    found = _LONG_NUMBER.search(text)
    if found is None:
        return 1, 1
    before = text[:found.start()]
    return before.count("\n") + 1, found.start() - (before.rfind("\n") + 1) + 1


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
