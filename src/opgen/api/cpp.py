"""The public C++ API: `at::add(self, other)` and `self.add(other)`.

This is the API users of ATen call, and the one with the most sugar:
- defaults live here (the dispatcher knows nothing of them), translated from
  schema syntax to C++ (`True` to `true`, `[0,1]` to `{0,1}`, `None` to
  `::std::nullopt`), except for arguments listed in `cpp_no_default_args`;
- dtype, layout, device and pin_memory are packed into one `at::TensorOptions
  options`, except in the *faithful* signature, which keeps the schema's
  arguments one for one;
- out= overloads put their outputs first (`add_out(out, self, other)`) and the
  faithful form keeps them last (`add_outf(self, other, out)`);
- SymInt arguments are `int64_t` (and `SymInt[]` is `at::IntArrayRef`) unless
  the signature is the `_symint` overload; returned SymInts are always
  `c10::SymInt`;
- a Tensor method has no `self` parameter: it is `*this`.

Names may collide between overloads; C++ overloading resolves them.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence

from opgen.api.cpp_literals import default_expr
from opgen.api.types import (
    BOOL,
    CONST_OPTIONAL_SCALAR_REF,
    CONST_OPTIONAL_TENSOR_LIST_REF,
    CONST_OPTIONAL_TENSOR_REF,
    CONST_SCALAR_REF,
    CONST_TENSOR_REF,
    DIMNAME,
    DIMNAME_LIST,
    I_TENSOR_LIST_REF,
    INT64,
    INT_ARRAY_REF,
    MUT_TENSOR_REF,
    OPTIONAL_INT_ARRAY_REF,
    OPTIONAL_SYM_INT_ARRAY_REF,
    SCALAR,
    SYM_INT,
    SYM_INT_ARRAY_REF,
    TENSOR,
    TENSOR_LIST,
    TENSOR_OPTIONS,
    VOID,
    ArgName,
    ArgumentStyle,
    ArrayCType,
    ArrayRefCType,
    BaseCType,
    Binding,
    BindingMemo,
    ConstRefCType,
    CType,
    NamedCType,
    OptionalCType,
    Parameters,
    RenderedParameters,
    Result,
    SchemaArgument,
    SpecialArgName,
    TupleCType,
    VectorCType,
)
from opgen.cached import cached
from opgen.frozen import frozen
from opgen.spec.arguments import (
    Argument,
    Arguments,
    Return,
    SelfArgument,
    TensorOptionsArguments,
)
from opgen.spec.native import NativeFunction
from opgen.spec.schema import FunctionSchema
from opgen.spec.types import BaseTy, BaseType, ListType, OptionalType, Type

# The C++ type of each schema base type that is passed by value.
VALUE_TYPES: dict[BaseTy, BaseCType] = {
    BaseTy.int: INT64,
    BaseTy.float: BaseCType("double"),
    BaseTy.bool: BOOL,
    BaseTy.str: BaseCType("c10::string_view"),
    BaseTy.Generator: BaseCType("at::Generator"),
    BaseTy.ScalarType: BaseCType("at::ScalarType"),
    BaseTy.DimVector: BaseCType("at::DimVector"),
    BaseTy.Layout: BaseCType("at::Layout"),
    BaseTy.Device: BaseCType("at::Device"),
    BaseTy.DeviceIndex: BaseCType("at::DeviceIndex"),
    BaseTy.MemoryFormat: BaseCType("at::MemoryFormat"),
    BaseTy.QScheme: BaseCType("at::QScheme"),
    BaseTy.Storage: BaseCType("at::Storage"),
    BaseTy.Stream: BaseCType("at::Stream"),
    BaseTy.SymBool: BaseCType("c10::SymBool"),
    BaseTy.Dimname: DIMNAME,
}


_BOOL = BaseType(BaseTy.bool)
_TENSOR = BaseType(BaseTy.Tensor)


class NoCppType(ValueError):
    """A schema type with no C++ form in this convention (`GraphModule`, custom classes)."""


def name(
    func: FunctionSchema,
    *,
    faithful_name_for_out_overloads: bool = False,
    symint_overload: bool = False,
) -> str:
    """The C++ function name: the base name, plus `_symint`, plus `_out`/`_outf`."""
    result = str(func.name.name)
    if symint_overload:
        result += "_symint"
    if func.is_out_fn():
        result += "_outf" if faithful_name_for_out_overloads else "_out"
    return result


# -- types -------------------------------------------------------------------------


def value_type(t: Type, *, symint: bool) -> CType | None:
    """The C++ type of a type passed the same way as argument and return, or None.

    Tensors, Scalars and most lists are passed by reference or view, so they
    are not value types; `bool[N]` is (`::std::array<bool,N>`).
    """
    if isinstance(t, BaseType):
        base = t.name
        if base is BaseTy.Tensor or base is BaseTy.Scalar:
            return None
        if base is BaseTy.SymInt:
            return SYM_INT if symint else INT64
        ctype = VALUE_TYPES.get(base)
        if ctype is None:
            raise NoCppType(f"'{t}' has no C++ type")
        return ctype
    if isinstance(t, OptionalType):
        elem = value_type(t.elem, symint=symint)
        return None if elem is None else OptionalCType(elem)
    if isinstance(t, ListType):
        if t.elem == _BOOL:
            assert t.size is not None, "bool[] without a size"
            return ArrayCType(BOOL, t.size)
        return None
    raise NoCppType(f"'{t}' has no C++ type")


def argument_ctype(
    t: Type,
    *,
    mutable: bool,
    symint: bool,
    style: ArgumentStyle,
    owning: bool = False,
    by_value: bool = False,
) -> CType:
    """The C++ parameter type of schema type `t`.

    `owning` asks for a type that owns its elements (`::std::vector<int64_t>`
    rather than the non-owning `at::IntArrayRef`), for values that must outlive
    the call; `by_value` also asks for tensors and scalars by value (`at::Tensor`,
    `::std::optional<at::Scalar>`) rather than by const reference.
    """
    value = value_type(t, symint=symint)
    if value is not None:
        return value
    text = str(t)
    if isinstance(t, BaseType):
        if t.name is BaseTy.Tensor:
            if mutable and not style.const_ref_for_mutable_tensors:
                return MUT_TENSOR_REF
            return TENSOR if by_value else CONST_TENSOR_REF
        return SCALAR if by_value else CONST_SCALAR_REF
    if isinstance(t, OptionalType):
        if text == "Tensor?":
            if mutable and not style.const_ref_for_mutable_tensors:
                # Mutable optional tensors are passed as a plain `at::Tensor &`.
                return MUT_TENSOR_REF
            return OptionalCType(TENSOR) if by_value else CONST_OPTIONAL_TENSOR_REF
        if text == "Scalar?":
            return OptionalCType(SCALAR) if by_value else CONST_OPTIONAL_SCALAR_REF
        if isinstance(t.elem, ListType):
            list_elem = str(t.elem.elem)
            if list_elem == "int" or (list_elem == "SymInt" and not symint):
                return OPTIONAL_INT_ARRAY_REF
            if list_elem == "SymInt":
                return OPTIONAL_SYM_INT_ARRAY_REF
        elem = argument_ctype(t.elem, mutable=mutable, symint=symint, style=style)
        return OptionalCType(elem)
    if isinstance(t, ListType):
        elem_text = str(t.elem)
        if elem_text == "int":
            return VectorCType(INT64) if owning else INT_ARRAY_REF
        if elem_text == "SymInt":
            if owning:
                return VectorCType(SYM_INT if symint else INT64)
            return SYM_INT_ARRAY_REF if symint else INT_ARRAY_REF
        if elem_text == "Tensor":
            if style.ilistref_for_tensor_lists:
                return ConstRefCType(I_TENSOR_LIST_REF)
            return TENSOR_LIST
        if elem_text == "Scalar":
            return ArrayRefCType(SCALAR)
        if elem_text == "Dimname":  # `Dimname[1]` too: its size is not in its C++ type
            return DIMNAME_LIST
        if elem_text == "Tensor?":
            return CONST_OPTIONAL_TENSOR_LIST_REF
        elem = argument_ctype(t.elem, mutable=mutable, symint=symint, style=style)
        return ArrayRefCType(elem)
    raise NoCppType(f"'{t}' has no C++ type")


def argument_type(a: Argument, *, binds: ArgName, symint: bool, style: ArgumentStyle) -> NamedCType:
    return NamedCType(binds, argument_ctype(a.type, mutable=a.is_write, symint=symint, style=style))


def return_ctype(t: Type, *, mutable: bool, style: ArgumentStyle) -> CType:
    """The C++ type of one returned value. Returned SymInts are always `c10::SymInt`."""
    value = value_type(t, symint=True)
    if value is not None:
        return value
    if isinstance(t, BaseType):
        if t.name is BaseTy.Tensor:
            if not mutable:
                return TENSOR  # a fresh tensor is returned by value
            return CONST_TENSOR_REF if style.const_ref_for_mutable_tensors else MUT_TENSOR_REF
        return SCALAR
    if isinstance(t, ListType):
        assert not mutable, "a mutated tensor list is returned as void, not as a list"
        assert t.size is None, f"fixed-size list return {t}"
        return VectorCType(return_ctype(t.elem, mutable=False, style=style))
    if isinstance(t, OptionalType) and t.elem == _TENSOR:
        return OptionalCType(return_ctype(t.elem, mutable=mutable, style=style))
    raise NoCppType(f"'{t}' cannot be returned in C++")


def return_type(r: Return, *, style: ArgumentStyle) -> CType:
    return return_ctype(r.type, mutable=r.is_write, style=style)


def returns_type(rs: Sequence[Return], *, style: ArgumentStyle) -> CType:
    """`void`, the one return's type, or a `::std::tuple` of them."""
    if not rs:
        return VOID
    if len(rs) == 1:
        return return_type(rs[0], style=style)
    return TupleCType(tuple(return_type(r, style=style) for r in rs))


