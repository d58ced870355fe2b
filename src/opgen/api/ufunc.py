"""The ufunc API: the C++ pieces a `ufunc_inner_loop:` operator's kernels are built from.

A ufunc operator is a structured group whose out= entry names scalar and
vector inner loops (`ufunc::add`, templates the user writes in
`ATen/native/ufunc/<name>.h`). opgen generates the kernels around them. Four
calling conventions meet there:

- the *stub*: the DispatchStub a CPU kernel goes through (`add_stub`). Its
  function type takes the `TensorIteratorBase&` and then every non-tensor
  argument of the out= schema in the structured convention (tensors live in
  the iterator);
- the *ufunc*: the inner loop itself. Every functional argument, tensor or
  Scalar, has the compute type (`scalar_t` or `Vectorized<scalar_t>` on CPU,
  `opmath_t` on CUDA); other value types keep their C++ type (SymInt as
  `int64_t`);
- the *ufunctor* (CUDA only): a functor whose constructor takes the
  non-tensor arguments (and, for the scalar specialisations, one tensor known
  to be a CPU scalar) in `opmath_t`, and whose `operator()` takes the
  remaining tensors as `scalar_t`. Fields are the constructor's parameters
  with a trailing underscore;
- the structured `impl()` that calls the stub (see `opgen.api.structured`).

Only `Tensor`, `Scalar` and value types may appear in a ufunc operator's
functional schema; any other type is a located `SpecError`.
"""

from __future__ import annotations

from collections.abc import Sequence

from opgen.api import cpp, structured
from opgen.api.translate import translate
from opgen.api.types import (
    OPMATH_T,
    SCALAR_T,
    Binding,
    CType,
    Expr,
    NamedCType,
)
from opgen.diagnostics import SpecError
from opgen.frozen import frozen
from opgen.spec.arguments import Argument
from opgen.spec.groups import NativeFunctionsGroup
from opgen.spec.keys import DispatchKey
from opgen.spec.types import BaseTy, BaseType, Type


def kernel_name(g: NativeFunctionsGroup, key: DispatchKey) -> str:
    """The generated structured kernel of a ufunc group: `ufunc_add_CPU`."""
    return f"ufunc_{g.out.func.name.name}_{key}"


def _is(t: Type, base: BaseTy) -> bool:
    return isinstance(t, BaseType) and t.name is base


def _unsupported(g: NativeFunctionsGroup, a: Argument, where: str) -> SpecError:
    return SpecError(
        f"ufunc operator argument '{a.name}' has type '{a.type}', which {where} cannot take "
        "(only Tensor, Scalar and value types)",
        g.out.loc,
    )


def _compute_type(g: NativeFunctionsGroup, a: Argument, compute_t: CType, where: str) -> CType:
    """A value type stays itself; Tensor and Scalar become `compute_t`."""
    value = cpp.value_type(a.type, symint=False)
    if value is not None:
        return value
    if _is(a.type, BaseTy.Scalar) or _is(a.type, BaseTy.Tensor):
        return compute_t
    raise _unsupported(g, a, where)


def stub_arguments(g: NativeFunctionsGroup) -> list[Binding]:
    """The stub's parameters after the iterator: non-tensor out= arguments, structured."""
    result: list[Binding] = []
    for a in g.out.func.arguments.flat_non_out:
        if a.type.is_tensor_like():
            continue
        if cpp.value_type(a.type, symint=False) is None and not _is(a.type, BaseTy.Scalar):
            raise _unsupported(g, a, "a dispatch stub")
        result.extend(structured.argument(a))
    return result


def ufunc_arguments(g: NativeFunctionsGroup, compute_t: CType) -> list[Binding]:
    """The inner loop's parameters: every functional argument, in the compute type."""
    return [
        Binding(a.name, NamedCType(a.name, _compute_type(g, a, compute_t, "an inner loop")), a)
        for a in g.functional.func.arguments.flat_non_out
    ]


@frozen
class UfunctorBindings:
    ctor: list[Binding]
    apply: list[Binding]


