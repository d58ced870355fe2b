"""opgen's spec language for MLX: `- func: <namespace>::<schema>`, an operator the
extension defines or a function bound to existing C++.

An operator (`- func: mlxlib::rms_norm(Tensor x, Tensor weight, float eps=1e-5)
-> Tensor`): the schema is the spec language's, with the library namespace
written before it (required; every entry of a file names the same one).
Besides `func:` an entry has the keys both dialects share (`python_name`,
`doc`, `grad`, `dispatch`, `shape`). What MLX adds to the schema language's
rules:

- every type must have an MLX meaning (`type_mapping.type_problem`), and
  no type carries an alias annotation (`Tensor(a!)`): MLX arrays are
  immutable;
- returns are one `Tensor`, one `Tensor[]` or several `Tensor`s;
- names have no overload (`add.Tensor`) and do not end in `_` (inplace);
- defaults fit their types (`type_mapping.default_problem`).

These are checked on the schema's pieces before the schema itself is built,
so that a mutation annotation is reported as MLX's problem rather than as a
rule of PyTorch's schemas.

A bound function: an entry with `call:` or `code:` (or `promote:` or
`positional_only:`) binds existing C++ functions (`calls`), written the
schema's way:

    - func: mlx::core::sum(Tensor a, bool keepdims=False) -> Tensor
      call: sum(a, keepdims)
      positional_only: [a]
    - func: mlx::core::sum.axis(Tensor a, int axis, bool keepdims=False) -> Tensor
      call: sum(a, axis, keepdims)
      positional_only: [a]
    - func: mlx::core::add(Scalar a, Scalar b) -> Tensor
      promote: [a, b]

Entries of one name and different overload names (`sum`, `sum.axis`) are one
Python function whose signatures nanobind tries in the order written: the
schema language's overloads are MLX's unions. The namespace before the name is
where `call:` and `code:` look names up (it may be nested: `mlx::core`).

Types: `Tensor`, `Tensor?`, `Tensor[]` (arrays), `Scalar`, `Scalar?` (a Python
number or an array, converted as MLX converts one: `scalar | array`), `int`,
`float`, `bool`, `str` and their optionals, `ScalarType` (a dtype), `int[]`
(axes), `SymInt[]` (a shape, checked into 32 bits), `int[2]`, `int[3]` (a pair,
a triple). Returns: `Tensor`, `Tensor[]`, several `Tensor`s, `bool`, `int`,
`()`. Every function takes MLX's keyword-only `stream`; `positional_only:`
lists its first arguments that Python takes by position only, and `variadic:`
names a `Tensor[]` argument that Python takes as `*arrays` (the arguments
after it keyword-only). `variants: function, method` (PyTorch's key) makes the
function a method of `array` too, its first argument the array
(`spec.mlx.methods`); one entry of a name saying so says it for all. The
parameters are checked as the MLX dialect checks them
(`bound_signature.check_parameters`).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping

from opgen.diagnostics import Location, SpecError
from opgen.frozen import frozen
from opgen.spec.arguments import Argument, Return
from opgen.spec.mlx.bound_signature import check_parameters
from opgen.spec.mlx.calls import STREAM, overload_of
from opgen.spec.mlx.model import BoundOverload, ParameterKind, PyParameter
from opgen.spec.mlx.operators import ReadOperator, SharedKeys, name_problem
from opgen.spec.mlx.python_types import Leaf, PyType, parse_default
from opgen.spec.mlx.type_mapping import (
    MLX_TYPE_LIST,
    annotation_problem,
    default_problem,
    type_problem,
)
from opgen.spec.schema import FunctionSchema, OperatorName
from opgen.spec.syntax import SchemaError, split_items
from opgen.spec.types import Annotation, Type, annotated_str
from opgen.spec.yaml.load import YamlList, YamlMap
from opgen.spec.yaml.located import WrittenText, written

FUNC = "func"
_RETURNS = "an MLX operator returns 'Tensor', 'Tensor[]' or several 'Tensor's ('(Tensor, Tensor)')"


def _written_schema(entry: YamlMap, rule: str, prefix: str) -> tuple[WrittenText, str, int]:
    """The `func:` text, the namespace written before the schema, and where the schema
    starts; without a namespace, an error saying `rule`, with `prefix` as an example."""
    if not isinstance(entry[FUNC], str):
        raise SpecError("'func:' must be a schema, a string", entry.value_location(FUNC))
    text = written(entry, FUNC)
    head = text.text.partition("(")[0]
    namespace, sep, _ = head.rpartition("::")
    if not sep or not namespace:
        raise SpecError(
            f"{rule}: '{prefix}{text.text}'",
            text.at(0, len(head)),
        )
    return text, namespace, len(namespace) + len(sep)


def _parsed(
    text: WrittenText, skip: int, check: Callable[[str], None] | None = None
) -> FunctionSchema:
    """The schema after the namespace; `check` its pieces first."""
    schema_text = text.text[skip:]
    try:
        if check is not None:
            check(schema_text)
        return FunctionSchema.parse(schema_text, library=True)
    except SchemaError as error:
        error.offset += skip
        raise text.place(error) from None


def read_spec_entry(entry: YamlMap, keys: SharedKeys) -> tuple[str, Location, ReadOperator]:
    """The entry's namespace, where it is written, and the operator."""
    text, namespace, skip = _written_schema(
        entry, "an MLX operator's schema starts with its library's namespace", "mylib::"
    )
    problem = name_problem(namespace)
    if problem is not None:
        hint = (
            "; binding existing functions there takes 'call:' or 'code:'"
            if "::" in namespace
            else ""
        )
        raise SpecError(f"{problem}: a namespace is one C++ name{hint}", text.at(0, len(namespace)))
    func = _parsed(text, skip, _check_pieces)
    try:
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


