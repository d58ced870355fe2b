"""Composite operators: the generated function around the author's `<name>_impl`.

Without gradient formulas the operator calls `<name>_impl` and nothing else:
MLX differentiates through the `mlx::core` operations it is built from, and
the binding's path stays as short as a hand-written one.

With formulas the operator is `mlx::core::custom_vjp(forward, backward)`
applied to its arrays (packed as `layout.py` describes). The stream is
resolved once (`to_stream(s)`) and captured, with the non-array arguments, by
value, so the forward and the backward pass run where the call asked even if
the default stream changes in between. The backward lambda returns one
gradient per array: the formula's where the input has one; for an input
without a formula, MLX's own VJP of the forward (`mlx::core::vjp`), which is
only computed when that gradient is used.
"""

from __future__ import annotations

from opgen.api.nanobind import ArrayKind
from opgen.targets.mlx.cpp import function_head, unnamed_unless
from opgen.targets.mlx.layout import (
    COTANGENT_NAMES,
    OUTPUT_NAMES,
    USING_MLX,
    VECTOR,
    ArrayLayout,
    Span,
    indent,
    scope,
)
from opgen.targets.mlx.library import BoundOperator

CUSTOM_VJP = "mlx::core::custom_vjp(forward, backward)(inputs)"


def definition(op: BoundOperator) -> str:
    sig = op.signature
    head = function_head(f"{sig.returns} {op.name}", sig.parameters(defaults=False), " {")
    call = f"{op.impl_name}({', '.join([*sig.names(), 's'])})"
    body = [f"return {call};"] if not op.operator.grads else _with_vjp(op)
    return "\n".join([head, *indent(body), "}"]) + "\n"


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
    if "s" in used:
        captures.append("s = stream")
    if fallback:
        captures.append("forward")
    uses_cotangents = bool(used & COTANGENT_NAMES) or fallback
    params = [
        unnamed_unless(bool(unpacked) or fallback, f"const {VECTOR}& primals", "primals"),
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
    spans = layout.spans()
    if layout.static and all(s.argument.name in op.formulas for s in spans):
        formulas = [op.formulas[s.argument.name].formula for s in spans]
        if len(formulas) == 1:
            return [f"return {{{formulas[0]}}};"]
        return ["return {", *indent([f + "," for f in formulas[:-1]] + [formulas[-1]]), "};"]
    lines = [f"{VECTOR} vjps;"]
    for span in spans:
        lines += _gradient(op, span)
    return [*lines, "return vjps;"]


def _gradient(op: BoundOperator, span: Span) -> list[str]:
    a = span.argument
    formula = op.formulas.get(a.name)
    if a.type.array is ArrayKind.LIST:
        if formula is not None:  # the range is evaluated before `g` is declared
            loop = f"for (const mlx::core::array& g : {formula.formula}) {{"
            return [loop, "  vjps.push_back(g);", "}"]
        begin = "traced.begin()" + ("" if span.offset == "0" else f" + {span.offset}")
        return [f"vjps.insert(vjps.end(), {begin}, {begin} + {span.count});"]
    push = (
        f"vjps.push_back({formula.formula});"
        if formula is not None
        else f"vjps.push_back(traced[{span.offset}]);"
    )
    if a.type.array is ArrayKind.OPTIONAL:
        return [f"if (has_{a.name}) {{", f"  {push}", "}"]
    return [push]
