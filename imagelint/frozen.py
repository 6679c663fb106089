"""``@frozen``: ``@dataclass(frozen=True)`` at a quarter of its start-up cost.

imagelint's values are frozen dataclasses, ~170 of them, and a command imports a hundred.
On CPython 3.10–3.13 ``dataclass(frozen=True)`` writes the source of six methods per class
(``__init__``, ``__repr__``, ``__eq__``, ``__hash__``, ``__setattr__``, ``__delattr__``) and
compiles each: ~0.8 ms a class, ~0.1 s of every run, more than a warm ``check`` spends on
its own work. ``frozen`` lets ``dataclasses`` do the field bookkeeping (so ``fields``,
``replace``, ``asdict``, ``is_dataclass`` and ``__match_args__`` are the stdlib's own) and
compiles ``__init__`` only; the other five are shared functions driven by per-class
``operator.attrgetter``\\ s, which cost nothing to make.

The class behaves as ``@dataclass(frozen=True)`` makes it, and tests/test_frozen.py holds it to
that, side by side: the same ``__init__`` signature (defaults, ``default_factory``,
``__post_init__``), the same ``repr`` (``field(repr=False)`` left out, recursion shown as
``...``), ``==`` between instances of the same class over the ``compare`` fields, a hash over
those fields (or ``field(hash=...)``), and ``dataclasses.FrozenInstanceError`` on assigning or
deleting any attribute. A method the class body defines itself is kept, as dataclass keeps it.
Not offered (use ``dataclass``): ``order``, ``slots``, ``kw_only``, ``InitVar``, ``init=False``
fields without a default. One difference: ``__dataclass_params__`` describes what
``dataclasses`` generated (no ``frozen``, no ``eq``), so a ``@dataclass(frozen=True)`` cannot
subclass a ``@frozen`` class (it raises at import, so it cannot go unnoticed); ``@frozen``
subclasses of ``@frozen`` classes are fine.
"""

from __future__ import annotations

import dataclasses
import reprlib
from dataclasses import MISSING, FrozenInstanceError
from operator import attrgetter
from typing import Any, Callable, TypeVar

try:  # Python 3.11+: type checkers and editors treat @frozen classes as frozen dataclasses
    from typing import dataclass_transform
except ImportError:  # pragma: no cover - Python 3.10

    def dataclass_transform(**_: Any) -> Callable[[Any], Any]:  # type: ignore[no-redef]
        return lambda decorated: decorated


T = TypeVar("T", bound=type)


class _FactoryDefault:
    """The default of a ``default_factory`` parameter; shown as dataclass shows it."""

    def __repr__(self) -> str:
        return "<factory>"


_FACTORY = _FactoryDefault()
_KEYS = "__frozen_keys__"  # (compare key, hash key, repr names), set on each @frozen class


@dataclass_transform(frozen_default=True, field_specifiers=(dataclasses.field, dataclasses.Field))
def frozen(cls: T) -> T:
    """Make ``cls`` a frozen dataclass (see the module docstring)."""
    own = dict(cls.__dict__)
    cls = dataclasses.dataclass(cls, init=False, repr=False, eq=False)  # fields, match_args, defaults
    fields = dataclasses.fields(cls)
    compared = tuple(f.name for f in fields if f.compare)
    hashed = tuple(f.name for f in fields if (f.compare if f.hash is None else f.hash))
    shown = tuple(f.name for f in fields if f.repr)
    setattr(cls, _KEYS, (_key(compared), _key(hashed), shown))
    if "__init__" not in own:
        cls.__init__ = _make_init(cls, fields)  # type: ignore[misc]
    if "__repr__" not in own:
        cls.__repr__ = _repr  # type: ignore[assignment]
    if "__eq__" not in own:
        cls.__eq__ = _eq  # type: ignore[assignment]
    # dataclass's rule for frozen + eq: generate __hash__ unless the body defined one (a body
    # that defines __eq__ alone has __hash__ = None put there by Python; that is not "defined").
    explicit_hash = "__hash__" in own and not (own["__hash__"] is None and "__eq__" in own)
    if not explicit_hash:
        cls.__hash__ = _hash  # type: ignore[assignment]
    for name, method in (("__setattr__", _setattr), ("__delattr__", _delattr)):
        if name in own:
            raise TypeError(f"cannot overwrite attribute {name} in class {cls.__name__}")
        setattr(cls, name, method)
    if own.get("__doc__") is None:  # what dataclass writes: the signature
        import inspect

        cls.__doc__ = cls.__name__ + str(inspect.signature(cls)).replace(" -> None", "")
    return cls


