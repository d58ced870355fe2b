"""The compatibility rules, one schema change at a time: old and new schema in, the changes out.

Each case is (old schema, new schema, [(rule, directions it breaks)]). The
directions are PyTorch's verdicts (`is_backward_compatible_with`,
`check_forward_compatible_with`); the conformance test checks them against
torch itself on thousands of operators.
"""

from __future__ import annotations

import pytest

from opgen.spec.compat import compare_schemas, is_backward_compatible, is_forward_compatible
from opgen.spec.compat.values import default_value, is_subtype
from opgen.spec.schema import FunctionSchema
from opgen.spec.types import Type

B, F, BF = ("backward",), ("forward",), ("backward", "forward")

CASES = [
    # arguments: names, order, presence
    (
        "f(Tensor x, int a, int b) -> ()",
        "f(Tensor x, int c, int b) -> ()",
        [("argument-renamed", BF)],
    ),
    (
        "f(Tensor x, int a, int b) -> ()",
        "f(Tensor x, int b, int a) -> ()",
        [("argument-reordered", BF)],
    ),
    ("f(Tensor x, int a) -> ()", "f(Tensor x) -> ()", [("argument-removed", B)]),
    ("f(Tensor x, int a, int b) -> ()", "f(Tensor x, int b) -> ()", [("argument-removed", BF)]),
    (
        "f(Tensor x, int b=1) -> ()",
        "f(Tensor x, int a=1, int b=1) -> ()",
        [("argument-inserted", BF)],
    ),
    ("f(Tensor x) -> ()", "f(Tensor x, int a) -> ()", [("argument-added-without-default", BF)]),
    ("f(Tensor x) -> ()", "f(Tensor x, int a=1) -> ()", [("argument-added", ())]),
    ("f(Tensor x) -> ()", "f(Tensor x, *, int? a=None) -> ()", [("argument-added", ())]),
    (
        "f(Tensor x) -> ()",
        "f(Tensor x, int[] a=[]) -> ()",
        [("argument-added-with-list-default", F)],
    ),
    (
        "f(Tensor x) -> ()",
        "f(Tensor x, int[2] a=1) -> ()",
        [("argument-added-with-list-default", F)],
    ),
    # keyword-only
    (
        "f(Tensor x, int a) -> ()",
        "f(Tensor x, *, int a) -> ()",
        [("argument-made-keyword-only", BF)],
    ),
    ("f(Tensor x, *, int a) -> ()", "f(Tensor x, int a) -> ()", [("argument-made-positional", ())]),
    # defaults
    ("f(Tensor x, int a=1) -> ()", "f(Tensor x, int a) -> ()", [("default-removed", BF)]),
    ("f(Tensor x, int a=1) -> ()", "f(Tensor x, int a=2) -> ()", [("default-changed", BF)]),
    ("f(Tensor x, int a) -> ()", "f(Tensor x, int a=1) -> ()", [("default-added", F)]),
    ("f(Tensor x, float a=1) -> ()", "f(Tensor x, float a=1.0) -> ()", [("default-respelled", ())]),
    ("f(Tensor x, Scalar a=1) -> ()", "f(Tensor x, Scalar a=1.0) -> ()", [("default-changed", BF)]),
    (
        "f(Tensor x, int[2] a=1) -> ()",
        "f(Tensor x, int[2] a=[1,1]) -> ()",
        [("default-respelled", ())],
    ),
    # types
    ("f(Tensor x, int a) -> ()", "f(Tensor x, SymInt a) -> ()", [("argument-type-equivalent", ())]),
    ("f(Tensor x, int a) -> ()", "f(Tensor x, int? a) -> ()", [("argument-type-widened", F)]),
    ("f(Tensor x, int? a) -> ()", "f(Tensor x, int a) -> ()", [("argument-type-narrowed", B)]),
    ("f(Tensor x, float a) -> ()", "f(Tensor x, Scalar a) -> ()", [("argument-type-widened", F)]),
    ("f(Tensor x, int a) -> ()", "f(Tensor x, float a) -> ()", [("argument-type-changed", BF)]),
    (
        "f(Tensor x, int[1] a) -> ()",
        "f(Tensor x, int[2] a) -> ()",
        [("argument-list-size-changed", BF)],
    ),
    # alias annotations and mutability
    ("f(Tensor(a) x) -> ()", "f(Tensor(b) x) -> ()", [("argument-alias-changed", BF)]),
    ("f(Tensor(a|b) x) -> ()", "f(Tensor(b|a) x) -> ()", [("schema-respelled", ())]),
    ("f(Tensor x) -> ()", "f(Tensor(a!) x) -> ()", [("argument-mutability-changed", BF)]),
    # returns
    ("f(Tensor x) -> Tensor", "f(Tensor x) -> Tensor?", [("return-type-changed", B)]),
    ("f(Tensor x) -> Tensor?", "f(Tensor x) -> Tensor", [("return-type-narrowed", ())]),
    ("f(Tensor x) -> int", "f(Tensor x) -> SymInt", [("return-type-equivalent", ())]),
    ("f(Tensor x) -> Tensor", "f(Tensor x) -> Tensor y", [("return-renamed", B)]),
    ("f(Tensor x) -> Tensor", "f(Tensor x) -> (Tensor, Tensor)", [("return-count-changed", BF)]),
    ("f(Tensor(a) x) -> Tensor(a)", "f(Tensor(a) x) -> Tensor", [("return-alias-changed", B)]),
    # out arguments
    (
        "f.out(Tensor x, *, Tensor(a!) out) -> Tensor(a!)",
        "f.out(Tensor x, *, Tensor(a!) result) -> Tensor(a!)",
        [("argument-renamed", BF)],
    ),
    (
        "f.out(Tensor x, *, Tensor(a!) out) -> Tensor(a!)",
        "f.out(Tensor x, int b=1, *, Tensor(a!) out) -> Tensor(a!)",
        [("argument-added", ())],
    ),
    (
        "f.out(Tensor x, *, Tensor(a!) out) -> Tensor(a!)",
        "f.out(Tensor x, *, Tensor(a!) out, Tensor(b!) out2) -> (Tensor(a!), Tensor(b!))",
        [("return-count-changed", BF), ("out-arguments-changed", F), ("argument-added", ())],
    ),
]


