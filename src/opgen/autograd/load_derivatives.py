"""The derivatives model of PyTorch's derivatives.yaml: `DifferentiabilityInfo`s, built once.

`load_derivative_infos(spec, path)` reads the file (`opgen.spec.derivatives`,
torch dialect) and gives every entry, per dispatch key, the C++ meaning
torchgen's `load_derivatives` gives it:

- each backward formula (keys in sorted order) with the values its node
  saves (`opgen.autograd.saved_values`), in the C++ API's terms: the arguments of
  the out-of-place function's C++ signature (the SymInt one where there is
  one, TensorOptions packed into `options`), and the outputs as
  `cpp.return_names` names them (`self` as `result`);
- the forward formulas, expanded (`opgen.autograd.forward_derivatives`);
- the backward node's class name: the base name in CamelCase, `Backward`,
  the dispatch key unless "Default", and a counter per prefix in file order
  (`MulBackward0`, `MulBackward1`), for entries with backward formulas;
- the gradients the formulas may use by name (`grad_<output>`), and checks
  of how they use `grad`, `grads[i]` and those.

View-copy operators then share their view's infos, under `{name}_copy.` and
`{op}_copy`, unless the file has an entry of their own.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterator, Sequence
from operator import attrgetter

from opgen.api import cpp
from opgen.api.types import ArgumentStyle, Binding, BindingMemo, NamedCType, SpecialArgName
from opgen.autograd.forward_derivatives import ForwardFormula, forward_derivatives
from opgen.autograd.model import (
    Derivative,
    DerivativeInfos,
    DifferentiabilityInfo,
    SavedAttribute,
)
from opgen.autograd.saved_values import FormulaPatterns, check_size_methods, saved_values
from opgen.diagnostics import Diagnostic, SpecError
from opgen.frozen import frozen
from opgen.spec.derivatives import DEFAULT_KEY, DerivativesEntry, Formula, read_derivatives
from opgen.spec.groups import NativeFunctionsViewGroup
from opgen.spec.model import Spec
from opgen.spec.native import NativeFunction
from opgen.spec.schema import FunctionSchema
from opgen.spec.types import Type

_POSITIONAL_OUTPUT = re.compile(r"result(\d+)")
_GRADS_INDEX = re.compile(r"(?:^|\W)grads\[(\d+)\]")


def load_derivative_infos(spec: Spec, path: str) -> DerivativeInfos:
    """Read and build `path`'s infos; raises SpecError with every diagnostic found."""
    entries = read_derivatives(path, view_grouped_functions(spec))
    return build_derivative_infos(spec, entries)


def view_grouped_functions(spec: Spec) -> Iterator[NativeFunction]:
    """The spec's functions in view-group order: each view, then its inplace and copy variants."""
    for g in spec.view_grouped:
        if isinstance(g, NativeFunctionsViewGroup):
            yield from g.functions(include_copy=True)
        else:
            yield g


def build_derivative_infos(
    spec: Spec, entries: Sequence[DerivativesEntry[NativeFunction]]
) -> DerivativeInfos:
    builder = _InfoBuilder()
    infos: dict[FunctionSchema, dict[str, DifferentiabilityInfo]] = {}
    errors: list[Diagnostic] = []
    used_keys: set[str] = set()
    for entry in entries:
        used_keys.update(entry.formulas_by_key)
        try:
            infos[entry.function.func] = builder.entry_infos(entry)
        except SpecError as e:
            errors.extend(e.diagnostics)
    if errors:
        raise SpecError.of(errors[:20])
    infos.update(_view_copy_infos(infos, spec.view_groups))
    return DerivativeInfos(infos, frozenset(used_keys))


@frozen(eq=False)
class _Function:
    """What every formula of one function is read against."""

    f: NativeFunction
    bindings: tuple[Binding, ...]  # the C++ arguments
    arguments: tuple[NamedCType, ...]  # their types as saved (no const &)
    returns: tuple[NamedCType, ...]  # the outputs, as saved


