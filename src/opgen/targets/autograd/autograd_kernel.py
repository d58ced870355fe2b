"""What one VariableType kernel is built from: a function, one dispatch key, and the facts
its derivatives imply.

VariableType's kernel for a function (and one autograd key of its derivatives
entry) unpacks the inputs, sets up the backward node (`grad_fn`) when an input
requires grad, redispatches below autograd, records history on the outputs,
and computes forward-mode gradients. Which of those it does follows from a few
facts derived here once per kernel: the differentiable inputs and outputs, the
inputs with backward formulas, whether a derivative is required at all, and
whether forward AD falls back on a decomposition (`try_jit_decomposition`).

Inplace foreach functions (`_foreach_add_.List`) reuse the formulas of the
non-foreach operator they loop over (their *reference*, `add.Tensor`): each
of their arguments is paired with the reference's argument in the same
position, and names in formulas are the reference's.

Bad derivatives entries (a formula for an input the function does not have,
a backward formula on an operator with nothing to differentiate, forward
formulas that do not cover the differentiable outputs) raise SpecError at the
entry.
"""

from __future__ import annotations

from collections.abc import Mapping

from opgen.api import cpp
from opgen.api.types import ArgumentStyle
from opgen.autograd.model import (
    DifferentiabilityInfo,
    DifferentiableInput,
    DifferentiableOutput,
    ForwardDerivative,
    NativeFunctionWithDifferentiabilityInfo,
    is_differentiable,
)
from opgen.autograd.views import get_base_name, get_view_info, modifies_arguments
from opgen.diagnostics import Location, SpecError
from opgen.frozen import frozen
from opgen.releases import Release
from opgen.spec.arguments import Argument, SelfArgument, TensorOptionsArguments
from opgen.spec.keys import SchemaKind
from opgen.spec.native import NativeFunction
from opgen.spec.types import ListType
from opgen.targets.autograd.kernel_lists import (
    DONT_REQUIRE_DERIVATIVE,
    FOREACH_WITH_DIFFERENT_ARITY,
    FOREACH_WITHOUT_DIFFERENTIABILITY_INFO,
)


@frozen(eq=False)
class VariableTypeKernel:
    fn: NativeFunctionWithDifferentiabilityInfo
    key: str  # "Default" or an autograd dispatch key
    info: DifferentiabilityInfo | None
    fw_derivatives: tuple[ForwardDerivative, ...]
    style: ArgumentStyle
    name: str  # the C++ name: `add_`, `add_out`
    base_name: str  # `add` for `add_.Tensor`
    inplace: bool
    is_out_fn: bool
    is_foreach: bool
    is_inplace_foreach: bool
    view_info: str | None  # the argument the outputs are views of
    # Inplace foreach with a reference: (foreach argument, reference argument) pairs,
    # and each foreach argument by the name of its reference argument.
    foreach_pairs: tuple[tuple[Argument, Argument], ...]
    foreach_arg_of: Mapping[str, Argument]
    differentiable_inputs: tuple[DifferentiableInput, ...]
    args_with_derivatives: tuple[DifferentiableInput, ...]
    differentiable_outputs: tuple[DifferentiableOutput, ...]
    requires_derivative: bool
    # No forward formula: forward AD runs the operator's decomposition instead.
    try_jit_decomposition: bool
    release: Release  # the torch release whose kernels these are

    @property
    def f(self) -> NativeFunction:
        return self.fn.func

    @property
    def returns_void(self) -> bool:
        return not self.f.func.returns

    @property
    def location(self) -> Location:
        """Where a complaint about the kernel points: its derivatives entry, else its operator."""
        if self.info is not None and self.info.location is not None:
            return self.info.location
        return self.f.loc

    @staticmethod
    def of(
        fn: NativeFunctionWithDifferentiabilityInfo, key: str, release: Release
    ) -> VariableTypeKernel:
        f = fn.func
        info = fn.info[key] if fn.info else None
        fw_derivatives = tuple(fn.fw_derivatives.get(key, ())) if fn.fw_derivatives else ()
        style = ArgumentStyle.of(f)
        name = cpp.name(f.func)
        inplace = f.func.kind is SchemaKind.inplace
        is_foreach = name.startswith("_foreach")
        is_inplace_foreach = is_foreach and inplace
        pairs: tuple[tuple[Argument, Argument], ...] = ()
        if is_inplace_foreach:
            pairs = _foreach_pairs(f, info)
        inputs = tuple(_differentiable_inputs(f, info, style, dict(pairs)))
        args_with_derivatives = _args_with_derivatives(inputs, info)
        outputs = fn.differentiable_outputs(key)
        base_name = get_base_name(f)
        undifferentiable = base_name in DONT_REQUIRE_DERIVATIVE or name in DONT_REQUIRE_DERIVATIVE
        requires_derivative = (
            not undifferentiable and bool(inputs) and (bool(outputs) or is_inplace_foreach)
        )
        kernel = VariableTypeKernel(
            fn=fn,
            key=key,
            info=info,
            fw_derivatives=fw_derivatives,
            style=style,
            name=name,
            base_name=base_name,
            inplace=inplace,
            is_out_fn=f.func.kind is SchemaKind.out,
            is_foreach=is_foreach,
            is_inplace_foreach=is_inplace_foreach,
            view_info=get_view_info(f),
            foreach_pairs=pairs,
            foreach_arg_of={ref.name: arg for arg, ref in pairs},
            differentiable_inputs=inputs,
            args_with_derivatives=args_with_derivatives,
            differentiable_outputs=outputs,
            requires_derivative=requires_derivative,
            try_jit_decomposition=(
                requires_derivative
                and not fw_derivatives
                and not modifies_arguments(f)
                and bool(f.func.returns)
            ),
            release=release,
        )
        _check(kernel)
        return kernel


