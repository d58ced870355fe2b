"""The rules of a library's formulas: backward formulas of tensor inputs only.

A library formula may use `grads[i]` for the gradient of output `i`, and
`grad_input_mask` (which inputs need a gradient) only in a formula of several
inputs.
"""

from __future__ import annotations

import re

from opgen.diagnostics import SpecError, did_you_mean
from opgen.spec.derivatives.entry import Differentiable, Formula, differentiable_inputs, uses

_OUTPUT_KEY = re.compile(r"result\d*")
_GRADS_INDEX = re.compile(r"(?<![\w.])grads\[(\d+)\]")


def check_library_formula(formula: Formula, f: Differentiable, covered: set[str]) -> None:
    """Check one formula of `f`; `covered` collects the inputs with a formula so far."""
    if len(formula.names) == 1 and _OUTPUT_KEY.fullmatch(formula.names[0]):
        raise SpecError(
            "forward-mode derivatives ('result:' formulas) are not supported; give each "
            "input's gradient",
            formula.key_location,
        )
    differentiable = differentiable_inputs(f)
    for i, name in enumerate(formula.names):
        at = formula.name_location(i)
        if name in differentiable:
            if name in covered:
                raise SpecError(f"a second formula for the gradient of '{name}'", at)
            covered.add(name)
            continue
        if any(a.name == name for a in f.func.arguments.flat_all):
            raise SpecError(
                f"'{name}' is not a tensor input of '{f.func.name}': it has no gradient", at
            )
        hint = did_you_mean(name, [a.name for a in f.func.arguments.flat_all])
        raise SpecError(f"'{f.func.name}' has no input named '{name}'{hint}", at)
    _check_outputs_used(formula, f)


def _check_outputs_used(formula: Formula, f: Differentiable) -> None:
    count = len(f.func.returns)
    for match in _GRADS_INDEX.finditer(formula.text):
        if int(match.group(1)) >= count:
            raise SpecError(
                f"'{match.group(0)}' is out of range: '{f.func.name}' has {count} output(s)",
                formula.location,
            )
    if uses(formula.text, "grad_input_mask") and len(formula.names) == 1:
        raise SpecError(
            "'grad_input_mask' is for formulas of several inputs ('a, b: ...')", formula.location
        )
