"""ExecuTorch's boxed calling convention: a kernel's arguments taken off the runtime's stack.

The runtime calls every kernel the same way, with its context and a
`Span<EValue*> stack`: one `EValue` (a tagged union of tensor, scalar, list, ...)
per schema argument in schema order, then one for the result. A registered kernel
is a lambda that unboxes each `EValue` into the C++ type the kernel takes, calls
it, and stores or logs the result; this module writes the unboxing:

- the i-th argument is first bound by reference, `EValue& self = *stack[i];`;
- a plain value becomes `<name>_base`, read with `.to<T>()` into the parameter's
  type (`const torch::executor::Tensor & self_base = self.to<torch::executor::Tensor>();`);
- an optional value becomes `<name>_opt_out`, read with `.toOptional<T>()`;
- a list becomes `<name>_list_out`, read with the EValue's list accessor for
  tensors, ints (SymInts too), floats, bools and optional tensors (the last two
  with an ATen-mode copy into ATen's container under `#ifdef USE_ATEN_LIB`);
  any other list is converted element by element into a `std::vector`, declared
  just before, which the `ArrayRef` parameter then views (the loop reads
  `<name>_list_in`, which nothing declares: upstream's text, kept).

The C++ types come from the convention the kernel is written in: ExecuTorch's
(`opgen.api.executorch.argument_ctype`) or, for a runtime built on ATen, the public
C++ API's with plain `int64_t` SymInts (`opgen.api.cpp.argument_ctype`); the caller
passes it (`ArgumentTypes`). Elements of lists and optionals are converted as
arguments that are not written to. The layout of the lines (leading blank lines,
indentation, trailing spaces) is the reference codegen's, which the template's
indentation then turns into the file's text.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from opgen.api.types import Binding, CType
from opgen.frozen import frozen
from opgen.spec.arguments import Argument
from opgen.spec.types import BaseTy, BaseType, ListType, OptionalType, Type

# A convention's C++ parameter type of a schema type: (type, written to) -> type.
ArgumentTypes = Callable[[Type, bool], CType]

# How code lines of one list-element conversion are joined inside a loop.
CODE_JOINER = "\n\t"

_TENSOR = BaseType(BaseTy.Tensor)


@frozen
class Unboxed:
    """One value taken off the stack: the variable holding it, and the code that fills it."""

    name: str  # the C++ variable the kernel is called with
    ctype: CType  # the parameter type it is converted to
    code: tuple[str, ...]  # the conversion
    declarations: tuple[str, ...] = ()  # what must be declared before every conversion


def convert_arguments(
    bindings: Sequence[Binding], types: ArgumentTypes
) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """The variables a kernel is called with, one per binding, and the lines filling them."""
    lines = [f"EValue& {b.name} = *stack[{i}];" for i, b in enumerate(bindings)]
    names: list[str] = []
    for b in bindings:
        argument = b.argument
        if not isinstance(argument, Argument):
            raise ValueError(f"'{b.name}' does not stand for one schema argument")
        unboxed = argumenttype_evalue_convert(
            argument.type, b.name, mutable=argument.is_write, types=types
        )
        lines.extend(unboxed.declarations)
        lines.extend(unboxed.code)
        names.append(unboxed.name)
    return tuple(names), tuple(lines)


def argumenttype_evalue_convert(
    t: Type, name: str, *, mutable: bool = False, types: ArgumentTypes
) -> Unboxed:
    """The conversion of the EValue `name` of schema type `t`."""
    ctype = types(t, mutable)
    if isinstance(t, BaseType):
        out = f"{name}_base"
        return Unboxed(out, ctype, (_base(ctype, out, name),))
    if isinstance(t, OptionalType):
        out = f"{name}_opt_out"
        elem = argumenttype_evalue_convert(t.elem, f"{name}_opt_in", types=types)
        return Unboxed(out, ctype, _optional(elem.ctype, out, name), elem.declarations)
    if isinstance(t, ListType):
        return _list(t, name, ctype, types)
    raise ValueError(f"the EValue of '{t}' cannot be unboxed")


def _base(ctype: CType, out: str, name: str) -> str:
    return f"{ctype.cpp_type()} {out} = {name}.to<{ctype.cpp_type(strip_ref=True)}>();"


def _optional(elem: CType, out: str, name: str) -> tuple[str, ...]:
    # Emitted C++ as ExecuTorch's codegen writes it (byte-identical output).
    return ("", f"    auto {out} = {name}.toOptional<{elem.cpp_type(strip_ref=True)}>();", " " * 12)


# The list accessors of an EValue, by element type, for lists read in one call.
_LIST_ACCESSORS = {
    BaseTy.Tensor: "toTensorList",
    BaseTy.int: "toIntList",
    BaseTy.SymInt: "toIntList",
    BaseTy.float: "toDoubleList",
}


def _list(t: ListType, name: str, ctype: CType, types: ArgumentTypes) -> Unboxed:
    out, elements, elem_name = f"{name}_list_out", f"{name}_list_in", f"{name}_elem"
    elem = argumenttype_evalue_convert(t.elem, elem_name, types=types)
    base = t.elem.name if isinstance(t.elem, BaseType) else None
    accessor = _LIST_ACCESSORS.get(base) if base is not None else None
    code: tuple[str, ...]
    if accessor is not None:
        code = ("", f"    auto {out} = {name}.{accessor}();", " " * 16)
        return Unboxed(out, ctype, code, elem.declarations)
    if base is BaseTy.bool:
        code = _bool_list(t.size, out, elements, elem_name, name)
        return Unboxed(out, ctype, code, elem.declarations)
    if isinstance(t.elem, OptionalType) and t.elem.elem == _TENSOR:
        code = _optional_tensor_list(out, elements, elem_name, name)
        return Unboxed(out, ctype, code, elem.declarations)
    vector = f"{name}_vec"
    declaration = f"std::vector<{elem.ctype.cpp_type(strip_ref=True)}> {vector};"
    # Emitted C++ as ExecuTorch's codegen writes it (byte-identical output).
    code = (
        "",
        f"    for (EValue {elem_name}: {elements}) {{",
        f"        {CODE_JOINER.join(elem.code)}",
        f"        {vector}.push_back({elem.name});",
        "    }",
        f"    {ctype.cpp_type(strip_ref=True)} {out}({vector});",
        " " * 16,
    )
    return Unboxed(out, ctype, code, (*elem.declarations, declaration))


def _bool_list(
    size: int | None, out: str, elements: str, elem_name: str, name: str
) -> tuple[str, ...]:
    # Emitted C++ as ExecuTorch's codegen writes it (byte-identical output).
    return (
        "",
        "#ifdef USE_ATEN_LIB",
        f"std::array<bool, {size}> {out};",
        f"auto {elements} = {name}.toBoolList();",
        "size_t _i = 0;",
        f"for (auto {elem_name}: {elements}) {{",
        f"    {out}[_i++] = {elem_name};",
        "}",
        "#else",
        f"auto {out} = {name}.toBoolList();",
        "#endif",
        " " * 16,
    )


def _optional_tensor_list(out: str, elements: str, elem_name: str, name: str) -> tuple[str, ...]:
    # Emitted C++ as ExecuTorch's codegen writes it (byte-identical output).
    return (
        "",
        "#ifdef USE_ATEN_LIB",
        f"auto {elements} = {name}.toListOptionalTensor();",
        f"c10::List<::std::optional<at::Tensor>> {out};",
        f"for (auto {elem_name}: {elements}) {{",
        f"    {out}.push_back({elem_name});",
        "}",
        "#else",
        f"auto {out} = {name}.toListOptionalTensor();",
        "#endif",
        " " * 16,
    )
