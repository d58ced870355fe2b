"""Bound functions in `<module>_bindings.cpp`: one nanobind lambda per overload.

The lambda takes the parameters as `api.mlx_python` says, converts what MLX
converts (array-likes, shapes, variadic arrays), and runs the overload: its
`code:`, or its `call:` with the stream appended, where a parameter left out
when None (`x?`) branches on it and a union branches on its alternative
(`std::visit`, so each alternative calls the C++ overload that takes it).

`support()` is the code those conversions use (templates/support.h), written
once into the file when a function needs it: what MLX's own bindings do with a
Python value where an array is expected (its weak scalars, integer overflow and
dtype rules) and with a shape, re-implemented from their observable behaviour.
`indexing()` (templates/indexing.h) is MLX's indexing by Python objects, for
`Index` parameters and `a.at[index]`, re-implemented alike.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from pathlib import Path

from opgen.api import mlx_python
from opgen.api.mlx_python import PyArgument
from opgen.spec.mlx.methods import AT_RETURNS, INDEX, SELF
from opgen.spec.mlx.model import BoundAs, BoundOverload, MlxFunction
from opgen.spec.mlx.python_types import Leaf
from opgen.targets.mlx.cpp import string_literal
from opgen.targets.mlx.layout import indent

_RETURN = re.compile(r"\breturn\b")  # `code:` with it is statements, else an expression
INCLUDES = (
    "<complex>",
    "<cstdint>",
    "<limits>",
    "<optional>",
    "<sstream>",
    "<stdexcept>",
    "<string>",
    "<type_traits>",
    "<utility>",
    "<variant>",
    "<vector>",
)
NANOBIND_INCLUDES = (
    "<nanobind/ndarray.h>",
    "<nanobind/stl/complex.h>",
    "<nanobind/stl/pair.h>",
)

# The docstring of a module's `array_methods()`, in the binding and in the stub.
ARRAY_METHODS_DOC = (
    "The methods, operators and properties this module binds on `mlx.core.array`, by "
    "attribute name, to be set on the class: `for name, value in "
    "array_methods().items(): setattr(mlx.core.array, name, value)`."
)


def support() -> str:
    """The conversions of MLX's Python bindings, re-implemented: a value where an array is
    expected, and a shape."""
    return _template("support.h")


def indexing() -> str:
    """The support of `Index` parameters and of `a.at[index]`: MLX's indexing of an array by
    Python objects, re-implemented from its observable behaviour."""
    return _template("indexing.h")


def _template(name: str) -> str:
    return (Path(__file__).parent / "templates" / name).read_text(encoding="utf-8")


def uses_indexing(functions: Sequence[MlxFunction]) -> bool:
    return any(
        f.bound_as is BoundAs.AT
        or any(Leaf.INDEX in p.type.alternatives for o in f.overloads for p in o.parameters)
        for f in functions
    )


def definitions(function: MlxFunction, namespace: str) -> list[str]:
    """The `m.def(...)` statements of a function, one per overload, in order."""
    out: list[str] = []
    for overload in function.overloads:
        out += [*([""] if out else []), *definition(function, overload, namespace)]
    return out


def definition(function: MlxFunction, overload: BoundOverload, namespace: str) -> list[str]:
    items = [string_literal(function.python_name), *_items(function, overload, namespace)]
    receiver = submodule_variable(function.submodule)
    return [f"  {receiver}.def(", *_arguments_lines(items), "  );"]


def method_definition(function: MlxFunction, namespace: str) -> list[str]:
    """The statements of `array_methods()` that put a method or property into `methods`: one
    per overload, each chained to the ones before."""
    name = string_literal(function.python_name)
    if function.bound_as is BoundAs.METHOD:
        return [
            line
            for overload in function.overloads
            for line in (
                f"methods[{name}] = nb::cpp_function(",
                *_arguments_lines(_items(function, overload, namespace), "    "),
                ");",
            )
        ]
    assert function.bound_as is BoundAs.PROPERTY, function.bound_as
    if function.overloads[0].returns != AT_RETURNS:
        getter = _items(function, function.overloads[0], namespace)
    else:
        getter = [
            "[](const mlx::core::array& self) {\n  return opgen_mlx::ArrayAt{self, {}};\n}",
            f"nb::sig({string_literal(f'def at(self) -> {AT_RETURNS}')})",
        ]
    return [
        f'methods[{name}] = nb::module_::import_("builtins").attr("property")(',
        "    nb::cpp_function(",
        *_arguments_lines(getter, "        "),
        "    ),",
        "    nb::none(),",
        "    nb::none(),",
        f"    {string_literal(function.doc)});",
    ]


def _arguments_lines(items: list[str], by: str = "      ") -> list[str]:
    lines = ",\n".join(items).split("\n")
    return [f"{by}{line}" if line else "" for line in lines]


def _items(function: MlxFunction, overload: BoundOverload, namespace: str) -> list[str]:
    """The lambda and the annotations of a `def` (a method's without the array's)."""
    args = mlx_python.arguments(overload)
    method = function.bound_as is not BoundAs.FUNCTION
    parameters = [a.lambda_parameter for a in args]
    body = _body(overload, args, namespace, function.submodule)
    checks = _operand_checks(function, args)
    if function.bound_as is BoundAs.AT:  # the method of `a.at[index]` has the array and index
        parameters[0] = f"const opgen_mlx::ArrayAt& {SELF}{mlx_python.SUFFIX}"
        checks = [
            f"const mlx::core::array& {SELF} = {SELF}{mlx_python.SUFFIX}.array;",
            f"const opgen_mlx::Index& {INDEX} = {SELF}{mlx_python.SUFFIX}.index();",
            *checks,
        ]
    returns = ""
    if function.inplace:
        receiver = args[0].name
        parameters[0] = f"mlx::core::array& {receiver}"
        returns = " -> mlx::core::array&"
        computed = ["[&]() -> mlx::core::array {", *indent(body, "  "), "}()"]
        body = [
            f"{receiver}.overwrite_descriptor({computed[0]}",
            *indent(computed[1:-1]),
            f"{computed[-1]});",
            f"return {receiver};",
        ]
    elif function.incomparable is not None:
        returns = " -> std::variant<mlx::core::array, bool>"
    lambda_text = "\n".join(
        [f"[]({', '.join(parameters)}){returns} {{", *indent([*checks, *body], "  "), "}"]
    )
    items = [lambda_text]
    if function.bound_as is BoundAs.METHOD:  # its overloads chain in the holder class
        name = string_literal(function.python_name)
        items += ["nb::is_method()", "nb::scope(holder)", f"nb::name({name})"]
    kw_only = mlx_python.kw_only_index(overload)
    for i, a in enumerate(args):
        if i == kw_only:
            items.append("nb::kw_only()")
        if not (method and i == 0):
            items.append(a.binding)
    if function.inplace:
        items.append("nb::rv_policy::none")
    signature = mlx_python.signature_text(function.python_name, overload, receiver=method)
    items.append(f"nb::sig({string_literal(signature)})")
    if function.doc and function.bound_as is not BoundAs.PROPERTY:
        items.append(string_literal(function.doc))
    return items


def _operand_checks(function: MlxFunction, args: tuple[PyArgument, ...]) -> list[str]:
    """A method's checks of its other operands, before they are converted."""
    if not function.operation and function.incomparable is None:
        return []
    lines: list[str] = []
    for a in args[1:]:
        if a.parameter.type.alternatives != (Leaf.ARRAY_LIKE,) or a.parameter.type.optional:
            continue
        value = f"{a.name}{mlx_python.SUFFIX}"
        if function.incomparable is not None:
            result = "true" if function.incomparable else "false"
            lines += [f"if (!opgen_mlx::is_operand({value})) {{", f"  return {result};", "}"]
        else:
            operation = string_literal(function.operation)
            lines.append(f"opgen_mlx::check_operand({value}, {operation});")
    return lines


