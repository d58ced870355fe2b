"""The dispatcher API: how the dispatcher calls kernels, and how everything calls the dispatcher.

The dispatcher convention is the schema, unboxed, with nothing added:
- arguments in schema order, out arguments last, as written;
- dtype, layout, device and pin_memory stay four separate arguments;
- no defaults: every caller passes every argument;
- SymInts are `c10::SymInt` (the dispatcher is always SymInt-aware).

C++ types are otherwise those of the C++ API (see `cpp.py`), so a dispatcher
signature is a faithful C++ signature with SymInts and without defaults.
Out-of-tree backends implement their kernels in this convention.
"""

from __future__ import annotations

from opgen.api import cpp
from opgen.api.types import (
    ArgumentStyle,
    Binding,
    BindingMemo,
    CType,
    Expr,
    NamedCType,
    Parameters,
    RenderedParameters,
    SchemaArgument,
)
from opgen.cached import cached
from opgen.frozen import frozen
from opgen.spec.arguments import Argument, Arguments, Return
from opgen.spec.schema import FunctionSchema


def name(func: FunctionSchema) -> str:
    return cpp.name(func)


def jit_arguments(func: FunctionSchema) -> list[Argument]:
    """Every argument in schema order, with the TensorOptions group spread out."""
    return list(func.schema_order_arguments())


def argument_type(
    a: Argument,
    *,
    style: ArgumentStyle,
    symint: bool = True,
    owning: bool = False,
    by_value: bool = False,
) -> NamedCType:
    ctype = cpp.argument_ctype(
        a.type, mutable=a.is_write, symint=symint, style=style, owning=owning, by_value=by_value
    )
    return NamedCType(a.name, ctype)


def argument(
    a: Argument,
    *,
    style: ArgumentStyle,
    symint: bool = True,
    owning: bool = False,
    by_value: bool = False,
) -> Binding:
    """`owning` and `by_value`: as `cpp.argument_ctype` has them."""
    ctype = argument_type(a, style=style, symint=symint, owning=owning, by_value=by_value)
    return Binding(a.name, ctype, a)


def arguments(
    func: FunctionSchema,
    *,
    style: ArgumentStyle,
    symint: bool = True,
    memo: BindingMemo | None = None,
) -> list[Binding]:
    """Every argument in schema order, as a dispatcher parameter."""
    return list(parameters(func, style=style, symint=symint, memo=memo).bindings)


def parameters(
    func: FunctionSchema,
    *,
    style: ArgumentStyle,
    symint: bool = True,
    memo: BindingMemo | None = None,
) -> Parameters:
    return _parameters(func.arguments, style, symint, memo)


def _parameters(
    args: Arguments, style: ArgumentStyle, symint: bool, memo: BindingMemo | None
) -> Parameters:
    """`parameters`, by position; with a memo, once per `Arguments` object."""
    if memo is None:
        return _derive(args, style, symint, None)
    return memo.derived(args, ("dispatcher", symint, style.key), _derive, style, symint, memo)


def _derive(
    args: Arguments, style: ArgumentStyle, symint: bool, memo: BindingMemo | None
) -> Parameters:
    ordered = (*args.flat_positional, *args.flat_kwarg_only, *args.out)  # schema order
    if memo is None:
        return Parameters(tuple([argument(a, style=style, symint=symint) for a in ordered]))

    def convert(a: SchemaArgument) -> list[Binding]:
        assert isinstance(a, Argument)
        return [argument(a, style=style, symint=symint)]

    return memo.parameters(("dispatcher", symint, style.key), ordered, convert)


def returns_type(rs: tuple[Return, ...], *, style: ArgumentStyle) -> CType:
    return cpp.returns_type(rs, style=style)


@frozen(eq=False)
class DispatcherSignature(RenderedParameters):
    func: FunctionSchema
    style: ArgumentStyle
    # Prepended to the name, for wrappers that must not collide with the kernel.
    prefix: str = ""
    symint: bool = True
    memo: BindingMemo | None = None

    @staticmethod
    def from_schema(
        func: FunctionSchema, *, style: ArgumentStyle, prefix: str = "", symint: bool = True
    ) -> DispatcherSignature:
        return DispatcherSignature(func, style, prefix, symint)

    @cached
    def parameters(self) -> Parameters:
        return _parameters(self.func.arguments, self.style, self.symint, self.memo)

    convert_returns = staticmethod(cpp.returns_type)

    def name(self) -> str:
        return self.prefix + cpp.name(self.func)

    def decl(self, name: str | None = None) -> str:
        return f"{self.result.text} {name or self.name()}({self.parameters.declared})"

    def defn(self, name: str | None = None, *, is_redispatching_fn: bool = False) -> str:
        params = self.parameters.defined
        if is_redispatching_fn:
            key_set = "c10::DispatchKeySet dispatchKeySet"
            params = f"{key_set}, {params}" if params else key_set
        return f"{self.result.text} {name or self.name()}({params})"

    def exprs(self) -> list[Expr]:
        """Each parameter as an expression: what a call passes on unchanged."""
        return [Expr(b.name, b.nctype) for b in self.bindings]
