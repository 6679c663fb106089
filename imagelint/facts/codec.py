"""``ImageFacts`` to JSON-ready data and back, exactly (for the facts cache).

Not the documented ``inspect --format json`` output (that one redacts secrets and
is shaped for people); this is a lossless round trip: ``decode(ImageFacts,
encode(facts)) == facts``, with tuples, read-only mappings and nested frozen
dataclasses restored as they were. It is driven by the dataclasses' own type
hints, so a new field needs no code here; a type the codec does not know is a
``TypeError`` at encode time (a test walks the whole model to keep it that way).

Decoding is strict: anything that does not fit the type hints raises
``ValueError``, which the cache treats as a miss.
"""

from __future__ import annotations

import collections.abc
import dataclasses
import types
import typing
from collections.abc import Mapping
from functools import cache
from types import MappingProxyType
from typing import Any, TypeVar

T = TypeVar("T")

_SCALARS = (str, int, float, bool)


def encode(value: Any) -> Any:
    """JSON-ready data for a facts value (dataclasses, tuples, mappings, scalars, None)."""
    if value is None or type(value) in _SCALARS:
        return value
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return {f.name: encode(getattr(value, f.name)) for f in _fields(type(value))}
    if isinstance(value, tuple):
        return [encode(v) for v in value]
    if isinstance(value, Mapping):
        return {_key(k): encode(v) for k, v in value.items()}
    raise TypeError(f"the facts codec cannot encode {type(value).__name__}")


def decode(cls: type[T], data: Any) -> T:
    """The ``cls`` instance ``data`` encodes; ValueError when it does not fit ``cls``'s type hints."""
    return _decode(cls, data)


def _key(k: Any) -> str:
    if type(k) is not str:
        raise TypeError(f"the facts codec encodes only str mapping keys, not {type(k).__name__}")
    return k


@cache
def _fields(cls: type) -> tuple[dataclasses.Field, ...]:
    return dataclasses.fields(cls)


@cache
def _hints(cls: type) -> dict[str, Any]:
    return typing.get_type_hints(cls)


def _decode(tp: Any, data: Any) -> Any:
    if tp is Any:
        return data
    if tp in _SCALARS:
        if type(data) is tp or (tp is float and type(data) is int):
            return float(data) if tp is float else data
        raise ValueError(f"expected {tp.__name__}, got {type(data).__name__}")
    if tp is type(None):
        if data is None:
            return None
        raise ValueError(f"expected null, got {type(data).__name__}")
    if isinstance(tp, type) and dataclasses.is_dataclass(tp):
        return _decode_dataclass(tp, data)
    origin, args = typing.get_origin(tp), typing.get_args(tp)
    if origin in (typing.Union, types.UnionType):
        return _decode_union(args, data)
    if origin is tuple:
        return _decode_tuple(args, data)
    if origin in (collections.abc.Mapping, dict):
        if not isinstance(data, dict):
            raise ValueError(f"expected an object, got {type(data).__name__}")
        kt, vt = args or (str, Any)
        return MappingProxyType({_decode(kt, k): _decode(vt, v) for k, v in data.items()})
    raise ValueError(f"the facts codec cannot decode {tp!r}")


def _decode_dataclass(cls: type, data: Any) -> Any:
    if not isinstance(data, dict):
        raise ValueError(f"expected an object for {cls.__name__}, got {type(data).__name__}")
    hints = _hints(cls)
    fields = [f for f in _fields(cls) if f.init]
    unknown = set(data) - {f.name for f in fields}
    if unknown:
        raise ValueError(f"{cls.__name__} has no field {sorted(unknown)[0]!r}")
    kwargs = {f.name: _decode(hints[f.name], data[f.name]) for f in fields if f.name in data}
    try:
        return cls(**kwargs)
    except TypeError as exc:  # a required field missing
        raise ValueError(f"{cls.__name__}: {exc}") from None


def _decode_union(args: tuple[Any, ...], data: Any) -> Any:
    if data is None and type(None) in args:
        return None
    errors = []
    for arm in args:
        if arm is type(None):
            continue
        try:
            return _decode(arm, data)
        except ValueError as exc:
            errors.append(str(exc))
    raise ValueError("; ".join(errors) or "no union arm fits")


def _decode_tuple(args: tuple[Any, ...], data: Any) -> tuple[Any, ...]:
    if not isinstance(data, list):
        raise ValueError(f"expected an array, got {type(data).__name__}")
    if len(args) == 2 and args[1] is Ellipsis:
        return tuple(_decode(args[0], v) for v in data)
    if len(args) != len(data):
        raise ValueError(f"expected {len(args)} items, got {len(data)}")
    return tuple(_decode(a, v) for a, v in zip(args, data))
