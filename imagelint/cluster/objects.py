"""Safe reads of served JSON: every cluster object is untrusted, so every field is type-checked.

``mapping(obj, "spec", "template")`` walks keys and gives ``{}`` for anything that is not a
mapping on the way; ``items`` a tuple of the mappings in a list; ``text`` a bounded string or
``""``; ``number`` an int or None. The doctor readers (pods, events, DaemonSet status, DRA) use
these so a malformed object is skipped or read as empty, never a traceback.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from imagelint.lazyre import lazy_pattern
from imagelint.untrusted import is_digits

MAX_TEXT = 4096  # one field of a served object (a message, a label value): longer is cut
_CONTROL = lazy_pattern(r"[\x00-\x08\x0b-\x1f\x7f-\x9f\u200b-\u200f\u202a-\u202e\u2066-\u2069]")


def mapping(obj: Any, *keys: str) -> Mapping[str, Any]:
    for key in keys:
        obj = obj.get(key) if isinstance(obj, Mapping) else None
    return obj if isinstance(obj, Mapping) else {}


def items(obj: Any, *keys: str) -> tuple[Mapping[str, Any], ...]:
    for key in keys:
        obj = obj.get(key) if isinstance(obj, Mapping) else None
    return tuple(i for i in obj if isinstance(i, Mapping)) if isinstance(obj, list) else ()


def text(obj: Any, *keys: str, limit: int = MAX_TEXT) -> str:
    for key in keys:
        obj = obj.get(key) if isinstance(obj, Mapping) else None
    if isinstance(obj, bool) or obj is None or isinstance(obj, (Mapping, list)):
        return ""
    return clean(str(obj), limit)


def number(obj: Any, *keys: str) -> int | None:
    for key in keys:
        obj = obj.get(key) if isinstance(obj, Mapping) else None
    if isinstance(obj, bool):
        return None
    if isinstance(obj, int):
        return obj
    if isinstance(obj, str) and is_digits(obj.strip()):
        return int(obj.strip())
    return None


def string_map(obj: Any, *keys: str) -> dict[str, str]:
    """A ``{str: str}`` mapping (labels, nodeSelector, ConfigMap data); other entries dropped."""
    found = mapping(obj, *keys)
    return {clean(str(k), 317): clean(v, MAX_TEXT) for k, v in found.items() if isinstance(k, str) and isinstance(v, str)}


def clean(value: str, limit: int = MAX_TEXT) -> str:
    """Control and bidi characters out (a served string is printed to terminals), length bounded."""
    value = _CONTROL.sub("?", value)
    return value if len(value) <= limit else value[: limit - 1] + "…"


__all__ = ["MAX_TEXT", "clean", "items", "mapping", "number", "string_map", "text"]
