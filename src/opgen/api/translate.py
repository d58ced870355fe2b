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
those are allowed only with `allow_expensive_conversions`. With `copy_tensors` as
well (torch 2.14 on), a tensor or optional tensor is copied straight from its const
reference.
"""

from __future__ import annotations

from collections.abc import Sequence

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
    TENSOR,
    TENSOR_OPTIONS,
    ArgName,
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
_OPTIONAL_MEMORY_FORMAT = OptionalCType(MEMORY_FORMAT)
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

# The conversions between arguments of the same name: for a goal type, the types it
# is made from, tried in order (each looked up directly), and how (`{arg}` is the
# expression found).
_Rules = dict[CType, tuple[tuple[CType, str], ...]]
_CONVERSIONS: _Rules = {
    INT_ARRAY_REF: (
        (_INT64_VECTOR, "{arg}"),
        (SYM_INT_ARRAY_REF, "C10_AS_INTARRAYREF_SLOW({arg})"),
    ),
    SYM_INT_ARRAY_REF: (
        (INT_ARRAY_REF, "c10::fromIntArrayRefSlow({arg})"),
        (_SYM_INT_VECTOR, "{arg}"),
    ),
    SYM_INT: ((INT64, "{arg}"),),
    _OPTIONAL_SYM_INT: (
        (
            _OPTIONAL_INT64,
            "{arg}.has_value() ? ::std::make_optional(c10::SymInt(*{arg})) : ::std::nullopt",
        ),
    ),
    INT64: ((SYM_INT, "{arg}.guard_int(__FILE__, __LINE__)"),),
    _OPTIONAL_INT64: (
        (
            _OPTIONAL_SYM_INT,
            "{arg}.has_value() ? ::std::make_optional({arg}->guard_int(__FILE__, __LINE__))"
            " : ::std::nullopt",
        ),
    ),
    OPTIONAL_INT_ARRAY_REF: (
        (_OPTIONAL_INT64_VECTOR, "{arg}"),
        (
            OPTIONAL_SYM_INT_ARRAY_REF,
            "{arg}.has_value() ? ::std::make_optional(C10_AS_INTARRAYREF_SLOW(*{arg}))"
            " : ::std::nullopt",
        ),
    ),
    OPTIONAL_SYM_INT_ARRAY_REF: (
        (
            OPTIONAL_INT_ARRAY_REF,
            "{arg}.has_value() ? ::std::make_optional(c10::fromIntArrayRefSlow(*{arg}))"
            " : ::std::nullopt",
        ),
    ),
    OPTIONAL_SCALAR_REF: ((_OPTIONAL_SCALAR, "{arg}"),),
    OPTIONAL_TENSOR_REF: ((OPTIONAL_TENSOR, "{arg}"),),
}
# Conversions that copy a non-owning view into an owning value.
_COPIES: _Rules = {
    _INT64_VECTOR: ((INT_ARRAY_REF, "{arg}.vec()"),),
    _SYM_INT_VECTOR: ((SYM_INT_ARRAY_REF, "{arg}.vec()"),),
    _OPTIONAL_INT64_VECTOR: (
        (
            OPTIONAL_INT_ARRAY_REF,
            "{arg}.has_value() ? ::std::make_optional({arg}->vec()) : ::std::nullopt",
        ),
    ),
    _OPTIONAL_SCALAR: (
        (OPTIONAL_SCALAR_REF, "{arg}.has_value() ? ::std::make_optional({arg}) : ::std::nullopt"),
    ),
    OPTIONAL_TENSOR: (
        (OPTIONAL_TENSOR_REF, "{arg}.has_value() ? ::std::make_optional({arg}) : ::std::nullopt"),
    ),
}

# ... and, from torch 2.14, tensors copied from their const references first.
_TENSOR_COPIES: _Rules = {
    **_COPIES,
    TENSOR: ((CONST_TENSOR_REF, "{arg}"),),
    OPTIONAL_TENSOR: ((CONST_OPTIONAL_TENSOR_REF, "{arg}"), *_COPIES[OPTIONAL_TENSOR]),
}


class UnsatError(RuntimeError):
    """No expression of the goal's type can be built from the bindings."""


