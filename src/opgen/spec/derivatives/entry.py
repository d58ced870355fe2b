"""The entries of a derivatives file: `DerivativesEntry` (one entry) and its `Formula`s.

Formulas keep their text as written and the locations of their key and text,
so that whoever gives them a meaning (a target, `opgen.autograd.load_derivatives`) can
point at a mistake inside one.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from enum import Enum
from typing import Generic, Protocol, TypeVar

from opgen.diagnostics import Location
from opgen.frozen import frozen
from opgen.spec.schema import FunctionSchema
from opgen.spec.yaml.located import WrittenText

# The dispatch key of formulas written outside a `dispatch:` table.
DEFAULT_KEY = "Default"


class Dialect(Enum):
    LIBRARY = "library"  # custom-op libraries (`opgen torch-library`)
    TORCH = "torch"  # PyTorch's derivatives.yaml (`opgen autograd`)
    MLX = "mlx"  # MLX extensions (`opgen mlx`): the library's, one input per key, bare names


class Differentiable(Protocol):
    """What an entry names: an operator of a namespace, with a schema."""

    @property
    def namespace(self) -> str: ...

    @property
    def func(self) -> FunctionSchema: ...


F = TypeVar("F", bound=Differentiable)


@frozen
class Formula:
    """One key and its formula: `self, other: mul_backward(...)`."""

    key: str  # as written: `self, other`
    names: tuple[str, ...]  # the key's inputs (backward) or outputs (forward), in key order
    written: WrittenText  # the text, and where each of its characters is
    key_location: Location  # where the key is written
    name_offsets: tuple[int, ...]  # where each name starts in the key
    forward: bool = False  # computes output tangents (`result: ...`)

    @property
    def text(self) -> str:
        return self.written.text

    @property
    def location(self) -> Location:
        """Where the text starts (a block scalar's indicator)."""
        return self.written.location

    @property
    def inputs(self) -> tuple[str, ...]:
        """The inputs a backward formula computes gradients of."""
        return self.names

    @property
    def is_non_differentiable(self) -> bool:
        return self.text.lower().strip() == "non_differentiable"

    def name_location(self, index: int) -> Location:
        return self.key_location.shifted(self.name_offsets[index], len(self.names[index]))

    def span(self, offset: int, length: int) -> Location:
        """`length` characters at `offset` in the text; the whole text if that cannot be placed."""
        return self.written.at(offset, length)


@frozen
class DerivativesEntry(Generic[F]):
    """One entry: the operator it names and its formulas, per dispatch key.

    `function` is the operator the formulas are for. In the torch dialect an
    entry may name an out= overload or other variant and its formulas are then
    the out-of-place function's of the same signature, as upstream's
    `canonical_function` picks.
    """

    function: F  # the operator the formulas differentiate (a NativeFunction, an MLX operator)
    formulas_by_key: Mapping[str, tuple[Formula, ...]]  # "Default", then a dispatch table's keys
    output_differentiability: tuple[bool, ...]  # one per output; all True if not given
    location: Location  # of the `name:` value
    name: str = ""  # the base name as written (`mul`, `mul_`); the torch dialect's op names
    # A condition per output (torch dialect: one output), instead of True/False.
    output_differentiability_conditions: tuple[str, ...] | None = None
    output_differentiability_location: Location | None = None  # None: not given

    @property
    def formulas(self) -> tuple[Formula, ...]:
        return self.formulas_by_key.get(DEFAULT_KEY, ())

    @property
    def given_output_differentiability(self) -> tuple[bool, ...] | None:
        """`output_differentiability` if the entry gives it, else None."""
        if self.output_differentiability_location is None:
            return None
        return self.output_differentiability

    def formula_of(self, name: str) -> Formula | None:
        for formula in self.formulas:
            if name in formula.names:
                return formula
        return None


@frozen
class FormulaHeader:
    """A C++ header the generated autograd code includes, so that formulas can call what
    it declares: an entry `- include: mylib/grad_helpers.h` (library dialect)."""

    name: str  # as written: `mylib/grad_helpers.h`, or `<...>` for the system search path
    location: Location  # of the name


@frozen
class DerivativesFile(Generic[F]):
    """A library's derivatives file: its entries and the headers its formulas need."""

    derivatives: tuple[DerivativesEntry[F], ...]  # the entries, in file order
    headers: tuple[FormulaHeader, ...]  # the `include:` entries, in file order


def uses(text: str, name: str) -> bool:
    """Whether expression `text` uses the variable `name` (not a member or qualified name)."""
    return re.search(rf"(?<![\w.:>]){re.escape(name)}(?!\w)", text) is not None


def output_names(f: Differentiable) -> tuple[str, ...]:
    """How formulas name the outputs by position: `result`, or `result0`, `result1`, ..."""
    count = len(f.func.returns)
    return ("result",) if count == 1 else tuple(f"result{i}" for i in range(count))


def differentiable_inputs(f: Differentiable) -> dict[str, str]:
    """The inputs a library formula may give gradients of, by name, with their schema types."""
    return {
        a.name: str(a.type)
        for a in f.func.arguments.flat_non_out
        if str(a.type) in ("Tensor", "Tensor?", "Tensor[]")
    }


def argument_names(f: Differentiable) -> frozenset[str]:
    """The names of `f`'s C++ arguments: the schema's, with TensorOptions packed as `options`.

    A formula key whose first name is one of them is a backward formula.
    """
    arguments = f.func.arguments
    options = arguments.tensor_options
    if options is None:
        return frozenset(a.name for a in arguments.flat_all)
    packed = {a.name for a in options.all()}
    return frozenset([a.name for a in arguments.flat_all if a.name not in packed] + ["options"])
