"""Gradient formulas as a spec writes them: `grad:` mappings and `derivatives.yaml`.

An operator's formulas are given in one of two places, never both:

- inline, `grad: {x: <formula>, weight: <formula>}` in its spec entry (both
  dialects);
- in a derivatives file, in the entry format of the custom-op libraries
  (`opgen torch-library`): the one the caller names (`opgen mlx --derivatives
  FILE`), else `derivatives.yaml` beside the spec if there is one, unless the
  caller asks for none (`--no-derivatives`; `derivatives_file`):

      - name: mlxlib::rms_norm(Tensor x, Tensor weight, float eps=1e-5) -> Tensor
        x: <formula>
        weight: <formula>

  `name:` is the operator's schema, namespace optional, which must be the
  operator's exactly (defaults included: the formulas see those values); an
  operator of the MLX dialect, which has no schema text of its own, may be
  named by its bare name (`- name: add`, or `mlxlib::add`).

Each key names one array input (MLX formulas compute one gradient each: a key
`a, b` is an error). Which inputs exist, and whether they are arrays, is the
operator's business (`opgen.spec.mlx.operators`); this module reads the
structure and matches entries to operators.
"""

from __future__ import annotations

import enum
import os
from collections.abc import Mapping, Sequence

from opgen.diagnostics import Diagnostic, Location, SpecError, did_you_mean
from opgen.frozen import frozen
from opgen.spec.schema import FunctionSchema
from opgen.spec.syntax import IDENTIFIER, SchemaError
from opgen.spec.yaml.load import YamlList, YamlMap, load_yaml
from opgen.spec.yaml.located import WrittenText, written

DERIVATIVES_FILE = "derivatives.yaml"
_NAME = "name"
_MAX_ERRORS = 20


@frozen
class WrittenFormula:
    """One input's formula, as written."""

    input: str  # the argument it differentiates
    text: WrittenText  # the formula, and where each of its characters is
    key_location: Location  # where the input's key is written


@frozen
class DerivativesEntry:
    namespace: str | None  # as written before `::`, if at all
    name: str  # the operator's
    schema: FunctionSchema | None  # None: named without a schema
    name_text: WrittenText  # the `name:` value
    schema_offset: int  # where the schema (or bare name) starts in it
    formulas: tuple[WrittenFormula, ...]  # one per differentiated input, in file order


class Derivatives(enum.Enum):
    """Which derivatives file a spec has when the caller names no file (or None)."""

    BESIDE_SPEC = "derivatives.yaml beside the spec, if there is one"


def derivatives_beside(spec_path: str) -> str | None:
    """The `derivatives.yaml` beside a spec, if there is one."""
    path = os.path.join(os.path.dirname(spec_path), DERIVATIVES_FILE)
    return path if os.path.isfile(path) else None


def derivatives_file(spec_path: str, given: str | Derivatives | None) -> str | None:
    """The derivatives file to read: the one given (None: none), or the one beside the spec.

    A given file that does not exist is an error when it is read, as any input's.
    """
    if isinstance(given, Derivatives):
        return derivatives_beside(spec_path)
    return given


def read_grad_mapping(mapping: YamlMap, skip: tuple[str, ...] = ()) -> list[WrittenFormula]:
    """The formulas of a `grad:` mapping (or a derivatives entry, `skip`ping `name`)."""
    formulas: list[WrittenFormula] = []
    errors: list[Diagnostic] = []
    for key, value in mapping.items():
        if key in skip:
            continue
        key_at = mapping.key_location(key)
        if isinstance(key, str) and "," in key:
            errors.append(
                Diagnostic(
                    key_at,
                    f"'{key}': a formula gives the gradient of one input; write one key per input",
                )
            )
        elif not isinstance(key, str) or not IDENTIFIER.match(key):
            errors.append(Diagnostic(key_at, "a formula's key names the array input it is for"))
        elif not isinstance(value, str) or not value.strip():
            errors.append(
                Diagnostic(
                    mapping.value_location(key),
                    f"the gradient of '{key}' must be a C++ expression, a non-empty string",
                )
            )
        else:
            formulas.append(WrittenFormula(key, written(mapping, key), key_at))
    if errors:
        raise SpecError.of(errors)
    return formulas