@pytest.mark.parametrize(
    ("old", "new", "expected"), CASES, ids=[f"{o} => {n}" for o, n, _ in CASES]
)
def test_rule(old: str, new: str, expected: list[tuple[str, tuple[str, ...]]]) -> None:
    changes = compare_schemas(FunctionSchema.parse(old), FunctionSchema.parse(new))
    assert [(c.rule, c.breaks) for c in changes] == expected
    assert is_backward_compatible(changes) == all("backward" not in b for _, b in expected)
    assert is_forward_compatible(changes) == all("forward" not in b for _, b in expected)


def test_a_removal_is_reported_once_not_at_every_shifted_index() -> None:
    old = FunctionSchema.parse("f(Tensor x, int a, int b, int c, int d) -> ()")
    new = FunctionSchema.parse("f(Tensor x, int b, int c, int d) -> ()")
    changes = compare_schemas(old, new)
    assert [(c.rule, c.subject, c.message) for c in changes] == [
        ("argument-removed", "a", "argument 'a' is removed")
    ]


def test_messages_name_both_sides() -> None:
    old = FunctionSchema.parse("f(Tensor x, int? a=None, Scalar s=1) -> ()")
    new = FunctionSchema.parse("f(Tensor x, int a=None, Scalar s=2) -> ()")
    assert [c.message for c in compare_schemas(old, new)] == [
        "argument 'a' type narrowed from int? to int",
        "argument 's' default changed from 1 to 2",
    ]


@pytest.mark.parametrize(
    ("sub", "sup", "expected"),
    [
        ("int", "SymInt", True),
        ("ScalarType", "int", True),
        ("int", "int?", True),
        ("int?", "int", False),
        ("int", "Scalar", True),
        ("float", "Scalar?", True),
        ("bool", "int", False),
        ("int[]", "SymInt[]", True),
        ("int[]", "Scalar[]", False),
        ("Tensor", "Tensor[]", False),
        ("Tensor[]", "Tensor?[]", False),
    ],
)
def test_subtyping(sub: str, sup: str, expected: bool) -> None:
    assert is_subtype(Type.parse(sub), Type.parse(sup)) is expected


@pytest.mark.parametrize(
    ("type", "text", "value"),
    [
        ("float", "1", ("float", 1.0)),
        ("float?", "1", ("int", 1)),
        ("Scalar", "1.0", ("float", 1.0)),
        ("int[2]", "1", ("list", (("int", 1), ("int", 1)))),
        ("float[]", "[1,2]", ("list", (("float", 1.0), ("float", 2.0)))),
        ("ScalarType", "long", ("int", 4)),
        ("MemoryFormat", "contiguous_format", ("int", 0)),
        ("str", "'fro'", ("str", "fro")),
        ("str", '"a\\"b"', ("str", 'a"b')),
        ("Device", '"cpu"', ("device", "cpu")),
        ("Tensor?", "None", ("none", None)),
    ],
)
def test_default_values(type: str, text: str, value: object) -> None:
    assert default_value(Type.parse(type), text) == value