def ufunctor_arguments(g: NativeFunctionsGroup, scalar_tensor_idx: int | None) -> UfunctorBindings:
    """The functor's constructor and `operator()` parameters.

    `scalar_tensor_idx` names the tensor (by position among the tensors) that
    is a CPU scalar and so moves into the constructor; None keeps every tensor
    in `operator()`.
    """
    ctor: list[Binding] = []
    apply: list[Binding] = []
    remaining = scalar_tensor_idx
    for a in g.functional.func.arguments.flat_non_out:
        if a.type.is_tensor_like() and remaining != 0:
            if remaining is not None:
                remaining -= 1
            if not _is(a.type, BaseTy.Tensor):
                raise _unsupported(g, a, "a CUDA functor")
            apply.append(Binding(a.name, NamedCType(a.name, SCALAR_T), a))
            continue
        if a.type.is_tensor_like():
            remaining = None
        ctype = _compute_type(g, a, OPMATH_T, "a CUDA functor")
        ctor.append(Binding(a.name, NamedCType(a.name, ctype), a))
    assert remaining is None, "scalar_tensor_idx names a tensor the schema does not have"
    return UfunctorBindings(ctor, apply)


@frozen(eq=False)
class UfunctorSignature:
    """`template <typename scalar_t> struct CUDAFunctor_add { ... }`."""

    g: NativeFunctionsGroup
    scalar_tensor_idx: int | None
    name: str

    def arguments(self) -> UfunctorBindings:
        return ufunctor_arguments(self.g, self.scalar_tensor_idx)

    def fields(self) -> list[Binding]:
        return [b.with_name(f"{b.name}_") for b in self.arguments().ctor]

    def decl_fields(self) -> str:
        return "\n".join(f"{f.type} {f.name};" for f in self.fields())

    def inline_defn_ctor(self) -> str:
        ctor = self.arguments().ctor
        params = ", ".join(a.decl() for a in ctor)
        init = ", ".join(f"{a.name}_({a.name})" for a in ctor)
        return f"{self.name}({params}) : {init} {{}}"

    def decl_apply(self) -> str:
        params = ", ".join(a.decl() for a in self.arguments().apply)
        return f"{SCALAR_T.cpp_type()} operator()({params}) const"


@frozen(eq=False)
class UfuncSignature:
    """A call of the inner loop `ufunc::<name>` with arguments of type `compute_t`."""

    g: NativeFunctionsGroup
    name: str
    compute_t: CType

    def arguments(self) -> list[Binding]:
        return ufunc_arguments(self.g, self.compute_t)

    def call(self, ctx: Sequence[Binding | Expr]) -> str:
        args = ", ".join(e.expr for e in translate(ctx, self.arguments()))
        return f"{self.name}({args})"


@frozen(eq=False)
class StubSignature:
    """The DispatchStub of a ufunc group: `add_stub`, of type `add_fn`, kernel `add_kernel`."""

    g: NativeFunctionsGroup

    @property
    def base(self) -> str:
        return str(self.g.functional.func.name.name)

    @property
    def name(self) -> str:
        return f"{self.base}_stub"

    @property
    def kernel_name(self) -> str:
        return f"{self.base}_kernel"

    @property
    def type_name(self) -> str:
        return f"{self.base}_fn"

    def arguments(self) -> list[Binding]:
        return stub_arguments(self.g)

    def type(self) -> str:
        types = ", ".join(a.type for a in self.arguments())
        return f"void(*)(TensorIteratorBase&, {types})"

    def dispatch_decl(self) -> str:
        return f"DECLARE_DISPATCH({self.type_name}, {self.name})"

    def dispatch_defn(self) -> str:
        return f"DEFINE_DISPATCH({self.name})"

    def kernel_defn(self) -> str:
        params = ", ".join(a.defn() for a in self.arguments())
        return f"void {self.kernel_name}(TensorIteratorBase& iter, {params})"

    def type_defn(self) -> str:
        return f"using {self.type_name} = {self.type()}"

    def call(self, ctx: Sequence[Binding]) -> str:
        """Through the stub; inside a structured kernel, where `this` is the iterator."""
        args = ", ".join(e.expr for e in translate(ctx, self.arguments()))
        return f"{self.name}(device_type(), *this, {args})"

    def direct_call(self, ctx: Sequence[Binding]) -> str:
        """The kernel itself, skipping the stub's dynamic dispatch (CUDA)."""
        args = ", ".join(e.expr for e in translate(ctx, self.arguments()))
        return f"{self.kernel_name}(*this, {args})"


def scalar_expr(b: Binding, prefix: str, ctype: CType) -> Expr:
    """A Scalar argument already converted into a local `<prefix><name>` of `ctype`."""
    return Expr(f"{prefix}{b.name}", NamedCType(b.nctype.name, ctype))


def is_scalar_binding(b: Binding) -> bool:
    """Whether a stub parameter is a Scalar, which the CPU kernel converts once per dtype."""
    return not isinstance(b.argument, Argument) or _is(b.argument.type, BaseTy.Scalar)