def call_expressions(bindings: Sequence[Binding], goals: Sequence[Binding]) -> list[str]:
    """`translate(bindings, goals)`'s expressions, found directly when they can be.

    `translate` first looks each goal up among the bindings, by name and type (a
    const reference goal also takes a mutable reference). When the bindings' names
    are unique, as parameters' are, and each goal is its namesake that way, every
    expression is a binding's name; only the other calls need the search.
    """
    by_name = {b.nctype.name: b for b in bindings}
    if len(by_name) == len(bindings):
        names = []
        for goal in goals:
            b = by_name.get(goal.nctype.name)
            if b is None or not _binds_directly(b.nctype.type, goal.nctype.type):
                break
            names.append(b.name)
        else:
            return names
    return [e.expr for e in translate(bindings, goals)]


def call_arguments(bindings: Sequence[Binding], goals: Sequence[Binding]) -> str:
    """The arguments of a call, as `translate` writes them (see `call_expressions`)."""
    return ", ".join(call_expressions(bindings, goals))


def _binds_directly(bound: CType, goal: CType) -> bool:
    """Whether `translate` answers a goal of type `goal` with a namesake of type `bound`."""
    if bound is goal or bound == goal:
        return True
    return (
        isinstance(goal, ConstRefCType)
        and isinstance(bound, MutRefCType)
        and bound.elem == goal.elem
    )


def translate(
    bindings: Sequence[Binding | Expr],
    goals: Sequence[Binding | NamedCType],
    *,
    method: bool = False,
    allow_expensive_conversions: bool = False,
    copy_tensors: bool = False,
) -> list[Expr]:
    """An expression for each goal, built from the bindings.

    `method` says the code is inside a Tensor method, where `self` is `*this`.
    """
    goal_types = [g.nctype if isinstance(g, Binding) else g for g in goals]
    copies = None
    if allow_expensive_conversions:
        copies = _TENSOR_COPIES if copy_tensors else _COPIES
    solver = _Solver(_scope(bindings, method), goal_types, copies)
    exprs = []
    for goal in goal_types:
        found = solver.solve(goal.name, goal.type, direct=False)
        if found is None:
            raise solver.unsat(goal)
        exprs.append(Expr(found, goal))
    return exprs


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

# What is in scope, by argument name: each name's (type, expression) pairs, where a
# later pair of the same type replaces an earlier one. Keyed by name, because only
# arguments of the same name convert into each other (and names hash cheaply, where
# a named type hashes through every level of its type).
_Scope = dict[ArgName, list[tuple[CType, str]]]


def _scope(bindings: Sequence[Expr | Binding], method: bool) -> _Scope:
    """The bindings, plus the cheap views every binding also offers."""
    scope: _Scope = {}
    for b in bindings:
        expr, nctype = (b.name, b.nctype) if isinstance(b, Binding) else (b.expr, b.type)
        t = nctype.type
        pairs = scope.get(nctype.name)
        if pairs is None:
            pairs = scope[nctype.name] = []
        pairs.append((t, expr))
        view = _VIEWS.get(t)
        if view is not None:
            pairs.append((view[0], view[1].format(expr)))
    if method:
        this = "const_cast<Tensor&>(*this)"
        scope.setdefault("self", []).extend(((MUT_TENSOR_REF, this), (CONST_TENSOR_REF, this)))
    return scope


