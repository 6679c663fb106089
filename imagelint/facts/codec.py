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
import importlib
import sys
import types
import typing
from collections.abc import Iterator, Mapping
from functools import cache
from types import MappingProxyType, SimpleNamespace
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
def field_type(cls: type, name: str) -> Any:
    """The type of ``cls``'s field ``name``, resolved from its annotation alone. Field by field, so
    that a field the data leaves empty is never resolved: ``ImageFacts.workload`` names a type of
    ``facts.static_model``, which a check of an image never imports. A name the class's module
    imports only for type checking is found in the module that defines it (``_LateNames``)."""
    annotation = next(f.type for f in _fields(cls) if f.name == name)
    module = sys.modules[cls.__module__]
    holder = SimpleNamespace(__annotations__={name: annotation})
    return typing.get_type_hints(holder, globalns=vars(module), localns=_LateNames())[name]


class _LateNames(Mapping[str, Any]):
    """The model's names that live in modules imported only where they are needed."""

    def __getitem__(self, name: str) -> Any:
        if name not in _LATE_MODULES:
            raise KeyError(name)
        return getattr(importlib.import_module(_LATE_MODULES[name]), name)

    def __iter__(self) -> Iterator[str]:
        return iter(_LATE_MODULES)

    def __len__(self) -> int:
        return len(_LATE_MODULES)


_LATE_MODULES = {name: "imagelint.facts.static_model" for name in ("WorkloadFacts", "ComposeService", "BuildFacts")}


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
    fields = [f for f in _fields(cls) if f.init]
    unknown = set(data) - {f.name for f in fields}
    if unknown:
        raise ValueError(f"{cls.__name__} has no field {sorted(unknown)[0]!r}")
    # None where the field's default is None fits its type (``X | None``): no need to resolve it.
    kwargs = {f.name: None if data[f.name] is None and f.default is None else _decode(field_type(cls, f.name), data[f.name])
              for f in fields if f.name in data}
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
