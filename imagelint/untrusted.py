"""The one way imagelint reads a JSON document or a number that came from outside.

Registries, token servers, credential helpers, images, clusters, shard parts, flags, env values
and repository files are all untrusted (``docs/robustness.md``). Python's own readers are not
safe on them as they stand:

* ``json.loads`` recurses: a document nested 60,000 deep ends in ``RecursionError`` (exit 70),
  and whatever walks the result recurses again; it accepts ``NaN``/``Infinity`` and turns
  ``1e400`` into ``inf``.
* ``str.isdigit()`` is true for ``'²'`` and ``'٣'``; ``int('²')`` then fails, and ``int()`` of
  more than 4,300 digits raises ``ValueError`` after quadratic work.
* ``float('1e400')`` is ``inf`` and ``float('nan')`` compares false with everything.

Here a document's nesting is measured on the raw text before it is parsed (bytes.count first,
so a small or flat document costs nothing more), numbers are ASCII digits of a bounded length,
floats are finite, and every refusal is one ``UntrustedInputError``: a ``ValueError`` (so each
boundary's existing ``except ValueError`` keeps its own wording and exit code) and a
``UsageError`` (so one that no boundary catches is still one line, exit 2, never a traceback).

This module sits at the bottom layer: it imports nothing from imagelint but ``errors``.
"""

from __future__ import annotations

import json
import math
from itertools import accumulate
from typing import Any

from imagelint.errors import UsageError
from imagelint.lazyre import lazy_pattern

# Real documents nest a few levels (a Kubernetes pod ~12, SARIF ~10, an OCI index 4); the
# limit leaves room for CRDs and stays far below the interpreter's recursion limit, so nothing
# that walks a parsed document recursively can overflow either.
MAX_JSON_DEPTH = 128
# A JSON document larger than this is refused before parsing; each boundary passes its own,
# smaller cap where it has one (error bodies 64 KiB, tokens 256 KiB, shard parts 256 MiB).
MAX_JSON_BYTES = 256 * 1024 * 1024
# Integers in JSON: CPython's own conversion limit, caught here (a bare ValueError from inside
# json.loads otherwise), so a huge number is the same refusal as any other.
MAX_JSON_INT_DIGITS = 4300
# A whole number read from text (a port, an index, a count, a version part): 18 digits fit an
# int64 and cost nothing to convert.
MAX_INT_DIGITS = 18
MAX_FLOAT_CHARS = 64

_SHOWN = 40  # characters of the offending text quoted in a message


class UntrustedInputError(UsageError, ValueError):
    """Untrusted text that is not the JSON document or number it should be; the message is one line."""


def shown(text: str | bytes) -> str:
    """``text`` quoted for a one-line message: repr (controls escaped), cut to a few characters."""
    if isinstance(text, bytes):
        text = text.decode("utf-8", "replace")
    cut = text[:_SHOWN]
    return repr(cut) + ("…" if len(text) > _SHOWN else "")


# --- JSON ------------------------------------------------------------------------------------

_STRUCTURE = bytes(range(256)).translate(None, b'[]{}"')  # every byte but brackets and quotes, to delete
_ONE_KIND = bytes.maketrans(b"{}", b"[]")  # for depth, an object nests as an array does
_DELTA = [0] * 256
_DELTA[ord("[")] = _DELTA[ord("{")] = 1
_DELTA[ord("]")] = _DELTA[ord("}")] = -1


def json_depth(raw: bytes, limit: int = MAX_JSON_DEPTH) -> int:
    """How deep ``raw``'s arrays and objects nest (brackets inside strings not counted).

    Without recursion, in passes of C over bytes: escaped backslashes and escaped quotes are
    dropped (left to right, as a JSON reader pairs them), every byte but brackets and quotes is
    deleted, what lies between two quotes (a string's brackets) is cut out; then each pass
    deletes every innermost pair, one level a pass, for at most ``limit`` passes; what is left
    past the limit is summed by ``accumulate``. A text with no more opening brackets than
    ``limit`` is answered from ``bytes.count`` alone. (One Python step per bracket instead
    costs 20 ms on a 330 KiB document; this costs its depth in C passes.)
    """
    opening = raw.count(b"[") + raw.count(b"{")
    if opening <= limit:
        return opening
    structure = raw.replace(b"\\\\", b"").replace(b'\\"', b"").translate(None, _STRUCTURE)
    level = b"".join(structure.split(b'"')[::2]).translate(_ONE_KIND)  # what is outside the strings
    passes = 0
    while level and passes < limit:
        inner = level.replace(b"[]", b"")
        if len(inner) == len(level):  # unbalanced: no pair left to delete
            break
        level, passes = inner, passes + 1
    return passes + max(accumulate(map(_DELTA.__getitem__, level)), default=0)


def _finite_float(text: str) -> float:
    value = float(text)
    if not math.isfinite(value):
        raise UntrustedInputError(f"number {shown(text)} is out of range")
    return value


def _no_constant(text: str) -> Any:
    raise UntrustedInputError(f"{text} is not a JSON number")


