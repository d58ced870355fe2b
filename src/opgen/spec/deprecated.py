"""`deprecated.yaml`: old argument orders the Python bindings keep accepting.

Each entry pairs a deprecated Python signature with the call it stands for:

    - name: addmm(Scalar beta, Tensor self, Tensor mat1, Tensor mat2) -> Tensor
      aten: addmm(self, mat1, mat2, beta, 1)

`name:` is a schema, the signature Python accepts (marked deprecated in its
error messages). `aten:` is how that signature calls an operator: a function
name (`<name>_out` for the out= variant; an overload name is allowed and
ignored) and the operator's arguments in its own order, out arguments first
for `_out`, each the name of an argument of `name:` or a constant of
`CALL_CONSTANTS`. Which operators the call matches (same argument types,
the rest having defaults, same returns) needs the spec's Python signatures,
so `python_bindings/overloads.py` decides it; this reader checks what the file
alone can tell, with every error located. Facts from torchgen's
gen_python_functions.py (`load_deprecated_signatures`).
"""

from __future__ import annotations

import re
from collections.abc import Mapping

from opgen.diagnostics import Diagnostic, Location, SpecError
from opgen.frozen import frozen
from opgen.spec.schema import FunctionSchema
from opgen.spec.syntax import SchemaError
from opgen.spec.types import BaseTy, BaseType, Type
from opgen.spec.yaml.load import YamlDocument, YamlList, YamlMap, load_yaml

# The constants a call may pass, with the type each has when calls are matched.
CALL_CONSTANTS: Mapping[str, Type] = {"1": BaseType(BaseTy.Scalar)}

# What upstream accepts as a call: `name[.overload](arguments)`, and whatever follows.
_CALL = re.compile(r"(\w+)(?:\.\w+)?\((.*)\)")
_NAME = "name"
_CALL_KEY = "aten"
_MAX_ERRORS = 20


@frozen
class DeprecatedSignature:
    schema: FunctionSchema  # the deprecated Python signature
    call: str  # `addmm_out(out, self, mat1, mat2, beta, 1)`
    function: str  # the function it calls: `addmm_out`
    operator: str  # the base name of the operators that may be: `addmm`
    location: Location  # the `name:` value
    call_location: Location  # the `aten:` value


def load_deprecated_signatures(path: str) -> tuple[DeprecatedSignature, ...]:
    """Every entry of `path`, in order; raises SpecError with every bad entry's diagnostics."""
    doc = load_yaml(path)
    errors: list[Diagnostic] = []
    signatures: list[DeprecatedSignature] = []
    for entry in _entries(doc):
        try:
            signatures.append(_read(entry))
        except SpecError as e:
            errors.extend(e.diagnostics)
    if errors:
        raise SpecError.of(errors[:_MAX_ERRORS])
    return tuple(signatures)


def _entries(doc: YamlDocument) -> list[YamlMap]:
    if not isinstance(doc.root, YamlList):
        raise SpecError(
            "a deprecated-signatures file must be a list of entries ('- name: ...', '  aten: ...')",
            doc.location,
        )
    errors = [
        Diagnostic(doc.root.item_locations[i], "a deprecated-signature entry must be a mapping")
        for i, entry in enumerate(doc.root)
        if not isinstance(entry, YamlMap)
    ]
    if errors:
        raise SpecError.of(errors[:_MAX_ERRORS])
    return [e for e in doc.root if isinstance(e, YamlMap)]


def _read(entry: YamlMap) -> DeprecatedSignature:
    name, name_at = _string(entry, _NAME, "the deprecated signature, a schema")
    call, call_at = _string(entry, _CALL_KEY, "the call it stands for, 'name(argument, ...)'")
    try:
        schema = FunctionSchema.parse(name)
    except SchemaError as error:
        raise error.at(name_at) from None
    m = _CALL.match(call)
    if m is None:
        raise SpecError(
            "'aten:' must be a call 'name(argument, ...)' of the operator's function", call_at
        )
    function, arguments = m.group(1), m.group(2)
    _check_call_arguments(schema, arguments, call_at.shifted(m.start(2)))
    operator = function.replace("_out", "") if function.endswith("_out") else function
    return DeprecatedSignature(schema, call, function, operator, name_at, call_at)


def _string(entry: YamlMap, key: str, what: str) -> tuple[str, Location]:
    if key not in entry:
        raise SpecError(f"a deprecated-signature entry needs '{key}:', {what}", entry.location)
    value = entry[key]
    at = entry.value_location(key)
    if not isinstance(value, str):
        raise SpecError(f"'{key}:' must be {what}, a string", at)
    return value, at


def _check_call_arguments(schema: FunctionSchema, arguments: str, at: Location) -> None:
    """Each argument of the call names an argument of `schema` or is a known constant."""
    known = {a.name for a in schema.arguments.flat_all}
    offset = 0
    for piece in arguments.split(", "):
        if piece not in known and piece not in CALL_CONSTANTS:
            choices = ", ".join(sorted(known)) or "none"
            raise SpecError(
                f"'{piece}' is neither an argument of the deprecated signature ({choices}) "
                f"nor a known constant ({', '.join(CALL_CONSTANTS)})",
                at.shifted(offset, len(piece)),
            )
        offset += len(piece) + 2