BOUND_SPEC_KEYS = ("call", "code", "promote", "positional_only", "variadic")
_TYPES: Mapping[str, tuple[Leaf, bool]] = {
    "Tensor": (Leaf.ARRAY, False),
    "Tensor?": (Leaf.ARRAY, True),
    "Tensor[]": (Leaf.ARRAY_LIST, False),
    "Scalar": (Leaf.ARRAY_LIKE, False),
    "Scalar?": (Leaf.ARRAY_LIKE, True),
    "int": (Leaf.INT, False),
    "int?": (Leaf.INT, True),
    "float": (Leaf.FLOAT, False),
    "float?": (Leaf.FLOAT, True),
    "bool": (Leaf.BOOL, False),
    "bool?": (Leaf.BOOL, True),
    "str": (Leaf.STR, False),
    "str?": (Leaf.STR, True),
    "ScalarType": (Leaf.DTYPE, False),
    "ScalarType?": (Leaf.DTYPE, True),
    "int[]": (Leaf.INT_LIST, False),
    "int[]?": (Leaf.INT_LIST, True),
    "SymInt[]": (Leaf.SHAPE, False),
    "SymInt[]?": (Leaf.SHAPE, True),
    "int[2]": (Leaf.INT_PAIR, False),
    "int[3]": (Leaf.INT_TRIPLE, False),
}
_TYPE_LIST = ", ".join(_TYPES)
_STREAM = PyParameter(
    STREAM,
    PyType((Leaf.STREAM,), optional=False),
    parse_default("None", PyType((Leaf.STREAM,), optional=False)),
    ParameterKind.KEYWORD_ONLY,
    Location("", 0),
)


@frozen
class SpecBound:
    """One entry: a signature of the function named `name`, and where it is."""

    namespace: str
    namespace_location: Location
    name: str  # without the overload name
    overload: BoundOverload
    location: Location


def is_bound_spec(entry: YamlMap) -> bool:
    return any(key in entry for key in BOUND_SPEC_KEYS)


