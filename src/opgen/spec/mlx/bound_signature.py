"""The Python signature of a bound function in the MLX dialect.

`python_signature:` is Python's, with `/` (positional-only before it), `*`
(keyword-only after it), `*args` (variadic), types from `python_types` (each
parameter annotated; a variadic one is `array` unless it says otherwise; a
method's `self` is the array), defaults and a return annotation. MLX's `stream:
StreamOrDevice = None` stands where it is written, and the call gets it last,
as `s`; a function whose signature has no stream takes none (a C++ function
without one). Errors are located in the signature's text.
"""

from __future__ import annotations

import keyword
import re

from opgen.diagnostics import SpecError
from opgen.spec.mlx.calls import STREAM
from opgen.spec.mlx.declarations import matching_close, split_once, split_top_level
from opgen.spec.mlx.methods import SELF
from opgen.spec.mlx.model import ParameterKind, PyParameter
from opgen.spec.mlx.operators import CPP_KEYWORDS
from opgen.spec.mlx.python_types import Leaf, PyType, parse_default, parse_returns, parse_type
from opgen.spec.syntax import SchemaError
from opgen.spec.yaml.located import WrittenText

_NAME = re.compile(r"[A-Za-z_]\w*\Z")
# Names the generated binding declares beside the parameters.
# (The stream is `s`, or `stream` beside a parameter named `s`.)
_GENERATED = frozenset({"nb", "opgen_mlx", "promoted_dtype"})
# Suffixes of the names the generated binding gives to what it converts.
_CONVERTED_SUFFIX = "_py"


def bound_signature(
    text: WrittenText, python_name: str, method: bool
) -> tuple[tuple[PyParameter, ...], str]:
    try:
        return _parse_signature(text, python_name, method)
    except SchemaError as error:
        raise text.place(error) from None


def _parse_signature(
    text: WrittenText, python_name: str, method: bool
) -> tuple[tuple[PyParameter, ...], str]:
    source = text.text
    open_paren = source.find("(")
    name = source[:open_paren].strip() if open_paren >= 0 else ""
    if open_paren < 0 or not _NAME.match(name):
        raise SchemaError(
            "expected a Python signature 'name(a: array, /, *, stream: StreamOrDevice = None) "
            "-> array'",
            0,
            max(len(source), 1),
        )
    if name != python_name:
        lead = len(source) - len(source.lstrip())
        raise SchemaError(
            f"the signature is of '{name}', and the entry binds '{python_name}'", lead, len(name)
        )
    close = matching_close(source, open_paren, angles=False)
    rest = source[close + 1 :]
    m = re.fullmatch(r"\s*->\s*(\S.*?)\s*", rest, re.DOTALL)
    if m is None:
        raise SchemaError("expected '-> <return type>' after the parameters", close + 1)
    returns_at = close + 1 + m.start(1)
    try:
        returns = parse_returns(m.group(1))
    except SchemaError as error:
        raise SchemaError(error.message, returns_at, len(m.group(1))) from None
    inside = source[open_paren + 1 : close]
    pieces = split_top_level(inside, open_paren + 1, ",", angles=False) if inside.strip() else []
    if pieces and pieces[-1][0] == "" and len(pieces) > 1:
        pieces.pop()
    parameters: list[PyParameter] = []
    kind = ParameterKind.POSITIONAL
    seen_slash = False
    for piece, offset in pieces:
        if piece == "/":
            if seen_slash or kind is not ParameterKind.POSITIONAL or not parameters:
                raise SchemaError("'/' follows the positional-only parameters, once", offset)
            seen_slash = True
            parameters = [_with_kind(p, ParameterKind.POSITIONAL_ONLY) for p in parameters]
            continue
        if piece == "*":
            if kind is not ParameterKind.POSITIONAL:
                raise SchemaError("a second '*'", offset)
            kind = ParameterKind.KEYWORD_ONLY
            continue
        if not piece:
            raise SchemaError("an empty parameter", offset)
        if piece.startswith("*"):
            if piece.startswith("**"):
                raise SchemaError("'**' parameters have no meaning here", offset, len(piece))
            if kind is not ParameterKind.POSITIONAL:
                raise SchemaError("a variadic parameter after '*'", offset, len(piece))
            parameters.append(_parameter(text, piece[1:], offset + 1, ParameterKind.VARIADIC))
            kind = ParameterKind.KEYWORD_ONLY
            continue
        parameters.append(_parameter(text, piece, offset, kind, method and not parameters))
    if pieces and pieces[-1][0] == "*":
        raise SchemaError("keyword-only parameters must follow '*'", pieces[-1][1])
    check_parameters(parameters)
    return tuple(parameters), returns


