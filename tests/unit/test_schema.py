"""The function schema language, as `opgen.spec.schema` reads it.

Read top to bottom, this file is a specification of the schema language:

1. every form a schema can take, shown by round-tripping it through the parser;
2. how a parsed schema is structured (argument groups, kind, signature);
3. every way a schema can be wrong, with the exact message and the column of
   the text that it points at;
4. conformance: every schema of PyTorch's own spec reads exactly as upstream
   torchgen reads it.

Where the current behaviour is not what it should be, the test states what it
should be and is marked `xfail(strict=True)`, so that fixing the behaviour
turns the mark into an error that asks for the mark to be removed.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import pytest
import yaml

from opgen.diagnostics import SpecError
from opgen.spec.arguments import Argument, Arguments, Return
from opgen.spec.keys import SchemaKind
from opgen.spec.schema import BaseOperatorName, FunctionSchema, OperatorName
from opgen.spec.syntax import SchemaError
from opgen.spec.types import Annotation, BaseTy, Type

Parser = Callable[[str], object]

# -- 1. round trip: every form of the language --------------------------------------

BASE_TYPES = [
    "Tensor", "int", "SymInt", "float", "bool", "str", "Scalar", "ScalarType", "Layout",
    "Device", "DeviceIndex", "MemoryFormat", "QScheme", "Generator", "Storage", "Stream",
    "SymBool", "GraphModule", "DimVector",
]  # fmt: skip

ROUND_TRIP: list[tuple[str, Parser, str]] = [
    *[(f"base type {t}", Type.parse, t) for t in BASE_TYPES],
    ("optional", Type.parse, "Tensor?"),
    ("optional of optional", Type.parse, "int??"),
    ("sized list", Type.parse, "int[2]"),
    ("multi-digit list size", Type.parse, "int[10]"),
    ("unsized list", Type.parse, "SymInt[]"),
    ("list of optionals", Type.parse, "Tensor?[]"),
    ("optional sized list", Type.parse, "int[1]?"),
    ("list of lists", Type.parse, "int[][3]"),
    ("custom class", Type.parse, "__torch__.torch.classes.quantized.Conv2dPackedParamsBase"),
    ("optional custom class", Type.parse, "__torch__.torch.classes.rnn.CellParamsBase?"),
    ("alias", Annotation.parse, "a"),
    ("write", Annotation.parse, "a!"),
    ("alias set", Annotation.parse, "a|b"),
    ("wildcard after", Annotation.parse, "a -> *"),
    ("set after", Annotation.parse, "b -> a|b"),
    ("written, then wildcard", Annotation.parse, "a! -> *"),
    ("plain argument", Argument.parse, "Tensor self"),
    ("view argument", Argument.parse, "Tensor(a) self"),
    ("mutable argument", Argument.parse, "Tensor(a!) self"),
    ("mutable optional argument", Argument.parse, "Tensor(a!)? out"),
    ("aliased list argument", Argument.parse, "Tensor(a)[] tensors"),
    ("mutable list argument", Argument.parse, "Tensor(a!)[] self"),
    ("wildcard argument", Argument.parse, "Tensor(a -> *) self"),
    ("alias-set argument", Argument.parse, "Tensor(a|b) self"),
    ("alias-set-after argument", Argument.parse, "Tensor(b -> a|b) other"),
    ("default None", Argument.parse, "Tensor? weight=None"),
    ("default []", Argument.parse, "int[1] dim=[]"),
    ("default float", Argument.parse, "float eps=1e-05"),
    ("default string", Argument.parse, 'str reduction="mean"'),
    ("default enum", Argument.parse, "MemoryFormat memory_format=contiguous_format"),
    ("default negative", Argument.parse, "int dim=-1"),
    ("default bool", Argument.parse, "bool keepdim=False"),
    ("unnamed return", Return.parse, "Tensor"),
    ("named return", Return.parse, "Tensor values"),
    ("aliased named return", Return.parse, "Tensor(a!) out"),
    ("list return", Return.parse, "Tensor[]"),
    ("name", OperatorName.parse, "add"),
    ("name with overload", OperatorName.parse, "add.Tensor"),
    ("inplace name", OperatorName.parse, "add_.Tensor"),
    ("out overload", OperatorName.parse, "add.out"),
    ("dunder name", OperatorName.parse, "__and__.Tensor"),
    ("inplace dunder name", OperatorName.parse, "__iand__.Tensor"),
    ("functional name", OperatorName.parse, "_fused_moving_avg_obs_fq_helper_functional"),
    ("private name", OperatorName.parse, "_foo"),
    ("overload with digits", OperatorName.parse, "foo.dim_IntList_out2"),
    ("no arguments", FunctionSchema.parse, "foo() -> Tensor"),
    ("no returns", FunctionSchema.parse, "set_data(Tensor(a!) self, Tensor new_data) -> ()"),
    ("one return", FunctionSchema.parse, "abs(Tensor self) -> Tensor"),
    ("tuple return", FunctionSchema.parse, "max.dim(Tensor self, int dim) -> (Tensor, Tensor)"),
    (
        "named tuple return",
        FunctionSchema.parse,
        "max.dim(Tensor self, int dim, bool keepdim=False) -> (Tensor values, Tensor indices)",
    ),
    (
        "keyword-only",
        FunctionSchema.parse,
        "add.Tensor(Tensor self, Tensor other, *, Scalar alpha=1) -> Tensor",
    ),
    (
        "out arguments",
        FunctionSchema.parse,
        "add.out(Tensor self, Tensor other, *, Scalar alpha=1, Tensor(a!) out) -> Tensor(a!)",
    ),
    (
        "out arguments right after '*'",
        FunctionSchema.parse,
        "abs.out(Tensor self, *, Tensor(a!) out) -> Tensor(a!)",
    ),
    (
        "named out returns",
        FunctionSchema.parse,
        "max.dim_max(Tensor self, int dim, bool keepdim=False, *, Tensor(a!) max, "
        "Tensor(b!) max_values) -> (Tensor(a!) values, Tensor(b!) indices)",
    ),
    ("inplace", FunctionSchema.parse, "abs_(Tensor(a!) self) -> Tensor(a!)"),
    (
        "inplace dunder",
        FunctionSchema.parse,
        "__iand__.Tensor(Tensor(a!) self, Tensor other) -> Tensor(a!)",
    ),
    ("dunder", FunctionSchema.parse, "__and__.Scalar(Tensor self, Scalar other) -> Tensor"),
    ("inplace on a list", FunctionSchema.parse, "_foreach_abs_(Tensor(a!)[] self) -> ()"),
    (
        "functional variant",
        FunctionSchema.parse,
        "_foo_functional(Tensor self, Tensor running_mean) -> (Tensor, Tensor running_mean_out)",
    ),
    ("view", FunctionSchema.parse, "view(Tensor(a) self, SymInt[] size) -> Tensor(a)"),
    (
        "self in the middle",
        FunctionSchema.parse,
        "where.self(Tensor condition, Tensor self, Tensor other) -> Tensor",
    ),
    (
        "TensorOptions",
        FunctionSchema.parse,
        "empty.memory_format(SymInt[] size, *, ScalarType? dtype=None, Layout? layout=None, "
        "Device? device=None, bool? pin_memory=None, MemoryFormat? memory_format=None) -> Tensor",
    ),
    (
        "custom class argument",
        FunctionSchema.parse,
        "conv2d_unpack(__torch__.torch.classes.quantized.Conv2dPackedParamsBase packed_weights) "
        "-> (Tensor unpacked_weights, Tensor? B_origin)",
    ),
    (
        "scratch out argument",
        FunctionSchema.parse,
        "foo.out(Tensor self, *, Tensor(a!) out, Tensor(b!) _scratch_tmp) -> Tensor(a!)",
    ),
    (
        "list out argument",
        FunctionSchema.parse,
        "_foreach_abs.out(Tensor[] self, *, Tensor(a!)[] out) -> ()",
    ),
]


@pytest.mark.parametrize(("parse", "text"), [pytest.param(p, t, id=i) for i, p, t in ROUND_TRIP])
def test_round_trip(parse: Parser, text: str) -> None:
    assert str(parse(text)) == text


@pytest.mark.parametrize("text", [t for _, p, t in ROUND_TRIP if p is Type.parse])
def test_every_type_round_trips_inside_a_schema(text: str) -> None:
    schema = f"foo(Tensor self, {text} x) -> Tensor"
    assert str(FunctionSchema.parse(schema)) == schema


@pytest.mark.parametrize("text", ["Tensor", "Tensor?", "Tensor[]"])
@pytest.mark.parametrize("annotation", ["a", "a!", "a|b", "a -> *", "b -> a|b"])
def test_annotation_binds_to_tensor_before_suffix(text: str, annotation: str) -> None:
    arg = Argument.parse(f"{text.replace('Tensor', f'Tensor({annotation})')} x")
    assert str(arg.type) == text
    assert str(arg.annotation) == annotation


def test_every_base_type_is_listed() -> None:
    # Dimname is read only for the releases that have it (test_named_dimensions.py).
    assert sorted([*BASE_TYPES, "Dimname"]) == sorted(t.value for t in BaseTy)


def test_annotation_fields() -> None:
    assert Annotation.parse("a!") == Annotation(("a",), True, ())
    assert Annotation.parse("a|b") == Annotation(("a", "b"), False, ())
    assert Annotation.parse("a -> *") == Annotation(("a",), False, ("*",))
    assert Annotation.parse("b -> a|b") == Annotation(("b",), False, ("a", "b"))


@pytest.mark.parametrize(
    ("text", "base", "inplace", "dunder", "functional"),
    [
        ("add", "add", False, False, False),
        ("add_", "add", True, False, False),
        ("__and__", "and", False, True, False),
        ("__iand__", "and", True, True, False),
        ("__ior__", "or", True, True, False),
        ("foo_functional", "foo", False, False, True),
    ],
)
def test_base_operator_name_fields(
    text: str, base: str, inplace: bool, dunder: bool, functional: bool
) -> None:
    assert BaseOperatorName.parse(text) == BaseOperatorName(base, inplace, dunder, functional)


def test_overload_name() -> None:
    name = OperatorName.parse("add_.Tensor")
    assert name.overload_name == "Tensor"
    assert name.unambiguous_name() == "add__Tensor"
    assert OperatorName.parse("abs").overload_name == ""


# -- 2. structure ------------------------------------------------------------------


def _names(args: tuple[Argument, ...] | list[Argument]) -> list[str]:
    return [a.name for a in args]


def test_self_splits_positional_arguments() -> None:
    args = Arguments.parse("Tensor condition, Tensor self, Tensor other")
    assert _names(args.pre_self_positional) == ["condition"]
    assert args.self_arg is not None
    assert args.self_arg.argument.name == "self"
    assert _names(args.post_self_positional) == ["other"]
    assert _names(list(args.flat_positional)) == ["condition", "self", "other"]


def test_without_self_all_positionals_come_after_self() -> None:
    args = Arguments.parse("Tensor input, int dim")
    assert args.self_arg is None
    assert args.pre_self_positional == ()
    assert _names(args.post_self_positional) == ["input", "dim"]


def test_tensor_options_grouping() -> None:
    args = Arguments.parse(
        "SymInt[] size, *, Generator? generator, ScalarType? dtype=None, Layout? layout=None, "
        "Device? device=None, bool? pin_memory=None, MemoryFormat? memory_format=None"
    )
    assert _names(args.pre_tensor_options_kwarg_only) == ["generator"]
    assert args.tensor_options is not None
    assert _names(list(args.tensor_options.all())) == ["dtype", "layout", "device", "pin_memory"]
    assert _names(args.post_tensor_options_kwarg_only) == ["memory_format"]
    assert args.out == ()


def test_tensor_options_may_be_non_optional() -> None:
    args = Arguments.parse(
        "*, ScalarType dtype, Layout layout, Device device, bool pin_memory=False"
    )
    assert args.tensor_options is not None


@pytest.mark.parametrize(
    "text",
    [
        # not all four
        "Tensor self, *, ScalarType? dtype=None, Layout? layout=None, Device? device=None",
        # not in that order
        "*, Layout? layout=None, ScalarType? dtype=None, Device? device=None, "
        "bool? pin_memory=None",
        # not keyword-only
        "ScalarType? dtype=None, Layout? layout=None, Device? device=None, bool? pin_memory=None",
        # interrupted
        "*, ScalarType? dtype=None, Layout? layout=None, int x, Device? device=None, "
        "bool? pin_memory=None",
        # wrong type
        "*, int? dtype=None, Layout? layout=None, Device? device=None, bool? pin_memory=None",
    ],
)
def test_no_tensor_options_grouping(text: str) -> None:
    args = Arguments.parse(text)
    assert args.tensor_options is None
    assert args.post_tensor_options_kwarg_only == ()


def test_out_arguments_are_the_trailing_mutable_keyword_arguments() -> None:
    args = Arguments.parse("Tensor self, *, Scalar alpha=1, Tensor(a!) values, Tensor(b!) indices")
    assert _names(args.pre_tensor_options_kwarg_only) == ["alpha"]
    assert _names(args.out) == ["values", "indices"]
    assert _names(list(args.flat_kwarg_only)) == ["alpha"]
    assert _names(list(args.flat_all)) == ["self", "alpha", "values", "indices"]


def test_mutable_positional_arguments_are_not_out_arguments() -> None:
    args = Arguments.parse("Tensor self, Tensor(a!) running_mean, *, float momentum")
    assert _names(args.post_self_positional) == ["running_mean"]
    assert _names(list(args.post_self_positional_mutable)) == ["running_mean"]
    assert args.out == ()


@pytest.mark.parametrize(
    ("text", "kind"),
    [
        ("add.Tensor(Tensor self, Tensor other) -> Tensor", SchemaKind.functional),
        ("view(Tensor(a) self, SymInt[] size) -> Tensor(a)", SchemaKind.functional),
        ("set_data(Tensor(a!) self, Tensor new_data) -> ()", SchemaKind.functional),
        ("add_.Tensor(Tensor(a!) self, Tensor other) -> Tensor(a!)", SchemaKind.inplace),
        ("_foreach_abs_(Tensor(a!)[] self) -> ()", SchemaKind.inplace),
        ("__iand__.Tensor(Tensor(a!) self, Tensor other) -> Tensor(a!)", SchemaKind.inplace),
        ("add.out(Tensor self, Tensor other, *, Tensor(a!) out) -> Tensor(a!)", SchemaKind.out),
        ("_foreach_abs.out(Tensor[] self, *, Tensor(a!)[] out) -> ()", SchemaKind.out),
        ("foo(Tensor self, Tensor(a!) running_mean) -> Tensor", SchemaKind.mutable),
        (
            "foo.out(Tensor self, *, Tensor(a!) out, Tensor(b!) _scratch_tmp) -> Tensor(a!)",
            SchemaKind.scratch,
        ),
    ],
)
def test_kind(text: str, kind: SchemaKind) -> None:
    schema = FunctionSchema.parse(text)
    assert schema.kind is kind
    assert schema.is_out_fn() == (kind in (SchemaKind.out, SchemaKind.scratch))


@pytest.mark.parametrize(
    ("text", "signature", "named"),
    [
        (
            "add.Tensor(Tensor self, Tensor other, *, Scalar alpha=1) -> Tensor",
            "add(Tensor self, Tensor other, *, Scalar alpha=1) -> Tensor",
            "add(Tensor self, Tensor other, *, Scalar alpha=1) -> Tensor",
        ),
        (  # inplace: the name loses its '_' and self its annotation
            "add_.Tensor(Tensor(a!) self, Tensor other, *, Scalar alpha=1) -> Tensor(a!)",
            "add(Tensor self, Tensor other, *, Scalar alpha=1) -> Tensor",
            "add(Tensor self, Tensor other, *, Scalar alpha=1) -> Tensor",
        ),
        (  # out: out arguments go, returns lose their annotations and names
            "max.dim_max(Tensor self, int dim, *, Tensor(a!) max, Tensor(b!) max_values) "
            "-> (Tensor(a!) values, Tensor(b!) indices)",
            "max(Tensor self, int dim) -> (Tensor, Tensor)",
            "max(Tensor self, int dim) -> (Tensor values, Tensor indices)",
        ),
        (  # TensorOptions go; keyword arguments after them stay
            "empty.memory_format(SymInt[] size, *, ScalarType? dtype=None, Layout? layout=None, "
            "Device? device=None, bool? pin_memory=None, MemoryFormat? memory_format=None) "
            "-> Tensor",
            "empty(SymInt[] size, *, MemoryFormat? memory_format=None) -> Tensor",
            "empty(SymInt[] size, *, MemoryFormat? memory_format=None) -> Tensor",
        ),
        (  # mutable arguments that are not returned become returns, named {arg}_out
            "_amp_foreach_non_finite_check_and_unscale_(Tensor(a!)[] self, Tensor(b!) found_inf,"
            " Tensor inv_scale) -> ()",
            "_amp_foreach_non_finite_check_and_unscale(Tensor[] self, Tensor found_inf, "
            "Tensor inv_scale) -> (Tensor[], Tensor)",
            "_amp_foreach_non_finite_check_and_unscale(Tensor[] self, Tensor found_inf, "
            "Tensor inv_scale) -> (Tensor[] self_out, Tensor found_inf_out)",
        ),
        (  # ...after the declared returns
            "foo(Tensor self, Tensor(a!) running_mean) -> Tensor output",
            "foo(Tensor self, Tensor running_mean) -> (Tensor, Tensor)",
            "foo(Tensor self, Tensor running_mean) -> (Tensor output, Tensor running_mean_out)",
        ),
        (  # a scratch argument is not returned, so it becomes a return
            "foo.out(Tensor self, *, Tensor(a!) out, Tensor(b!) _scratch_tmp) -> Tensor(a!)",
            "foo(Tensor self) -> (Tensor, Tensor)",
            "foo(Tensor self) -> (Tensor, Tensor _scratch_tmp_out)",
        ),
        (  # a list out argument returns nothing, so it becomes a return
            "_foreach_abs.out(Tensor[] self, *, Tensor(a!)[] out) -> ()",
            "_foreach_abs(Tensor[] self) -> Tensor[]",
            "_foreach_abs(Tensor[] self) -> Tensor[] out_out",
        ),
        (  # dunders stay dunders
            "__iand__.Tensor(Tensor(a!) self, Tensor other) -> Tensor(a!)",
            "__and__(Tensor self, Tensor other) -> Tensor",
            "__and__(Tensor self, Tensor other) -> Tensor",
        ),
        (  # view annotations go
            "view(Tensor(a) self, SymInt[] size) -> Tensor(a)",
            "view(Tensor self, SymInt[] size) -> Tensor",
            "view(Tensor self, SymInt[] size) -> Tensor",
        ),
    ],
)
def test_signature(text: str, signature: str, named: str) -> None:
    schema = FunctionSchema.parse(text)
    assert str(schema.signature()) == signature
    assert str(schema.signature(keep_return_names=True)) == named


def test_signature_strip_default() -> None:
    schema = FunctionSchema.parse("sum(Tensor self, *, ScalarType? dtype=None) -> Tensor")
    assert (
        str(schema.signature(strip_default=True))
        == "sum(Tensor self, *, ScalarType? dtype) -> Tensor"
    )


def test_signature_gives_bernoulli_p_a_default_to_pair_with_bernoulli_() -> None:
    schema = FunctionSchema.parse(
        "bernoulli.p(Tensor self, float p, *, Generator? generator=None) -> Tensor"
    )
    assert str(schema.signature()) == (
        "bernoulli(Tensor self, float p=0.5, *, Generator? generator=None) -> Tensor"
    )


def test_variants_of_one_operator_share_a_signature() -> None:
    variants = [
        "add.Tensor(Tensor self, Tensor other, *, Scalar alpha=1) -> Tensor",
        "add_.Tensor(Tensor(a!) self, Tensor other, *, Scalar alpha=1) -> Tensor(a!)",
        "add.out(Tensor self, Tensor other, *, Scalar alpha=1, Tensor(a!) out) -> Tensor(a!)",
    ]
    assert len({str(FunctionSchema.parse(v).signature()) for v in variants}) == 1


@pytest.mark.parametrize(
    ("text", "view_signature"),
    [
        (
            "view_copy(Tensor self, SymInt[] size) -> Tensor",
            "view(Tensor self, SymInt[] size) -> Tensor",
        ),
        (
            "view_copy.out(Tensor self, SymInt[] size, *, Tensor(a!) out) -> Tensor(a!)",
            "view(Tensor self, SymInt[] size) -> Tensor",
        ),
        (
            "view(Tensor(a) self, SymInt[] size) -> Tensor(a)",
            "view(Tensor self, SymInt[] size) -> Tensor",
        ),
        (
            "slice_scatter(Tensor self, Tensor src, int dim=0) -> Tensor",
            "slice_inverse(Tensor self, Tensor src, int dim=0) -> Tensor",
        ),
        (
            "copy_(Tensor(a!) self, Tensor src) -> Tensor(a!)",
            "copy(Tensor self, Tensor src) -> Tensor",
        ),
    ],
)
def test_view_signature(text: str, view_signature: str) -> None:
    assert str(FunctionSchema.parse(text).view_signature()) == view_signature


# -- 3. errors ---------------------------------------------------------------------


@dataclass(frozen=True)
class Bad:
    """An invalid schema, the message it gets, and the column it should point at.

    `message_bug`/`offset_bug` say why the current message/offset is not yet
    the expected one; the test of that part is then a strict xfail.
    """

    id: str
    text: str
    message: str
    offset: int
    message_bug: str | None = None
    offset_bug: str | None = None


BAD = [
    Bad(
        "unknown type",
        "foo(Tensr self) -> Tensor",
        "unknown type 'Tensr'; did you mean 'Tensor'?",
        4,
    ),
    Bad(
        "unknown return type",
        "foo(Tensor self) -> Tensr",
        "unknown type 'Tensr'; did you mean 'Tensor'?",
        20,
    ),
    Bad("double space", "foo(Tensor  self) -> Tensor", "unknown type 'Tensor '", 4),
    Bad("trailing comma", "foo(Tensor self, ) -> Tensor", "trailing comma in argument list", 15),
    Bad(
        "trailing comma without space",
        "foo(Tensor self,) -> Tensor",
        "trailing comma in argument list",
        15,
    ),
    Bad(
        "empty argument",
        "foo(Tensor self, , int x) -> Tensor",
        "empty argument in argument list",
        15,
    ),
    Bad(
        "missing name",
        "foo(Tensor) -> Tensor",
        "argument 'Tensor' needs a type and a name, separated by a space",
        4,
    ),
    Bad(
        "invalid argument name",
        "foo(Tensor self, int 1x) -> Tensor",
        "invalid argument name '1x'",
        21,
    ),
    Bad(
        "duplicate argument", "foo(Tensor x, int x=1) -> Tensor", "duplicate argument name 'x'", 18
    ),
    Bad(
        "empty default",
        "foo(Tensor self, int x=) -> Tensor",
        "argument 'int x=' has an empty default",
        23,
    ),
    Bad(
        "two defaults",
        "foo(Tensor self, int x=1=2) -> Tensor",
        "argument 'int x=1=2' has more than one '='",
        24,
    ),
    Bad(
        "'*' twice",
        "foo(Tensor self, *, int a, *, int b) -> Tensor",
        "the keyword-only marker '*' may appear only once",
        27,
    ),
    Bad(
        "'*' last",
        "foo(Tensor self, *) -> Tensor",
        "the keyword-only marker '*' must be followed by arguments",
        17,
    ),
    Bad(
        "bad annotation",
        "foo(Tensor(a!!) self) -> Tensor",
        "invalid alias annotation 'a!!'; expected e.g. 'a', 'a!', 'a|b' or 'a -> *'",
        11,
    ),
    Bad(
        "upper-case annotation",
        "foo(Tensor(A) self) -> Tensor",
        "invalid alias annotation 'A'; expected e.g. 'a', 'a!', 'a|b' or 'a -> *'",
        11,
    ),
    Bad(
        "written alias set",
        "foo(Tensor(a|b!) self) -> Tensor",
        "alias set 'a|b' cannot be written ('!')",
        11,
    ),
    Bad(
        "annotation on int",
        "foo(Tensor self, int(a) x) -> Tensor",
        "alias annotations are allowed only on Tensor types (Tensor, Tensor?, Tensor[]), "
        "not on 'int'",
        20,
    ),
    Bad(
        "annotation before a sized list",
        "foo(Tensor(a)[1] self) -> Tensor",
        "an alias-annotated Tensor may only be followed by '?' or '[]', not '[1]'",
        13,
    ),
    Bad(
        "list size 0",
        "foo(Tensor self, int[0] x) -> Tensor",
        "invalid list size '0' (an unsized list is written '[]')",
        21,
    ),
    Bad(
        "list size with leading 0",
        "foo(Tensor self, int[01] x) -> Tensor",
        "invalid list size '01' (an unsized list is written '[]')",
        21,
    ),
    Bad(
        "_out suffix",
        "foo_out(Tensor self) -> Tensor",
        "operator name 'foo_out' ends in '_out', which is reserved; "
        "did you mean an 'out' overload name?",
        3,
    ),
    Bad("invalid overload", "foo.a-b(Tensor self) -> Tensor", "invalid overload name 'a-b'", 4),
    Bad(
        "namespace",  # the entry reader strips it; the schema parser never sees one
        "aten::foo(Tensor self) -> Tensor",
        "invalid operator name 'aten::foo'",
        0,
    ),
    Bad(
        "dunder 'i' but not inplace",
        "__iab__(Tensor self) -> Tensor",
        "dunder method '__iab__' starts with 'i' but is not an augmented assignment",
        0,
    ),
    Bad(
        "functional and inplace",
        "foo_functional_(Tensor(a!) self) -> Tensor(a!)",
        "'foo_functional_' cannot be both a functional variant and a dunder or inplace name",
        0,
    ),
    Bad(
        "no arrow",
        "foo(Tensor self) Tensor",
        "expected a schema of the form 'name.overload(arguments) -> returns'",
        0,
    ),
    Bad("two lines", "foo(Tensor self) -> Tensor\n", "a schema must be written on one line", 26),
    Bad(
        "missing return",
        "foo(Tensor self) -> ",
        "missing return type after '->'; write '()' for none",
        20,
    ),
    Bad(
        "trailing comma in returns",
        "foo(Tensor self) -> (Tensor, )",
        "empty return in return list",
        29,
    ),
    Bad("invalid return name", "foo(Tensor self) -> Tensor 1x", "invalid return name '1x'", 27),
    Bad(
        "one return in parentheses",
        "foo(Tensor self) -> (Tensor)",
        "a single return is written without parentheses",
        20,
    ),
    Bad(
        "inplace without mutable self",
        "foo_(Tensor self) -> Tensor",
        "inplace operator 'foo_' needs a mutable 'self' argument, e.g. 'Tensor(a!) self'",
        5,
    ),
    Bad(
        "inplace not returning self",
        "foo_(Tensor(a!) self) -> ()",
        "inplace operator 'foo_' with a Tensor 'self' must return self, written 'Tensor(a!)'",
        25,
    ),
    Bad(
        "mutable return not aliased",
        "foo(Tensor self) -> Tensor(a!)",
        "mutable return 'Tensor(a!)' must alias a keyword-only out argument or 'self'; "
        "did you forget to mark an out argument as keyword-only?",
        20,
    ),
    Bad(
        "mixed mutable and immutable returns",
        "foo(Tensor self, *, Tensor(a!) out) -> (Tensor(a!), Tensor)",
        "returns must be either all mutable (aliasing written arguments) or all immutable",
        39,
    ),
    Bad(
        "out return not aliased",
        "foo(Tensor self, *, Tensor(a!) out) -> Tensor",
        "return 'Tensor' must alias out argument 'out' (the i-th return corresponds to the "
        "i-th out argument)",
        39,
    ),
    Bad(
        "Tensor out returning nothing",
        "foo(Tensor self, *, Tensor(a!) out) -> ()",
        "an out= operator whose out arguments are plain Tensors must return its 1 "
        "non-scratch out argument, not 0 values",
        39,
    ),
    Bad(
        "mutable positional returned",
        "foo(Tensor self, Tensor(a!) x) -> Tensor(a!)",
        "mutable positional argument 'x' must not be returned",
        17,
    ),
    Bad(
        "non-mutable after out",
        "foo(Tensor self, *, Tensor(a!) out, int b) -> Tensor(a!)",
        "argument 'b' is not mutable, so it cannot follow the out arguments",
        36,
    ),
    Bad(
        "mutable before self",
        "foo(Tensor c, Tensor(b!) x, Tensor(a!) self) -> Tensor(a!)",
        "argument 'x' before 'self' cannot be mutable",
        14,
    ),
    Bad(
        "TensorOptions in an out= operator",
        "foo.out(Tensor self, *, ScalarType? dtype=None, Layout? layout=None, "
        "Device? device=None, bool? pin_memory=None, Tensor(a!) out) -> Tensor(a!)",
        "TensorOptions arguments (dtype, layout, device, pin_memory) are allowed only in "
        "functional (factory) operators, not in an out= operator",
        24,
    ),
    Bad(
        "'functional' overload of a non-functional operator",
        "foo.functional(Tensor self, *, Tensor(a!) out) -> Tensor(a!)",
        "overload name 'functional' contains 'functional', which is reserved for functional "
        "operators, not an out= operator",
        4,
    ),
]


def _parse_error(text: str) -> SchemaError:
    with pytest.raises(SchemaError) as info:
        FunctionSchema.parse(text)
    return info.value


def _params(bug: Callable[[Bad], str | None]) -> list[Any]:
    params = []
    for bad in BAD:
        reason = bug(bad)
        marks = [pytest.mark.xfail(strict=True, reason=reason)] if reason else []
        params.append(pytest.param(bad, id=bad.id, marks=marks))
    return params


@pytest.mark.parametrize("bad", _params(lambda b: b.message_bug))
def test_error_message(bad: Bad) -> None:
    assert _parse_error(bad.text).message == bad.message


@pytest.mark.parametrize("bad", _params(lambda b: b.offset_bug))
def test_error_offset(bad: Bad) -> None:
    error = _parse_error(bad.text)
    assert (error.offset, bad.text[error.offset :]) == (bad.offset, bad.text[bad.offset :])


def test_error_is_a_spec_error_without_location() -> None:
    error = _parse_error("foo(Tensr self) -> Tensor")
    assert isinstance(error, SpecError)
    assert error.location is None
    assert error.length == len("Tensr")


def test_component_parsers_report_offsets_relative_to_their_origin() -> None:
    with pytest.raises(SchemaError) as info:
        Type.parse("Tensr", offset=10)
    assert info.value.offset == 10
    with pytest.raises(SchemaError) as info:
        Argument.parse("int 1x", offset=10)
    assert info.value.offset == 14


@pytest.mark.parametrize(
    "text",
    [
        # argument and return names must be identifiers, and argument names distinct
        "foo(Tensor self, int 1x) -> Tensor",
        "foo(Tensor self) -> Tensor 1x",
        "foo(Tensor self, Tensor self) -> Tensor",
        "foo(Tensor self,) -> Tensor",
        # operator and overload names must be identifiers
        "foo.a-b(Tensor self) -> Tensor",
        "foo (Tensor self) -> Tensor",
        # what an argument aliases after the call ('-> ...') is not for returns
        "foo(Tensor(a -> *) self) -> Tensor(a -> *) values",
        # a namespace is not part of the schema
        "aten::foo(Tensor self) -> Tensor",
    ],
)
def test_stricter_than_torchgen(text: str) -> None:
    """Texts torchgen reads (printing them back verbatim) that opgen rejects."""
    tg_model = pytest.importorskip("torchgen.model")
    assert str(tg_model.FunctionSchema.parse(text)) == text
    with pytest.raises(SchemaError):
        FunctionSchema.parse(text)


# -- 4. conformance: PyTorch's own schemas -------------------------------------------


@pytest.fixture(scope="module")
def torch_schemas() -> list[str]:
    torchgen = pytest.importorskip("torchgen")
    path = os.path.join(
        os.path.dirname(torchgen.__file__), "packaged", "ATen", "native", "native_functions.yaml"
    )
    with open(path) as f:
        entries = yaml.load(f, Loader=yaml.CSafeLoader)
    return [str(e["func"]).rpartition("::")[2] for e in entries]


def _signatures(schema: Any, kind: SchemaKind | Any) -> dict[str, str]:
    return {
        "kind": kind.name,
        "signature()": str(schema.signature()),
        "signature(strip_default)": str(schema.signature(strip_default=True)),
        "signature(keep_return_names)": str(schema.signature(keep_return_names=True)),
        "view_signature()": str(schema.view_signature()),
    }


def test_torch_spec_reads_as_torchgen_reads_it(torch_schemas: list[str]) -> None:
    tg = pytest.importorskip("torchgen.model")

    assert len(torch_schemas) > 2000
    mismatches = []
    for text in torch_schemas:
        ours = FunctionSchema.parse(text)
        theirs = tg.FunctionSchema.parse(text)
        if str(ours) != text or str(theirs) != text:
            mismatches.append((text, "str", str(ours), str(theirs)))
        a, b = _signatures(ours, ours.kind), _signatures(theirs, theirs.kind())
        mismatches.extend((text, key, a[key], b[key]) for key in a if a[key] != b[key])
    assert mismatches == []
