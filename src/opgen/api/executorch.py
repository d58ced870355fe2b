"""ExecuTorch's C++ convention: the kernels of its runtime, and the functions that call them.

ExecuTorch (PyTorch's on-device runtime) runs kernels written against its own
small tensor library, not ATen, so the C++ types differ from the public C++ API's
(`opgen.api.cpp`) while the shape of a signature stays close to it:

- one signature serves as API and as kernel signature: `Functions.h` declares
  `torch::executor::aten::add_outf(...)` and it calls the kernel
  (`torch::executor::native::add_out(...)`) with the same parameters;
- a kernel's first parameter may be the runtime's context,
  `torch::executor::KernelRuntimeContext & context`; kernels are declared with and
  without it, and every call passes it;
- signatures are always faithful: arguments in schema order with the outputs last
  (`add_outf(self, other, alpha, out)`), and no defaults;
- the types are ExecuTorch's: `torch::executor::Tensor`, `torch::executor::Scalar`,
  `torch::executor::ScalarType`, `torch::executor::MemoryFormat`,
  `torch::executor::TensorList`, lists as `torch::executor::ArrayRef<T>` and
  optionals as `std::optional<T>` (spelled without the leading `::`), strings as
  `std::string_view`; SymInts are plain `int64_t` (the runtime has no symbolic
  sizes), and `bool[N]` is an `ArrayRef<bool>` like any other list;
- Tensors, Scalars and optional Tensors are passed by const reference, or a mutated
  tensor by plain reference (also a mutated optional tensor, as in ATen); the rest by
  value. The tensor options of a factory, named dimensions, generators, layouts,
  devices and the other ATen-only types have no form here (`NoExecutorchType`).

The names are those of the public C++ API's faithful signature (`cpp.name`).
"""

from __future__ import annotations

from collections.abc import Sequence

from opgen.api import cpp
from opgen.api.types import (
    BOOL,
    DOUBLE,
    INT64,
    VOID,
    ArgumentStyle,
    BaseCType,
    Binding,
    ConstRefCType,
    CType,
    MutRefCType,
    NamedCType,
    TupleCType,
    VectorCType,
)
from opgen.cached import cached
from opgen.frozen import frozen
from opgen.spec.arguments import Argument, Return, SelfArgument, TensorOptionsArguments
from opgen.spec.native import NativeFunction
from opgen.spec.schema import FunctionSchema
from opgen.spec.types import BaseTy, BaseType, ListType, OptionalType, Type


class NoExecutorchType(ValueError):
    """A schema type or argument with no form in ExecuTorch's convention."""


@frozen(slots=True)
class StdOptionalCType(CType):
    """`std::optional<T>`, as ExecuTorch spells it (ATen's is `::std::optional<T>`)."""

    elem: CType

    def cpp_type(self, *, strip_ref: bool = False) -> str:
        return f"std::optional<{self.elem.cpp_type()}>"

    def remove_const_ref(self) -> CType:
        return StdOptionalCType(self.elem.remove_const_ref())


@frozen(slots=True)
class ExecutorchArrayRefCType(CType):
    """`torch::executor::ArrayRef<T>`: a non-owning view of a list."""

    elem: CType

    def cpp_type(self, *, strip_ref: bool = False) -> str:
        return f"torch::executor::ArrayRef<{self.elem.cpp_type()}>"

    def remove_const_ref(self) -> CType:
        return ExecutorchArrayRefCType(self.elem.remove_const_ref())


TENSOR = BaseCType("torch::executor::Tensor")
TENSOR_LIST = BaseCType("torch::executor::TensorList")
SCALAR = BaseCType("torch::executor::Scalar")
SCALAR_TYPE = BaseCType("torch::executor::ScalarType")
MEMORY_FORMAT = BaseCType("torch::executor::MemoryFormat")
STRING_VIEW = BaseCType("std::string_view")
CONTEXT = BaseCType("torch::executor::KernelRuntimeContext")

# The runtime context every kernel call passes first, as a parameter.
CONTEXT_PARAMETER = f"{MutRefCType(CONTEXT).cpp_type()} context"

# The schema base types ExecuTorch has, each passed by value but Tensor and Scalar.
BASE_TYPES: dict[BaseTy, BaseCType] = {
    BaseTy.int: INT64,
    BaseTy.SymInt: INT64,
    BaseTy.float: DOUBLE,
    BaseTy.bool: BOOL,
    BaseTy.str: STRING_VIEW,
    BaseTy.ScalarType: SCALAR_TYPE,
    BaseTy.Tensor: TENSOR,
    BaseTy.Scalar: SCALAR,
    BaseTy.MemoryFormat: MEMORY_FORMAT,
}

_BY_REFERENCE = (BaseTy.Tensor, BaseTy.Scalar)


def value_type(t: Type) -> CType | None:
    """The C++ type of a schema type passed by value (as argument and as return), or
    None for one passed by reference (Tensor, Scalar, most lists)."""
    if isinstance(t, BaseType):
        if t.name in _BY_REFERENCE:
            return None
        found = BASE_TYPES.get(t.name)
        if found is None:
            raise NoExecutorchType(f"ExecuTorch has no C++ type for '{t}'")
        return found
    if isinstance(t, OptionalType):
        elem = value_type(t.elem)
        return None if elem is None else StdOptionalCType(elem)
    if isinstance(t, ListType):
        if t.elem == BaseType(BaseTy.bool):
            if t.size is None:
                raise NoExecutorchType("ExecuTorch has no C++ type for 'bool[]' without a size")
            return ExecutorchArrayRefCType(BOOL)
        return None
    raise NoExecutorchType(f"ExecuTorch has no C++ type for '{t}'")


