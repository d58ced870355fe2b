"""The native API: the functions in-tree kernels implement (`at::native::add_out`).

It is the dispatcher convention with a few historical differences, each a
reason a call from the dispatcher may need `translate`:
- the name carries the overload: `add_out_out`, `sum_dim_IntList`;
- dtype, layout, device and pin_memory are four `::std::optional` arguments,
  whatever the schema says about their optionality;
- optional tensors are `const ::std::optional<at::Tensor> &` (or `&` when
  mutated), Scalars are passed by const reference;
- defaults are kept, except in out= functions;
- SymInts are `int64_t` unless the kernel's name says `_symint` (see
  `BackendMetadata.supports_symint`).

Out-of-tree backends implement the dispatcher API instead (`kernel_signature`).
"""

from __future__ import annotations

from opgen.api import cpp, cpp_literals, dispatcher, translate
from opgen.api.dispatcher import DispatcherSignature
from opgen.api.types import (
    BOOL,
    CONST_OPTIONAL_SCALAR_REF,
    CONST_OPTIONAL_TENSOR_LIST_REF,
    CONST_OPTIONAL_TENSOR_REF,
    CONST_SCALAR_REF,
    DEVICE,
    LAYOUT,
    OPTIONAL_TENSOR,
    SCALAR_TYPE,
    ArgumentStyle,
    Binding,
    BindingMemo,
    CType,
    Expr,
    MutRefCType,
    NamedCType,
    OptionalCType,
    Parameters,
    RenderedParameters,
    SchemaArgument,
)
from opgen.cached import cached
from opgen.frozen import frozen
from opgen.spec.arguments import Argument, Arguments, SelfArgument, TensorOptionsArguments
from opgen.spec.backend import BackendIndex
from opgen.spec.native import NativeFunction
from opgen.spec.schema import FunctionSchema
from opgen.spec.types import Type


def name(func: FunctionSchema) -> str:
    result = str(func.name.name)
    if func.is_out_fn():
        result += "_out"
    if func.name.overload_name:
        result += f"_{func.name.overload_name}"
    return result


def argument_ctype(t: Type, *, mutable: bool, symint: bool, style: ArgumentStyle) -> CType:
    text = str(t)
    if text == "Tensor?":
        if mutable and not style.const_ref_for_mutable_tensors:
            return MutRefCType(OPTIONAL_TENSOR)
        return CONST_OPTIONAL_TENSOR_REF
    if text == "Tensor?[]":
        return CONST_OPTIONAL_TENSOR_LIST_REF
    if text == "Scalar":
        return CONST_SCALAR_REF
    if text == "Scalar?":
        return CONST_OPTIONAL_SCALAR_REF
    return cpp.argument_ctype(t, mutable=mutable, symint=symint, style=style)


# The four TensorOptions parameters, always optional in this convention.
_OPTION_TYPES = (
    ("dtype", OptionalCType(SCALAR_TYPE)),
    ("layout", OptionalCType(LAYOUT)),
    ("device", OptionalCType(DEVICE)),
    ("pin_memory", OptionalCType(BOOL)),
)


def argument(
    a: Argument | SelfArgument | TensorOptionsArguments,
    *,
    is_out: bool,
    symint: bool,
    style: ArgumentStyle,
) -> list[Binding]:
    if isinstance(a, SelfArgument):
        a = a.argument
    if isinstance(a, Argument):
        default = None
        if a.default is not None and not is_out:
            default = cpp_literals.default_expr(a.default, a.type, symint=symint)
        ctype = argument_ctype(a.type, mutable=a.is_write, symint=symint, style=style)
        return [Binding(a.name, NamedCType(a.name, ctype), a, default)]
    options_default = None if is_out else "{}"
    return [
        Binding(option, NamedCType(option, ctype), a, options_default)
        for option, ctype in _OPTION_TYPES
    ]


def arguments(
    func: FunctionSchema,
    *,
    symint: bool,
    style: ArgumentStyle,
    memo: BindingMemo | None = None,
) -> Parameters:
    return _arguments(func.arguments, symint, style, memo)


def _arguments(
    args: Arguments, symint: bool, style: ArgumentStyle, memo: BindingMemo | None
) -> Parameters:
    """`arguments`, by position; with a memo, once per `Arguments` object."""
    if memo is None:
        return _derive(args, symint, style, None)
    return memo.derived(args, ("native", symint, style.key), _derive, symint, style, memo)


def _derive(
    args: Arguments, symint: bool, style: ArgumentStyle, memo: BindingMemo | None
) -> Parameters:
    is_out = bool(args.out)  # out= functions have no defaults
    ordered = (*args.non_out, *args.out)

    def convert(a: SchemaArgument) -> list[Binding]:
        return argument(a, is_out=is_out, symint=symint, style=style)

    if memo is None:
        return Parameters(tuple([b for a in ordered for b in convert(a)]))
    return memo.parameters(("native", is_out, symint, style.key), ordered, convert)


@frozen(eq=False)
class NativeSignature(RenderedParameters):
    func: FunctionSchema
    symint: bool
    style: ArgumentStyle
    prefix: str = ""
    memo: BindingMemo | None = None

    @cached
    def parameters(self) -> Parameters:
        return _arguments(self.func.arguments, self.symint, self.style, self.memo)

    convert_returns = staticmethod(cpp.returns_type)

    def name(self) -> str:
        return self.prefix + name(self.func)

    def decl(self, name: str | None = None) -> str:
        """The declaration, with defaults (none in out= functions)."""
        return f"{self.result.text} {name or self.name()}({self.parameters.declared})"

    def defn(self, name: str | None = None) -> str:
        return f"{self.result.text} {name or self.name()}({self.parameters.defined})"

    def ptr_type(self) -> str:
        # Parameter names included, as torchgen writes it.
        return f"{self.returns_text} (*)({self.defined_parameters})"

    def dispatcher_exprs(self) -> list[Expr]:
        """The dispatcher's arguments, as expressions over this signature's parameters."""
        return translate.translate(
            self.bindings, dispatcher.arguments(self.func, style=self.style), method=False
        )


def kernel_signature(
    f: NativeFunction, backend_index: BackendIndex, *, prefix: str = ""
) -> NativeSignature | DispatcherSignature:
    """The signature of `f`'s kernel for a backend.

    In-tree kernels follow the native API; out-of-tree kernels follow the
    dispatcher API, so that calling them needs no translation.
    """
    metadata = backend_index.get_kernel(f)
    symint = metadata is not None and metadata.supports_symint()
    assert not symint or f.func.has_symint(), (
        f"a SymInt kernel for {backend_index.dispatch_key} of {f.func.name}, which has no SymInt"
    )
    style = ArgumentStyle.of(f)
    if backend_index.external:
        return DispatcherSignature(f.func, style, prefix, symint)
    return NativeSignature(f.func, symint, style, prefix)
