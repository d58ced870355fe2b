"""The C++ function of each lowered overload, and the declarations of all of them.

A function opens with what its tags and arguments ask for, in this order: generators
and layouts checked, sized lists (`int[2]`) read as PyTorch reads them, PyTorch's type
promotion of an elementwise operator's operands (each then an array of the dtype it
computes in, under its own name; `alpha` checked and converted), a reduction's input in
the dtype it reduces in and its `axes`. Then the body, as the spec wrote it, behind
`#line` directives to the spec so that a compiler error points there, inside a lambda
whose value is finished: the promoted result dtype, an in-place variant's self dtype,
an out= variant's `out` dtypes.
"""

from __future__ import annotations

from opgen.api.aten_mlx import (
    LoweredParameter,
    cpp_default,
    cpp_name,
    parameter_declaration,
    parameters,
    return_type,
)
from opgen.api.cpp_literals import cpp_string
from opgen.spec.keys import SchemaKind
from opgen.spec.lowering.bodies import composed_operator
from opgen.spec.lowering.compose import Call, Expression, ListOf, Literal, Name, Output, TupleOf
from opgen.spec.lowering.model import BodyKind, Lowering, LoweringSpec, Promotion
from opgen.spec.mlx.type_mapping import DTYPE_NAMES
from opgen.spec.types import BaseTy, OptionalType
from opgen.targets.line_directives import placed_lines

_PROMOTION = {
    Promotion.DEFAULT: "Promotion::default_",
    Promotion.INT_TO_FLOAT: "Promotion::int_to_float",
    Promotion.ALWAYS_BOOL: "Promotion::always_bool",
    Promotion.COMPLEX_TO_FLOAT: "Promotion::complex_to_float",
    Promotion.BOOL_TO_LONG: "Promotion::bool_to_long",
}


def function_parameters(lowering: Lowering) -> list[LoweredParameter]:
    """The convention's parameters of a lowering: promoted Tensors are operands, but those
    an in-place or out= variant writes, which are arrays."""
    func = lowering.function.func
    written = {a.name for a in func.arguments.flat_all if a.is_write}
    return parameters(func, frozenset(lowering.promoted) - written)


def declaration(lowering: Lowering) -> str:
    """`mlx::core::array aten_add_Tensor(const Operand& self, ...)`: the prototype."""
    params = function_parameters(lowering)
    result, _ = return_type(lowering.function.func.returns)
    listed = ", ".join(parameter_declaration(p, p.name) for p in params)
    return f"{result} {cpp_name(lowering.function.func.name)}({listed})"