def argument_ctype(t: Type, *, mutable: bool, style: ArgumentStyle) -> CType:
    """The C++ parameter type of schema type `t` (`mutable`: an argument written to)."""
    value = value_type(t)
    if value is not None:
        return value
    by_mutable_reference = mutable and not style.const_ref_for_mutable_tensors
    if isinstance(t, BaseType):
        if t.name is BaseTy.Tensor:
            return MutRefCType(TENSOR) if by_mutable_reference else ConstRefCType(TENSOR)
        return ConstRefCType(SCALAR)
    if isinstance(t, OptionalType):
        if t.elem == BaseType(BaseTy.Tensor):
            if by_mutable_reference:
                return MutRefCType(TENSOR)
            return ConstRefCType(StdOptionalCType(TENSOR))
        if t.elem == BaseType(BaseTy.Scalar):
            return ConstRefCType(StdOptionalCType(SCALAR))
        return StdOptionalCType(argument_ctype(t.elem, mutable=mutable, style=style))
    if isinstance(t, ListType):
        elem = str(t.elem)
        if elem == "Tensor":
            return TENSOR_LIST
        if elem == "Tensor?":
            return ExecutorchArrayRefCType(StdOptionalCType(TENSOR))
        if elem == "Dimname":
            raise NoExecutorchType("ExecuTorch has no named dimensions ('Dimname')")
        # Each element as the argument it would be: `Scalar[]` is an ArrayRef of const
        # references, as upstream writes it.
        return ExecutorchArrayRefCType(argument_ctype(t.elem, mutable=mutable, style=style))
    raise NoExecutorchType(f"ExecuTorch has no C++ type for '{t}'")


def argument_type(a: Argument, *, style: ArgumentStyle) -> NamedCType:
    return NamedCType(a.name, argument_ctype(a.type, mutable=a.is_write, style=style))


def return_ctype(t: Type, *, mutable: bool, style: ArgumentStyle) -> CType:
    """The C++ type of one returned value: a written tensor by reference, a new one by value."""
    value = value_type(t)
    if value is not None:
        return value
    if isinstance(t, BaseType):
        if t.name is BaseTy.Tensor:
            if not mutable:
                return TENSOR
            return (
                ConstRefCType(TENSOR)
                if style.const_ref_for_mutable_tensors
                else MutRefCType(TENSOR)
            )
        return SCALAR
    if isinstance(t, ListType) and not mutable and t.size is None:
        return VectorCType(return_ctype(t.elem, mutable=False, style=style))
    raise NoExecutorchType(f"ExecuTorch cannot return '{t}'{' (written to)' if mutable else ''}")


def returns_type(rs: Sequence[Return], *, style: ArgumentStyle) -> CType:
    """`void`, the one return's type, or a `::std::tuple` of them."""
    if not rs:
        return VOID
    if len(rs) == 1:
        return return_ctype(rs[0].type, mutable=rs[0].is_write, style=style)
    return TupleCType(tuple(return_ctype(r.type, mutable=r.is_write, style=style) for r in rs))


def arguments(func: FunctionSchema, *, style: ArgumentStyle) -> tuple[Binding, ...]:
    """The parameters, without the context: schema order, outputs last, no defaults."""
    bindings: list[Binding] = []
    for a in (*func.arguments.non_out, *func.arguments.out):
        if isinstance(a, TensorOptionsArguments):
            raise NoExecutorchType(
                "ExecuTorch has no tensor options (the dtype, layout, device and pin_memory "
                "of a factory)"
            )
        argument = a.argument if isinstance(a, SelfArgument) else a
        bindings.append(Binding(argument.name, argument_type(argument, style=style), argument))
    return tuple(bindings)


@frozen(eq=False)
class ExecutorchCppSignature:
    """A function of ExecuTorch's convention: `Functions.h`'s API and the kernels it calls."""

    func: FunctionSchema
    style: ArgumentStyle = ArgumentStyle()

    @staticmethod
    def from_native_function(f: NativeFunction) -> ExecutorchCppSignature:
        return ExecutorchCppSignature(f.func, ArgumentStyle.of(f))

    @cached
    def bindings(self) -> tuple[Binding, ...]:
        """The parameters after the context."""
        return arguments(self.func, style=self.style)

    @cached
    def returns_text(self) -> str:
        return returns_type(self.func.returns, style=self.style).cpp_type()

    def name(self) -> str:
        """The API's name: the faithful C++ name (`add_outf`)."""
        return cpp.name(self.func, faithful_name_for_out_overloads=True)

    def parameters(self, *, include_context: bool = True) -> str:
        declared = [b.decl() for b in self.bindings]
        return ", ".join([CONTEXT_PARAMETER, *declared] if include_context else declared)

    def decl(self, name: str | None = None, *, include_context: bool = True) -> str:
        """`<returns> <name>(<parameters>)`, with the context first unless told otherwise."""
        parameters = self.parameters(include_context=include_context)
        return f"{self.returns_text} {self.name() if name is None else name}({parameters})"