def return_names(f: NativeFunction, *, fallback_name: str = "result") -> list[str]:
    """The C++ names of the returned values.

    Inplace functions return `self`; out= functions return their out
    arguments; a named return keeps its name unless an argument has it
    (then `<name>_return`); others are `result`, or `result0`, `result1`...
    """
    func = f.func
    returns = func.returns
    if func.name.name.inplace:
        assert len(returns) <= 1, "an inplace function returns at most self"
        return ["self" for _ in returns]
    if func.is_out_fn():
        return [a.name for a in func.arguments.out[: len(returns)]]
    argument_names = {a.name for a in func.schema_order_arguments()}
    names = []
    for i, r in enumerate(returns):
        if r.name is not None:
            names.append(f"{r.name}_return" if r.name in argument_names else r.name)
        elif len(returns) == 1:
            names.append(fallback_name)
        else:
            names.append(f"{fallback_name}{i}")
    return names


# -- arguments ---------------------------------------------------------------------


def argument(
    a: Argument | TensorOptionsArguments | SelfArgument,
    *,
    cpp_no_default_args: frozenset[str],
    method: bool,
    faithful: bool,
    symint: bool,
    has_tensor_options: bool,
    style: ArgumentStyle,
) -> list[Binding]:
    """The C++ parameters one schema argument (or argument group) becomes."""
    if isinstance(a, Argument):
        return [_plain(a, cpp_no_default_args, symint, has_tensor_options, style)]
    if isinstance(a, SelfArgument):
        if method:  # a method's self is `*this`
            return []
        return [_plain(a.argument, cpp_no_default_args, symint, has_tensor_options, style)]
    if faithful:
        return [
            _plain(option, cpp_no_default_args, symint, has_tensor_options, style)
            for option in a.all()
        ]
    assert "options" not in cpp_no_default_args, "checked by the spec model"
    options_default = None
    if all(option.default == "None" for option in a.all()):
        options_default = "{}"
    elif a.dtype.default == "long":
        options_default = "at::kLong"
    return [Binding("options", NamedCType("options", TENSOR_OPTIONS), a, options_default)]