def _foreach_pairs(
    f: NativeFunction, info: DifferentiabilityInfo | None
) -> tuple[tuple[Argument, Argument], ...]:
    """An inplace foreach function's arguments, each with its reference's argument."""
    name = (f.func.name.name.base, f.func.name.overload_name)
    if info is None:
        if name not in FOREACH_WITHOUT_DIFFERENTIABILITY_INFO:
            raise SpecError(f"{'.'.join(name)} should have a differentiability info", f.loc)
        return ()
    ours, theirs = f.func.arguments.flat_non_out, info.func.func.arguments.flat_non_out
    if len(ours) != len(theirs) and name not in FOREACH_WITH_DIFFERENT_ARITY:
        raise SpecError(
            f"{'.'.join(name)} has {len(ours)} argument{'' if len(ours) == 1 else 's'} but "
            f"its reference {info.func.func.name} has {len(theirs)}",
            f.loc,
        )
    pairs = []
    for arg, ref in zip(ours, theirs, strict=False):
        elem = arg.type.elem if isinstance(arg.type, ListType) else arg.type
        if elem != ref.type:
            raise SpecError(
                f"argument '{arg.name}' of {f.func.name} has type {arg.type}, which does not "
                f"match '{ref.type} {ref.name}' of its reference {info.func.func.name}",
                f.loc,
            )
        pairs.append((arg, ref))
    return tuple(pairs)


def _differentiable_inputs(
    f: NativeFunction,
    info: DifferentiabilityInfo | None,
    style: ArgumentStyle,
    reference_of: Mapping[Argument, Argument],
) -> list[DifferentiableInput]:
    """The non-out arguments that take gradients; an inplace foreach function's under
    their reference's names."""
    arguments: list[Argument | SelfArgument | TensorOptionsArguments] = list(
        f.func.arguments.non_out
    )
    if reference_of:
        # Without TensorOptions (foreach functions have none) the grouped and the flat
        # arguments line up.
        for i, flat in enumerate(f.func.arguments.flat_non_out):
            if flat in reference_of:
                arguments[i] = reference_of[flat]
    inputs = []
    for grouped in arguments:
        if isinstance(grouped, TensorOptionsArguments):
            continue
        a = grouped.argument if isinstance(grouped, SelfArgument) else grouped
        if is_differentiable(a.name, a.type, info):
            cpp_type = cpp.argument_type(a, binds=a.name, symint=True, style=style).cpp_type()
            inputs.append(DifferentiableInput(a.name, a.type, cpp_type))
    return inputs


def _args_with_derivatives(
    inputs: tuple[DifferentiableInput, ...], info: DifferentiabilityInfo | None
) -> tuple[DifferentiableInput, ...]:
    """The differentiable inputs a backward formula is given for (all of them without one)."""
    if info is None or not info.has_derivatives:
        return inputs
    names = {name for d in info.derivatives for name in d.var_names}
    found = tuple(arg for arg in inputs if arg.name in names)
    if len(found) != len(names):
        missing = sorted(names - {arg.name for arg in found})
        raise SpecError(
            f"derivatives for {', '.join(missing)}, which {info.name} has no "
            "differentiable input of that name",
            info.location,
        )
    return found


def _check(kernel: VariableTypeKernel) -> None:
    info, f = kernel.info, kernel.f
    if (
        info is not None
        and info.has_derivatives
        and not kernel.requires_derivative
        # An out= function may return nothing; its kernel only redispatches.
        and f.func.returns
    ):
        raise SpecError(
            f"derivative ignored for {kernel.name}: the function has a derivative formula "
            "but nothing to differentiate (no differentiable input or output)",
            kernel.location,
        )
    fw_derivatives = kernel.fw_derivatives
    if kernel.requires_derivative and fw_derivatives and not kernel.is_inplace_foreach:
        covered = sum(len(d.var_names) for d in fw_derivatives)
        if covered != len(kernel.differentiable_outputs):
            raise SpecError(
                f"{kernel.name} has forward derivatives for {covered} "
                f"output{'' if covered == 1 else 's'} but "
                f"{len(kernel.differentiable_outputs)} differentiable outputs: once any "
                "forward derivative is given, every differentiable output needs one",
                kernel.location,
            )
