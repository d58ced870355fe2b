"""The model of a lowering spec: which ATen overloads are lowered, and how."""

from __future__ import annotations

import enum
from collections.abc import Mapping

from opgen.diagnostics import Location
from opgen.frozen import frozen
from opgen.spec.lowering.compose import Expression
from opgen.spec.native import NativeFunction


class Promotion(enum.Enum):
    """How an elementwise operator turns the promoted dtype of its operands into the dtypes
    it computes and returns in (PyTorch's kinds of elementwise type promotion)."""

    NONE = "none"  # no promotion: the operands are taken as they are
    DEFAULT = "default"  # computes and returns in the promoted dtype
    INT_TO_FLOAT = "int_to_float"  # bool and integers compute in the default float dtype
    ALWAYS_BOOL = "always_bool"  # computes in the promoted dtype, returns bool
    COMPLEX_TO_FLOAT = "complex_to_float"  # complex operands return their real dtype
    BOOL_TO_LONG = "bool_to_long"  # bool computes and returns as int64


class BodyKind(enum.Enum):
    CALL = "call"  # a C++ expression over the framework's functions
    CODE = "code"  # C++ statements: the function's body
    COMPOSE = "compose"  # an expression over other lowered ATen operators


@frozen
class Body:
    """What a lowering computes, as written."""

    kind: BodyKind
    text: str
    location: Location  # where the text starts
    line: int  # the line of the text's first line, for `#line` directives
    composition: Expression | None = None  # the parsed composition (COMPOSE)


@frozen
class Lowering:
    """One ATen overload and how it is computed."""

    function: NativeFunction  # the overload, from the release's spec
    body: Body
    promotion: Promotion  # NONE unless the operator is pointwise (or a composition says)
    # The arguments promoted together (pointwise operators); with promotion NONE, the
    # operands (a tensor or a number) its body promotes itself (`promote:`).
    promoted: tuple[str, ...]
    integral_to_long: bool  # a reduction that reduces bool and integers in int64
    entry: Location  # the entry that lowers it (`op:`)
    # The tags that choose its shared semantics: its own and, for an in-place or out=
    # variant, its functional overload's (`pointwise`, `reduction`).
    tags: frozenset[str]
    # The functional overload whose entry this in-place or out= variant takes its body
    # from; None for an overload its entry names (itself, or by its base name).
    variant_of: NativeFunction | None = None

    @property
    def name(self) -> str:
        """`aten::add.Tensor`, `aten::abs` (the default overload has no suffix)."""
        return f"{self.function.namespace}::{self.function.func.name}"


@frozen
class LeftOut:
    """An operator the spec leaves out, and why."""

    op: str  # as written: an overload or a base name
    reason: str
    location: Location
    # The overloads it leaves out: a base name's every overload; an overload, and its
    # in-place and out= variants.
    functions: tuple[NativeFunction, ...] = ()


@frozen
class LoweringSpec:
    module: str  # the Python package generated
    lowerings: tuple[Lowering, ...]  # in the release spec's order
    left_out: tuple[LeftOut, ...]
    files: tuple[str, ...]  # the files read, in order
    by_name: Mapping[str, Lowering]  # `aten::add.Tensor` -> its lowering
