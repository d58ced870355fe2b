"""Derivatives of foreach functions, derived from the operator each one loops over.

`_foreach_mul.List(Tensor[] self, Tensor[] other)` computes `mul(self[i],
other[i])` for every i, so its formulas are `mul.Tensor`'s with every list
argument indexed: `grad` becomes `grads[i]`, `result` `result[i]`, saved
values are the foreach function's (whole lists), and forward formulas use the
foreach arguments' names. The reference is the first out-of-place function
(by signature, in file order) of the same base name whose arguments match the
foreach function's, argument by argument, as elements (`Tensor` for
`Tensor[]`) or as they are. An inplace foreach function uses its
reference's infos unchanged; `_foreach_zero_` refers to the inplace `zero_`.

The rewriting is textual (`str.replace`), as upstream's is.
"""

from __future__ import annotations

from collections.abc import Mapping

from opgen.api import cpp
from opgen.api.types import TENSOR_LIST, ArgumentStyle, Binding, NamedCType
from opgen.autograd.model import (
    DEFAULT_KEY,
    Derivative,
    DifferentiabilityInfo,
    ForwardDerivative,
    SavedAttribute,
)
from opgen.diagnostics import SpecError
from opgen.spec.arguments import Argument
from opgen.spec.keys import SchemaKind
from opgen.spec.native import NativeFunction
from opgen.spec.schema import FunctionSchema
from opgen.spec.types import BaseTy, BaseType, ListType, OptionalType, Type

InfosByKey = Mapping[str, DifferentiabilityInfo]

# Foreach functions whose reference is an inplace function.
_INPLACE_REFERENCE = frozenset({"_foreach_zero_"})
# Foreach functions with a Tensor (not Tensor[]) argument that loops as a whole.
_TENSOR_OVERLOADS = frozenset({"_foreach_add.Tensor", "_foreach_mul.Tensor", "_foreach_div.Tensor"})
# Foreach functions without the `alpha` of their reference: the Scalar and
# ScalarList forms of `add` and `sub`, functional and inplace.
_FEWER_ARGUMENTS = frozenset(
    f"_foreach_{op}{inplace}.{overload}"
    for op in ("add", "sub")
    for inplace in ("", "_")
    for overload in ("Scalar", "ScalarList")
)
_TENSOR = BaseType(BaseTy.Tensor)


def _element(t: Type) -> Type | None:
    return t.elem if isinstance(t, ListType | OptionalType) else None


def is_reference(f: NativeFunction, schema: FunctionSchema) -> bool:
    """Whether `schema` (a signature) is what foreach function `f` loops over."""
    name = str(f.func.name)
    if f.func.name.name.base.split("_foreach_")[-1] != schema.name.name.base:
        return False
    if schema.name.name.inplace and name not in _INPLACE_REFERENCE:
        return False
    ours, theirs = f.func.arguments.flat_non_out, schema.arguments.flat_non_out
    if name not in _FEWER_ARGUMENTS and len(ours) != len(theirs):
        return False
    return all(
        r.type == a.type or r.type == _element(a.type) for a, r in zip(ours, theirs, strict=False)
    )


class ForeachDeriver:
    """Finds each foreach function's reference among a file's infos, and derives from it."""

    def __init__(
        self,
        functional: Mapping[FunctionSchema, InfosByKey],
        non_functional: Mapping[FunctionSchema, InfosByKey],
    ) -> None:
        # By base name, in the order upstream searches (infos added later never match).
        self._functional = _by_base_name(functional)
        self._non_functional = _by_base_name(non_functional)

    def derive(self, f: NativeFunction) -> tuple[DifferentiabilityInfo | None, bool]:
        """The infos of foreach function `f`, and whether they are new (out-of-place `f`)."""
        found = self._reference(f, self._functional)
        inplace = f.func.kind is SchemaKind.inplace
        if found is None and inplace and str(f.func.name) in _INPLACE_REFERENCE:
            found = self._reference(f, self._non_functional)
        if found is None:
            return None, False
        schema, per_key = found
        reference = per_key.get(DEFAULT_KEY)
        if reference is None:
            info = next(iter(per_key.values()))
            raise SpecError(
                f"foreach function '{f.func.name}' loops over '{info.func.func.name}', whose "
                "entry has no 'Default' formulas to derive its own from",
                info.location,
            )
        if inplace:
            return reference, False
        return _derived_info(f, schema, reference), True

    @staticmethod
    def _reference(
        f: NativeFunction, candidates: Mapping[str, list[tuple[FunctionSchema, InfosByKey]]]
    ) -> tuple[FunctionSchema, InfosByKey] | None:
        base = f.func.name.name.base.split("_foreach_")[-1]
        for schema, per_key in candidates.get(base, ()):
            if is_reference(f, schema):
                return schema, per_key
        return None


def _by_base_name(
    infos: Mapping[FunctionSchema, InfosByKey],
) -> dict[str, list[tuple[FunctionSchema, InfosByKey]]]:
    index: dict[str, list[tuple[FunctionSchema, InfosByKey]]] = {}
    for schema, per_key in infos.items():
        index.setdefault(schema.name.name.base, []).append((schema, per_key))
    return index


