"""The public C++ API: `at::add(self, other)` and `self.add(other)`.

This is the API users of ATen call. Out= overloads are spelled `add_out`
(outputs first) and `add_outf` (outputs last, the "faithful" order of the
schema); TensorOptions arguments are packed into one `TensorOptions`.
"""

from __future__ import annotations

from opgen.spec.schema import FunctionSchema


def name(
    func: FunctionSchema,
    *,
    faithful_name_for_out_overloads: bool = False,
    symint_overload: bool = False,
) -> str:
    """The C++ function name: the base name, plus `_symint`, plus `_out`/`_outf`."""
    result = str(func.name.name)
    if symint_overload:
        result += "_symint"
    if func.is_out_fn():
        result += "_outf" if faithful_name_for_out_overloads else "_out"
    return result
