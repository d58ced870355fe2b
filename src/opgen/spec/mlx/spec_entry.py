"""An entry in opgen's spec language: `- func: mlxlib::rms_norm(Tensor x, Tensor weight,
float eps=1e-5) -> Tensor`.

The schema is the spec language's, with the library namespace written
before it (required; every entry of a file names the same one). Besides
`func:` an entry has the keys both dialects share (`python_name`, `doc`,
`grad`, `dispatch`, `shape`). What MLX adds to the schema language's rules:

- every type must have an MLX meaning (`type_mapping.type_problem`), and
  no type carries an alias annotation (`Tensor(a!)`): MLX arrays are
  immutable;
- returns are one `Tensor`, one `Tensor[]` or several `Tensor`s;
- names have no overload (`add.Tensor`) and do not end in `_` (inplace);
- defaults fit their types (`type_mapping.default_problem`).

These are checked on the schema's pieces before the schema itself is built,
so that a mutation annotation is reported as MLX's problem rather than as a
rule of PyTorch's schemas.
"""

from __future__ import annotations

from collections.abc import Iterator

from opgen.diagnostics import Location, SpecError
from opgen.spec.arguments import Argument, Return
from opgen.spec.mlx.operators import ReadOperator, SharedKeys, name_problem
from opgen.spec.mlx.type_mapping import (
    MLX_TYPE_LIST,
    annotation_problem,
    default_problem,
    type_problem,
)
from opgen.spec.schema import FunctionSchema, OperatorName
from opgen.spec.syntax import SchemaError, split_items
from opgen.spec.types import Annotation, Type, annotated_str
from opgen.spec.yaml.load import YamlMap
from opgen.spec.yaml.located import WrittenText, written

FUNC = "func"
_RETURNS = "an MLX operator returns 'Tensor', 'Tensor[]' or several 'Tensor's ('(Tensor, Tensor)')"


def read_spec_entry(entry: YamlMap, keys: SharedKeys) -> tuple[str, Location, ReadOperator]:
    """The entry's namespace, where it is written, and the operator."""
    if not isinstance(entry[FUNC], str):
        raise SpecError(
            "'func:' must be the operator's schema, a string", entry.value_location(FUNC)
        )
    text = written(entry, FUNC)
    head = text.text.partition("(")[0]
    namespace, sep, _ = head.rpartition("::")
    if not sep:
        raise SpecError(
            f"an MLX operator's schema starts with its library's namespace: 'mylib::{text.text}'",
            text.at(0, len(head)),
        )
    if not namespace:
        raise SpecError("an empty namespace before '::'", text.at(0, 2))
    problem = name_problem(namespace)
    if problem is not None:
        hint = (
            "; binding existing functions there takes 'call:' or 'code:'"
            if "::" in namespace
            else ""
        )
        raise SpecError(f"{problem}: a namespace is one C++ name{hint}", text.at(0, len(namespace)))
    skip = len(namespace) + len(sep)
    schema_text = text.text[skip:]
    try:
        _check_pieces(schema_text)
        func = FunctionSchema.parse(schema_text, library=True)
        _check_defaults(func)
    except SchemaError as error:
        error.offset += skip
        raise text.place(error) from None
    locations = {a.name: _name_location(func, a, text, skip) for a in func.arguments.flat_all}
    name = str(func.name)
    python_name = keys.python_name or name
    name_at = text.at(skip, len(name))
    op = ReadOperator(
        name=name,
        name_location=name_at,
        python_name=python_name,
        python_name_location=keys.python_name_location or name_at,
        func=func,
        argument_locations=locations,
        keys=keys,
        grads=keys.grads,
        location=entry.location,
    )
    return namespace, text.at(0, len(namespace)), op


def _name_location(func: FunctionSchema, a: Argument, text: WrittenText, skip: int) -> Location:
    offset, _ = func.span(a)
    before = len(annotated_str(a.type, a.annotation)) + 1
    return text.at(skip + offset + before, len(a.name))


def _check_pieces(text: str) -> None:
    """MLX's rules on the name, the argument types and the returns, before the schema is
    built; a piece that does not parse is left to `FunctionSchema.parse`."""
    open_paren = text.find("(")
    arrow = text.rfind(") -> ")
    if open_paren <= 0 or arrow < open_paren:
        return
    _check_name(text[:open_paren])
    for piece, offset in split_items(text[open_paren + 1 : arrow], open_paren + 1):
        if piece in ("*", ""):
            continue
        try:
            argument = Argument.parse(piece)
        except SchemaError as error:
            if error.message.startswith("unknown type"):  # not even PyTorch's
                message = f"{error.message} ({MLX_TYPE_LIST})"
                raise SchemaError(message, offset + error.offset, error.length) from None
            return
        _check_type(argument.type, argument.annotation, offset)
    _check_returns(text[arrow + 5 :], arrow + 5)


def _check_name(text: str) -> None:
    try:
        name = OperatorName.parse(text)
    except SchemaError:
        return
    if name.overload_name:
        start = len(str(name.name))
        raise SchemaError(
            "MLX operators have no overloads: give each its own name",
            start,
            len(name.overload_name) + 1,
        )
    if name.name.inplace or name.name.dunder_method:
        raise SchemaError(
            f"'{name.name}' is an inplace or dunder name, which MLX operators cannot have",
            0,
            len(text),
        )
    problem = name_problem(str(name.name))
    if problem is not None:
        raise SchemaError(problem, 0, len(text))


def _check_type(type: Type, annotation: Annotation | None, offset: int) -> None:
    written_type = annotated_str(type, annotation)
    if annotation is not None:
        raise SchemaError(annotation_problem(type, written_type), offset, len(written_type))
    problem = type_problem(type)
    if problem is not None:
        raise SchemaError(problem, offset, len(written_type))


def _check_returns(text: str, offset: int) -> None:
    if text == "()":
        raise SchemaError(f"'()': {_RETURNS}", offset, 2)
    parenthesized = text.startswith("(") and text.endswith(")")
    inner, start = (text[1:-1], offset + 1) if parenthesized else (text, offset)
    pieces = list(split_items(inner, start))
    for piece, at in pieces:
        try:
            r = Return.parse(piece)
        except SchemaError:
            return
        written_type = annotated_str(r.type, r.annotation)
        if r.annotation is not None:
            raise SchemaError(annotation_problem(r.type, written_type), at, len(written_type))
        allowed = ("Tensor",) if len(pieces) > 1 else ("Tensor", "Tensor[]")
        if str(r.type) not in allowed:
            raise SchemaError(f"'{written_type}': {_RETURNS}", at, len(written_type))


def _check_defaults(func: FunctionSchema) -> None:
    for problem, offset, length in _default_problems(func):
        raise SchemaError(problem, offset, length)


def _default_problems(func: FunctionSchema) -> Iterator[tuple[str, int, int]]:
    for a in func.arguments.flat_all:
        if a.default is None:
            continue
        problem = default_problem(str(a.type), a.default)
        if problem is not None:
            offset, length = func.span(a)
            yield problem, offset + length - len(a.default), len(a.default)