def _key(names: tuple[str, ...]) -> Callable[[Any], Any]:
    """A C-speed tuple of the named attributes (``()`` for none)."""
    if not names:
        return lambda _self: ()
    if len(names) == 1:
        only = attrgetter(names[0])
        return lambda self: (only(self),)
    return attrgetter(*names)


def _make_init(cls: type, fields: tuple[dataclasses.Field, ...]) -> Callable[..., None]:
    """Compile ``__init__`` as dataclass(frozen=True) writes it (object.__setattr__ per field)."""
    scope: dict[str, Any] = {"_set": object.__setattr__, "_FACTORY": _FACTORY}
    params: list[str] = []
    body: list[str] = []
    defaulted = False
    for i, f in enumerate(fields):
        if f.default_factory is not MISSING:
            scope[f"_factory{i}"] = f.default_factory
            if f.init:
                defaulted = True
                params.append(f"{f.name}=_FACTORY")
                body.append(f"_set(self, {f.name!r}, _factory{i}() if {f.name} is _FACTORY else {f.name})")
            else:
                body.append(f"_set(self, {f.name!r}, _factory{i}())")
        elif not f.init:
            if f.default is MISSING:
                raise TypeError(f"@frozen: field {f.name!r} of {cls.__name__} has init=False and no default")
            continue  # the class attribute holds the default, as with dataclass
        elif f.default is not MISSING:
            defaulted = True
            scope[f"_default{i}"] = f.default
            params.append(f"{f.name}=_default{i}")
            body.append(f"_set(self, {f.name!r}, {f.name})")
        else:
            if defaulted:
                raise TypeError(f"non-default argument {f.name!r} follows default argument")
            params.append(f.name)
            body.append(f"_set(self, {f.name!r}, {f.name})")
    if hasattr(cls, "__post_init__"):
        body.append("self.__post_init__()")
    source = f"def __init__(self, {', '.join(params)}):\n    " + ("\n    ".join(body) or "pass") + "\n"
    namespace: dict[str, Any] = {}
    exec(compile(source, f"<frozen {cls.__module__}.{cls.__qualname__}.__init__>", "exec"), scope, namespace)
    init = namespace["__init__"]
    init.__qualname__ = f"{cls.__qualname__}.__init__"
    init.__module__ = cls.__module__
    init.__annotations__ = {f.name: f.type for f in fields if f.init} | {"return": None}
    return init


@reprlib.recursive_repr()
def _repr(self: Any) -> str:
    names = getattr(type(self), _KEYS)[2]
    return f"{type(self).__qualname__}({', '.join(f'{n}={getattr(self, n)!r}' for n in names)})"


def _eq(self: Any, other: Any) -> Any:
    if other.__class__ is self.__class__:
        key = getattr(type(self), _KEYS)[0]
        return key(self) == key(other)
    return NotImplemented


def _hash(self: Any) -> int:
    return hash(getattr(type(self), _KEYS)[1](self))


def _setattr(self: Any, name: str, value: Any) -> None:
    raise FrozenInstanceError(f"cannot assign to field {name!r}")


def _delattr(self: Any, name: str) -> None:
    raise FrozenInstanceError(f"cannot delete field {name!r}")