def _derived_info(
    f: NativeFunction, schema: FunctionSchema, reference: DifferentiabilityInfo
) -> DifferentiabilityInfo:
    style = ArgumentStyle.of(f)
    pairs = list(zip(f.func.arguments.flat_non_out, schema.arguments.flat_non_out, strict=False))
    renamed = {theirs.name: ours.name for ours, theirs in pairs}
    arguments = {ours.name: ours for ours, _ in pairs}
    derivatives = tuple(
        _derived_backward(f, d, renamed, arguments, style) for d in reference.derivatives
    )
    var_names = {name for d in derivatives for name in d.var_names}
    args_with_derivatives = tuple(
        Binding(a.name, cpp.argument_type(a, binds=a.name, symint=False, style=style), a, None)
        for a in f.func.arguments.flat_non_out
        if a.name in var_names
    )
    forward = tuple(_derived_forward(f, fw, reference) for fw in reference.forward_derivatives)
    return DifferentiabilityInfo(
        name=f.func.name.name.base,
        func=f,
        op=f"Foreach{reference.op}{f.func.name.overload_name}",
        derivatives=derivatives,
        forward_derivatives=forward,
        # Upstream keeps each distinct value once, in set order; this is first-seen order.
        all_saved_inputs=tuple(dict.fromkeys(s for d in derivatives for s in d.saved_inputs)),
        all_saved_outputs=tuple(dict.fromkeys(s for d in derivatives for s in d.saved_outputs)),
        available_named_gradients=(),
        used_named_gradients=frozenset(),
        args_with_derivatives=args_with_derivatives,
        non_differentiable_arg_names=(),
        output_differentiability=None,
        output_differentiability_conditions=None,
        location=reference.location,
    )


def _derived_backward(
    f: NativeFunction,
    d: Derivative,
    renamed: Mapping[str, str],
    arguments: Mapping[str, Argument],
    style: ArgumentStyle,
) -> Derivative:
    formula = d.formula.replace("grad", "grads[i]").replace("result", "result[i]")
    saved_inputs = []
    for saved in d.saved_inputs:
        source = saved.expr.split(".")[0]
        ours = renamed.get(source)
        if ours is None or not isinstance(saved.nctype.name, str):
            raise _cannot_derive(f, d, f"it saves '{saved.expr}'")
        argument = arguments[ours]
        element = f"{ours}[i]" if isinstance(argument.type, ListType) else ours
        formula = formula.replace(saved.nctype.name, saved.expr.replace(source, element))
        nctype = cpp.argument_type(argument, binds=ours, symint=False, style=style)
        saved_inputs.append(SavedAttribute(nctype.remove_const_ref(), ours))
    saved_outputs = []
    for saved in d.saved_outputs:
        if saved.nctype.name != "result":
            raise _cannot_derive(f, d, f"it saves output '{saved.nctype.name}'")
        saved_outputs.append(SavedAttribute(NamedCType("result", TENSOR_LIST), "result"))
    return Derivative(
        formula=formula,
        original_formula=d.formula,
        var_names=tuple(renamed[name] for name in d.var_names),
        saved_inputs=tuple(saved_inputs),
        saved_outputs=tuple(saved_outputs),
        named_gradients=frozenset(),
        location=d.location,
    )


def _cannot_derive(f: NativeFunction, d: Derivative, why: str) -> SpecError:
    return SpecError(
        f"the formula for foreach function '{f.func.name}' cannot be derived from this one: {why}",
        d.location,
    )


def _derived_forward(
    f: NativeFunction, fw: ForwardDerivative, reference: DifferentiabilityInfo
) -> ForwardDerivative:
    var_names, var_types = list(fw.var_names), list(fw.var_types)
    tangents = list(fw.required_inputs_fw_grad or ())
    primals = list(fw.required_inputs_primal or ())
    formula = fw.formula.replace("result", "result[i]")
    pairs = zip(
        f.func.arguments.flat_non_out, reference.func.func.arguments.flat_non_out, strict=False
    )
    for ours, theirs in pairs:
        formula = _renamed_in_forward(f, fw, formula, ours, theirs)
        for i, name in enumerate(var_names):
            if name == theirs.name:
                var_names[i], var_types[i] = ours.name, ours.type
        tangents = [ours.name if name == theirs.name else name for name in tangents]
        primals = [ours.name if name == theirs.name else name for name in primals]
    return ForwardDerivative(
        formula=formula,
        var_names=tuple(var_names),
        var_types=tuple(var_types),
        required_inputs_fw_grad=tuple(tangents),
        required_inputs_primal=tuple(primals),
        required_original_self_value=fw.required_original_self_value,
        is_reusing_outplace_formula=fw.is_reusing_outplace_formula,
        location=fw.location,
    )


def _renamed_in_forward(
    f: NativeFunction, fw: ForwardDerivative, formula: str, ours: Argument, theirs: Argument
) -> str:
    """`formula` with the reference's argument `theirs` written as foreach argument `ours`."""
    if isinstance(ours.type, ListType) and not ours.type.is_tensor_like():
        return formula.replace(theirs.name, f"{ours.name}[i]")  # a list of scalars
    if not ours.type.is_tensor_like():
        return formula if ours.name == theirs.name else formula.replace(theirs.name, ours.name)
    if not isinstance(ours.type, ListType) and not (
        ours.type == _TENSOR and str(f.func.name) in _TENSOR_OVERLOADS
    ):
        raise SpecError(
            f"the forward formula for foreach function '{f.func.name}' cannot be derived from "
            f"this one: its argument '{ours.name}' is a '{ours.type}', not a list",
            fw.location,
        )
    for suffix in ("_p", "_t"):
        if theirs.name + suffix in formula:
            formula = formula.replace(theirs.name + suffix, ours.name + suffix)
    return formula
