"""The names a formula table of PyTorch's derivatives.yaml may use in its keys.

A key whose first name is an argument lists inputs: a backward formula
computes their gradients (each input at most once, and only tensor inputs
have one), or `non_differentiable` marks them as having none. Any other key
lists outputs: a forward formula computes their tangents (each output at most
once), naming them as the schema does or by position (`result` for the only
output, else `result0`, `result1`, ...). What the formulas' text may use is
checked where it is given a meaning (`opgen.autograd.load_derivatives`).
"""

from __future__ import annotations

import difflib
import re
from collections.abc import Collection, Sequence

from opgen.diagnostics import SpecError, did_you_mean
from opgen.spec.derivatives.entry import Differentiable, Formula, argument_names

_POSITIONAL_OUTPUT = re.compile(r"result(\d+)")


def check_torch_formulas(
    formulas: Sequence[Formula], f: Differentiable, arguments: Collection[str]
) -> None:
    """Check the keys of one table of `f`'s formulas; `arguments` as `argument_names(f)`."""
    return_names = {r.name for r in f.func.returns if r.name is not None}
    gradients: set[str] = set()
    tangents: set[str] = set()
    for formula in formulas:
        for i, name in enumerate(formula.names):
            if name in arguments and name in return_names:
                raise SpecError(
                    f"'{name}' names both an input and an output of '{f.func.name}'",
                    formula.name_location(i),
                )
        if formula.forward:
            _check_outputs(formula, f, return_names, tangents)
        elif formula.is_non_differentiable:
            _check_arguments(formula, f, arguments)
        else:
            _check_inputs(formula, f, arguments, gradients)
    for formula in formulas:
        if formula.forward or not formula.is_non_differentiable:
            continue
        for i, name in enumerate(formula.names):
            if name in gradients:
                raise SpecError(
                    f"'{name}' has a gradient formula and is marked non_differentiable",
                    formula.name_location(i),
                )


def _check_arguments(formula: Formula, f: Differentiable, arguments: Collection[str]) -> None:
    for i, name in enumerate(formula.names):
        if name not in arguments:
            raise SpecError(_no_input(name, f, arguments), formula.name_location(i))


def _no_input(name: str, f: Differentiable, candidates: Collection[str]) -> str:
    hint = did_you_mean(name, candidates)
    return f"'{f.func.name}' has no input named '{name}'{hint}"


def _check_inputs(
    formula: Formula, f: Differentiable, arguments: Collection[str], gradients: set[str]
) -> None:
    tensors = {a.name for a in f.func.arguments.flat_non_out if a.type.is_tensor_like()}
    for i, name in enumerate(formula.names):
        at = formula.name_location(i)
        if name in tensors:
            if name in gradients:
                raise SpecError(f"a second formula for the gradient of '{name}'", at)
            gradients.add(name)
        elif name in arguments:
            raise SpecError(
                f"'{name}' is not a tensor input of '{f.func.name}': it has no gradient", at
            )
        else:
            raise SpecError(_no_input(name, f, tensors), at)


def _check_outputs(
    formula: Formula, f: Differentiable, return_names: Collection[str], tangents: set[str]
) -> None:
    count = len(f.func.returns)
    by_name = by_position = False
    for i, name in enumerate(formula.names):
        at = formula.name_location(i)
        positional = _POSITIONAL_OUTPUT.fullmatch(name)
        if name in return_names:
            by_name = True
        elif (name == "result" and count == 1) or (
            positional is not None and int(positional.group(1)) < count
        ):
            by_position = True
        else:
            raise SpecError(_not_an_output(name, f, i == 0), at)
        if by_name and by_position:
            raise SpecError(
                "a forward formula names its outputs all as the schema does or all by "
                "position ('result0', 'result1', ...)",
                at,
            )
        if name in tangents:
            raise SpecError(f"a second forward formula for output '{name}'", at)
        tangents.add(name)


def _not_an_output(name: str, f: Differentiable, first: bool) -> str:
    count = len(f.func.returns)
    if count == 0:
        outputs = "it has no output"
    elif count == 1:
        outputs = "its output is 'result'"
    else:
        outputs = f"its outputs are 'result0' to 'result{count - 1}'"
    named = [r.name for r in f.func.returns if r.name is not None]
    if named:
        outputs += " or " + ", ".join(f"'{n}'" for n in named)
    if first:
        close = difflib.get_close_matches(name, sorted(argument_names(f)), n=1)
        if close:
            return f"'{f.func.name}' has no input named '{name}'; did you mean '{close[0]}'?"
        return f"'{f.func.name}' has no input or output named '{name}' ({outputs})"
    return f"'{f.func.name}' has no output named '{name}' ({outputs})"