class _Solver:
    """The search; each step returns None where it finds nothing, so that failed
    attempts cost no exception."""

    def __init__(self, scope: _Scope, goals: list[NamedCType], copies: _Rules | None) -> None:
        self.scope = scope
        self.goals = goals
        self.copies = copies  # the copying conversions allowed, if any

    def unsat(self, goal: NamedCType) -> UnsatError:
        available = "\n".join(
            f"  {t.cpp_type()} {_name(name)}; // {e}"
            for name, pairs in self.scope.items()
            for t, e in pairs
        )
        return UnsatError(
            f'cannot build "{goal.cpp_type()} {_name(goal.name)}" from the bindings in scope:\n'
            f"{available}\n"
            "(a conversion rule may be missing from opgen.api.translate)"
        )

    def lookup(self, name: ArgName, t: CType) -> str | None:
        """The expression in scope with this name and type, the latest if several."""
        for bound, expr in reversed(self.scope.get(name, ())):
            if bound is t or bound == t:
                return expr
        return None

    def direct(self, name: ArgName, t: CType) -> str | None:
        return self.solve(name, t, direct=True)

    def solve(self, name: ArgName, t: CType, *, direct: bool) -> str | None:
        found = self.lookup(name, t)
        if found is not None:
            return found
        # A reference goal accepts a less const binding, or the value itself.
        if isinstance(t, ConstRefCType):
            found = self.solve(name, MutRefCType(t.elem), direct=direct)
        elif isinstance(t, MutRefCType):
            found = self.solve(name, t.elem, direct=direct)
        if found is not None:
            return found
        if t == _INT64_ARRAY_REF:
            return self.solve(name, INT_ARRAY_REF, direct=direct)
        if direct:
            return None
        converted = self.convert(name, t)
        if converted is not None:
            return converted
        if t == MUT_TENSOR_REF:
            this = self.direct(name, CONST_TENSOR_REF)
            return None if this is None else f"const_cast<Tensor&>({this})"
        return None

    def convert(self, name: ArgName, t: CType) -> str | None:
        """The goal built from one other named type, or None."""
        if name == "memory_format" and t == _OPTIONAL_MEMORY_FORMAT:
            return self.memory_format()
        if name == "options" and t == TENSOR_OPTIONS:
            parts = [
                self.direct(part, _OPTION_PARTS[part][0])
                for part in ("dtype", "layout", "device", "pin_memory")
            ]
            if None in parts:
                return None
            dtype, layout, device, pin_memory = parts
            return (
                f"TensorOptions().dtype({dtype}).layout({layout})"
                f".device({device}).pinned_memory({pin_memory})"
            )
        if isinstance(name, str) and name in _OPTION_PARTS and t == _OPTION_PARTS[name][0]:
            return self.option_part(name)
        rules = _CONVERSIONS.get(t)
        if rules is None and self.copies is not None:
            rules = self.copies.get(t)
        if rules is None:
            return None
        for source, written in rules:
            arg = self.direct(name, source)
            if arg is not None:
                return written.format(arg=arg)
        return None

    def memory_format(self) -> str | None:
        """`memory_format` of a function with TensorOptions, checked against `options`."""
        memory_format = self.direct(
            SpecialArgName.possibly_redundant_memory_format, _OPTIONAL_MEMORY_FORMAT
        )
        if memory_format is None or OPTIONS in self.goals:
            return memory_format  # the callee gets options too, and checks them itself
        options = self.direct(OPTIONS.name, OPTIONS.type)
        if options is None:
            return memory_format
        return (
            f"c10::impl::check_tensor_options_and_extract_memory_format({options}, {memory_format})"
        )

    def option_part(self, part: str) -> str | None:
        """One TensorOptions part: from `options` if in scope, else from the out tensor."""
        _, from_options, from_out = _OPTION_PARTS[part]
        options = self.direct(OPTIONS.name, OPTIONS.type)
        if options is not None:
            return from_options.format(options)
        out = self.direct(OUT_TENSOR.name, OUT_TENSOR.type)
        return None if out is None else from_out.format(out)


def _name(name: ArgName) -> str:
    return name.value if isinstance(name, SpecialArgName) else name
