"""Python signatures of the MLX dialect's split form: `add(a: array, b: array, *, alpha:
float = 1.0) -> array`.

The signature gives what Python callers see: the function's name (the
operator's Python name), each parameter's name, whether it is keyword-only
(after a bare `*`), its default (a Python literal) and, optionally, its
Python type (`type_mapping` lists them); the return annotation is optional
too. Types left out come from the C++ signature, and types written in both
must agree (the entry reader checks that). A parameter named `stream` is
dropped: every operator takes MLX's `stream` keyword anyway. Positional-only
markers (`/`), `*args` and `**kwargs` have no C++ counterpart and are errors.

Errors are `SchemaError`s at offsets into the signature string.
"""

from __future__ import annotations

import keyword
import re

from opgen.frozen import frozen
from opgen.spec.mlx.declarations import Parameter, matching_close, split_once, split_top_level
from opgen.spec.mlx.type_mapping import python_returns, python_type
from opgen.spec.syntax import SchemaError

STREAM_PARAMETER = "stream"
_NAME = re.compile(r"[A-Za-z_]\w*\Z")
_MLX_PYTHON_TYPES = (
    "array, array | None, list[array], int, float, bool, str, int | None, float | None, "
    "bool | None, Sequence[int], Sequence[int] | None, Dtype, Dtype | None"
)
_MLX_PYTHON_RETURNS = "array, list[array], tuple[array, array, ...]"


@frozen
class MlxPythonParameter:
    parameter: Parameter
    spec_type: str | None  # None: not annotated


@frozen
class MlxPythonSignature:
    name: str
    name_offset: int
    parameters: tuple[MlxPythonParameter, ...]  # without `stream`
    returns: str | None  # the schema's returns; None: not annotated
    returns_offset: int
    returns_length: int


def parse_python_signature(text: str) -> MlxPythonSignature:
    open_paren = text.find("(")
    name = text[:open_paren].strip() if open_paren >= 0 else ""
    if open_paren < 0 or not _NAME.match(name):
        raise SchemaError(
            "expected a Python signature 'name(a: array, *, alpha: float = 1.0) -> array'",
            0,
            max(len(text), 1),
        )
    name_offset = len(text) - len(text.lstrip())
    close = matching_close(text, open_paren, angles=False)
    returns, returns_offset, returns_length = _returns(text, close + 1)
    inside = text[open_paren + 1 : close]
    parameters: list[MlxPythonParameter] = []
    keyword_only = False
    if inside.strip():
        pieces = split_top_level(inside, open_paren + 1, ",", angles=False)
        if pieces[-1][0] == "" and len(pieces) > 1:
            pieces.pop()  # a trailing comma
        for piece, offset in pieces:
            if piece == "*":
                if keyword_only:
                    raise SchemaError("a second '*'", offset)
                keyword_only = True
                continue
            _check_plain(piece, offset)
            parameter = _parameter(piece, offset, keyword_only)
            if parameter.parameter.name != STREAM_PARAMETER:
                parameters.append(parameter)
        if pieces[-1][0] == "*":
            raise SchemaError("keyword-only parameters must follow '*'", pieces[-1][1])
    return MlxPythonSignature(
        name, name_offset, tuple(parameters), returns, returns_offset, returns_length
    )


def _returns(text: str, start: int) -> tuple[str | None, int, int]:
    rest = text[start:]
    if not rest.strip():
        return None, start, 1
    m = re.fullmatch(r"\s*->\s*(\S.*?)\s*", rest, re.DOTALL)
    if m is None:
        lead = len(rest) - len(rest.lstrip())
        raise SchemaError(
            "expected '-> <return type>' or nothing after the parameters",
            start + lead,
            len(rest.strip()),
        )
    annotation, offset = m.group(1), start + m.start(1)
    returns = python_returns(annotation)
    if returns is None:
        raise SchemaError(
            f"return type '{annotation}' is not one an MLX operator has ({_MLX_PYTHON_RETURNS})",
            offset,
            len(annotation),
        )
    return returns, offset, len(annotation)


def _check_plain(piece: str, offset: int) -> None:
    if piece == "/":
        raise SchemaError(
            "positional-only parameters ('/') are not supported: every argument has a name",
            offset,
        )
    if piece.startswith("*"):
        raise SchemaError(
            f"'{piece}': variadic parameters have no C++ counterpart", offset, len(piece)
        )
    if not piece:
        raise SchemaError("an empty parameter", offset)


def _parameter(piece: str, offset: int, keyword_only: bool) -> MlxPythonParameter:
    (declaration, decl_offset), default = split_once(piece, offset, "=", angles=False)
    (name, name_offset), annotation = split_once(declaration, decl_offset, ":", angles=False)
    if not _NAME.match(name) or keyword.iskeyword(name):
        raise SchemaError(f"'{name}' is not a parameter name", name_offset, max(len(name), 1))
    spec_type = None
    if annotation is not None and name != STREAM_PARAMETER:  # the stream's type is MLX's
        spec_type = python_type(annotation[0])
        if spec_type is None:
            raise SchemaError(
                f"Python type '{annotation[0]}' has no MLX meaning (MLX operators take "
                f"{_MLX_PYTHON_TYPES})",
                annotation[1],
                max(len(annotation[0]), 1),
            )
    parameter = Parameter(
        name=name,
        name_offset=name_offset,
        type_text=None if annotation is None else annotation[0],
        type_offset=name_offset if annotation is None else annotation[1],
        default=None if default is None else default[0],
        default_offset=-1 if default is None else default[1],
        keyword_only=keyword_only,
        offset=offset,
        length=len(piece),
    )
    return MlxPythonParameter(parameter, spec_type)
