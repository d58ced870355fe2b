"""A bound function of the MLX dialect: a Python signature bound straight to existing C++.

    - name: sum
      python_signature: "sum(a: array, /, axis: int | Sequence[int] | None = None,
        keepdims: bool = False, *, stream: StreamOrDevice = None) -> array"
      call: sum(a, axis?, keepdims)      # or code: "C++", or neither: sum(a, axis, keepdims)
      promote: [a, b]                    # scalar | array parameters converted together
      doc: ...

An entry is a bound function when it has `call:`, `code:` or `overloads:`, or a
`python_signature:` without `cpp_signature:`. The signature is Python's, with
`/` (positional-only before it), `*` (keyword-only after it), `*args`
(variadic), types from `python_types` (each parameter annotated; a variadic
one is `array` unless it says otherwise), defaults and a return annotation.
MLX's `stream: StreamOrDevice = None` stands where it is written, and the
call gets it last, as `s`; a function whose signature has no stream takes
none (a C++ function without one).

A dotted name, `name: linalg.norm`, puts the function in a submodule of the
extension (`linalg`, made with nanobind's `def_submodule`), and its C++
functions in the namespace of that name inside the library's
(`mlx::core::linalg`): that is where `call:` looks `norm` up and what `code:`
sees beside the library's namespace. The signature names the function
itself, `norm(...)`.

`call: f(p, q?, r)` calls the C++ function `f` (in the library's namespace,
or the submodule's, unless qualified) with those parameters, each once, and the stream: `q?`
leaves `q` out when it is None (the overload without it), and a union
parameter branches, one call per alternative, so that C++ overload
resolution picks each one's function. `code:` is a C++ expression (or
statements with `return`) for what a call cannot say. `overloads:` lists
several `{python_signature, call | code, promote}` under one Python name,
tried in order. Bound functions have no `grad:`, `dispatch:` or `shape:`:
MLX differentiates the functions they call.
"""

from __future__ import annotations

import keyword
import re

from opgen.diagnostics import Location, SpecError
from opgen.spec.mlx.declarations import matching_close, split_once, split_top_level
from opgen.spec.mlx.methods import ARRAY, METHOD_KEYS, SELF, methods, variants
from opgen.spec.mlx.model import (
    BoundOverload,
    CallArgument,
    MlxFunction,
    ParameterKind,
    PyParameter,
)
from opgen.spec.mlx.operators import CPP_KEYWORDS, SharedKeys
from opgen.spec.mlx.python_types import (
    Leaf,
    PyType,
    parse_default,
    parse_returns,
    parse_type,
)
from opgen.spec.syntax import SchemaError
from opgen.spec.yaml.load import YamlList, YamlMap
from opgen.spec.yaml.located import WrittenText, written

BOUND_KEYS = ("call", "code", "promote", "overloads")
OVERLOAD_KEYS = ("python_signature", "call", "code", "promote")
STREAM = "stream"
_NAME = re.compile(r"[A-Za-z_]\w*\Z")
_CALL = re.compile(
    r"\s*(?P<function>(?:::)?[A-Za-z_]\w*(?:::[A-Za-z_]\w*)*)\s*\((?P<args>.*)\)\s*\Z"
)
# Names the generated binding declares beside the parameters.
# (The stream is `s`, or `stream` beside a parameter named `s`.)
_GENERATED = frozenset({"nb", "opgen_mlx", "promoted_dtype"})
# Suffixes of the names the generated binding gives to what it converts.
_CONVERTED_SUFFIX = "_py"


def is_bound(entry: YamlMap) -> bool:
    if any(key in entry for key in (*BOUND_KEYS, *METHOD_KEYS)):
        return True
    return "python_signature" in entry and "cpp_signature" not in entry


def read_bound_entry(
    entry: YamlMap, name: str, keys: SharedKeys, submodule: str = ""
) -> list[MlxFunction]:
    """The entry's function, or its methods of `array` (submodule `array`), and the
    methods it derives (`spec.mlx.methods`)."""
    on_array = submodule == ARRAY
    for key in ("grad", "dispatch", "shape", "signature", "cpp_signature", "keyword_only"):
        if key in entry:
            raise SpecError(
                f"'{key}:' is not for a bound function (one with 'call:', 'code:', 'overloads:' "
                "or only a 'python_signature:'): it runs existing C++ functions, which MLX "
                "differentiates",
                entry.key_location(key),
            )
    python_name = keys.python_name or name
    if "overloads" in entry:
        for key in OVERLOAD_KEYS:
            if key in entry:
                raise SpecError(
                    f"'{key}:' goes in each item of 'overloads:'", entry.key_location(key)
                )
        items = entry["overloads"]
        if not isinstance(items, YamlList) or not items:
            raise SpecError(
                "'overloads:' lists {python_signature, call or code, promote} mappings",
                entry.value_location("overloads"),
            )
        overloads = []
        for i, item in enumerate(items):
            if not isinstance(item, YamlMap):
                raise SpecError("an overload is a mapping", items.item_locations[i])
            for written_key in item:
                if written_key not in OVERLOAD_KEYS:
                    raise SpecError(
                        f"unknown key '{written_key}' in an overload, which has "
                        f"{', '.join(OVERLOAD_KEYS)}",
                        item.key_location(written_key),
                    )
            overloads.append(_overload(item, name, python_name, on_array))
    else:
        overloads = [_overload(entry, name, python_name, on_array)]
    if on_array:
        function = MlxFunction(python_name, tuple(overloads), keys.doc, entry.location)
        return methods(entry, function)
    function = MlxFunction(python_name, tuple(overloads), keys.doc, entry.location, submodule)
    return variants(entry, function)