def _plain(
    a: Argument,
    cpp_no_default_args: frozenset[str],
    symint: bool,
    has_tensor_options: bool,
    style: ArgumentStyle,
) -> Binding:
    name = a.name
    binds: ArgName = name
    if has_tensor_options and name == "memory_format":
        binds = SpecialArgName.possibly_redundant_memory_format
    default = None
    if a.default is not None and name not in cpp_no_default_args:
        default = default_expr(a.default, a.type, symint=symint)
    ctype = argument_ctype(a.type, mutable=a.is_write, symint=symint, style=style)
    return Binding(name, NamedCType(binds, ctype), a, default)


def arguments(
    args: Arguments,
    *,
    faithful: bool,
    symint: bool,
    method: bool,
    cpp_no_default_args: frozenset[str],
    style: ArgumentStyle,
    memo: BindingMemo | None = None,
) -> Parameters:
    """The parameters of a C++ API function. Faithful signatures have no defaults."""
    return _memoized(args, faithful, symint, method, cpp_no_default_args, style, memo)


def _memoized(
    args: Arguments,
    faithful: bool,
    symint: bool,
    method: bool,
    cpp_no_default_args: frozenset[str],
    style: ArgumentStyle,
    memo: BindingMemo | None,
) -> Parameters:
    """`arguments`, by position; with a memo, once per `Arguments` object."""
    if memo is None:
        return _arguments(args, faithful, symint, method, cpp_no_default_args, style, None)
    convention = ("cpp", faithful, symint, method, cpp_no_default_args, style.key)
    return memo.derived(
        args, convention, _arguments, faithful, symint, method, cpp_no_default_args, style, memo
    )


