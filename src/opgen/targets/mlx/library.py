"""Operators bound to their nanobind signatures, with what generation needs checked.

`bind(library)` derives each operator's `NbSignature` once. The reader has
checked the operators (`opgen.spec.mlx.operators`), the names the generated code
declares among them; a type the convention cannot express is still reported
here, located, should a library be built by hand.
"""

from __future__ import annotations

import re
from collections.abc import Mapping

from opgen.api.nanobind import NanobindTypeError, NbSignature, signature
from opgen.cached import cached
from opgen.diagnostics import Diagnostic, SpecError
from opgen.frozen import frozen
from opgen.spec.mlx.model import BoundAs, GradFormula, MlxFunction, MlxLibrary, MlxOperator

# An identifier that is not a member (`x.shape`, `p->f`) or qualified (`mlx::core`).
_IDENTIFIER = re.compile(r"(?<![\w.:>])[A-Za-z_]\w*")


def identifiers(code: str) -> frozenset[str]:
    """The unqualified names a C++ expression uses (which of the scope it needs)."""
    return frozenset(_IDENTIFIER.findall(code))


@frozen
class BoundOperator:
    operator: MlxOperator
    function: MlxFunction  # the function that binds it: its Python name and docstring
    signature: NbSignature

    @property
    def name(self) -> str:
        return self.operator.name

    @property
    def impl_name(self) -> str:
        return f"{self.operator.name}_impl"

    @cached
    def primitive_name(self) -> str:
        """The Primitive's `name()`: the operator's name in CamelCase."""
        return "".join(part[:1].upper() + part[1:] for part in self.name.split("_") if part)

    @property
    def class_name(self) -> str:
        return f"{self.primitive_name}Primitive"

    @cached
    def formulas(self) -> Mapping[str, GradFormula]:
        return {g.input: g for g in self.operator.grads}

    @cached
    def used(self) -> frozenset[str]:
        """The names the formulas and the shape rule use."""
        code = [g.formula for g in self.operator.grads]
        if self.operator.shape is not None:
            code.append(self.operator.shape)
        return identifiers(" ".join(code))


def bind(library: MlxLibrary) -> tuple[BoundOperator, ...]:
    """Every operator with its signature; SpecError with every problem found."""
    bound: list[BoundOperator] = []
    problems: list[Diagnostic] = []
    for function in library.functions:
        op = function.operator
        if op is None or function.bound_as is not BoundAs.FUNCTION:
            continue
        try:
            bound.append(BoundOperator(op, function, signature(op.func)))
        except NanobindTypeError as e:
            problems.append(Diagnostic(op.location, f"{op.name}: {e}"))
    if problems:
        raise SpecError.of(problems)
    return tuple(bound)
