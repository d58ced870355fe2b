"""Composite operators: the generated function around the author's `<name>_impl`.

Without gradient formulas the operator calls `<name>_impl` and nothing else:
MLX differentiates through the `mlx::core` operations it is built from, and
the binding's path stays as short as a hand-written one.

With formulas the operator is `mlx::core::custom_vjp(forward, backward)`
applied to its arrays (packed as `layout.py` describes). The stream is
resolved once (`to_stream(s)`) and captured, with the non-array arguments, by
value, so the forward and the backward pass run where the call asked even if
the default stream changes in between. The backward lambda returns one
gradient per array: the formula's where the input has one, summed back to the
input's shape when it is that shape broadcast (`layout.SUM_TO_INPUT`, emitted
once in the source); for an input without a formula, MLX's own VJP of the
forward (`mlx::core::vjp`), which is only computed when that gradient is used.
"""

from __future__ import annotations

from opgen.api.nanobind import ARRAY, ArrayKind
from opgen.targets.mlx.cpp import function_head, unnamed_unless
from opgen.targets.mlx.layout import (
    COTANGENT_NAMES,
    OUTPUT_NAMES,
    SUM_TO_INPUT_NAME,
    USING_MLX,
    VECTOR,
    ArrayLayout,
    Span,
    formula_lines,
    indent,
    scope,
    sum_to_input_arguments,
    summed,
)
from opgen.targets.mlx.library import BoundOperator

CUSTOM_VJP = "mlx::core::custom_vjp(forward, backward)(inputs)"


def definition(op: BoundOperator) -> str:
    sig = op.signature
    head = function_head(f"{sig.returns} {op.name}", sig.parameters(defaults=False), " {")
    call = f"{op.impl_name}({', '.join([*sig.names(), 's'])})"
    if not op.operator.grads:
        return "\n".join([head, *indent([f"return {call};"]), "}"]) + "\n"
    return "\n".join([head, *indent(_with_vjp(op)), "}"]) + "\n"


def _with_vjp(op: BoundOperator) -> list[str]:
    sig = op.signature
    layout = ArrayLayout(sig.arrays)
    lines = ["const mlx::core::Stream stream = mlx::core::to_stream(s);"]
    lines += [f"const {v.type} {v.name} = {v.init};" for v in layout.values()]
    lines += _forward(op, layout)
    lines += _backward(op, layout)
    lines += layout.pack()
    if sig.outputs is None:
        lines.append(f"return {CUSTOM_VJP};")
    elif sig.outputs == 1:
        lines.append(f"return {CUSTOM_VJP}[0];")
    else:
        lines.append(f"const {VECTOR} outputs = {CUSTOM_VJP};")
        items = ", ".join(f"outputs[{i}]" for i in range(sig.outputs))
        lines.append(f"return std::make_tuple({items});")
    return lines


def _forward(op: BoundOperator, layout: ArrayLayout) -> list[str]:
    sig = op.signature
    captures = [a.name for a in sig.values] + [v.name for v in layout.values()] + ["s = stream"]
    call = f"{op.impl_name}({', '.join([*sig.names(), 's'])})"
    if sig.outputs is None:
        result = f"return {call};"
    elif sig.outputs == 1:
        result = f"return {{{call}}};"
    else:  # a tuple of arrays, as a vector
        result = f"return std::apply([](const auto&... r) {{ return {VECTOR}{{r...}}; }}, {call});"
    head = f"auto forward = [{', '.join(captures)}](const {VECTOR}& primals) -> {VECTOR} {{"
    body = [*layout.unpack("primals", sig.names()), result]
    return [head, *indent(body), "};"]


def _backward(op: BoundOperator, layout: ArrayLayout) -> list[str]:
    sig = op.signature
    used = op.used
    fallback = any(a.name not in op.formulas for a in sig.arrays)
    unpacked = layout.unpack("primals", used)
    declared = scope(used)
    captures = [a.name for a in sig.values if a.name in used]
    if not layout.static:
        captures += [v.name for v in layout.values()]
    captures.append("s = stream")  # the formulas' stream, and SUM_TO_INPUT's
    if fallback:
        captures.append("forward")
    uses_cotangents = bool(used & COTANGENT_NAMES) or fallback
    params = [
        f"const {VECTOR}& primals",  # SUM_TO_INPUT sums a gradient to its primal's shape
        unnamed_unless(uses_cotangents, f"const {VECTOR}& cotangents", "cotangents"),
        unnamed_unless(bool(used & OUTPUT_NAMES), f"const {VECTOR}& outputs", "outputs"),
    ]
    head = function_head(f"auto backward = [{', '.join(captures)}]", params, f" -> {VECTOR} {{")
    body = [USING_MLX, *unpacked, *declared]
    if fallback:
        body.append(f"const {VECTOR} traced = mlx::core::vjp(forward, primals, cotangents).second;")
    body += _gradients(op, layout)
    return [*head.split("\n"), *indent(body), "};"]


def _gradients(op: BoundOperator, layout: ArrayLayout) -> list[str]:
    """Statements returning one gradient per array, in the layout's order."""
    lines = [f"{VECTOR} vjps;"]
    for span in layout.spans():
        lines += _gradient(op, span)
    return [*lines, "return vjps;"]


def _gradient(op: BoundOperator, span: Span) -> list[str]:
    a = span.argument
    formula = op.formulas.get(a.name)
    if a.type.array is ArrayKind.LIST:
        if formula is None:
            begin = "traced.begin()" + ("" if span.offset == "0" else f" + {span.offset}")
            return [f"vjps.insert(vjps.end(), {begin}, {begin} + {span.count});"]
        # The range is evaluated before `g` is declared; the next gradient is for the
        # primal at `vjps.size()`.
        arguments = sum_to_input_arguments(op.name, a.name, "primals[vjps.size()]")
        return [
            f"for (const {ARRAY}& g :",
            *formula_lines(formula, ") {"),
            f"  vjps.push_back({SUM_TO_INPUT_NAME}(g, {arguments}));",
            "}",
        ]
    if formula is None:
        push = [f"vjps.push_back(traced[{span.offset}]);"]
    else:
        push = summed(op.name, formula, f"primals[{span.offset}]", "vjps.push_back(", ");")
    if a.type.array is ArrayKind.OPTIONAL:
        return [f"if (has_{a.name}) {{", *indent(push), "}"]
    return push
