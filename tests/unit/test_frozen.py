"""`@frozen` behaves as `@dataclass(frozen=True)` does, for everything opgen uses, without
importing `dataclasses`; `dataclasses`' own functions work on its classes."""

from __future__ import annotations

import copy
import dataclasses
import pickle
import subprocess
import sys
from typing import Any, ClassVar

import pytest

from opgen.cached import cached
from opgen.frozen import FrozenInstanceError, field, fields, frozen, replace


def _pair(**options: Any) -> tuple[type[Any], type[Any]]:
    """The same class body made by `dataclasses` and by `frozen`, each with its `field`."""

    def body(field: Any) -> type:
        class Point:
            """A point."""

            x: int
            y: int = 2
            tags: tuple[str, ...] = field(default_factory=tuple)
            label: str = field(default="p", compare=False, repr=False)

        return Point

    theirs: type[Any] = dataclasses.dataclass(frozen=True, **options)(body(dataclasses.field))
    return theirs, frozen(**options)(body(field))


@pytest.mark.parametrize("slots", [False, True])
def test_constructs_compares_hashes_and_prints_as_dataclasses_does(slots: bool) -> None:
    theirs, ours = _pair(slots=slots)
    cases: list[tuple[tuple[Any, ...], dict[str, Any]]] = [
        ((1,), {}),
        ((1, 3), {"tags": ("a",)}),
        ((), {"x": 0, "label": "q"}),
    ]
    for args, kwargs in cases:
        a, b = theirs(*args, **kwargs), ours(*args, **kwargs)
        assert repr(a) == repr(b)
        assert dataclasses.astuple(a) == dataclasses.astuple(b)
    assert ours(1) == ours(1, 2, (), "other label")  # label is not compared
    assert ours(1) != ours(1, 3)
    assert hash(ours(1, tags=("a",))) == hash(ours(1, tags=("a",)))
    assert ours(1) != theirs(1)  # different classes are never equal
    assert [f.name for f in fields(ours)] == ["x", "y", "tags", "label"]
    assert ours.__match_args__ == theirs.__match_args__ == ("x", "y", "tags", "label")
    assert replace(ours(1), y=5) == ours(1, 5)
    assert ("__slots__" in ours.__dict__) is slots
    if not slots:  # with slots, the class attributes are the slots
        assert ours.y == theirs.y == 2 and ours.label == theirs.label == "p"


@pytest.mark.parametrize("slots", [False, True])
def test_dataclasses_functions_work_on_frozen_classes(slots: bool) -> None:
    theirs, ours = _pair(slots=slots)
    assert [f.name for f in dataclasses.fields(ours)] == ["x", "y", "tags", "label"]
    assert [f.name for f in dataclasses.fields(ours(1))] == ["x", "y", "tags", "label"]
    assert dataclasses.replace(ours(1), y=5) == ours(1, 5)
    assert dataclasses.asdict(ours(1)) == dataclasses.asdict(theirs(1))
    label = dataclasses.fields(ours)[3]
    assert (label.default, label.compare, label.repr) == ("p", False, False)
    assert dataclasses.is_dataclass(ours(1)) and dataclasses.is_dataclass(ours)


def test_importing_frozen_does_not_import_dataclasses() -> None:
    code = "import sys, opgen.frozen, opgen.spec.model; print('dataclasses' in sys.modules)"
    run = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert run.stdout == "False\n", run.stderr


def test_replace_refuses_fields_outside_init() -> None:
    @frozen
    class Sized:
        items: tuple[int, ...]
        count: int = field(default=0, init=False)

    assert replace(Sized((1,)), items=(2,)) == Sized((2,))
    with pytest.raises(ValueError, match="field count is declared with init=False"):
        replace(Sized(()), count=1)
    with pytest.raises(TypeError, match="frozen class or instance"):
        fields(object())


def test_fields_declared_with_dataclasses_field_are_taken_as_they_are() -> None:
    @frozen
    class Point:
        x: int
        tags: tuple[str, ...] = dataclasses.field(default_factory=tuple)
        label: str = dataclasses.field(default="p", compare=False)
        hidden: int = dataclasses.field(default=0, init=False, repr=False)

    assert Point(1) == Point(1, (), "other") != Point(2)
    assert repr(Point(1)).endswith("Point(x=1, tags=(), label='p')")
    assert Point.__doc__ == "Point(x, tags=<factory>, label='p')"
    assert Point.label == "p" and not hasattr(Point, "tags")


def test_class_variables_are_not_fields() -> None:
    @frozen
    class Counted:
        limit: ClassVar[int] = 3
        name: str

    assert [f.name for f in fields(Counted)] == ["name"] and Counted.limit == 3


def test_rejects_what_dataclasses_rejects() -> None:
    with pytest.raises(ValueError, match="mutable default <class 'list'> for field items"):

        @frozen
        class Listed:
            items: list[int] = []  # noqa: RUF012

    with pytest.raises(TypeError, match="non-default argument 'b' follows default argument"):

        @frozen
        class Ordered:
            a: int = 0
            b: int  # type: ignore[misc]

    with pytest.raises(ValueError, match="cannot specify both default and default_factory"):
        field(default=1, default_factory=int)


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
        Options("a", 1, True)  # type: ignore[call-arg]
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
