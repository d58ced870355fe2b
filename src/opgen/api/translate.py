"""Translation of arguments from one calling convention to another.

Generated code constantly calls one convention from another: a C++ API
function calls the dispatcher, the dispatcher calls a native kernel, a
structured kernel's wrapper calls `meta()` and `impl()`. `translate` writes
the argument expressions of such a call. It is given the *bindings* in scope
(parameters, or arbitrary expressions with their named types) and the *goals*
(the named types the callee wants, in order), and for each goal finds an
expression built from the bindings.

The search is a small backward-chaining solver. A goal found in the context
is used as it is. Otherwise the rules below say how to make it from another
named type (a conversion); that type is then looked up *directly* (no further
conversions), which keeps the search finite and the expressions short. Only
arguments of the same name convert into each other, except for TensorOptions,
which is packed from or unpacked into its four parts.

Some conversions copy (an `at::IntArrayRef` into a `::std::vector<int64_t>`);
those are allowed only with `allow_expensive_conversions`.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from opgen.api.types import (
    BOOL,
    CONST_OPTIONAL_SCALAR_REF,
    CONST_OPTIONAL_TENSOR_LIST_REF,
    CONST_OPTIONAL_TENSOR_REF,
    CONST_SCALAR_REF,
    CONST_TENSOR_REF,
    DEVICE,
    I_OPT_TENSOR_LIST_REF,
    INT64,
    INT_ARRAY_REF,
    LAYOUT,
    MEMORY_FORMAT,
    MUT_TENSOR_REF,
    OPMATH_T,
    OPTIONAL_INT_ARRAY_REF,
    OPTIONAL_SCALAR_REF,
    OPTIONAL_SYM_INT_ARRAY_REF,
    OPTIONAL_TENSOR,
    OPTIONAL_TENSOR_REF,
    SCALAR,
    SCALAR_T,
    SCALAR_TYPE,
    SYM_INT,
    SYM_INT_ARRAY_REF,
    TENSOR_OPTIONS,
    ArrayRefCType,
    Binding,
    ConstRefCType,
    CType,
    Expr,
    MutRefCType,
    NamedCType,
    OptionalCType,
    SpecialArgName,
    VectorCType,
)

OPTIONS = NamedCType("options", ConstRefCType(TENSOR_OPTIONS))
# When there is no `options`, an out= function's TensorOptions come from its output.
OUT_TENSOR = NamedCType("out", CONST_TENSOR_REF)
_OPTIONAL_INT64 = OptionalCType(INT64)
_OPTIONAL_SYM_INT = OptionalCType(SYM_INT)
_INT64_VECTOR = VectorCType(INT64)
_SYM_INT_VECTOR = VectorCType(SYM_INT)
_OPTIONAL_INT64_VECTOR = OptionalCType(_INT64_VECTOR)
_OPTIONAL_SCALAR = OptionalCType(SCALAR)
_INT64_ARRAY_REF = ArrayRefCType(INT64)

# For each TensorOptions part: its type, how to read it off `options`, and off the out tensor.
_OPTION_PARTS = {
    "dtype": (
        OptionalCType(SCALAR_TYPE),
        "c10::optTypeMetaToScalarType({}.dtype_opt())",
        "{}.scalar_type()",
    ),
    "layout": (OptionalCType(LAYOUT), "{}.layout_opt()", "{}.layout()"),
    "device": (OptionalCType(DEVICE), "{}.device_opt()", "{}.device()"),
    "pin_memory": (OptionalCType(BOOL), "{}.pinned_memory_opt()", "::std::nullopt"),
}
_OPTION_GOALS = {NamedCType(name, part[0]): name for name, part in _OPTION_PARTS.items()}


class UnsatError(RuntimeError):
    """No expression of the goal's type can be built from the bindings."""


def call_arguments(bindings: Sequence[Binding], goals: Sequence[Binding]) -> str:
    """The arguments of a call, as `translate` writes them, found directly when it can be.

    `translate` first looks each goal up among the bindings, by name and type, and
    parameter names are unique, so when every goal is a parameter as it is, each
    argument is just the parameter's name; only the other calls need the search.
    """
    by_name = {b.nctype.name: b for b in bindings}
    direct = []
    for g in goals:
        b = by_name.get(g.nctype.name)
        if b is None or not (b.nctype is g.nctype or b.nctype == g.nctype):
            return ", ".join(e.expr for e in translate(bindings, goals))
        direct.append(b.name)
    return ", ".join(direct)