AT_GETITEM = f"def __getitem__(self, indices: object | None) -> {AT_RETURNS}"


def at_class(updates: Sequence[MlxFunction], namespace: str) -> list[str]:
    """The statements making `ArrayAt`, the class of `a.at`, once: its `[index]`, which
    keeps the index, and its update methods."""
    lines = [
        '  nb::class_<opgen_mlx::ArrayAt>(m, "ArrayAt")',
        "      .def(",
        '          "__getitem__",',
        "          [](nb::handle at, nb::object indices) {",
        "            nb::inst_ptr<opgen_mlx::ArrayAt>(at)->given = opgen_mlx::Index{indices};",
        "            return nb::borrow(at);",
        "          },",
        '          nb::arg("indices").none(),',
        f"          nb::sig({string_literal(AT_GETITEM)}))",
    ]
    for function in updates:
        for overload in function.overloads:
            items = [string_literal(function.python_name), *_items(function, overload, namespace)]
            lines += ["      .def(", *_arguments_lines(items, "          "), "      )"]
    lines[-1] += ";"
    return lines


def submodule_variable(submodule: str) -> str:
    """The C++ variable of the module a function is defined in: `m`, or `m_linalg`."""
    return f"m_{submodule}" if submodule else "m"


def _body(
    overload: BoundOverload, args: tuple[PyArgument, ...], namespace: str, submodule: str = ""
) -> list[str]:
    """A submodule's functions are looked up in the namespace of its name in `namespace`."""
    own = f"{namespace}::{submodule}" if submodule else namespace
    lines: list[str] = []
    promotion = mlx_python.promotion(overload)
    if promotion is not None:
        lines.append(promotion)
    lines += [line for a in args if a.conversion is not None for line in a.conversion.split("\n")]
    if overload.code is not None:
        # The code names what it uses as in the library's namespace.
        lines.append(f"using namespace {namespace};")
        if submodule:
            lines.append(f"using namespace {own};")
        code = overload.code
        statements = _RETURN.search(code) is not None
        if statements and overload.returns.startswith("tuple[array"):
            lines += ["return opgen_mlx::as_tuple([&] {", *indent(code.splitlines()), "}());"]
        elif statements:
            lines += code.splitlines()
        else:
            lines.append(f"return {_returned(overload, ' '.join(code.split()))};")
        return lines
    assert overload.function is not None
    function = overload.function
    if "::" not in function:
        function = f"{own}::{function}"
    by_name = {a.name: a for a in args}
    return lines + _branches(function, overload, by_name, 0, [])


