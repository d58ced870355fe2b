"""Operators bound to their nanobind signatures, with what generation needs checked.

`bind(library)` derives each operator's `NbSignature` once and checks, with the
operator's location, what only the generated code depends on: argument names
that the generated functions use themselves, a primitive's array inputs and
output shapes, stub names. What the spec means (types, formula names) is the
reader's to check; a type the convention cannot express is still reported
here, located, should a library be built by hand.
"""

from __future__ import annotations

import re
from collections.abc import Mapping

from opgen.api.nanobind import NanobindTypeError, NbSignature, signature
from opgen.cached import cached
from opgen.diagnostics import Diagnostic, Location, SpecError
from opgen.frozen import frozen
from opgen.spec.mlx.model import GradFormula, MlxLibrary, MlxOperator
from opgen.spec.mlx.operators import RESERVED_NAMES

# Names the generated operator functions, lambdas and Primitive methods declare (the reader
# rejects them as argument names, at the argument).
GENERATED_NAMES = RESERVED_NAMES
# Names the stub imports.
STUB_NAMES = frozenset({"array", "Dtype", "Sequence", "StreamOrDevice"})
KERNEL_KEYS = ("cpu", "gpu")
# An identifier that is not a member (`x.shape`, `p->f`) or qualified (`mlx::core`).
_IDENTIFIER = re.compile(r"(?<![\w.:>])[A-Za-z_]\w*")


def identifiers(code: str) -> frozenset[str]:
    """The unqualified names a C++ expression uses (which of the scope it needs)."""
    return frozenset(_IDENTIFIER.findall(code))


@frozen
class BoundOperator:
    operator: MlxOperator
    signature: NbSignature

    @property
    def name(self) -> str:
        return self.operator.name

    @property
    def location(self) -> Location:
        return self.operator.location

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
    for op in library.operators:
        try:
            b = BoundOperator(op, signature(op.func))
        except NanobindTypeError as e:
            problems.append(Diagnostic(op.location, f"{op.name}: {e}"))
            continue
        problems.extend(Diagnostic(op.location, f"{op.name}: {m}") for m in _problems(b))
        problems.extend(_formula_problems(b))
        bound.append(b)
    problems.extend(_duplicates(bound))
    if problems:
        raise SpecError.of(problems)
    return tuple(bound)


def _problems(op: BoundOperator) -> list[str]:
    sig = op.signature
    names = set(sig.names())
    out = [
        f"argument '{n}' has a name the generated code uses; rename it"
        for n in sig.names()
        if n in GENERATED_NAMES
    ]
    for a in sig.arrays:
        for derived in (f"has_{a.name}", f"{a.name}_size", f"{a.name}_grads"):
            if derived in names:
                out.append(f"argument '{derived}' has a name the generated code uses; rename it")
    if op.operator.python_name in STUB_NAMES:
        out.append(f"python_name '{op.operator.python_name}' would hide a name the stub imports")
    if op.operator.is_primitive:
        out.extend(_primitive_problems(op))
    elif op.operator.shape is not None:
        out.append("'shape:' is for primitives (operators with 'dispatch:' kernels)")
    return out


def _primitive_problems(op: BoundOperator) -> list[str]:
    out = [
        f"dispatch key '{k}' is not one of {', '.join(KERNEL_KEYS)}"
        for k in op.operator.dispatch
        if k not in KERNEL_KEYS
    ]
    if not op.signature.arrays:
        out.append("a primitive needs an array input (its outputs take the first one's dtype)")
    if op.signature.outputs is None and op.operator.shape is None:
        out.append("a primitive returning 'Tensor[]' needs a 'shape:' rule")
    return out


def _formula_problems(op: BoundOperator) -> list[Diagnostic]:
    arrays = {a.name for a in op.signature.arrays}
    return [
        Diagnostic(g.location, f"{op.name}: '{g.input}' is not an array input of the operator")
        for g in op.operator.grads
        if g.input not in arrays
    ]


def _duplicates(bound: list[BoundOperator]) -> list[Diagnostic]:
    out: list[Diagnostic] = []
    seen: dict[str, BoundOperator] = {}
    for op in bound:
        for key in (f"C++ name '{op.name}'", f"python_name '{op.operator.python_name}'"):
            if key in seen:
                first = seen[key].location
                out.append(Diagnostic(op.location, f"{key} is used twice (first at {first})"))
            seen[key] = op
    return out
