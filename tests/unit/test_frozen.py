"""`@frozen` behaves as `@dataclass(frozen=True)` does, for everything opgen uses."""

from __future__ import annotations

import copy
import dataclasses
import pickle
from dataclasses import FrozenInstanceError, dataclass, field
from typing import Any

import pytest

from opgen.cached import cached
from opgen.frozen import frozen


def _pair(**options: Any) -> tuple[type[Any], type[Any]]:
    """The same class body made by `dataclasses` and by `frozen`."""

    def body() -> type:
        class Point:
            """A point."""

            x: int
            y: int = 2
            tags: tuple[str, ...] = field(default_factory=tuple)
            label: str = field(default="p", compare=False, repr=False)

        return Point

    return dataclass(frozen=True, **options)(body()), frozen(**options)(body())


@pytest.mark.parametrize("slots", [False, True])
def test_constructs_compares_hashes_and_prints_as_dataclasses_does(slots: bool) -> None:
    theirs, ours = _pair(slots=slots)
    for args, kwargs in [((1,), {}), ((1, 3), {"tags": ("a",)}), ((), {"x": 0, "label": "q"})]:
        a, b = theirs(*args, **kwargs), ours(*args, **kwargs)
        assert repr(a) == repr(b)
        assert dataclasses.astuple(a) == dataclasses.astuple(b)
    assert ours(1) == ours(1, 2, (), "other label")  # label is not compared
    assert ours(1) != ours(1, 3)
    assert hash(ours(1, tags=("a",))) == hash(ours(1, tags=("a",)))
    assert ours(1) != theirs(1)  # different classes are never equal
    assert [f.name for f in dataclasses.fields(ours)] == ["x", "y", "tags", "label"]
    assert ours.__match_args__ == ("x", "y", "tags", "label")
    assert dataclasses.replace(ours(1), y=5) == ours(1, 5)
    assert ("__slots__" in ours.__dict__) is slots


@pytest.mark.parametrize("slots", [False, True])
def test_fields_cannot_be_assigned_or_deleted(slots: bool) -> None:
    _, ours = _pair(slots=slots)
    p = ours(1)
    with pytest.raises(FrozenInstanceError, match="cannot assign to field 'x'"):
        p.x = 2
    with pytest.raises(FrozenInstanceError, match="cannot delete field 'y'"):
        del p.y
    with pytest.raises(FrozenInstanceError):
        p.other = 3


@frozen
class _Pair:
    first: int
    second: tuple[str, ...] = ()


@frozen(slots=True)
class _SlottedPair:
    first: int
    second: tuple[str, ...] = ()


@pytest.mark.parametrize("cls", [_Pair, _SlottedPair])
def test_instances_pickle_and_copy(cls: type[_Pair]) -> None:
    p = cls(1, ("a",))
    for clone in (pickle.loads(pickle.dumps(p)), copy.copy(p), copy.deepcopy(p)):
        assert clone == p and clone is not p


def test_eq_false_keeps_identity() -> None:
    @frozen(eq=False)
    class Node:
        name: str

    a = Node("a")
    assert a == a and a != Node("a")
    assert hash(a) == object.__hash__(a)


def test_a_class_keeps_its_own_eq_hash_and_repr() -> None:
    @frozen
    class Name:
        text: str
        ignored: int = 0

        def __eq__(self, other: object) -> bool:
            return isinstance(other, Name) and self.text == other.text

        def __hash__(self) -> int:
            return hash(self.text)

        def __repr__(self) -> str:
            return f"<{self.text}>"

    assert Name("a", 1) == Name("a", 2)
    assert hash(Name("a", 1)) == hash("a")
    assert repr(Name("a")) == "<a>"


def test_own_eq_without_hash_gets_a_field_hash_as_in_dataclasses() -> None:
    @frozen
    class Name:
        text: str

        def __eq__(self, other: object) -> bool:
            return isinstance(other, Name) and self.text == other.text

    assert hash(Name("a")) == hash(Name("a"))


def test_post_init_sets_the_fields_that_are_not_parameters() -> None:
    @frozen
    class Sized:
        items: tuple[int, ...]
        count: int = field(init=False)
        kind: str = field(default="sized", init=False)

        def __post_init__(self) -> None:
            object.__setattr__(self, "count", len(self.items))

    s = Sized((1, 2, 3))
    assert (s.count, s.kind) == (3, "sized")
    assert repr(s).endswith("Sized(items=(1, 2, 3), count=3, kind='sized')")


def test_keyword_only_fields_follow_the_positional_ones() -> None:
    @frozen
    class Options:
        name: str
        verbose: bool = field(default=False, kw_only=True)
        level: int = 0

    assert Options("a", 1, verbose=True) == Options(name="a", level=1, verbose=True)
    with pytest.raises(TypeError):
        Options("a", 1, True)  # type: ignore[misc]
    assert Options.__doc__ == "Options(name, level=0, *, verbose=False)"


def test_subclasses_add_fields_and_compare_by_all_of_them() -> None:
    @frozen
    class Base:
        a: int

    @frozen
    class Derived(Base):
        b: int = 0

    assert Derived(1, 2) == Derived(1, 2) != Derived(1, 3)
    assert Derived(1) != Base(1)
    assert repr(Derived(1, 2)).endswith("Derived(a=1, b=2)")


def test_cached_attributes_live_beside_the_fields() -> None:
    @frozen
    class Text:
        parts: tuple[str, ...]

        @cached
        def joined(self) -> str:
            return "".join(self.parts)

    t = Text(("a", "b"))
    assert t.joined == "ab" and t.__dict__ == {"parts": ("a", "b"), "joined": "ab"}
    assert t == Text(("a", "b"))


def test_undocumented_classes_document_their_constructor() -> None:
    @frozen
    class Span:
        start: int
        end: int = 0
        marks: list[int] = field(default_factory=list)

    assert Span.__doc__ == "Span(start, end=0, marks=<factory>)"
    assert Span.__init__.__qualname__.endswith("Span.__init__")