def _overload(entry: YamlMap, name: str, python_name: str, method: bool) -> BoundOverload:
    if "python_signature" not in entry:
        raise SpecError("a bound function needs 'python_signature:'", entry.location)
    text = _text(entry, "python_signature")
    parameters, returns = _signature(text, python_name, method)
    by_name = {p.name: p for p in parameters}
    promote = promoted(entry, by_name)
    code, code_at = code_of(entry)
    function, arguments = (
        (None, ()) if code is not None else call_of(entry, name, parameters, promote)
    )
    return BoundOverload(
        parameters, returns, function, arguments, code, code_at, promote, text.location
    )


# -- the Python signature -----------------------------------------------------------


def _signature(
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
    _check_parameters(text, parameters)
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


def _check_parameters(text: WrittenText, parameters: list[PyParameter]) -> None:
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


# -- what runs ---------------------------------------------------------------------


def code_of(entry: YamlMap) -> tuple[str | None, Location | None]:
    """The `code:` of an entry and where it is; (None, None) without one."""
    if "code" not in entry:
        return None, None
    if "call" in entry:
        raise SpecError(
            "'call:' and 'code:' are two ways to say what runs; keep one",
            entry.key_location("code"),
        )
    code_text = _text(entry, "code")
    if not code_text.text.strip():
        raise SpecError("'code:' is empty", code_text.location)
    return code_text.text.strip(), code_text.location


def call_of(
    entry: YamlMap, name: str, parameters: tuple[PyParameter, ...], promote: tuple[str, ...]
) -> tuple[str, tuple[CallArgument, ...]]:
    """The C++ function and what it is passed; a parameter that only lends its dtype to
    `promote:` need not be passed."""
    values = [p for p in parameters if p.name != STREAM]
    if "call" not in entry:
        for value in values:
            _check_passed(value, False, value.location)
        return name, tuple(CallArgument(value.name, False) for value in values)
    text = _text(entry, "call")
    m = _CALL.fullmatch(text.text)
    if m is None:
        raise SpecError(
            "'call:' is a C++ call of parameters, 'function(a, b?, c)'; write 'code:' for "
            "anything else",
            text.location,
        )
    function = m.group("function")
    by_name = {p.name: p for p in values}
    arguments: list[CallArgument] = []
    args_offset = m.start("args")
    inside = m.group("args")
    pieces = split_top_level(inside, args_offset, ",", angles=True) if inside.strip() else []
    for piece, offset in pieces:
        omit = piece.endswith("?")
        argument = piece.removesuffix("?").strip()
        at = text.at(offset, max(len(piece), 1))
        passed = by_name.get(argument)
        if passed is None:
            if argument == STREAM or argument == "s":
                message = "the stream is passed last by itself; leave it out of 'call:'"
            else:
                message = f"'{argument}' is no parameter; write 'code:' for a C++ expression"
            raise SpecError(message, at)
        if any(a.name == argument for a in arguments):
            raise SpecError(f"'{argument}' is passed twice", at)
        if omit and not passed.type.optional:
            raise SpecError(f"'{argument}?' leaves out a None, and '{argument}' cannot be None", at)
        _check_passed(passed, omit, at)
        arguments.append(CallArgument(argument, omit))
    for value in values:
        if value.name not in promote and not any(a.name == value.name for a in arguments):
            raise SpecError(f"'call:' does not pass the parameter '{value.name}'", text.location)
    return function, tuple(arguments)


def _check_passed(p: PyParameter, omit: bool, at: Location) -> None:
    if p.type.optional and p.type.is_union and not omit:
        raise SpecError(
            f"'{p.name}' is a union that may be None: write '{p.name}?' in 'call:' to leave it "
            "out when it is None, or say what happens in 'code:'",
            at,
        )


def promoted(entry: YamlMap, by_name: dict[str, PyParameter]) -> tuple[str, ...]:
    """The parameters `promote:` lists, checked."""
    if "promote" not in entry:
        return ()
    listed = entry["promote"]
    at = entry.value_location("promote")
    if not isinstance(listed, YamlList) or len(listed) < 2:
        raise SpecError("'promote:' lists two or more parameters: [a, b]", at)
    names: list[str] = []
    for i, item in enumerate(listed):
        item_at = listed.item_locations[i]
        p = by_name.get(str(item))
        if p is None:
            raise SpecError(f"'promote:' names '{item}', which is no parameter", item_at)
        leaf = p.type.alternatives[0]
        if p.type.is_union or leaf not in (Leaf.ARRAY_LIKE, Leaf.ARRAY, Leaf.DTYPE):
            raise SpecError(
                f"'{item}' is '{p.type.text}'; 'promote:' converts 'scalar | array' parameters "
                "to the dtype of the first of its parameters that has one (an mlx array, or a "
                "'Dtype' given)",
                item_at,
            )
        if str(item) in names:
            raise SpecError(f"'{item}' is listed twice", item_at)
        names.append(str(item))
    if not any(by_name[n].type.alternatives[0] is Leaf.ARRAY_LIKE for n in names):
        raise SpecError("'promote:' converts at least one 'scalar | array' parameter", at)
    return tuple(names)


def _text(entry: YamlMap, key: str) -> WrittenText:
    if not isinstance(entry[key], str):
        raise SpecError(f"'{key}:' must be a string", entry.value_location(key))
    return written(entry, key)