def _with_kind(p: PyParameter, kind: ParameterKind) -> PyParameter:
    return PyParameter(p.name, p.type, p.default, kind, p.location)


def _parameter(
    text: WrittenText, piece: str, offset: int, kind: ParameterKind, receiver: bool = False
) -> PyParameter:
    """`receiver`: the first parameter of a method, which may be `self` unannotated."""
    (declaration, decl_offset), default = split_once(piece, offset, "=", angles=False)
    (name, name_offset), annotation = split_once(declaration, decl_offset, ":", angles=False)
    if not _NAME.match(name) or name in CPP_KEYWORDS or keyword.iskeyword(name):
        raise SchemaError(f"'{name}' is not a parameter name", name_offset, max(len(name), 1))
    if annotation is None and receiver and name == SELF:
        type = PyType((Leaf.ARRAY,), optional=False)
    elif annotation is None:
        if kind is not ParameterKind.VARIADIC:
            raise SchemaError(
                f"'{name}' needs a type ('{name}: array')", name_offset, max(len(name), 1)
            )
        type = PyType((Leaf.ARRAY,), optional=False)
    else:
        try:
            type = parse_type(annotation[0])
        except SchemaError as error:
            raise SchemaError(error.message, annotation[1], len(annotation[0])) from None
    if (name == STREAM) != (Leaf.STREAM in type.alternatives):
        raise SchemaError(
            "MLX's stream is 'stream: StreamOrDevice = None', and only it",
            name_offset,
            max(len(name), 1),
        )
    parsed_default = None
    if default is not None:
        if kind is ParameterKind.VARIADIC:
            raise SchemaError("a variadic parameter has no default", default[1])
        try:
            parsed_default = parse_default(default[0], type)
        except SchemaError as error:
            raise SchemaError(error.message, default[1], max(len(default[0]), 1)) from None
    elif name == STREAM:
        raise SchemaError("the stream's default is None", name_offset, len(name))
    return PyParameter(name, type, parsed_default, kind, text.at(name_offset, len(name)))


def check_parameters(parameters: list[PyParameter]) -> None:
    """What a bound function's parameters must be, in either dialect: names unique, none the
    binding uses itself, no required one after a defaulted one, conversions not in unions."""
    seen: set[str] = set()
    defaulted = False
    for p in parameters:
        if p.name in seen:
            raise SpecError(f"a second parameter named '{p.name}'", p.location)
        seen.add(p.name)
        reserved = p.name in _GENERATED and p.name != STREAM
        if reserved or p.name.endswith(_CONVERTED_SUFFIX):
            raise SpecError(
                f"'{p.name}' is a name the generated binding uses: rename the parameter",
                p.location,
            )
        if p.kind in (ParameterKind.POSITIONAL_ONLY, ParameterKind.POSITIONAL):
            if p.default is not None:
                defaulted = True
            elif defaulted:
                raise SpecError(
                    f"'{p.name}' has no default and follows a parameter with one", p.location
                )
    names = {p.name for p in parameters}
    for p in parameters:
        if p.type.alternatives[0] is Leaf.ARRAY_LIKE and f"{p.name}_array" in names:
            raise SpecError(
                f"'{p.name}_array' is the name the generated binding gives to the array "
                f"'{p.name}' converts to: rename one",
                p.location,
            )
    for p in parameters:
        if p.type.is_union and any(
            leaf in (Leaf.ARRAY_LIKE, Leaf.INT_OR_SHAPE, Leaf.SHAPE) for leaf in p.type.alternatives
        ):
            raise SpecError(
                f"'{p.name}': a converted type is no alternative of a union", p.location
            )
