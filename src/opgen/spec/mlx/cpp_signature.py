"""C++ declarations of the MLX dialect: `array add(const array& a, const array& b)`.

The one-`signature` form is a full declaration: a return type, the
function's name (which must be the entry's `name:`), and named parameters
with C++ default arguments. The split form's `cpp_signature:` is a function
type, `array(const array&, const array&)`: parameter names are optional (the
Python signature gives them) and defaults belong to the Python signature. A
trailing `;` is allowed. MLX's `StreamOrDevice s = {}` may end the list and
is dropped: every operator takes the stream anyway.

Reading stops at the first problem with a `SchemaError` whose offset is into
the declaration string. Types are checked here (`type_mapping` says which
have an MLX meaning); defaults are converted by the caller, which knows which
form it reads.
"""

from __future__ import annotations

import re

from opgen.frozen import frozen
from opgen.spec.mlx.declarations import Parameter, matching_close, split_once, split_top_level
from opgen.spec.mlx.type_mapping import STREAM_TYPE, cpp_returns, cpp_type, is_mutable_reference
from opgen.spec.syntax import SchemaError

_HEAD = re.compile(r"(?P<returns>.*[\w>&*])\s+(?P<name>[A-Za-z_]\w*)")
# A declaration `type name`: the name is the last identifier, not part of a qualified name.
_DECLARATION = re.compile(r"(?P<type>.*?[\w>&*])\s*(?<![\w:])(?P<name>[A-Za-z_]\w*)")
# Words that qualify a type, so that `const array` is a type and not `const` named `array`.
_TYPE_WORDS = frozenset({"const", "volatile", "unsigned", "signed", "long", "short"})
_MLX_CPP_TYPES = (
    "array, std::optional<array>, std::vector<array>, int, int32_t, int64_t, float, double, "
    "bool, std::string, std::optional<int|float|double|bool>, Shape, std::vector<int>, "
    "std::optional<Shape>, std::optional<std::vector<int>>, Dtype, std::optional<Dtype>"
)
_MLX_CPP_RETURNS = "array, std::vector<array>, std::pair<array, array>, std::tuple<array, ...>"


@frozen
class CppParameter:
    parameter: Parameter
    spec_type: str  # the schema type: `Tensor?`


@frozen
class MlxCppSignature:
    name: str | None  # None: a function type without a name
    name_offset: int
    returns: str  # the schema's returns: `Tensor`, `(Tensor, Tensor)`
    parameters: tuple[CppParameter, ...]  # without the stream parameter


def parse_cpp_signature(text: str, *, named: bool) -> MlxCppSignature:
    """Read a declaration (`named`: the one-`signature` form) or a function type."""
    stripped = text.rstrip()
    stripped = stripped.removesuffix(";").rstrip()
    open_paren = stripped.find("(")
    if open_paren < 0:
        form = "'array name(const array& a, ...)'" if named else "'array(const array&, ...)'"
        raise SchemaError(f"expected a C++ declaration {form}", 0, max(len(text), 1))
    close = matching_close(stripped, open_paren, angles=True)
    if close != len(stripped) - 1:
        raise SchemaError(
            "unexpected text after the parameter list", close + 1, len(stripped) - close - 1
        )
    returns_text, returns_offset, name, name_offset = _head(stripped[:open_paren], named)
    returns = cpp_returns(returns_text)
    if returns is None:
        raise SchemaError(
            f"return type '{returns_text}' is not one an MLX operator has ({_MLX_CPP_RETURNS})",
            returns_offset,
            max(len(returns_text), 1),
        )
    inside = stripped[open_paren + 1 : close]
    parameters: list[CppParameter] = []
    if inside.strip() not in ("", "void"):
        pieces = split_top_level(inside, open_paren + 1, ",", angles=True)
        for i, (piece, offset) in enumerate(pieces):
            parameter = _parameter(piece, offset)
            if parameter is None:  # the stream
                if i != len(pieces) - 1:
                    raise SchemaError(
                        f"the '{STREAM_TYPE}' parameter must be the last one", offset, len(piece)
                    )
                continue
            parameters.append(parameter)
    return MlxCppSignature(name, name_offset, returns, tuple(parameters))


def _head(head: str, named: bool) -> tuple[str, int, str | None, int]:
    """The return type and its offset, the name (if any) and its offset."""
    lead = len(head) - len(head.lstrip())
    m = _HEAD.fullmatch(head.strip())
    if m is not None and m.group("returns").strip() not in _TYPE_WORDS:
        return m.group("returns"), lead, m.group("name"), lead + m.start("name")
    if named:
        raise SchemaError(
            "expected the return type and the function's name before '(': "
            "'array name(const array& a, ...)'",
            lead,
            max(len(head.strip()), 1),
        )
    return head.strip(), lead, None, lead


def _parameter(piece: str, offset: int) -> CppParameter | None:
    """One parameter; None for the stream parameter."""
    if not piece:
        raise SchemaError("an empty parameter", offset)
    (declaration, decl_offset), default = split_once(piece, offset, "=", angles=True)
    type_text, name, name_offset = declaration, None, decl_offset + len(declaration)
    m = _DECLARATION.fullmatch(declaration)
    if m is not None and m.group("type").strip() not in _TYPE_WORDS:
        type_text, name = m.group("type").strip(), m.group("name")
        name_offset = decl_offset + m.start("name")
    canonical, spec_type = cpp_type(type_text)
    if canonical == STREAM_TYPE:
        return None
    if "*" in canonical:
        raise SchemaError(
            f"'{type_text}' is a pointer; MLX operators take arrays and values",
            decl_offset,
            len(type_text),
        )
    if spec_type is not None and is_mutable_reference(type_text):
        raise SchemaError(
            f"'{type_text}' is a reference to a mutable value: MLX operators never write "
            f"their arguments; write 'const {type_text}'",
            decl_offset,
            len(type_text),
        )
    if spec_type is None:
        raise SchemaError(
            f"C++ type '{type_text}' has no MLX meaning (MLX operators take {_MLX_CPP_TYPES}, "
            f"with 'const' and '&' as you like)",
            decl_offset,
            len(type_text),
        )
    parameter = Parameter(
        name=name,
        name_offset=name_offset,
        type_text=type_text,
        type_offset=decl_offset,
        default=None if default is None else default[0],
        default_offset=-1 if default is None else default[1],
        keyword_only=False,
        offset=offset,
        length=len(piece),
    )
    return CppParameter(parameter, spec_type)