def read_bound_spec_entry(entry: YamlMap) -> SpecBound:
    for key in ("grad", "dispatch", "shape"):
        if key in entry:
            raise SpecError(
                f"'{key}:' is not for a bound function (one with 'call:', 'code:', 'promote:' "
                "or 'positional_only:'): it runs existing C++ functions, which MLX "
                "differentiates",
                entry.key_location(key),
            )
    text, namespace, skip = _written_schema(
        entry,
        "a bound function's schema starts with the namespace its C++ functions are in",
        "mlx::core::",
    )
    for part in namespace.split("::"):
        problem = name_problem(part)
        if problem is not None:
            raise SpecError(f"{problem} in the namespace", text.at(0, len(namespace)))
    func = _parsed(text, skip)
    if func.arguments.out:
        raise SpecError("a bound function has no out= arguments", text.location)
    first_only = _positional_only(entry, [a.name for a in func.arguments.flat_positional])
    variadic = _variadic(entry, func)
    parameters: list[PyParameter] = []
    for i, a in enumerate(func.arguments.flat_all):
        offset, length = func.span(a)
        at = text.at(skip + offset, length)
        entry_type = _TYPES.get(str(a.type))
        if entry_type is None or a.annotation is not None:
            raise SpecError(
                f"type '{a.type}' has no meaning in a bound MLX function ({_TYPE_LIST})", at
            )
        leaf, optional = entry_type
        type = PyType((leaf,), optional)
        default = None
        if a.default is not None:
            try:
                default = parse_default(a.default, type)
            except SchemaError as error:
                written = text.at(skip + offset + length - len(a.default), len(a.default))
                raise SpecError(error.message, written) from None
        if a.name == variadic:
            kind, type = ParameterKind.VARIADIC, PyType((Leaf.ARRAY,), optional=False)
        elif a in func.arguments.flat_kwarg_only or any(
            p.kind is ParameterKind.VARIADIC for p in parameters
        ):
            kind = ParameterKind.KEYWORD_ONLY
        elif i < first_only:
            kind = ParameterKind.POSITIONAL_ONLY
        else:
            kind = ParameterKind.POSITIONAL
        parameters.append(PyParameter(a.name, type, default, kind, at))
        if a.name in (STREAM, "s"):
            raise SpecError(f"'{a.name}' is MLX's stream, which every function takes", at)
    parameters.append(_STREAM)
    check_parameters(parameters)
    returns = _returns([str(r.type) for r in func.returns], text.location)
    name = str(func.name.name)
    overload = overload_of(entry, name, tuple(parameters), returns, text.location)
    return SpecBound(namespace, text.at(0, len(namespace)), name, overload, entry.location)


def _positional_only(entry: YamlMap, positional: list[str]) -> int:
    """How many of the first arguments are positional-only."""
    if "positional_only" not in entry:
        return 0
    listed = entry["positional_only"]
    at = entry.value_location("positional_only")
    if not isinstance(listed, YamlList) or not listed:
        raise SpecError("'positional_only:' lists the first arguments: [a, b]", at)
    for i, item in enumerate(listed):
        if i >= len(positional) or item != positional[i]:
            raise SpecError(
                f"'positional_only:' lists the first arguments in order, and argument {i + 1} "
                f"is {positional[i]!r}"
                if i < len(positional)
                else "more names than arguments",
                listed.item_locations[i],
            )
    return len(listed)


def _variadic(entry: YamlMap, func: FunctionSchema) -> str | None:
    """The `Tensor[]` argument `variadic:` names, which Python takes as `*name`."""
    if "variadic" not in entry:
        return None
    name = entry["variadic"]
    at = entry.value_location("variadic")
    positional = {a.name: a for a in func.arguments.flat_positional}
    argument = positional.get(str(name))
    if argument is None or str(argument.type) != "Tensor[]" or argument.default is not None:
        raise SpecError(
            f"'variadic:' names a positional 'Tensor[]' argument without a default, which "
            f"Python takes as '*{name}'",
            at,
        )
    return argument.name


def _returns(types: list[str], at: Location) -> str:
    if not types:
        return "None"
    if types == ["Tensor"]:
        return "array"
    if types == ["Tensor[]"]:
        return "list[array]"
    if types in (["bool"], ["int"]):
        return types[0]
    if len(types) > 1 and all(t == "Tensor" for t in types):
        return f"tuple[{', '.join('array' for _ in types)}]"
    raise SpecError(
        f"returns ({', '.join(types)}): a bound function returns 'Tensor', 'Tensor[]', several "
        "'Tensor's, 'bool', 'int' or '()'",
        at,
    )
