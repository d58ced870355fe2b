"""`derivatives.yaml`: gradient formulas per operator.

Each entry names an operator by its schema (namespace optional) and gives one
formula per differentiable input, in PyTorch's derivatives.yaml syntax:

    - name: mylib::rms_norm(Tensor x, Tensor weight, float eps=1e-06) -> Tensor
      x, weight: mylib::rms_norm_backward(grad, x, weight, eps, grad_input_mask)
      output_differentiability: [True]

A key lists the inputs its formula computes the gradients of: one input, or
several separated by `, `, for a formula that returns a tuple. A formula may
use the operator's inputs by name, `grad` (the gradient of the first output),
`grads[i]`, the outputs (`result` for a single output, else `result0`,
`result1`, ... or their names) and `grad_input_mask` (which of the key's
inputs need a gradient). `output_differentiability` marks the outputs that
have no gradient. The formulas' language (C++ or Python) is the target's
business; this module checks the structure and the names.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

from opgen.diagnostics import Diagnostic, Location, SpecError
from opgen.frozen import frozen
from opgen.spec.load import YamlDocument, YamlList, YamlMap, load_yaml
from opgen.spec.native import NativeFunction
from opgen.spec.schema import FunctionSchema
from opgen.spec.syntax import SchemaError

_OUTPUT_KEY = re.compile(r"result\d*")
_GRADS_INDEX = re.compile(r"(?<![\w.])grads\[(\d+)\]")


@frozen
class Formula:
    inputs: tuple[str, ...]  # the inputs whose gradients it computes, in key order
    text: str
    location: Location  # of the formula text


@frozen
class Derivative:
    function: NativeFunction
    formulas: tuple[Formula, ...]
    output_differentiability: tuple[bool, ...]  # one per output
    location: Location  # of the entry's `name:`

    def formula_of(self, name: str) -> Formula | None:
        for formula in self.formulas:
            if name in formula.inputs:
                return formula
        return None


def uses(text: str, name: str) -> bool:
    """Whether expression `text` uses the variable `name` (not a member or qualified name)."""
    return re.search(rf"(?<![\w.:>]){re.escape(name)}(?!\w)", text) is not None


def output_names(f: NativeFunction) -> tuple[str, ...]:
    """How formulas name the outputs: `result`, or `result0`, `result1`, ..."""
    count = len(f.func.returns)
    return ("result",) if count == 1 else tuple(f"result{i}" for i in range(count))


def differentiable_inputs(f: NativeFunction) -> dict[str, str]:
    """The inputs that can have gradients, by name, with their schema types."""
    return {
        a.name: str(a.type)
        for a in f.func.arguments.flat_non_out
        if str(a.type) in ("Tensor", "Tensor?", "Tensor[]")
    }


def load_derivatives(path: str, functions: Iterable[NativeFunction]) -> tuple[Derivative, ...]:
    """Read `path`; raises SpecError with every diagnostic found."""
    doc = load_yaml(path)
    by_name = {f"{f.namespace}::{f.func.name}": f for f in functions}
    derivatives: list[Derivative] = []
    errors: list[Diagnostic] = []
    seen: dict[str, Location] = {}
    for entry in _entries(doc):
        try:
            d = _read_entry(entry, by_name)
            key = f"{d.function.namespace}::{d.function.func.name}"
            if key in seen:
                raise SpecError(f"a second derivatives entry for '{key}'", d.location)
            seen[key] = d.location
            derivatives.append(d)
        except SpecError as e:
            errors.extend(e.diagnostics)
    if errors:
        raise SpecError.of(errors)
    return tuple(derivatives)


def _entries(doc: YamlDocument) -> list[YamlMap]:
    if not isinstance(doc.root, YamlList):
        raise SpecError("a derivatives file must be a list of entries", doc.location)
    for i, entry in enumerate(doc.root):
        if not isinstance(entry, YamlMap):
            raise SpecError("a derivatives entry must be a mapping", doc.root.item_locations[i])
    return [e for e in doc.root if isinstance(e, YamlMap)]


def _read_entry(entry: YamlMap, by_name: dict[str, NativeFunction]) -> Derivative:
    name = entry.get("name")
    if not isinstance(name, str):
        raise SpecError("a derivatives entry needs 'name:', the operator's schema", entry.location)
    at = entry.value_location("name")
    f = _operator(name, at, by_name)
    formulas: list[Formula] = []
    covered: set[str] = set()
    for key, text in entry.items():
        if key in ("name", "output_differentiability"):
            continue
        formulas.append(_read_formula(entry, str(key), text, f, covered))
    if not formulas:
        raise SpecError(f"the derivatives entry for '{f.func.name}' has no formula", at)
    return Derivative(f, tuple(formulas), _read_output_differentiability(entry, f), at)


def _operator(name: str, at: Location, by_name: dict[str, NativeFunction]) -> NativeFunction:
    head = name.partition("(")[0]
    namespace, sep, _ = head.rpartition("::")
    skip = len(namespace) + len(sep)
    try:
        schema = FunctionSchema.parse(name[skip:])
    except SchemaError as error:
        raise error.at(at.shifted(skip)) from None
    candidates = [f for key, f in by_name.items() if key.endswith(f"::{schema.name}")]
    if namespace:
        candidates = [f for f in candidates if f.namespace == namespace]
    if not candidates:
        raise SpecError(f"derivatives entry for '{schema.name}', which is not in the spec", at)
    f = candidates[0]
    if _shape(schema) != _shape(f.func):
        raise SpecError(
            f"derivatives entry for '{schema.name}' does not match its schema: expected '{f.func}'",
            at,
        )
    return f


def _shape(schema: FunctionSchema) -> tuple[object, ...]:
    """A schema without its defaults: what a derivatives entry must repeat exactly."""
    arguments = tuple((str(a.type), a.name) for a in schema.arguments.flat_all)
    return arguments, tuple(str(r.type) for r in schema.returns)


def _read_formula(
    entry: YamlMap, key: str, text: object, f: NativeFunction, covered: set[str]
) -> Formula:
    where = entry.key_location(key)
    if _OUTPUT_KEY.fullmatch(key):
        raise SpecError(
            "forward-mode derivatives ('result:' formulas) are not supported; give each "
            "input's gradient",
            where,
        )
    inputs = tuple(key.split(", "))
    differentiable = differentiable_inputs(f)
    offset = 0
    for name in inputs:
        at = where.shifted(offset, len(name))
        offset += len(name) + 2
        if name in differentiable:
            if name in covered:
                raise SpecError(f"a second formula for the gradient of '{name}'", at)
            covered.add(name)
            continue
        if any(a.name == name for a in f.func.arguments.flat_all):
            raise SpecError(
                f"'{name}' is not a tensor input of '{f.func.name}': it has no gradient", at
            )
        raise SpecError(f"'{f.func.name}' has no input named '{name}'", at)
    if not isinstance(text, str):
        raise SpecError("a formula must be a string", entry.value_location(key))
    formula = Formula(inputs, text, entry.value_location(key))
    _check_outputs_used(formula, f)
    return formula


def _check_outputs_used(formula: Formula, f: NativeFunction) -> None:
    count = len(f.func.returns)
    for match in _GRADS_INDEX.finditer(formula.text):
        if int(match.group(1)) >= count:
            raise SpecError(
                f"'{match.group(0)}' is out of range: '{f.func.name}' has {count} output(s)",
                formula.location,
            )
    if uses(formula.text, "grad_input_mask") and len(formula.inputs) == 1:
        raise SpecError(
            "'grad_input_mask' is for formulas of several inputs ('a, b: ...')", formula.location
        )


def _read_output_differentiability(entry: YamlMap, f: NativeFunction) -> tuple[bool, ...]:
    count = len(f.func.returns)
    value = entry.get("output_differentiability")
    if value is None:
        return (True,) * count
    if (
        not isinstance(value, list)
        or len(value) != count
        or not all(isinstance(v, bool) for v in value)
    ):
        raise SpecError(
            f"'output_differentiability' must be a list of {count} True/False values, "
            "one per output",
            entry.value_location("output_differentiability"),
        )
    return tuple(bool(v) for v in value)