def _returned(overload: BoundOverload, expression: str) -> str:
    """What a lambda returns of `expression`: a tuple where the signature says one."""
    tuple_ = overload.returns.startswith("tuple[array")
    return f"opgen_mlx::as_tuple({expression})" if tuple_ else expression


def _branches(
    function: str,
    overload: BoundOverload,
    by_name: dict[str, PyArgument],
    i: int,
    passed: list[str],
) -> list[str]:
    """Statements that call `function`, branching on the arguments from the i-th on."""
    if i == len(overload.arguments):
        has_stream = any(p.name == "stream" for p in overload.parameters)
        stream = [mlx_python.stream_name(overload)] if has_stream else []
        call = f"{function}({', '.join([*passed, *stream])})"
        return [f"return {_returned(overload, call)};"]
    argument = overload.arguments[i]
    p = by_name[argument.name].parameter
    value = argument.name
    lines: list[str] = []
    if argument.omit_if_none:
        lines += [f"if (!{value}) {{"]
        lines += indent(_branches(function, overload, by_name, i + 1, passed), "  ")
        lines += ["}"]
        value = f"*{value}"
    if p.type.is_union:
        inner = _branches(function, overload, by_name, i + 1, [*passed, argument.name])
        lines += [f"return std::visit([&](const auto& {argument.name}) {{"]
        lines += indent(inner, "  ")
        lines += [f"}}, {value});"]
        return lines
    return lines + _branches(function, overload, by_name, i + 1, [*passed, value])
