"""Differentiability infos for unit tests: a derivatives.yaml entry, built in code."""

from __future__ import annotations

from collections.abc import Sequence

from opgen.api.types import CType, NamedCType
from opgen.autograd.model import Derivative, DifferentiabilityInfo, SavedAttribute
from opgen.spec.native import NativeFunction
from opgen.targets.autograd.wrappers import extract_bindings

# An out= operator (the first function) and its functional variant.
FOO_OUT = """\
- func: foo.out(Tensor self, *, Tensor(a!) out) -> Tensor(a!)
  dispatch:
    CPU: foo_out
- func: foo(Tensor self) -> Tensor
  dispatch:
    CPU: foo
"""


def saved(name: str, ctype: CType, expr: str | None = None) -> SavedAttribute:
    """A saved value `name` of type `ctype`, computed by `expr` (default: the name)."""
    return SavedAttribute(NamedCType(name, ctype), name if expr is None else expr)


def derivative(
    inputs: tuple[str, ...],
    formula: str,
    saved_inputs: Sequence[SavedAttribute] = (),
    saved_outputs: Sequence[SavedAttribute] = (),
) -> Derivative:
    """The formula (as written) for the gradients of `inputs`."""
    return Derivative(
        formula, formula, inputs, tuple(saved_inputs), tuple(saved_outputs), frozenset()
    )


def differentiability_info(
    f: NativeFunction,
    derivatives: Sequence[Derivative],
    *,
    op: str,
    name: str | None = None,
    saved_inputs: Sequence[SavedAttribute] | None = None,
    saved_outputs: Sequence[SavedAttribute] | None = None,
) -> DifferentiabilityInfo:
    """The info of `f`'s entry with these formulas; what it saves is, unless given, what
    its formulas save."""
    differentiable = {n for d in derivatives for n in d.var_names}
    if saved_inputs is None:
        saved_inputs = [s for d in derivatives for s in d.saved_inputs]
    if saved_outputs is None:
        saved_outputs = [s for d in derivatives for s in d.saved_outputs]
    return DifferentiabilityInfo(
        name=name or str(f.func.name.name),
        func=f,
        op=op,
        derivatives=tuple(derivatives),
        forward_derivatives=(),
        all_saved_inputs=tuple(saved_inputs),
        all_saved_outputs=tuple(saved_outputs),
        available_named_gradients=(),
        used_named_gradients=frozenset(),
        args_with_derivatives=tuple(b for b in extract_bindings(f) if b.name in differentiable),
        non_differentiable_arg_names=(),
        output_differentiability=None,
        output_differentiability_conditions=None,
    )