class _Prologue:
    """The statements before a body, and what each argument is called after them."""

    def __init__(self, lowering: Lowering) -> None:
        self.lowering = lowering
        self.params = function_parameters(lowering)
        names = {p.name for p in self.params}
        self.promotes = lowering.promotion is not Promotion.NONE
        self.reduces = "reduction" in lowering.tags and "self" in names
        self.reduction_input = self.reduces and ("dtype" in names or lowering.integral_to_long)
        self.rebound = {
            p.name
            for p in self.params
            if _sized(p)
            or (self.promotes and (p.name in lowering.promoted or p.name == "alpha"))
            or (self.reduction_input and p.name == "self")
        }
        self.lines: list[str] = []

    def name(self, argument: str) -> str:
        """The C++ parameter of the schema argument `argument` (`self_arg` when the
        prologue reads it into `self`)."""
        return f"{argument}_arg" if argument in self.rebound else argument

    def build(self) -> list[str]:
        for p in self.params:
            self._argument(p)
        if self.promotes:
            self._promotion()
        if self.reduces:
            self._reduction()
        return self.lines

    def _argument(self, p: LoweredParameter) -> None:
        base = p.type.base_ty
        if base is BaseTy.Generator:
            self.lines.append(f"check_generator(op, {p.name}.has_value());")
        elif base is BaseTy.Layout:
            optional = isinstance(p.type, OptionalType)
            layout = p.name if optional else f"std::optional<std::string>({p.name})"
            self.lines.append(f"check_layout(op, {layout});")
        elif _sized(p):
            sized = f"sized(op, {cpp_string(p.name)}, {p.name}_arg, {p.size})"
            # Empty stands for a value the operator derives: a default `[]`, or a pooling
            # stride (the kernel size), which backward schemas take without the default.
            if p.default == "[]" or p.name == "stride":
                sized = f"{p.name}_arg.empty() ? {p.name}_arg : {sized}"
            self.lines.append(f"const IntList {p.name} = {sized};")

    def _promotion(self) -> None:
        promoted = self.lowering.promoted
        self.lines.append("ResultType result_type(op);")
        self.lines += [f"result_type.add({name}_arg);" for name in promoted]
        kind = _PROMOTION[self.lowering.promotion]
        self.lines.append(f"const Promoted promote = promoted(op, {kind}, result_type.dtype());")
        types = {p.name: p.cpp_type for p in self.params}
        for name in promoted:
            if types[name] in _BOUND:  # an array of the compute dtype, copied only if cast
                self.lines.append(f"std::optional<mlx::core::array> {name}_held;")
                self.lines.append(
                    f"const mlx::core::array& {name} = promote.bind({name}_arg, {name}_held);"
                )
            else:
                self.lines.append(f"const auto {name} = promote({name}_arg);")
        if "alpha" in self.rebound:
            self.lines.append("check_alpha(op, promote.compute, alpha_arg);")
            self.lines.append("const Alpha alpha{alpha_arg, promote.compute};")

    def _reduction(self) -> None:
        names = {p.name for p in self.params}
        if self.reduction_input:
            dtype = "dtype" if "dtype" in names else "std::nullopt"
            integral = "true" if self.lowering.integral_to_long else "false"
            self.lines.append("std::optional<mlx::core::array> self_held;")
            self.lines.append(
                "const mlx::core::array& self = "
                f"reduction_input(self_arg, {dtype}, {integral}, self_held);"
            )
        dim = "dim" if "dim" in names else "std::optional<std::int64_t>()"
        self.lines.append(
            f'const std::vector<int> axes = reduction_axes(op, "dim", {dim}, self.ndim());'
        )

    def finish(self) -> str:
        """What the function returns, of the body's value (`computed`, a name no schema
        argument has: `value` is one)."""
        finish = "promote.finish(std::move(computed))" if self.promotes else "computed"
        func = self.lowering.function.func
        kind = func.kind
        if kind is SchemaKind.inplace:
            elementwise = "true" if self.promotes else "false"
            return f"finish_inplace(op, {finish}, {self.name('self')}, {elementwise})"
        if kind is SchemaKind.out:
            outs = [a.name for a in func.arguments.out]
            if len(outs) == 1:
                return f"finish_out(op, {cpp_string(outs[0])}, {finish}, {outs[0]})"
            parts = [
                f"finish_out(op, {cpp_string(name)}, std::get<{i}>({finish}), {name})"
                for i, name in enumerate(outs)
            ]
            return f"std::make_tuple({', '.join(parts)})"
        return finish


# Parameter types a promotion binds by reference (`Promoted::bind`).
_BOUND = frozenset({"Operand", "mlx::core::array", "Scalar"})


def _sized(p: LoweredParameter) -> bool:
    """An `int[N]` list, which PyTorch reads as N values (one value stands for all); a
    `bool[N]` list has N values already."""
    return (
        p.cpp_type == "IntList"
        and p.size is not None
        and p.size > 1
        and not isinstance(p.type, OptionalType)
    )