def loads_json(data: str | bytes | bytearray, *, max_bytes: int = MAX_JSON_BYTES,
               max_depth: int | None = MAX_JSON_DEPTH) -> Any:
    """The JSON value in ``data``; UntrustedInputError (a ValueError) for anything else.

    Refused: more than ``max_bytes``, text that is not UTF-8, nesting deeper than ``max_depth``,
    ``NaN``/``Infinity``, a float out of range (``1e400``), an integer past 4,300 digits, and
    whatever ``json`` itself refuses. The message is one line and quotes nothing of the input
    but the offending number.

    ``max_depth=None`` skips the pre-scan (the parser's own recursion limit still refuses a deep
    document, as the same error): only for an entry of imagelint's own cache whose shape is
    checked field by field after parsing, read on every warm run (the scan would double its cost).
    """
    raw = data.encode("utf-8", "surrogatepass") if isinstance(data, str) else bytes(data)
    if len(raw) > max_bytes:
        raise UntrustedInputError(f"JSON document larger than {max_bytes} bytes")
    depth = json_depth(raw, max_depth) if max_depth is not None else 0
    if max_depth is not None and depth > max_depth:
        raise UntrustedInputError(f"JSON nested {depth} deep, past the limit of {max_depth}")
    try:
        text = data if isinstance(data, str) else raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise UntrustedInputError(f"JSON is not UTF-8 (byte {exc.start})") from None
    try:
        # No parse_int hook (a Python call per integer): int()'s own 4,300-digit limit refuses a
        # huge one with a ValueError, turned into the same refusal below.
        return json.loads(text, parse_float=_finite_float, parse_constant=_no_constant)
    except UntrustedInputError:
        raise
    except json.JSONDecodeError as exc:
        raise UntrustedInputError(f"not JSON: {exc.msg} (line {exc.lineno}, column {exc.colno})") from None
    except ValueError as exc:
        if "digits" in str(exc):
            raise UntrustedInputError(f"not JSON: a number of more than {MAX_JSON_INT_DIGITS} digits") from None
        raise UntrustedInputError(f"not JSON: {type(exc).__name__}") from None
    except RecursionError:  # only without max_depth: the C parser's own limit, raised cleanly
        raise UntrustedInputError("not JSON: nested too deeply") from None


# --- numbers ---------------------------------------------------------------------------------


def is_digits(text: str, max_digits: int = MAX_INT_DIGITS) -> bool:
    """``text`` is 1..``max_digits`` ASCII digits (``str.isdigit`` is also true for ``'²'``)."""
    return 0 < len(text) <= max_digits and text.isascii() and text.isdigit()


def int_or_none(text: str, max_digits: int = MAX_INT_DIGITS) -> int | None:
    """The whole number ``text`` spells in ASCII digits, or None (non-ASCII digits, too long, empty)."""
    return int(text) if is_digits(text, max_digits) else None


def parse_int(text: str | bytes, what: str, *, max_digits: int = MAX_INT_DIGITS,
              minimum: int | None = None, maximum: int | None = None, signed: bool = False) -> int:
    """``text`` as a whole number of ASCII digits; UntrustedInputError naming ``what`` otherwise."""
    if isinstance(text, bytes):
        text = text.decode("ascii", "replace")
    body = text[1:] if signed and text[:1] in ("-", "+") else text
    if not is_digits(body, max_digits):
        raise UntrustedInputError(f"{what} {shown(text)}: expected a whole number of at most {max_digits} digits")
    value = int(text)
    if (minimum is not None and value < minimum) or (maximum is not None and value > maximum):
        lo = "" if minimum is None else f" from {minimum}"
        hi = "" if maximum is None else f" up to {maximum}"
        raise UntrustedInputError(f"{what} {shown(text)}: expected a whole number{lo}{hi}")
    return value


_FLOAT = lazy_pattern(r"[+-]?(?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+)(?:[eE][+-]?[0-9]+)?")


def parse_float(text: str, what: str, *, minimum: float | None = None, maximum: float | None = None) -> float:
    """``text`` as a finite decimal number (ASCII, no ``nan``/``inf``, no ``1e400``), within bounds."""
    text = text.strip()
    if len(text) > MAX_FLOAT_CHARS or not _FLOAT.fullmatch(text):
        raise UntrustedInputError(f"{what} {shown(text)}: expected a number")
    value = float(text)
    if not math.isfinite(value):
        raise UntrustedInputError(f"{what} {shown(text)}: the number is out of range")
    if (minimum is not None and value < minimum) or (maximum is not None and value > maximum):
        lo = "" if minimum is None else f" from {minimum:g}"
        hi = "" if maximum is None else f" up to {maximum:g}"
        raise UntrustedInputError(f"{what} {shown(text)}: expected a number{lo}{hi}")
    return value


__all__ = [
    "MAX_INT_DIGITS", "MAX_JSON_BYTES", "MAX_JSON_DEPTH", "UntrustedInputError", "int_or_none", "is_digits",
    "json_depth", "loads_json", "parse_float", "parse_int", "shown",
]
