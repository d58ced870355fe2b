"""The structured-kernel API: the `meta()` and `impl()` functions of a structured kernel.

A structured operator group is implemented once, by its out= kernel, split in
two: `meta()` computes the output's shape and dtype from the functional
arguments, and `impl()` fills in an already allocated output. Both take their
arguments in the cheapest form that still reads well:
- tensors, mutable or not, are `const at::Tensor &` (the outputs are set up
  before `impl()` runs, so it never replaces them);
- optional tensors and Scalars are `at::OptionalTensorRef` and
  `at::OptionalScalarRef`, tensor lists `const at::ITensorListRef &` and
  optional-tensor lists `at::IOptTensorListRef`;
- SymInts are plain `int64_t` (structured kernels are not SymInt-aware);
- there are no defaults and no TensorOptions.

`impl()` also receives the values `meta()` precomputed (the `precomputed:` key):
each replaced argument gives way to its replacements, and added values come
after the other inputs.
"""

from __future__ import annotations

from opgen.api import cpp
from opgen.api.types import (
    CONST_SCALAR_REF,
    CONST_TENSOR_REF,
    DIMNAME_LIST,
    I_OPT_TENSOR_LIST_REF,
    I_TENSOR_LIST_REF,
    INT_ARRAY_REF,
    OPTIONAL_INT_ARRAY_REF,
    OPTIONAL_SCALAR_REF,
    OPTIONAL_TENSOR_REF,
    ArgName,
    ArrayRefCType,
    Binding,
    ConstRefCType,
    CType,
    NamedCType,
    OptionalCType,
)
from opgen.frozen import frozen
from opgen.spec.arguments import Argument, SelfArgument, TensorOptionsArguments
from opgen.spec.groups import NativeFunctionsGroup
from opgen.spec.types import BaseTy, BaseType, ListType, OptionalType, Type


def argument_ctype(t: Type, *, mutable: bool) -> CType:
    value = cpp.value_type(t, symint=False)
    if value is not None:
        return value
    if isinstance(t, BaseType):
        if t.name is BaseTy.Tensor:
            return CONST_TENSOR_REF
        return CONST_SCALAR_REF
    if isinstance(t, OptionalType):
        elem = t.elem
        if isinstance(elem, BaseType) and elem.name is BaseTy.Tensor:
            return OPTIONAL_TENSOR_REF
        if isinstance(elem, BaseType) and elem.name is BaseTy.Scalar:
            return OPTIONAL_SCALAR_REF
        if isinstance(elem, ListType) and str(elem.elem) == "int":
            return OPTIONAL_INT_ARRAY_REF
        return OptionalCType(argument_ctype(elem, mutable=mutable))
    if isinstance(t, ListType):
        elem_text = str(t.elem)
        if elem_text == "Tensor":
            return ConstRefCType(I_TENSOR_LIST_REF)
        if elem_text == "Tensor?":
            return I_OPT_TENSOR_LIST_REF
        if elem_text == "int":
            return INT_ARRAY_REF
        if elem_text == "Dimname":
            return DIMNAME_LIST
        return ArrayRefCType(argument_ctype(t.elem, mutable=mutable))
    raise cpp.NoCppType(f"'{t}' has no structured-kernel type")


def argument_type(a: Argument, *, binds: ArgName) -> NamedCType:
    return NamedCType(binds, argument_ctype(a.type, mutable=a.is_write))


def argument(a: Argument | SelfArgument | TensorOptionsArguments) -> list[Binding]:
    if isinstance(a, SelfArgument):
        a = a.argument
    assert isinstance(a, Argument), "structured kernels take no TensorOptions (spec model check)"
    return [Binding(a.name, argument_type(a, binds=a.name), a)]


def _bindings(args: tuple[Argument | SelfArgument | TensorOptionsArguments, ...]) -> list[Binding]:
    return [b for a in args for b in argument(a)]


def impl_arguments(g: NativeFunctionsGroup) -> list[Binding]:
    """`impl()`'s parameters: the inputs (with precomputed replacements), then the outputs."""
    out = g.out
    inputs: list[Argument | SelfArgument | TensorOptionsArguments] = list(
        out.func.arguments.non_out
    )
    if out.precomputed is not None:
        replace = out.precomputed.replace
        inputs = [
            r
            for a in inputs
            for r in (replace[a.name] if isinstance(a, Argument) and a.name in replace else (a,))
        ]
        inputs.extend(out.precomputed.add)
    return _bindings((*inputs, *out.func.arguments.out))


def meta_arguments(g: NativeFunctionsGroup) -> list[Binding]:
    """`meta()`'s parameters: the functional variant's inputs."""
    return _bindings(tuple(g.functional.func.arguments.non_out))


def out_arguments(g: NativeFunctionsGroup) -> list[Binding]:
    return _bindings(tuple(g.out.func.arguments.out))


@frozen(eq=False)
class StructuredImplSignature:
    """`TORCH_IMPL_FUNC(add_out)(const at::Tensor & self, ...)`."""

    g: NativeFunctionsGroup
    name: str

    def defn(self, name: str | None = None) -> str:
        params = ", ".join(b.defn() for b in self.arguments())
        return f"TORCH_IMPL_FUNC({self.name})({params})"

    def arguments(self) -> list[Binding]:
        return impl_arguments(self.g)