def function_definition(lowering: Lowering, spec: LoweringSpec) -> list[str]:
    """The lowering's C++ function, as lines."""
    func = lowering.function.func
    prologue = _Prologue(lowering)
    prologue_lines = prologue.build()
    result, _ = return_type(func.returns)
    declared = ", ".join(parameter_declaration(p, prologue.name(p.name)) for p in prologue.params)
    lines = [
        f"// {lowering.name}: {func}",
        f"{result} {cpp_name(func.name)}({declared}) {{",
        f"  static constexpr const char* op = {cpp_string(lowering.name)};",
    ]
    lines += [f"  {line}" for line in prologue_lines]
    body = lowering.body
    if body.kind is BodyKind.COMPOSE:
        assert body.composition is not None
        inner = [f"    return {composition_cpp(body.composition, lowering, spec)};"]
    elif body.kind is BodyKind.CODE:
        inner = placed_lines(body.text.rstrip("\n"), body.location, True, "")
    else:
        inner = placed_lines(f"return {body.text.strip()};", body.location, True, "")
    if result == "void":
        return [*lines, "  {", "    using namespace mlx::core;", *inner, "  }", "}"]
    return [
        *lines,
        f"  {result} computed = [&]() -> {result} {{",
        "    using namespace mlx::core;",
        *inner,
        "  }();",
        f"  return {prologue.finish()};",
        "}",
    ]


def composition_cpp(expression: Expression, lowering: Lowering, spec: LoweringSpec) -> str:
    """A composition as a C++ expression: calls of the lowered operators' functions, every
    argument given, defaults from the callee's schema."""
    return _Composer(lowering, spec).render(expression, None)


class _Composer:
    def __init__(self, lowering: Lowering, spec: LoweringSpec) -> None:
        self.lowering = lowering
        self.spec = spec

    def render(self, expression: Expression, target: LoweredParameter | None) -> str:
        if isinstance(expression, Name):
            if expression.text in DTYPE_NAMES and expression.text not in self._own():
                return f"mlx::core::{expression.text}"
            return expression.text
        if isinstance(expression, Literal):
            return _literal(expression, target)
        if isinstance(expression, ListOf):
            items = ", ".join(self.render(item, None) for item in expression.items)
            cpp = (
                "IntList"
                if target is None
                else target.cpp_type.removeprefix("std::optional<").removesuffix(">")
            )
            return f"{cpp}{{{items}}}"
        if isinstance(expression, TupleOf):
            return f"std::make_tuple({', '.join(self.render(i, None) for i in expression.items)})"
        if isinstance(expression, Output):
            return f"std::get<{expression.index}>({self.render(expression.of, None)})"
        assert isinstance(expression, Call)
        callee = composed_operator(expression.op, self.spec.by_name)
        assert not isinstance(callee, str), callee
        params = function_parameters(callee)
        given: dict[str, Expression] = dict(expression.keywords)
        for p, value in zip(params, expression.positional, strict=False):
            given[p.name] = value
        arguments = []
        for p in params:
            if p.name in given:
                arguments.append(self.render(given[p.name], p))
            else:
                assert p.default is not None, p.name
                arguments.append(cpp_default(p.default, p))
        return f"{cpp_name(callee.function.func.name)}({', '.join(arguments)})"

    def _own(self) -> set[str]:
        return {a.name for a in self.lowering.function.func.arguments.flat_all}


def _literal(literal: Literal, target: LoweredParameter | None) -> str:
    if literal.kind == "none":
        return "std::nullopt"
    if literal.kind == "bool":
        return "true" if literal.value == "True" else "false"
    if literal.kind == "str":
        return f"std::string({cpp_string(literal.value)})"
    base = target.type.base_ty if target is not None else None
    if literal.kind == "int":
        if base in (BaseTy.float,):
            return f"{literal.value}.0"
        if base is BaseTy.Scalar or (target is not None and target.operand):
            return f"Scalar(std::int64_t{{{literal.value}}})"
        return f"std::int64_t{{{literal.value}}}"
    if base is BaseTy.Scalar or (target is not None and target.operand):
        return f"Scalar({literal.value})"
    return literal.value
