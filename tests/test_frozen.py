"""``@frozen`` behaves as ``@dataclass(frozen=True)``: each shape below is made both ways and compared."""

from __future__ import annotations

import dataclasses
import inspect

import pytest

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