class _InfoBuilder:
    """Builds the infos of a file's entries, in order: it numbers the backward nodes."""

    def __init__(self) -> None:
        self._op_counter: Counter[str] = Counter()
        self._patterns = FormulaPatterns()
        self._memo = BindingMemo()

    def entry_infos(
        self, entry: DerivativesEntry[NativeFunction]
    ) -> dict[str, DifferentiabilityInfo]:
        function = self._function(entry.function)
        return {
            key: self._info(entry, key, formulas, function)
            for key, formulas in entry.formulas_by_key.items()
        }

    def _function(self, f: NativeFunction) -> _Function:
        style = ArgumentStyle.of(f)
        args = f.func.arguments
        bindings = cpp.arguments(
            args,
            faithful=False,
            symint=args.has_symint_arg(),
            method=False,
            cpp_no_default_args=f.cpp_no_default_args,
            style=style,
            memo=self._memo,
        ).bindings
        names = ["result" if n == "self" else n for n in cpp.return_names(f)]
        returns = tuple(
            NamedCType(name, cpp.return_type(r, style=style).remove_const_ref())
            for name, r in zip(names, f.func.returns, strict=True)
        )
        arguments = tuple(b.nctype.remove_const_ref() for b in bindings)
        return _Function(f, bindings, arguments, returns)

    def _info(
        self,
        entry: DerivativesEntry[NativeFunction],
        key: str,
        formulas: tuple[Formula, ...],
        function: _Function,
    ) -> DifferentiabilityInfo:
        f = function.f
        available = _available_named_gradients(f, entry.given_output_differentiability)
        derivatives: list[Derivative] = []
        written: list[ForwardFormula] = []
        non_differentiable: list[str] = []
        with_derivatives: set[str] = set()
        for formula in sorted(formulas, key=attrgetter("key")):
            if formula.forward:
                written.append(ForwardFormula(formula, _var_types(f, formula.names)))
            elif formula.is_non_differentiable:
                non_differentiable += formula.names
            else:
                derivatives.append(self._derivative(function, formula, available))
                with_derivatives.update(formula.names)
        args = tuple(b for b in function.bindings if b.name in with_derivatives)
        all_arg_names = tuple(b.name for b in function.bindings)
        forward = forward_derivatives(
            f, entry.name, all_arg_names, derivatives, written, args, self._patterns
        )
        _check_grad_usage(entry.name, derivatives, self._patterns)
        return DifferentiabilityInfo(
            name=entry.name,
            func=f,
            op=self._op_name(entry.name, key) if args else None,
            derivatives=tuple(derivatives),
            forward_derivatives=forward,
            all_saved_inputs=_unique([v for d in derivatives for v in d.saved_inputs]),
            all_saved_outputs=_unique([v for d in derivatives for v in d.saved_outputs]),
            available_named_gradients=available,
            used_named_gradients=frozenset(n for d in derivatives for n in d.named_gradients),
            args_with_derivatives=args,
            non_differentiable_arg_names=tuple(non_differentiable),
            output_differentiability=entry.given_output_differentiability,
            output_differentiability_conditions=entry.output_differentiability_conditions,
            location=entry.location,
            output_differentiability_location=entry.output_differentiability_location,
        )

    def _derivative(
        self, function: _Function, formula: Formula, available: tuple[str, ...]
    ) -> Derivative:
        check_size_methods(formula)
        names, patterns = formula.names, self._patterns
        text, inputs = saved_values(formula.text, function.arguments, names, formula, patterns)
        text, outputs = saved_values(text, function.returns, names, formula, patterns)
        count = len(function.f.func.returns)
        for match in _GRADS_INDEX.finditer(text):
            if int(match.group(1)) >= count:
                raise SpecError(
                    f"'grads[{match.group(1)}]' is out of range: '{function.f.func.name}' has "
                    f"{count} output(s)",
                    formula.location,
                )
        return Derivative(
            formula=text,
            original_formula=formula.text,
            var_names=names,
            saved_inputs=inputs,
            saved_outputs=outputs,
            named_gradients=frozenset(n for n in available if patterns.uses(text, n)),
            location=formula.location,
        )

    def _op_name(self, name: str, key: str) -> str:
        prefix = "".join(part.title() for part in name.split("_")) + "Backward"
        prefix = prefix.replace("ForwardBackward", "Backward")
        if key != DEFAULT_KEY:
            prefix += key
        number = self._op_counter[prefix]
        self._op_counter[prefix] += 1
        return f"{prefix}{number}"


def _available_named_gradients(
    f: NativeFunction, output_differentiability: tuple[bool, ...] | None
) -> tuple[str, ...]:
    """`grad_<name>` for each named, differentiable, tensor-like output."""
    returns = f.func.returns
    differentiability = output_differentiability or (True,) * len(returns)
    return tuple(
        f"grad_{r.name}"
        for r, differentiable in zip(returns, differentiability, strict=False)
        if differentiable and r.name is not None and r.type.is_tensor_like()
    )