def _arguments(
    args: Arguments,
    faithful: bool,
    symint: bool,
    method: bool,
    cpp_no_default_args: frozenset[str],
    style: ArgumentStyle,
    memo: BindingMemo | None,
) -> Parameters:
    ordered = (*args.non_out, *args.out) if faithful else (*args.out, *args.non_out)
    has_tensor_options = args.tensor_options is not None

    def convert(a: SchemaArgument) -> list[Binding]:
        bindings = argument(
            a,
            cpp_no_default_args=cpp_no_default_args,
            method=method,
            faithful=faithful,
            symint=symint,
            has_tensor_options=has_tensor_options,
            style=style,
        )
        if faithful:
            return [b if b.default is None else b.no_default() for b in bindings]
        return bindings

    if memo is None:
        return Parameters(tuple([b for a in ordered for b in convert(a)]))

    # Bindings are shared between lists by argument: the convention must then
    # also say whether the list has TensorOptions (see `argument`).
    convention = (
        "cpp", faithful, symint, method, has_tensor_options, cpp_no_default_args, style.key
    )  # fmt: skip
    return memo.parameters(convention, ordered, convert)


# -- signatures --------------------------------------------------------------------


@frozen(eq=False)
class CppSignature(RenderedParameters):
    """One overload of a function in the C++ API (see the module doc for the forms)."""

    func: FunctionSchema
    method: bool
    faithful: bool
    symint: bool  # the `_symint` overload, taking `c10::SymInt`s
    cpp_no_default_args: frozenset[str]
    style: ArgumentStyle
    # `manual_cpp_binding: True` functions are written by hand; the generated
    # binding is still emitted, as `__dispatch_<name>`, for the hand-written one to call.
    fallback_binding: bool = False
    memo: BindingMemo | None = None

    @cached
    def parameters(self) -> Parameters:
        return _memoized(
            self.func.arguments,
            self.faithful,
            self.symint,
            self.method,
            self.cpp_no_default_args,
            self.style,
            self.memo,
        )

    convert_returns = staticmethod(returns_type)

    def name(self, *, suppress_symint_suffix: bool = False) -> str:
        return self._name(suppress_symint_suffix)

    def _name(self, suppress_symint_suffix: bool) -> str:
        """`name(func)` with this form's suffixes, `__dispatch_` for a fallback binding."""
        func = self.func
        result = str(func.name.name)
        if self.symint and not suppress_symint_suffix:
            result += "_symint"
        if func.arguments.out:  # an out= function
            result += "_outf" if self.faithful else "_out"
        return f"__dispatch_{result}" if self.fallback_binding else result

    def decl(
        self,
        *,
        name: str | None = None,
        prefix: str = "",
        is_redispatching_fn: bool = False,
        suppress_symint_suffix: bool = False,
    ) -> str:
        """The declaration, with defaults: `at::Tensor add(const at::Tensor & self, ...)`."""
        if name is None:
            name = prefix + self._name(suppress_symint_suffix)
        params = self.parameters.declared
        if is_redispatching_fn:
            params = _with_dispatch_key_set(params)
        return f"{self.result.text} {name}({params})"

    def defn(
        self, *, name: str | None = None, prefix: str = "", is_redispatching_fn: bool = False
    ) -> str:
        """The definition's head, without defaults."""
        if name is None:
            name = prefix + self._name(False)
        params = self.parameters.defined
        if is_redispatching_fn:
            params = _with_dispatch_key_set(params)
        return f"{self.result.text} {name}({params})"


