"""A bound function in opgen's spec language: a schema bound straight to existing C++.

    - func: mlx::core::sum(Tensor a, bool keepdims=False) -> Tensor
      call: sum(a, keepdims)
      positional_only: [a]
    - func: mlx::core::sum.axis(Tensor a, int axis, bool keepdims=False) -> Tensor
      call: sum(a, axis, keepdims)
      positional_only: [a]
    - func: mlx::core::add(Scalar a, Scalar b) -> Tensor
      promote: [a, b]

An entry of opgen's spec language with `call:` or `code:` (or `promote:` or
`positional_only:`) binds existing C++ functions, as the MLX dialect's bound
functions do (`bound_entry`), written the schema's way. Entries of one name
and different overload names (`sum`, `sum.axis`) are one Python function whose
signatures nanobind tries in the order written: the schema language's
overloads are MLX's unions. The namespace before the name is where `call:`
and `code:` look names up (it may be nested: `mlx::core`).

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
(`spec.mlx.methods`); one entry of a name saying so says it for all.
"""

from __future__ import annotations

from collections.abc import Mapping

from opgen.diagnostics import Location, SpecError
from opgen.frozen import frozen
from opgen.spec.mlx.bound_entry import STREAM, call_of, code_of, promoted
from opgen.spec.mlx.model import BoundOverload, ParameterKind, PyParameter
from opgen.spec.mlx.operators import name_problem
from opgen.spec.mlx.python_types import Leaf, PyType, parse_default
from opgen.spec.schema import FunctionSchema
from opgen.spec.syntax import SchemaError
from opgen.spec.yaml.load import YamlList, YamlMap
from opgen.spec.yaml.located import written

FUNC = "func"
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
    if not isinstance(entry[FUNC], str):
        raise SpecError("'func:' must be a schema, a string", entry.value_location(FUNC))
    for key in ("grad", "dispatch", "shape"):
        if key in entry:
            raise SpecError(
                f"'{key}:' is not for a bound function (one with 'call:', 'code:', 'promote:' "
                "or 'positional_only:'): it runs existing C++ functions, which MLX "
                "differentiates",
                entry.key_location(key),
            )
    text = written(entry, FUNC)
    head = text.text.partition("(")[0]
    namespace, sep, _ = head.rpartition("::")
    if not sep or not namespace:
        raise SpecError(
            "a bound function's schema starts with the namespace its C++ functions are in: "
            f"'mlx::core::{text.text}'",
            text.at(0, len(head)),
        )
    for part in namespace.split("::"):
        problem = name_problem(part)
        if problem is not None:
            raise SpecError(f"{problem} in the namespace", text.at(0, len(namespace)))
    skip = len(namespace) + len(sep)
    try:
        func = FunctionSchema.parse(text.text[skip:], library=True)
    except SchemaError as error:
        error.offset += skip
        raise text.place(error) from None
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
                raise SpecError(error.message, at) from None
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
    returns = _returns([str(r.type) for r in func.returns], text.location)
    by_name = {p.name: p for p in parameters}
    promote = promoted(entry, by_name)
    code, code_at = code_of(entry)
    function, arguments = (
        (None, ())
        if code is not None
        else call_of(entry, str(func.name.name), tuple(parameters), promote)
    )
    overload = BoundOverload(
        tuple(parameters), returns, function, arguments, code, code_at, promote, text.location
    )
    return SpecBound(
        namespace, text.at(0, len(namespace)), str(func.name.name), overload, entry.location
    )


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
