"""``@frozen`` behaves as ``@dataclass(frozen=True)``: each shape below is made both ways and compared."""

from __future__ import annotations

import dataclasses
import inspect

import pytest

import imagelint.frozen as frozen_module
from imagelint.frozen import frozen


def _twins(body: dict) -> tuple[type, type]:
    """The same class body made by dataclass(frozen=True) and by @frozen."""
    made = []
    for decorate in (dataclasses.dataclass(frozen=True), frozen):
        namespace = dict(body)
        namespace["__annotations__"] = dict(body.get("__annotations__", {}))
        made.append(decorate(type("Value", (), namespace)))
    return made[0], made[1]


SHAPES = {
    "plain": ({"__annotations__": {"a": "int", "b": "str"}}, [(1, "x")], {}),
    "defaults": ({"__annotations__": {"a": "int", "b": "tuple", "c": "str | None"}, "b": (), "c": None}, [(1,), (1, (2,), "c")], {}),
    "factories": ({"__annotations__": {"a": "int", "items": "list", "env": "tuple"},
                   "items": dataclasses.field(default_factory=list),
                   "env": dataclasses.field(default_factory=lambda: ("x",))}, [(1,), (1, [1, 2])], {}),
    "repr and compare off": ({"__annotations__": {"a": "int", "secret": "str", "cache": "dict"},
                              "secret": dataclasses.field(default="s", repr=False),
                              "cache": dataclasses.field(default_factory=dict, repr=False, compare=False)},
                             [(1,), (1, "t", {"k": 1})], {}),
    "no fields": ({"__annotations__": {}}, [()], {}),
    "one field": ({"__annotations__": {"a": "int"}}, [(5,)], {}),
    "keywords": ({"__annotations__": {"a": "int", "b": "int"}, "b": 2}, [()], {"a": 1, "b": 3}),
}


@pytest.mark.parametrize("shape", sorted(SHAPES))
def test_same_behaviour_as_frozen_dataclass(shape: str) -> None:
    body, arg_sets, kwargs = SHAPES[shape]
    stdlib, ours = _twins(body)
    assert dataclasses.is_dataclass(ours)
    assert [(f.name, f.default, f.repr, f.compare) for f in dataclasses.fields(ours)] == \
        [(f.name, f.default, f.repr, f.compare) for f in dataclasses.fields(stdlib)]
    assert str(inspect.signature(ours)) == str(inspect.signature(stdlib))
    assert ours.__match_args__ == stdlib.__match_args__
    assert ours.__doc__ == stdlib.__doc__
    for args in arg_sets:
        a, b = stdlib(*args, **kwargs), ours(*args, **kwargs)
        assert repr(b) == repr(a)
        assert dataclasses.asdict(b) == dataclasses.asdict(a)
        twin = ours(*args, **kwargs)
        assert b == twin and not (b != twin)
        try:
            expected = hash(a)
        except TypeError:
            with pytest.raises(TypeError):
                hash(b)
        else:
            assert hash(b) == expected == hash(twin)
        assert b != a  # another class, as between two dataclasses
        for name in [f.name for f in dataclasses.fields(ours)] + ["not_a_field"]:
            with pytest.raises(dataclasses.FrozenInstanceError):
                setattr(b, name, 1)
            with pytest.raises(dataclasses.FrozenInstanceError):
                delattr(b, name)
        if dataclasses.fields(ours):
            first = dataclasses.fields(ours)[0].name
            changed = dataclasses.replace(b, **{first: 99})
            assert getattr(changed, first) == 99 and type(changed) is ours


def test_compare_false_fields_are_left_out_of_eq_and_hash() -> None:
    stdlib, ours = _twins(SHAPES["repr and compare off"][0])
    for cls in (stdlib, ours):
        assert cls(1, "t", {"x": 1}) == cls(1, "t", {"y": 2})
        assert hash(cls(1, "t", {"x": 1})) == hash(cls(1, "t", {"y": 2}))
        assert cls(1, "t") != cls(1, "u")