def _with_dispatch_key_set(params: str) -> str:
    """Redispatching functions take the dispatch key set first."""
    key_set = "c10::DispatchKeySet dispatchKeySet"
    return f"{key_set}, {params}" if params else key_set


@frozen(eq=False)
class CppSignatureGroup:
    """Every C++ API overload of one function."""

    func: FunctionSchema
    signature: CppSignature  # the convenience form: TensorOptions packed, outs first
    # Only where it differs from `signature` (TensorOptions or out arguments).
    faithful_signature: CppSignature | None
    # Only where the schema has SymInt arguments: the `_symint` overloads.
    symint_signature: CppSignature | None
    symint_faithful_signature: CppSignature | None

    def most_faithful_signature(self) -> CppSignature:
        """The faithful signature where there is one, else the convenience one."""
        return self.faithful_signature or self.signature

    def signatures(self, *, symint: bool = True) -> Iterator[CppSignature]:
        """The signature, the faithful one, then (with `symint`) the SymInt pair."""
        yield self.signature
        if self.faithful_signature is not None:
            yield self.faithful_signature
        if symint:
            if self.symint_signature is not None:
                yield self.symint_signature
            if self.symint_faithful_signature is not None:
                yield self.symint_faithful_signature

    @staticmethod
    def from_native_function(
        f: NativeFunction,
        *,
        method: bool,
        fallback_binding: bool = False,
        memo: BindingMemo | None = None,
        style: ArgumentStyle | None = None,
        result: Result | None = None,
    ) -> CppSignatureGroup:
        """The group of `f`. A caller that has them passes `ArgumentStyle.of(f)` as
        `style` and what the signatures return (see `RenderedParameters.with_result`)."""
        func = f.func
        if style is None:
            style = ArgumentStyle.of(f)
        args = func.arguments
        has_faithful_form = args.tensor_options is not None or bool(args.out)
        no_defaults = f.cpp_no_default_args

        def make(faithful: bool, symint: bool) -> CppSignature:
            sig = CppSignature(
                func, method, faithful, symint, no_defaults, style, fallback_binding, memo
            )
            return sig if result is None else sig.with_result(result)

        has_symint = args.has_symint_arg()
        return CppSignatureGroup(
            func,
            make(False, False),
            make(True, False) if has_faithful_form else None,
            make(False, True) if has_symint else None,
            make(True, True) if has_symint and has_faithful_form else None,
        )
