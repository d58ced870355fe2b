"""Forward formulas: expanding `auto_element_wise` / `auto_linear`, and what they use.

A forward formula computes an output's tangent from the inputs' tangents
(`self_t`) and values (`self_p`); a bare input name would be ambiguous, and is
refused. Two formulas are written for the author:

- `auto_element_wise`, for an element-wise function of one input: the
  Jacobian is diagonal, so the tangent is the backward formula applied to the
  conjugated tangent, conjugated: `grad` becomes `self_t.conj()`, the input
  `self_p`, and the whole is wrapped in `(...).conj()`.
- `auto_linear`, for a function linear in its differentiable inputs: the
  tangent is the function itself called on the tangents
  (`at::mm(self_t, mat2_t)`, or a method call for a method-only function).

The inplace variant of a function that reuses the out-of-place function's
formula is adapted when functions are matched (`opgen.autograd.match`).
"""

from __future__ import annotations

from collections.abc import Sequence

from opgen.api.types import Binding
from opgen.autograd.model import Derivative, ForwardDerivative
from opgen.autograd.saved_values import FormulaPatterns
from opgen.diagnostics import SpecError
from opgen.frozen import frozen
from opgen.spec.derivatives import Formula
from opgen.spec.keys import SchemaKind, Variant
from opgen.spec.native import NativeFunction
from opgen.spec.types import Type

# Tensor-list arguments take care of their own tangents (except in foreach functions).
_TENSOR_LIST_TYPES = ("at::TensorList", "const at::ITensorListRef &")


@frozen
class ForwardFormula:
    """A forward formula as written, with the outputs it computes."""

    formula: Formula
    var_types: tuple[Type, ...]


@frozen(eq=False)
class _Inputs:
    """What the formulas of one function may refer to."""

    f: NativeFunction
    defn_name: str
    all_arg_names: tuple[str, ...]
    args_with_derivatives: tuple[Binding, ...]
    patterns: FormulaPatterns


def forward_derivatives(
    f: NativeFunction,
    defn_name: str,
    all_arg_names: tuple[str, ...],
    derivatives: Sequence[Derivative],
    written: Sequence[ForwardFormula],
    args_with_derivatives: tuple[Binding, ...],
    patterns: FormulaPatterns,
) -> tuple[ForwardDerivative, ...]:
    """The forward derivatives of one entry's table, expanded, with the inputs they need."""
    inputs = _Inputs(f, defn_name, all_arg_names, args_with_derivatives, patterns)
    result = []
    for w in written:
        text = w.formula.text
        tangents = _required(inputs, w.formula, text, "_t")
        if text == "auto_element_wise":
            text = _element_wise(inputs, w.formula, derivatives, written)
            tangents = all_arg_names
        elif text == "auto_linear":
            text, tangents = _linear(inputs, w.formula, written)
        result.append(
            ForwardDerivative(
                formula=text,
                var_names=w.formula.names,
                var_types=w.var_types,
                required_inputs_fw_grad=tangents,
                required_inputs_primal=_required(inputs, w.formula, text, "_p"),
                required_original_self_value=False,
                is_reusing_outplace_formula=False,
                location=w.formula.location,
            )
        )
    return tuple(result)


def _required(inputs: _Inputs, formula: Formula, text: str, suffix: str) -> tuple[str, ...]:
    """The differentiable inputs whose `<name><suffix>` the formula uses, in argument order.

    (Upstream returns them in set order; only membership matters.)
    """
    foreach = inputs.f.func.name.name.base.startswith("_foreach_")
    required = []
    for arg in inputs.args_with_derivatives:
        if arg.type in _TENSOR_LIST_TYPES and not foreach:
            continue
        name = arg.name
        if inputs.patterns.uses(text, name):
            raise SpecError(
                f"the forward formula of '{inputs.defn_name}' uses '{name}', which is "
                f"ambiguous: write '{name}_p' for its value and '{name}_t' for its tangent",
                formula.location,
            )
        if inputs.patterns.uses(text, name + suffix):
            required.append(name)
    return tuple(required)


def _element_wise(
    inputs: _Inputs,
    formula: Formula,
    derivatives: Sequence[Derivative],
    written: Sequence[ForwardFormula],
) -> str:
    f = inputs.f
    if f.func.kind is SchemaKind.inplace:
        raise SpecError(
            f"'auto_element_wise' cannot be used for '{f.func.name}', an inplace function",
            formula.location,
        )
    args = inputs.args_with_derivatives
    if len(args) != 1 or len(written) > 1 or len(written[0].formula.names) > 1:
        raise SpecError(
            "'auto_element_wise' is for functions with one differentiable input and one "
            f"differentiable output; '{inputs.defn_name}' has formulas for "
            f"{len(args)} input(s) and {sum(len(w.formula.names) for w in written)} output(s)",
            formula.location,
        )
    if len(derivatives) != 1:
        raise SpecError(
            "'auto_element_wise' derives the forward formula from the input's backward "
            f"formula, and '{inputs.defn_name}' has none",
            formula.location,
        )
    patterns = inputs.patterns
    name = args[0].name
    text = patterns.replace(derivatives[0].original_formula, "grad", f"{name}_t.conj()")
    for arg in args:
        text = patterns.replace(text, arg.name, f"{arg.name}_p")
    return f"({text}).conj()"


def _linear(
    inputs: _Inputs, formula: Formula, written: Sequence[ForwardFormula]
) -> tuple[str, tuple[str, ...]]:
    f = inputs.f
    if len(written) > 1 or len(written[0].formula.names) > 1:
        raise SpecError(
            "'auto_linear' is for functions with one differentiable output; "
            f"'{inputs.defn_name}' has forward formulas for "
            f"{sum(len(w.formula.names) for w in written)}",
            formula.location,
        )
    differentiable = [arg.name for arg in inputs.args_with_derivatives]
    if not differentiable:
        raise SpecError(
            f"'auto_linear' needs a backward formula for an input of '{inputs.defn_name}': "
            "the tangent is the function of the inputs' tangents",
            formula.location,
        )
    arguments = [f"{a}_t" if a in differentiable else a for a in inputs.all_arg_names]
    name = inputs.defn_name + ("_symint" if f.func.has_symint() else "")
    if Variant.function in f.variants:
        text = f"at::{name}({', '.join(arguments)})"
    elif Variant.method in f.variants:
        text = f"{arguments[0]}.{name}({', '.join(arguments[1:])})"
    else:
        raise SpecError(
            f"'auto_linear' calls '{f.func.name}', which has neither a function nor a method "
            "variant",
            formula.location,
        )
    return text, tuple(differentiable)