def test_factories_run_per_instance() -> None:
    _, ours = _twins(SHAPES["factories"][0])
    assert ours(1).items is not ours(1).items


def test_post_init_runs_and_may_validate() -> None:
    @frozen
    class Bounded:
        low: int
        high: int = 10

        def __post_init__(self) -> None:
            if self.low > self.high:
                raise ValueError("low above high")
            object.__setattr__(self, "span", self.high - self.low)

    assert Bounded(2).span == 8
    with pytest.raises(ValueError):
        Bounded(11)


def test_methods_the_body_defines_are_kept() -> None:
    @frozen
    class Named:
        name: str

        def __repr__(self) -> str:
            return f"<{self.name}>"

        def __eq__(self, other: object) -> bool:
            return isinstance(other, Named) and other.name.lower() == self.name.lower()

        def __hash__(self) -> int:
            return hash(self.name.lower())

    assert repr(Named("A")) == "<A>"
    assert Named("A") == Named("a") and hash(Named("A")) == hash(Named("a"))


def test_eq_alone_in_the_body_still_gets_a_field_hash() -> None:
    for decorate in (dataclasses.dataclass(frozen=True), frozen):
        @decorate
        class Loose:
            name: str

            def __eq__(self, other: object) -> bool:
                return isinstance(other, Loose)

        assert Loose("a") == Loose("b")
        assert hash(Loose("a")) == hash(("a",))


def test_subclass_of_a_frozen_class_has_both_fields() -> None:
    @frozen
    class Base:
        a: int

    @frozen
    class Child(Base):
        b: str = "x"

    child = Child(1)
    assert (child.a, child.b) == (1, "x") and repr(child).endswith("Child(a=1, b='x')")
    assert Child(1) == Child(1) and Child(1) != Base(1)
    with pytest.raises(dataclasses.FrozenInstanceError):
        child.b = "y"


def test_recursive_repr_is_shown_as_dots() -> None:
    @frozen
    class Box:
        items: list

    box = Box([])
    box.items.append(box)
    assert repr(box).endswith("Box(items=[...])")


def test_unsupported_shapes_are_refused() -> None:
    with pytest.raises(TypeError, match="follows default"):
        @frozen
        class Misordered:
            a: int = 1
            b: int  # type: ignore[misc]

    with pytest.raises(TypeError, match="init=False and no default"):
        @frozen
        class Uninitialised:
            a: int = dataclasses.field(init=False)

    with pytest.raises(TypeError, match="__setattr__"):
        @frozen
        class OwnSetattr:
            a: int

            def __setattr__(self, name: str, value: object) -> None:
                pass


def test_init_and_doc_are_made_on_first_use() -> None:
    # Most classes a run imports are never built: their __init__ is compiled on first use only.
    stdlib, ours = _twins({"__annotations__": {"a": "int", "b": "str"}, "b": "x"})
    assert not inspect.isfunction(ours.__dict__["__init__"])
    assert not isinstance(ours.__dict__["__doc__"], str)

    class Plain(ours):  # type: ignore[misc, valid-type]  # a subclass built before its base ever was
        pass

    child = Plain(1)
    assert (child.a, child.b) == (1, "x")
    assert inspect.isfunction(ours.__dict__["__init__"])  # compiled once, now the class's own
    assert ours(2, "y") == ours(2, "y") and ours(2).b == "x"
    assert ours.__dict__["__init__"].__qualname__ == "Value.__init__"
    # The generated docstring reads the same through the class, an instance and inspect.getdoc.
    assert ours.__doc__ == ours(1).__doc__ == inspect.getdoc(ours) == stdlib.__doc__ == "Value(a: 'int', b: 'str' = 'x')"
    with pytest.raises(TypeError, match="missing 1 required positional argument"):
        ours()