def translate(
    bindings: Sequence[Expr | Binding],
    goals: Sequence[NamedCType | Binding],
    *,
    method: bool = False,
    allow_expensive_conversions: bool = False,
) -> list[Expr]:
    """An expression for each goal, built from the bindings.

    `method` says the code is inside a Tensor method, where `self` is `*this`.
    """
    goal_types = [g.nctype if isinstance(g, Binding) else g for g in goals]
    context = _context(bindings, method)
    solver = _Solver(context, goal_types, allow_expensive_conversions)
    return [Expr(solver.solve(goal, direct=False), goal) for goal in goal_types]


# The cheap views of a binding of each of these types: (the view's type, its expression).
_VIEWS: dict[CType, tuple[CType, str]] = {
    CONST_OPTIONAL_TENSOR_REF: (
        OPTIONAL_TENSOR_REF,
        "(({0}.has_value() && (*{0}).defined()) ? "
        "at::OptionalTensorRef(*{0}) : at::OptionalTensorRef())",
    ),
    CONST_SCALAR_REF: (OPMATH_T, "({0}).to<opmath_t>()"),
    CONST_OPTIONAL_SCALAR_REF: (
        OPTIONAL_SCALAR_REF,
        "({0}.has_value() ? at::OptionalScalarRef(&({0}.value())) : at::OptionalScalarRef())",
    ),
    SCALAR_T: (OPMATH_T, "static_cast<opmath_t>({0})"),
    CONST_OPTIONAL_TENSOR_LIST_REF: (I_OPT_TENSOR_LIST_REF, "at::IOptTensorListRef({0})"),
}


def _context(bindings: Sequence[Expr | Binding], method: bool) -> dict[NamedCType, str]:
    """The bindings by named type, plus the cheap views every binding also offers."""
    context: dict[NamedCType, str] = {}
    for b in bindings:
        expr, nctype = (b.name, b.nctype) if isinstance(b, Binding) else (b.expr, b.type)
        context[nctype] = expr
        view = _VIEWS.get(nctype.type)
        if view is not None:
            context[NamedCType(nctype.name, view[0])] = view[1].format(expr)
    if method:
        this = "const_cast<Tensor&>(*this)"
        context[NamedCType("self", MUT_TENSOR_REF)] = this
        context[NamedCType("self", CONST_TENSOR_REF)] = this
    return context