def _var_types(f: NativeFunction, names: tuple[str, ...]) -> tuple[Type, ...]:
    """The types of the outputs a forward formula computes, as upstream finds them:
    the named outputs in schema order, else by position (checked by the reader)."""
    returns = f.func.returns
    named = tuple(r.type for r in returns if r.name in names)
    if named:
        return named
    if names == ("result",):
        return (returns[0].type,)
    positions = [_POSITIONAL_OUTPUT.fullmatch(n) for n in names]
    return tuple(returns[int(m.group(1))].type for m in positions if m is not None)


def _unique(values: Sequence[SavedAttribute]) -> tuple[SavedAttribute, ...]:
    """The first value saved under each name."""
    seen: set[str] = set()
    result = []
    for v in values:
        name = v.nctype.name
        key = name.name if isinstance(name, SpecialArgName) else name
        if key not in seen:
            seen.add(key)
            result.append(v)
    return tuple(result)


def _check_grad_usage(
    name: str, derivatives: Sequence[Derivative], patterns: FormulaPatterns
) -> None:
    """A node's gradients are `grad` (the first output's), `grads[i]`, or `grad_<output>`:
    one way per entry, and `grads` never only as `grads[0]` (that is `grad`)."""
    uses_grad = [d for d in derivatives if patterns.uses(d.formula, "grad")]
    uses_grads = [d for d in derivatives if patterns.count(d.formula, "grads")]
    uses_named = [d for d in derivatives if d.named_gradients]
    grads_count = sum(patterns.count(d.formula, "grads") for d in derivatives)
    indices = [int(i) for d in uses_grads for i in _GRADS_INDEX.findall(d.formula)]
    if uses_grad and uses_grads:
        raise SpecError(
            f"the formulas of '{name}' use both 'grad' and 'grads'; write 'grads[0]' for 'grad'",
            uses_grads[0].location,
        )
    if grads_count == len(indices) and set(indices) == {0}:
        raise SpecError(
            f"the formulas of '{name}' use only 'grads[0]': write 'grad' if the first output "
            "is the only differentiable one",
            uses_grads[0].location,
        )
    if uses_named and (uses_grad or uses_grads):
        raise SpecError(
            f"the formulas of '{name}' use both 'grad_<output>' and 'grad' or 'grads[i]'; "
            "use one way of naming gradients",
            uses_named[0].location,
        )


def _view_copy_infos(
    infos: dict[FunctionSchema, dict[str, DifferentiabilityInfo]],
    view_groups: Sequence[NativeFunctionsViewGroup],
) -> dict[FunctionSchema, dict[str, DifferentiabilityInfo]]:
    """The infos of each `{view}_copy` without an entry: its view's, renamed."""
    copies = {g.view.func.name: g.view_copy for g in view_groups if g.view_copy is not None}
    added: dict[FunctionSchema, dict[str, DifferentiabilityInfo]] = {}
    for per_key in infos.values():
        first = next(iter(per_key.values()), None)
        copy = None if first is None else copies.get(first.func.func.name)
        if copy is None or copy.func in infos:
            continue
        added[copy.func] = {key: _view_copy_info(info, copy) for key, info in per_key.items()}
    return added


def _view_copy_info(info: DifferentiabilityInfo, copy: NativeFunction) -> DifferentiabilityInfo:
    base, _, overload = info.name.partition(".")
    return DifferentiabilityInfo(
        name=f"{base}_copy.{overload}",
        func=copy,
        op=None if info.op is None else f"{info.op}_copy",
        derivatives=info.derivatives,
        forward_derivatives=info.forward_derivatives,
        all_saved_inputs=info.all_saved_inputs,
        all_saved_outputs=info.all_saved_outputs,
        available_named_gradients=info.available_named_gradients,
        used_named_gradients=info.used_named_gradients,
        args_with_derivatives=info.args_with_derivatives,
        non_differentiable_arg_names=info.non_differentiable_arg_names,
        output_differentiability=info.output_differentiability,
        output_differentiability_conditions=info.output_differentiability_conditions,
        location=info.location,
        output_differentiability_location=info.output_differentiability_location,
    )
