"""The functionalization API: the `ViewMeta` classes and view inverses of view operators.

The functionalization pass replays views off a base tensor. For every
(non-composite) view operator it keeps a `ViewMeta` specialization: a class
that stores the view's arguments and knows how to apply the view (`forward`,
a call into the `at::_ops` API) and how to undo it (`reverse`, a call into a
hand-written `FunctionalInverses::<op>_inverse`). This module names those
classes and functions and gives their parameter lists.

The convention follows the dispatcher API, with these differences:
- the viewed tensor (the first argument, always a plain `Tensor`) becomes the
  parameter `base`; `reverse` also gets `mutated_view` and an
  `inverse_return_mode`, and for views returning several tensors an
  `out_index` (multi-output views);
- the class stores its arguments in owning types (`::std::vector<int64_t>`
  rather than `at::IntArrayRef`), plus `reapply_views` and
  `inverse_return_mode`; its constructor takes them non-owning, after
  `has_symbolic_inputs` (and `out_index`, for multi-output views).

The argument style (`ArgumentStyle`) is that of the function the class is
generated for, passed explicitly.
"""

from __future__ import annotations

from opgen.api import dispatcher
from opgen.api.types import (
    BOOL,
    CONST_TENSOR_REF,
    INT64,
    ArgumentStyle,
    BaseCType,
    Binding,
    NamedCType,
)
from opgen.spec.arguments import Argument
from opgen.spec.groups import NativeFunctionsViewGroup
from opgen.spec.native import NativeFunction
from opgen.spec.schema import FunctionSchema
from opgen.spec.types import BaseTy, BaseType

_TENSOR = BaseType(BaseTy.Tensor)
_BOOL = BaseType(BaseTy.bool)
_INT = BaseType(BaseTy.int)

INVERSE_RETURN_MODE = BaseCType("at::functionalization::InverseReturnMode")


def _binding(name: str, ctype: NamedCType, schema_type: BaseType, argument: str = "") -> Binding:
    return Binding(name, ctype, Argument(argument or name, schema_type, None, None))


# The parameters that are not schema arguments. `mutated_view` stands for an
# argument named `base`, as torchgen's does (it never reaches a translation goal).
BASE = _binding("base", NamedCType("base", CONST_TENSOR_REF), _TENSOR)
HAS_SYMBOLIC_INPUTS = _binding(
    "has_symbolic_inputs", NamedCType("has_symbolic_inputs", BOOL), _BOOL
)
MUTATED_VIEW = _binding(
    "mutated_view", NamedCType("mutated_view", CONST_TENSOR_REF), _TENSOR, "base"
)
OUT_INDEX = _binding("out_index", NamedCType("out_index", INT64), _INT)
REAPPLY_VIEWS = _binding("reapply_views", NamedCType("reapply_views", BOOL), _BOOL)
# Its schema type is never looked at.
INVERSE_RETURN_MODE_BINDING = _binding(
    "inverse_return_mode", NamedCType("inverse_return_mode", INVERSE_RETURN_MODE), _BOOL
)


def classname(func: FunctionSchema, *, with_namespace: bool = False) -> str:
    """The `ViewMeta` specialization of a view: `transpose_int_ViewMeta`."""
    namespace = "at::functionalization::" if with_namespace else ""
    return f"{namespace}{func.name.unambiguous_name()}_ViewMeta"


def forward_name(g: NativeFunctionsViewGroup, *, reapply_views: bool) -> str:
    """The operator `forward` calls: the view itself, or its copy variant."""
    assert g.view_copy is not None, "only views with a copy variant get a ViewMeta"
    f = g.view if reapply_views else g.view_copy
    return f"at::_ops::{f.func.name.unambiguous_name()}::call"


def reverse_name(f: NativeFunction, *, include_namespace: bool) -> str:
    """The hand-written view inverse; called with its namespace, declared without."""
    name = f"{f.func.name.unambiguous_name()}_inverse"
    if include_namespace:
        return f"at::functionalization::FunctionalInverses::{name}"
    return name


def is_multi_output(func: FunctionSchema) -> bool:
    """Whether the view may return several tensors (several returns, or a list)."""
    returns = func.returns
    return len(returns) > 1 or (len(returns) == 1 and returns[0].type.is_list_like() is not None)


def base_ctor_arguments(func: FunctionSchema) -> list[Binding]:
    """The constructor parameters every specialization has."""
    if is_multi_output(func):
        return [HAS_SYMBOLIC_INPUTS, OUT_INDEX]
    return [HAS_SYMBOLIC_INPUTS]


def _non_self(func: FunctionSchema) -> list[Argument]:
    args = func.arguments.flat_all
    assert args[0].type == _TENSOR, f"the first argument of view {func.name} is not a Tensor"
    return list(args[1:])


def attributes(
    func: FunctionSchema, style: ArgumentStyle, *, owning: bool = True, by_value: bool = False
) -> list[Binding]:
    """The fields of a specialization (owning; with `by_value`, tensors and scalars too),
    or its extra constructor parameters."""
    return [
        REAPPLY_VIEWS,
        INVERSE_RETURN_MODE_BINDING,
        *[
            dispatcher.argument(a, style=style, owning=owning, by_value=by_value)
            for a in _non_self(func)
        ],
    ]


def extra_ctor_arguments(func: FunctionSchema, style: ArgumentStyle) -> list[Binding]:
    return attributes(func, style, owning=False)


def op_arguments(func: FunctionSchema, style: ArgumentStyle, *, is_reverse: bool) -> list[Binding]:
    """The parameters of the view (forward) or of its inverse (reverse)."""
    rest = [dispatcher.argument(a, style=style) for a in _non_self(func)]
    if not is_reverse:
        return [BASE, *rest]
    head = [BASE, MUTATED_VIEW, INVERSE_RETURN_MODE_BINDING]
    if is_multi_output(func):
        head.append(OUT_INDEX)
    return head + rest


def view_inverse_decl(g: NativeFunctionsViewGroup, style: ArgumentStyle) -> str:
    """The declaration of a view's inverse in `FunctionalInverses`; it always returns one tensor."""
    func = g.view.func
    assert func.returns and all(r.type.is_tensor_like() for r in func.returns)
    params = ", ".join(b.decl() for b in op_arguments(func, style, is_reverse=True))
    return f"static at::Tensor {reverse_name(g.view, include_namespace=False)}({params});"


def new_view_meta(func: FunctionSchema, style: ArgumentStyle, out_index: str = "0") -> str:
    """A `make_shared` of the specialization, from the variables of the same names."""
    params = base_ctor_arguments(func) + extra_ctor_arguments(func, style)
    arguments = ", ".join(out_index if b.name == "out_index" else b.name for b in params)
    return f"std::make_shared<{classname(func, with_namespace=True)}>({arguments})"