class _Solver:
    def __init__(
        self,
        context: dict[NamedCType, str],
        goals: list[NamedCType],
        allow_expensive_conversions: bool,
    ) -> None:
        self.context = context
        self.goals = goals
        self.allow_expensive_conversions = allow_expensive_conversions

    def unsat(self, goal: NamedCType) -> UnsatError:
        available = "\n".join(
            f"  {t.cpp_type()} {_name(t)}; // {e}" for t, e in self.context.items()
        )
        return UnsatError(
            f'cannot build "{goal.cpp_type()} {_name(goal)}" from the bindings in scope:\n'
            f"{available}\n"
            "(a conversion rule may be missing from opgen.api.translate)"
        )

    def direct(self, goal: NamedCType) -> str:
        return self.solve(goal, direct=True)

    def first(self, *attempts: Callable[[], str]) -> str:
        """The first attempt that succeeds; the last one's failure otherwise."""
        for attempt in attempts[:-1]:
            try:
                return attempt()
            except UnsatError:
                pass
        return attempts[-1]()

    def solve(self, goal: NamedCType, *, direct: bool) -> str:
        found = self.context.get(goal)
        if found is not None:
            return found
        name, t = goal.name, goal.type
        # A reference goal accepts a less const binding, or the value itself.
        if isinstance(t, ConstRefCType):
            try:
                return self.solve(NamedCType(name, MutRefCType(t.elem)), direct=direct)
            except UnsatError:
                pass
        if isinstance(t, MutRefCType):
            try:
                return self.solve(NamedCType(name, t.elem), direct=direct)
            except UnsatError:
                pass
        if t == _INT64_ARRAY_REF:
            return self.solve(NamedCType(name, INT_ARRAY_REF), direct=direct)
        if direct:
            raise self.unsat(goal)
        converted = self.convert(goal)
        if converted is not None:
            return converted
        if t == MUT_TENSOR_REF:
            return f"const_cast<Tensor&>({self.direct(NamedCType(name, CONST_TENSOR_REF))})"
        raise self.unsat(goal)

    def convert(self, goal: NamedCType) -> str | None:
        """The goal built from one other named type, or None if no rule applies."""
        name, t = goal.name, goal.type
        if goal == NamedCType("memory_format", OptionalCType(MEMORY_FORMAT)):
            return self.memory_format()
        if goal == NamedCType("options", TENSOR_OPTIONS):
            dtype, layout, device, pin_memory = (
                self.direct(NamedCType(part, _OPTION_PARTS[part][0]))
                for part in ("dtype", "layout", "device", "pin_memory")
            )
            return (
                f"TensorOptions().dtype({dtype}).layout({layout})"
                f".device({device}).pinned_memory({pin_memory})"
            )
        part = _OPTION_GOALS.get(goal)
        if part is not None:
            return self.option_part(part)
        same = NamedCType
        if t == INT_ARRAY_REF:
            return self.first(
                lambda: self.direct(same(name, _INT64_VECTOR)),
                lambda: f"C10_AS_INTARRAYREF_SLOW({self.direct(same(name, SYM_INT_ARRAY_REF))})",
            )
        if t == SYM_INT_ARRAY_REF:
            return self.first(
                lambda: f"c10::fromIntArrayRefSlow({self.direct(same(name, INT_ARRAY_REF))})",
                lambda: self.direct(same(name, _SYM_INT_VECTOR)),
            )
        if t == SYM_INT:
            return self.direct(same(name, INT64))
        if t == _OPTIONAL_SYM_INT:
            arg = self.direct(same(name, _OPTIONAL_INT64))
            return f"{arg}.has_value() ? ::std::make_optional(c10::SymInt(*{arg})) : ::std::nullopt"
        if t == INT64:
            return f"{self.direct(same(name, SYM_INT))}.guard_int(__FILE__, __LINE__)"
        if t == _OPTIONAL_INT64:
            arg = self.direct(same(name, _OPTIONAL_SYM_INT))
            return (
                f"{arg}.has_value() ? ::std::make_optional({arg}->guard_int(__FILE__, __LINE__))"
                " : ::std::nullopt"
            )
        if t == OPTIONAL_INT_ARRAY_REF:

            def from_symint() -> str:
                arg = self.direct(same(name, OPTIONAL_SYM_INT_ARRAY_REF))
                return (
                    f"{arg}.has_value() ? ::std::make_optional(C10_AS_INTARRAYREF_SLOW(*{arg}))"
                    " : ::std::nullopt"
                )

            return self.first(lambda: self.direct(same(name, _OPTIONAL_INT64_VECTOR)), from_symint)
        if t == OPTIONAL_SYM_INT_ARRAY_REF:
            arg = self.direct(same(name, OPTIONAL_INT_ARRAY_REF))
            return (
                f"{arg}.has_value() ? ::std::make_optional(c10::fromIntArrayRefSlow(*{arg}))"
                " : ::std::nullopt"
            )
        if t == OPTIONAL_SCALAR_REF:
            return self.direct(same(name, _OPTIONAL_SCALAR))
        if t == OPTIONAL_TENSOR_REF:
            return self.direct(same(name, OPTIONAL_TENSOR))
        if self.allow_expensive_conversions:
            return self.copy(goal)
        return None

    def copy(self, goal: NamedCType) -> str | None:
        """Conversions that copy a non-owning view into an owning value."""
        name, t = goal.name, goal.type
        if t == _INT64_VECTOR:
            return f"{self.direct(NamedCType(name, INT_ARRAY_REF))}.vec()"
        if t == _SYM_INT_VECTOR:
            return f"{self.direct(NamedCType(name, SYM_INT_ARRAY_REF))}.vec()"
        views = {
            _OPTIONAL_INT64_VECTOR: (OPTIONAL_INT_ARRAY_REF, "->vec()"),
            _OPTIONAL_SCALAR: (OPTIONAL_SCALAR_REF, ""),
            OPTIONAL_TENSOR: (OPTIONAL_TENSOR_REF, ""),
        }
        if t in views:
            view, suffix = views[t]
            arg = self.direct(NamedCType(name, view))
            return f"{arg}.has_value() ? ::std::make_optional({arg}{suffix}) : ::std::nullopt"
        return None

    def memory_format(self) -> str:
        """`memory_format` of a function with TensorOptions, checked against `options`."""
        memory_format = self.direct(
            NamedCType(
                SpecialArgName.possibly_redundant_memory_format, OptionalCType(MEMORY_FORMAT)
            )
        )
        if OPTIONS in self.goals:
            return memory_format  # the callee gets options too, and checks them itself
        try:
            options = self.direct(OPTIONS)
        except UnsatError:
            return memory_format
        return (
            f"c10::impl::check_tensor_options_and_extract_memory_format({options}, {memory_format})"
        )

    def option_part(self, part: str) -> str:
        """One TensorOptions part: from `options` if in scope, else from the out tensor."""
        _, from_options, from_out = _OPTION_PARTS[part]
        try:
            return from_options.format(self.direct(OPTIONS))
        except UnsatError:
            return from_out.format(self.direct(OUT_TENSOR))


def _name(t: NamedCType) -> str:
    return t.name.value if isinstance(t.name, SpecialArgName) else t.name