def test_order_compares_as_dataclass_order() -> None:
    body = {"__annotations__": {"major": "int", "minor": "int", "note": "str"}, "note": dataclasses.field(default="", compare=False)}
    made = []
    for decorate in (dataclasses.dataclass(frozen=True, order=True), frozen(order=True)):
        namespace = dict(body)
        namespace["__annotations__"] = dict(body["__annotations__"])
        made.append(decorate(type("Version", (), namespace)))
    stdlib, ours = made
    values = [(12, 4, "b"), (12, 4, "a"), (9, 0, ""), (12, 10, ""), (3, 11, "z")]
    assert [(v.major, v.minor, v.note) for v in sorted(ours(*t) for t in values)] == \
        [(v.major, v.minor, v.note) for v in sorted(stdlib(*t) for t in values)]
    a, b = ours(9, 0), ours(12, 4)
    assert (a < b, a <= b, a > b, a >= b, a <= ours(9, 0, "x")) == (True, True, False, False, True)
    with pytest.raises(TypeError):
        a < stdlib(9, 0)  # another class: NotImplemented both ways, as between two dataclasses
    with pytest.raises(TypeError):
        a < (9, 0)
    assert frozen(type("Plain", (), {"__annotations__": {"a": "int"}})).__lt__ is object.__lt__  # order is opt-in
    with pytest.raises(TypeError, match="__lt__"):
        @frozen(order=True)
        class OwnOrder:
            a: int

            def __lt__(self, other: object) -> bool:
                return True


def test_a_call_with_every_field_by_position_needs_no_compiled_init() -> None:
    @frozen
    class Checked:
        a: int
        b: str = "x"
        items: list = dataclasses.field(default_factory=list)

        def __post_init__(self) -> None:
            if self.a < 0:
                raise ValueError("a must not be negative")

    init = Checked.__dict__["__init__"]
    Checked(1, "y", [])  # every field, by position: no compile
    assert Checked.__dict__["__init__"].__wrapped__.compiled is None
    assert Checked(1, "y", [2]).items == [2]
    with pytest.raises(ValueError, match="negative"):
        Checked(-1, "y", [])  # __post_init__ runs on the fast path too
    assert init is not Checked.__dict__["__init__"]
    made = Checked(2)  # defaults and factories: bound without compiling
    assert (made.a, made.b, made.items) == (2, "x", []) and made.items is not Checked(2).items
    assert Checked(a=3, b="z") == Checked(3, "z", []) and list(vars(Checked(b="q", a=1))) == ["a", "b", "items"]
    with pytest.raises(ValueError, match="negative"):
        Checked(a=-1)
    assert Checked.__dict__["__init__"].__wrapped__.compiled is None
    # A call that does not bind is the compiled __init__'s: Python's own errors.
    with pytest.raises(TypeError, match="takes from 2 to 4 positional arguments but 5 were given"):
        Checked(1, "y", [], 4)
    assert Checked.__dict__["__init__"].__wrapped__.compiled is not None
    with pytest.raises(TypeError, match="unexpected keyword argument 'c'"):
        Checked(1, c=2)
    with pytest.raises(TypeError, match="multiple values for argument 'a'"):
        Checked(1, a=2)
    with pytest.raises(TypeError, match="missing 1 required positional argument: 'a'"):
        Checked(b="y")
    with pytest.raises(dataclasses.FrozenInstanceError):
        made.a = 5
    # A class built often with keywords gets the compiled __init__ for good.
    for i in range(frozen_module.BIND_CALLS + 1):
        assert Checked(a=i).a == i
    assert not hasattr(Checked.__dict__["__init__"], "__wrapped__") and Checked(4, b="w") == Checked(4, "w", [])

    class Named:
        @property
        def a(self) -> int:
            return 1

    @frozen
    class Shadowed(Named):  # a data descriptor with a field's name: the compiled __init__ (it raises, as dataclass's does)
        a: int

    with pytest.raises(AttributeError):
        Shadowed(1)
