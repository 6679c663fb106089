"""``@frozen``: ``@dataclass(frozen=True)`` at a small part of its start-up cost.

imagelint's values are frozen dataclasses, ~170 of them, and a command imports a hundred.
On CPython 3.10–3.13 ``dataclass(frozen=True)`` writes the source of six methods per class
(``__init__``, ``__repr__``, ``__eq__``, ``__hash__``, ``__setattr__``, ``__delattr__``) and
compiles each: ~0.8 ms a class, ~0.1 s of every run, more than a warm ``check`` spends on
its own work. ``frozen`` lets ``dataclasses`` do the field bookkeeping (so ``fields``,
``replace``, ``asdict``, ``is_dataclass`` and ``__match_args__`` are the stdlib's own); the
methods are shared functions driven by per-class ``operator.attrgetter``\\ s, which cost
nothing to make (``order=True`` adds ``<``, ``<=``, ``>``, ``>=`` the same way).

Nothing is compiled at import. ``__init__`` is settled on the first call: a call that gives
every field by position (most calls) fills the instance's ``__dict__`` directly; keywords and
defaults are bound field by field for a class's first ``BIND_CALLS`` such calls; a class built
often that way, or a call that does not bind (Python's own ``TypeError`` is wanted), gets the
``__init__`` dataclass would compile, compiled then. The docstring dataclass writes for a class
without one (``Name(field: type = default)``) is computed when read. A class costs ~0.05 ms
instead of ~0.8 ms, and a run compiles next to nothing.

The class behaves as ``@dataclass(frozen=True)`` makes it, and tests/test_frozen.py holds it to
that, side by side: the same ``__init__`` signature (defaults, ``default_factory``,
``__post_init__``), the same ``repr`` (``field(repr=False)`` left out, recursion shown as
``...``), ``==`` between instances of the same class over the ``compare`` fields, a hash over
those fields (or ``field(hash=...)``), ordering over them with ``order=True``, and
``dataclasses.FrozenInstanceError`` on assigning or deleting any attribute. A method the class
body defines itself is kept, as dataclass keeps it.
Not offered (use ``dataclass``): ``slots``, ``kw_only``, ``InitVar``, ``init=False``
fields without a default. One difference: ``__dataclass_params__`` describes what
``dataclasses`` generated (no ``frozen``, no ``eq``), so a ``@dataclass(frozen=True)`` cannot
subclass a ``@frozen`` class (it raises at import, so it cannot go unnoticed); ``@frozen``
subclasses of ``@frozen`` classes are fine.
"""

from __future__ import annotations

import dataclasses
import operator
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
def frozen(cls: T | None = None, /, *, order: bool = False) -> Any:
    """Make ``cls`` a frozen dataclass (see the module docstring); ``@frozen(order=True)`` adds
    ``<``, ``<=``, ``>``, ``>=`` over the compared fields, as ``dataclass(order=True)`` does."""
    if cls is None:
        return lambda decorated: _frozen(decorated, order)
    return _frozen(cls, order)


def _frozen(cls: T, order: bool) -> T:
    own = dict(cls.__dict__)
    if own.get("__doc__") is None:
        cls.__doc__ = "-"  # until _LazyDoc below: dataclass would compute the signature now
    cls = dataclasses.dataclass(cls, init=False, repr=False, eq=False)  # fields, match_args, defaults
    fields = dataclasses.fields(cls)
    compared = tuple(f.name for f in fields if f.compare)
    hashed = tuple(f.name for f in fields if (f.compare if f.hash is None else f.hash))
    shown = tuple(f.name for f in fields if f.repr)
    setattr(cls, _KEYS, (_key(compared), _key(hashed), shown))
    if "__init__" not in own:
        cls.__init__ = _LazyInit(cls, fields, *_init_source(cls, fields))  # type: ignore[misc]
    if "__repr__" not in own:
        cls.__repr__ = _repr  # type: ignore[assignment]
    if "__eq__" not in own:
        cls.__eq__ = _eq  # type: ignore[assignment]
    # dataclass's rule for frozen + eq: generate __hash__ unless the body defined one (a body
    # that defines __eq__ alone has __hash__ = None put there by Python; that is not "defined").
    explicit_hash = "__hash__" in own and not (own["__hash__"] is None and "__eq__" in own)
    if not explicit_hash:
        cls.__hash__ = _hash  # type: ignore[assignment]
    made = [("__setattr__", _setattr), ("__delattr__", _delattr)]
    if order:
        made += [("__lt__", _lt), ("__le__", _le), ("__gt__", _gt), ("__ge__", _ge)]
    for name, method in made:
        if name in own:
            raise TypeError(f"cannot overwrite attribute {name} in class {cls.__name__}")
        setattr(cls, name, method)
    if own.get("__doc__") is None:
        cls.__doc__ = _LazyDoc(cls)  # type: ignore[assignment]
    return cls


class _LazyInit:
    """A class's ``__init__`` until it is first looked up: then put in place, compiled or not.

    ``type.__call__`` looks ``__init__`` up through this descriptor, so the first instance
    settles it; from then on the class holds a plain function (``_fast_init``). Two threads
    racing here make it twice and store equal functions: harmless.
    """

    __slots__ = ("owner", "fields", "source", "scope", "compiled")

    def __init__(self, owner: type, fields: tuple[dataclasses.Field, ...], source: str, scope: dict[str, Any]) -> None:
        self.owner, self.fields, self.source, self.scope = owner, fields, source, scope
        self.compiled: Callable[..., None] | None = None

    def __get__(self, obj: Any, objtype: type | None = None) -> Any:
        init = self.owner.__dict__.get("__init__")
        if init is self:
            init = _fast_init(self)
            self.owner.__init__ = init  # type: ignore[misc]
        return init if obj is None else init.__get__(obj, objtype)

    def compile(self) -> Callable[..., None]:
        if self.compiled is None:
            self.compiled = _compile_init(self.owner, self.fields, self.source, self.scope)
        return self.compiled

    @property
    def __signature__(self) -> Any:  # what inspect.signature finds through ``__wrapped__``
        import inspect

        return inspect.signature(self.compile())


