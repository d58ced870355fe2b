"""`<module>_bindings.cpp`: one `NB_MODULE`, an `m.def` per operator.

Each operator is bound directly (`&ns::op`, arrays by const reference, no
wrapper lambda), with its arguments named, the spec's defaults,
`nb::kw_only()`, `.none()` on optional arrays, the keyword-only `stream` and
the docstring; nanobind puts the Python signature above the docstring and
in the `TypeError` of a bad call. The module imports `mlx.core` before its
first `m.def`: MLX's types (array, Dtype, Stream, Device) are bound there, in
the `mlx` nanobind domain this module shares, and defaults such as a dtype are
converted to Python when `m.def` runs. The functions of a submodule (`linalg`)
follow the module's own, each submodule made once (`m.def_submodule`) before
its functions, in the order of their first function in the spec.
"""

from __future__ import annotations

from collections.abc import Sequence

from opgen.spec.mlx.methods import AT_RETURNS
from opgen.spec.mlx.model import BoundAs, MlxFunction
from opgen.targets.mlx import bound
from opgen.targets.mlx.cpp import string_literal
from opgen.targets.mlx.library import BoundOperator

INCLUDES = (
    "<nanobind/nanobind.h>",
    "<nanobind/stl/optional.h>",
    "<nanobind/stl/string.h>",
    "<nanobind/stl/tuple.h>",
    "<nanobind/stl/variant.h>",
    "<nanobind/stl/vector.h>",
)


def bindings(
    ops: Sequence[BoundOperator],
    namespace: str,
    module: str,
    header_name: str | None,
    comment: str,
    functions: Sequence[MlxFunction] = (),
) -> str:
    """The module's source; `header_name` is None when it has only bound functions.
    `functions`: every function, method and property, the operators' included."""
    short = module.rpartition(".")[2]
    lines = [f"// {comment}"]
    on_array = [f for f in functions if f.bound_as is not BoundAs.FUNCTION]
    functions = [f for f in functions if f.operator is None]
    if functions:
        lines += [f"#include {i}" for i in bound.INCLUDES] + [""]
    includes = INCLUDES + bound.NANOBIND_INCLUDES if functions else INCLUDES
    lines += [f"#include {i}" for i in sorted(includes)]
    own = f'"{header_name}"' if header_name is not None else '"mlx/mlx.h"'
    lines += ["", f"#include {own}", "", "namespace nb = nanobind;", ""]
    if functions:
        lines += [bound.support()]
    if bound.uses_indexing(functions):
        lines += [bound.indexing()]
    lines += [f"NB_MODULE({short}, m) {{"]
    lines += ['  nb::module_::import_("mlx.core");']
    lines += [f"  m.doc() = {string_literal(f'MLX operators of {namespace}, bound by opgen.')};"]
    for op in ops:
        lines += ["", *definition(op, namespace)]
    functions = [f for f in functions if f.bound_as is BoundAs.FUNCTION]
    for function in functions:
        if not function.submodule:
            lines += ["", *bound.definitions(function, namespace)]
    if any(f.overloads and f.overloads[0].returns == AT_RETURNS for f in on_array):
        updates = [f for f in on_array if f.bound_as is BoundAs.AT]
        lines += ["", *bound.at_class(updates, namespace)]
    if on_array:
        lines += ["", *_array_methods(ops, on_array, namespace)]
    for submodule in submodules(functions):
        doc = string_literal(f"Functions of {namespace}::{submodule}, bound by opgen.")
        variable = bound.submodule_variable(submodule)
        lines += ["", f'  nb::module_ {variable} = m.def_submodule("{submodule}", {doc});']
        for function in functions:
            if function.submodule == submodule:
                lines += ["", *bound.definitions(function, namespace)]
    lines += ["}", ""]
    return "\n".join(lines)


def _array_methods(
    ops: Sequence[BoundOperator], methods: Sequence[MlxFunction], namespace: str
) -> list[str]:
    """`array_methods()`, which makes the methods and properties anew at each call, the
    methods in a class of its own (`array`), where nanobind chains a method's overloads and
    names it (`array.sum`); an operator's method first."""
    body = [
        'nb::object holder = nb::module_::import_("builtins").attr("type")(',
        '    "array", nb::make_tuple(), nb::dict());',
        "nb::dict methods;",
    ]
    by_name = {op.name: op for op in ops}
    for method in methods:
        if method.operator is not None:
            body += operator_method(by_name[method.operator.name], namespace)
    for method in methods:
        if method.operator is None and method.bound_as is not BoundAs.AT:
            body += bound.method_definition(method, namespace)
    body.append("return methods;")
    return [
        "  m.def(",
        '      "array_methods",',
        "      []() {",
        *[f"        {line}" if line else "" for line in body],
        "      },",
        '      nb::sig("def array_methods() -> dict[str, object]"),',
        f"      {string_literal(bound.ARRAY_METHODS_DOC)});",
    ]


def submodules(functions: Sequence[MlxFunction]) -> list[str]:
    """The submodules the functions are in, in the order of their first function."""
    return list(dict.fromkeys(f.submodule for f in functions if f.submodule))


def operator_method(op: BoundOperator, namespace: str) -> list[str]:
    """The statement of `array_methods()` that puts an operator's method into `methods`: the
    operator's function, its first argument the array."""
    name = string_literal(op.function.python_name)
    items = [f"&{namespace}::{op.name}", "nb::is_method()", "nb::scope(holder)"]
    items += [f"nb::name({name})", *op.signature.bindings()[1:]]
    if op.function.doc:
        items.append(string_literal(op.function.doc))
    return [
        f"methods[{name}] = nb::cpp_function(",
        *[f"    {i}," for i in items[:-1]],
        f"    {items[-1]});",
    ]


def definition(op: BoundOperator, namespace: str) -> list[str]:
    """The `m.def(...)` statement of one operator, one argument per line."""
    items = [string_literal(op.function.python_name), f"&{namespace}::{op.name}"]
    items += op.signature.bindings()
    if op.function.doc:
        items.append(string_literal(op.function.doc))
    inner = ",\n      ".join(items)
    return [f"  m.def(\n      {inner});"]