def load_mlx_derivatives(path: str) -> tuple[DerivativesEntry, ...]:
    """Every entry of a derivatives file; SpecError with every bad entry's diagnostics."""
    doc = load_yaml(path)
    if not isinstance(doc.root, YamlList):
        raise SpecError(
            "a derivatives file must be a list of entries ('- name: <operator>', one key per "
            "input)",
            doc.location,
        )
    entries: list[DerivativesEntry] = []
    errors: list[Diagnostic] = []
    for i, entry in enumerate(doc.root):
        try:
            if not isinstance(entry, YamlMap):
                raise SpecError("a derivatives entry must be a mapping", doc.root.item_locations[i])
            entries.append(_entry(entry))
        except SpecError as e:
            errors.extend(e.diagnostics)
    if errors:
        raise SpecError.of(errors[:_MAX_ERRORS])
    return tuple(entries)


def _entry(entry: YamlMap) -> DerivativesEntry:
    if _NAME not in entry:
        if "include" in entry:
            raise SpecError(
                "'include:' entries are for `opgen torch-library`: MLX formulas call mlx::core "
                "operations and the library's operators",
                entry.key_location("include"),
            )
        raise SpecError("a derivatives entry needs 'name:', the operator", entry.location)
    if not isinstance(entry[_NAME], str):
        raise SpecError("'name:' must name the operator, a string", entry.value_location(_NAME))
    text = written(entry, _NAME)
    head = text.text.partition("(")[0]
    namespace, sep, base = head.rpartition("::")
    skip = len(namespace) + len(sep)
    schema = None
    if "(" in text.text:
        try:
            schema = FunctionSchema.parse(text.text[skip:], library=True)
        except SchemaError as error:
            error.offset += skip
            raise text.place(error) from None
        base = str(schema.name)
    elif not IDENTIFIER.match(base):
        raise SpecError(
            "'name:' is the operator's schema ('ns::name(...) -> ...') or its name",
            text.location,
        )
    formulas = read_grad_mapping(entry, skip=(_NAME,))
    if not formulas:
        raise SpecError(f"the derivatives entry for '{base}' has no formula", text.location)
    return DerivativesEntry(namespace if sep else None, base, schema, text, skip, tuple(formulas))


def match_derivatives(
    entries: Sequence[DerivativesEntry],
    namespace: str,
    schemas: Mapping[str, FunctionSchema],
    inline: Mapping[str, Location],
) -> dict[str, tuple[WrittenFormula, ...]]:
    """The formulas of each operator named by `entries`, by operator name.

    `schemas`: every operator's schema, by name; `inline`: where the operators
    with a `grad:` of their own have it. Raises SpecError with every mismatch.
    """
    found: dict[str, tuple[WrittenFormula, ...]] = {}
    errors: list[Diagnostic] = []
    for entry in entries:
        problem = _mismatch(entry, namespace, schemas, inline, found)
        if problem is None:
            found[entry.name] = entry.formulas
        else:
            errors.append(Diagnostic(*problem))
    if errors:
        raise SpecError.of(errors[:_MAX_ERRORS])
    return found


def _mismatch(
    entry: DerivativesEntry,
    namespace: str,
    schemas: Mapping[str, FunctionSchema],
    inline: Mapping[str, Location],
    found: Mapping[str, object],
) -> tuple[Location, str] | None:
    at = entry.name_text
    if entry.namespace is not None and entry.namespace != namespace:
        return (
            at.at(0, len(entry.namespace)),
            f"the operators are in namespace '{namespace}', not '{entry.namespace}'",
        )
    schema = schemas.get(entry.name)
    if schema is None:
        hint = did_you_mean(entry.name, schemas)
        return at.location, f"derivatives entry for '{entry.name}', which is not in the spec{hint}"
    if entry.schema is not None and str(entry.schema) != str(schema):
        length = len(at.text) - entry.schema_offset
        return (
            at.at(entry.schema_offset, length),
            f"derivatives entry for '{entry.name}' does not match its schema: expected '{schema}'",
        )
    if entry.name in found:
        return at.location, f"a second derivatives entry for '{entry.name}'"
    if entry.name in inline:
        return (
            at.location,
            f"'{entry.name}' has its formulas in the spec ('grad:' on line "
            f"{inline[entry.name].line}); give them in one place",
        )
    return None