# Calls a class's uncompiled __init__ binds in Python before it is compiled (keywords, defaults).
BIND_CALLS = 64


def _fast_init(lazy: _LazyInit) -> Callable[..., None]:
    """``__init__`` without compiling. A call that gives every field by position (most calls)
    fills ``__dict__`` at once; one with keywords or defaults is bound here, field by field,
    for the first ``BIND_CALLS`` such calls of the class (a run builds most classes a few
    times), and then by the compiled ``__init__``, put in place for good. A call that does not
    bind (a missing, unknown or repeated argument) goes to the compiled one, so the error is
    Python's own.

    Assigning through ``__dict__`` is what ``object.__setattr__`` does for a field, in field
    order as the compiled ``__init__`` assigns, unless a data descriptor on the class has the
    field's name: then the compiled one is used from the start.
    """
    cls = lazy.owner
    fields = [f for f in lazy.fields if f.init]
    names = tuple(f.name for f in fields)
    # (An init=False field with a plain default is the class attribute, as with dataclass;
    # one with a factory is set by the compiled __init__ only.)
    made_later = any(not f.init and f.default_factory is not MISSING for f in lazy.fields)
    if made_later or any(hasattr(type(getattr(cls, n, None)), "__set__") for n in names):
        return lazy.compile()
    known = frozenset(names)
    defaults = {f.name: f.default for f in fields if f.default is not MISSING}
    factories = {f.name: f.default_factory for f in fields if f.default_factory is not MISSING}
    count, post_init, bound = len(names), hasattr(cls, "__post_init__"), [0]

    def bind(args: tuple, kwargs: dict[str, Any]) -> dict[str, Any] | None:
        if len(args) > count:
            return None
        given = dict(zip(names, args))
        for name, value in kwargs.items():
            if name in given or name not in known:
                return None
            given[name] = value
        values = {}
        for name in names:
            if name in given:
                values[name] = given[name]
            elif name in defaults:
                values[name] = defaults[name]
            elif name in factories:
                values[name] = factories[name]()
            else:
                return None
        return values

    def __init__(self: Any, *args: Any, **kwargs: Any) -> None:
        if len(args) == count and not kwargs:
            self.__dict__.update(zip(names, args))
        else:
            bound[0] += 1
            values = bind(args, kwargs) if bound[0] <= BIND_CALLS else None
            if values is None:
                compiled = lazy.compile()
                if bound[0] > BIND_CALLS:
                    cls.__init__ = compiled  # type: ignore[misc]  # built often this way: compiled from now on
                compiled(self, *args, **kwargs)
                return
            self.__dict__.update(values)
        if post_init:
            self.__post_init__()

    __init__.__qualname__ = f"{cls.__qualname__}.__init__"
    __init__.__module__ = cls.__module__
    __init__.__wrapped__ = lazy  # type: ignore[attr-defined]  # inspect.signature: the fields, not *args
    return __init__


class _LazyDoc:
    """The docstring dataclass writes for a class without one, computed when read.

    A class's ``__doc__`` that is a descriptor is called by ``type.__doc__`` (and found by
    instance lookup), so ``help()``, ``inspect.getdoc`` and ``cls.__doc__`` all see the text.
    """

    __slots__ = ("owner", "text")

    def __init__(self, owner: type) -> None:
        self.owner, self.text = owner, None

    def __get__(self, obj: Any, objtype: type | None = None) -> str:
        if self.text is None:
            import inspect

            self.text = self.owner.__name__ + str(inspect.signature(self.owner)).replace(" -> None", "")
        return self.text


def _key(names: tuple[str, ...]) -> Callable[[Any], Any]:
    """A C-speed tuple of the named attributes (``()`` for none)."""
    if not names:
        return lambda _self: ()
    if len(names) == 1:
        only = attrgetter(names[0])
        return lambda self: (only(self),)
    return attrgetter(*names)


def _init_source(cls: type, fields: tuple[dataclasses.Field, ...]) -> tuple[str, dict[str, Any]]:
    """The source of ``__init__`` as dataclass(frozen=True) writes it (object.__setattr__ per
    field) and the names it uses; a shape dataclass would refuse raises ``TypeError`` here, at
    class creation, though the compiling waits for the first use."""
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
    return source, scope


def _compile_init(cls: type, fields: tuple[dataclasses.Field, ...], source: str, scope: dict[str, Any]) -> Callable[..., None]:
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


def _ordered(compare: Callable[[Any, Any], bool]) -> Callable[[Any, Any], Any]:
    def method(self: Any, other: Any) -> Any:
        if other.__class__ is self.__class__:
            key = getattr(type(self), _KEYS)[0]
            return compare(key(self), key(other))
        return NotImplemented

    return method


_lt, _le, _gt, _ge = (_ordered(operator.lt), _ordered(operator.le), _ordered(operator.gt), _ordered(operator.ge))


def _hash(self: Any) -> int:
    return hash(getattr(type(self), _KEYS)[1](self))


def _setattr(self: Any, name: str, value: Any) -> None:
    raise FrozenInstanceError(f"cannot assign to field {name!r}")


def _delattr(self: Any, name: str) -> None:
    raise FrozenInstanceError(f"cannot delete field {name!r}")
