"""Primitive operators: an `mlx::core::Primitive` subclass per operator with kernels.

The class (`<Name>Primitive`, `name()` the operator's name in CamelCase)
stores the stream and the non-array arguments as members, and, where the
positions of its inputs depend on the call, the layout (`has_<x>_`,
`<x>_size_`; see `layout.py`). Its methods:
- `eval_cpu` runs the CPU kernel on the stream's CPU worker through MLX's
  command encoder (`dispatch_cpu`, emitted once per file): the outputs are
  allocated first, and the kernel sees row-contiguous inputs (the operator
  passes them through `mlx::core::contiguous`) and allocated row-contiguous
  outputs, so it can be a plain loop; without a `cpu:` kernel it throws;
- `eval_gpu` calls the GPU kernel with the stream (a Metal kernel needs it for
  its command encoder and allocates its outputs), or throws naming the
  operator;
- `vjp`, when the operator has formulas: one gradient per requested input,
  from its formula (summed back to the input's shape when it is that shape
  broadcast: `layout.SUM_TO_INPUT`, emitted once in the source), or an error
  naming an input without one;
- `is_equivalent` compares the members (`mx.compile` merges equal nodes);
- `output_shapes` from the `shape:` rule (a helper function, shared with the
  operator) or the first array's shape for every output.
The operator function packs its arrays and builds the outputs with
`array::make_arrays`, every output taking the first array's dtype.
"""

from __future__ import annotations

from opgen.api.nanobind import ArrayKind
from opgen.targets.mlx.cpp import function_head, string_literal, unnamed_unless
from opgen.targets.mlx.layout import (
    COTANGENT_NAMES,
    OUTPUT_NAMES,
    SUM_TO_INPUT_NAME,
    USING_MLX,
    VECTOR,
    ArrayLayout,
    LayoutValue,
    Span,
    formula_lines,
    indent,
    scope,
    sum_to_input_arguments,
    summed,
)
from opgen.targets.mlx.library import BoundOperator, identifiers

SHAPES = "std::vector<mlx::core::Shape>"
KERNEL_IO = [f"const {VECTOR}& inputs", f"{VECTOR}& outputs"]

# Emitted once before the classes when some primitive has a CPU kernel. Weak
# copies keep the task from holding arrays (and their graphs) alive; MLX's
# evaluation keeps the buffers alive until the stream's tasks are done.
DISPATCH_CPU = f"""\
// Runs a CPU kernel on the stream's worker, as MLX's own CPU primitives run:
// outputs allocated first, the task holding weak copies of the arrays.
template <class Kernel>
void dispatch_cpu(
    const mlx::core::Stream& stream,
    const {VECTOR}& inputs,
    {VECTOR}& outputs,
    Kernel kernel) {{
  auto& encoder = mlx::core::cpu::get_command_encoder(stream);
  {VECTOR} in;
  {VECTOR} out;
  in.reserve(inputs.size());
  out.reserve(outputs.size());
  for (const mlx::core::array& a : inputs) {{
    encoder.set_input_array(a);
    in.push_back(mlx::core::array::unsafe_weak_copy(a));
  }}
  for (mlx::core::array& a : outputs) {{
    a.set_data(mlx::core::allocator::malloc(a.nbytes()));
    encoder.set_output_array(a);
    out.push_back(mlx::core::array::unsafe_weak_copy(a));
  }}
  encoder.dispatch(
      [in = std::move(in), out = std::move(out), kernel = std::move(kernel)]() mutable {{
        kernel(in, out);
      }});
}}
"""


def kernel_declaration(op: BoundOperator, key: str, name: str) -> str:
    """The declaration of the author's `cpu`/`gpu` kernel (unqualified name)."""
    params = KERNEL_IO + [a.parameter for a in op.signature.values]
    if key == "gpu":
        params.append("const mlx::core::Stream& stream")
    return function_head(f"void {name}", params, ";")


# Emitted once when some primitive has a `shape:` rule, which may give one
# Shape (`x.shape()`) or one per output (`std::vector<Shape>{...}`).
AS_SHAPES = f"""\
[[maybe_unused]] {SHAPES} as_shapes(mlx::core::Shape shape) {{
  return {{std::move(shape)}};
}}

[[maybe_unused]] {SHAPES} as_shapes({SHAPES} shapes) {{
  return shapes;
}}
"""


def helpers(op: BoundOperator) -> str:
    """What a primitive needs before its class: the `shape:` rule as a function, whose
    scope is the operator's arguments and `inputs`, the packed arrays."""
    parts: list[str] = []
    shape = op.operator.shape
    if shape is not None:
        used = identifiers(shape)
        params = [unnamed_unless("inputs" in used, f"const {VECTOR}& inputs", "inputs")]
        params += [
            unnamed_unless(a.name in used, a.parameter, a.name) for a in op.signature.arguments
        ]
        head = function_head(f"{SHAPES} {op.name}_output_shapes", params, " {")
        parts.append(f"{head}\n  {USING_MLX}\n  return as_shapes({shape});\n}}\n")
    return "\n".join(parts)


def members(op: BoundOperator) -> list[tuple[str, str, str]]:
    """(type, member name, constructor parameter) of every member, in order."""
    out = [(a.type.value, f"{a.name}_", a.parameter) for a in op.signature.values]
    for v in _layout(op).values():
        out.append((v.type, f"{v.name}_", f"{v.type} {v.name}"))
    return out


def class_definition(op: BoundOperator) -> str:
    name = op.class_name
    fields = members(op)
    ctor = function_head(
        f"explicit {name}", ["mlx::core::Stream stream", *(p for _, _, p in fields)], "", "  "
    )
    inits = ", ".join(["mlx::core::Primitive(stream)", *(f"{m}({m[:-1]})" for _, m, _ in fields)])
    lines = [
        f"class {name} : public mlx::core::Primitive {{",
        " public:",
        f"{ctor}\n      : {inits} {{}}",
        "",
        *_eval_cpu(op),
        "",
        *_eval_gpu(op),
    ]
    if op.operator.grads:
        lines += ["", *_vjp(op)]
    lines += [
        "",
        f'  const char* name() const override {{ return "{op.primitive_name}"; }}',
        "",
        *_is_equivalent(op, fields),
        "",
        *_output_shapes(op),
    ]
    if fields:
        lines += ["", " private:", *(f"  {t} {m};" for t, m, _ in fields)]
    return "\n".join([*lines, "};"]) + "\n"


def _layout(op: BoundOperator) -> ArrayLayout:
    return ArrayLayout(op.signature.arrays)


def _values_call(op: BoundOperator, suffix: str) -> list[str]:
    return [f"{a.name}{suffix}" for a in op.signature.values]


def _eval_head(device: str, named: bool) -> str:
    inputs = unnamed_unless(named, f"const {VECTOR}& inputs", "inputs")
    outputs = unnamed_unless(named, f"{VECTOR}& outputs", "outputs")
    return f"  void eval_{device}({inputs}, {outputs}) override {{"


def _no_kernel(op: BoundOperator, device: str) -> list[str]:
    message = string_literal(f"{op.name}: no {device.upper()} kernel")
    return [_eval_head(device, False), f"    throw std::runtime_error({message});", "  }"]


def _eval_cpu(op: BoundOperator) -> list[str]:
    kernel = op.operator.dispatch.get("cpu")
    if kernel is None:
        return _no_kernel(op, "cpu")
    values = _values_call(op, "")
    captures = ", ".join(f"{a.name} = {a.name}_" for a in op.signature.values)
    call = f"{kernel}({', '.join(['in', 'out', *values])});"
    return [
        _eval_head("cpu", True),
        f"    dispatch_cpu(stream(), inputs, outputs, [{captures}](",
        f"        const {VECTOR}& in, {VECTOR}& out) {{",
        f"      {call}",
        "    });",
        "  }",
    ]


def _eval_gpu(op: BoundOperator) -> list[str]:
    kernel = op.operator.dispatch.get("gpu")
    if kernel is None:
        return _no_kernel(op, "gpu")
    args = ["inputs", "outputs", *_values_call(op, "_"), "stream()"]
    return [_eval_head("gpu", True), f"    {kernel}({', '.join(args)});", "  }"]


def _vjp(op: BoundOperator) -> list[str]:
    used = op.used
    layout = _layout(op)
    body = [USING_MLX, "const mlx::core::Stream s = stream();"]  # the formulas' and SUM_TO_INPUT's
    body += [f"const auto& {a.name} = {a.name}_;" for a in op.signature.values if a.name in used]
    unpacked = layout.unpack("primals", used, suffix="_")
    declared = scope(used)
    body += unpacked + declared
    spans = layout.spans(suffix="_")
    body += [
        f"std::optional<{VECTOR}> {s.argument.name}_grads;"
        for s in spans
        if s.argument.type.array is ArrayKind.LIST and s.argument.name in op.formulas
    ]
    body += [f"{VECTOR} vjps;", "vjps.reserve(argnums.size());", "for (const int i : argnums) {"]
    body += indent(_argnum_cases(op, spans))
    body += ["}", "return vjps;"]
    params = [
        f"const {VECTOR}& primals",  # SUM_TO_INPUT sums a gradient to its primal's shape
        unnamed_unless(bool(used & COTANGENT_NAMES), f"const {VECTOR}& cotangents", "cotangents"),
        "const std::vector<int>& argnums",
        unnamed_unless(bool(used & OUTPUT_NAMES), f"const {VECTOR}& outputs", "outputs"),
    ]
    head = function_head(f"{VECTOR} vjp", params, " override {", "  ")
    return [*head.split("\n"), *indent(body, "    "), "  }"]


def _argnum_cases(op: BoundOperator, spans: list[Span]) -> list[str]:
    lines: list[str] = []
    for span in spans:
        keyword = "if" if not lines else "} else if"
        lines.append(f"{keyword} ({_contains(span)}) {{")
        lines += indent(_argnum_gradient(op, span))
    beyond = string_literal(f"{op.name}: no input with this index")
    lines += ["} else {", f"  throw std::invalid_argument({beyond});", "}"]
    return lines


def _contains(span: Span) -> str:
    if span.argument.type.array is ArrayKind.ONE:
        return f"i == {span.offset}"
    return f"i >= {span.offset} && i < {span.offset} + {span.count}"


def _argnum_gradient(op: BoundOperator, span: Span) -> list[str]:
    a = span.argument
    formula = op.formulas.get(a.name)
    if formula is None:
        message = string_literal(f"{op.name}: no gradient formula for '{a.name}'")
        return [f"throw std::invalid_argument({message});"]
    if a.type.array is not ArrayKind.LIST:
        return summed(op.name, formula, "primals[i]", "vjps.push_back(", ");")
    cache = f"{a.name}_grads"
    gradient = f"(*{cache})[i - {_grouped(span.offset)}]"
    arguments = sum_to_input_arguments(op.name, a.name, "primals[i]")
    return [
        f"if (!{cache}) {{",
        f"  {cache} =",
        *formula_lines(formula, ";"),
        "}",
        f"vjps.push_back({SUM_TO_INPUT_NAME}({gradient}, {arguments}));",
    ]


def _grouped(expression: str) -> str:
    return f"({expression})" if " " in expression else expression


def _is_equivalent(op: BoundOperator, fields: list[tuple[str, str, str]]) -> list[str]:
    head = "  bool is_equivalent(const mlx::core::Primitive& other) const override {"
    if not fields:
        return [head.replace("& other)", "& /* other */)"), "    return true;", "  }"]
    same = " && ".join(f"{m} == o.{m}" for _, m, _ in fields)
    return [
        head,
        f"    const auto& o = static_cast<const {op.class_name}&>(other);",
        f"    return {same};",
        "  }",
    ]


def _output_shapes(op: BoundOperator) -> list[str]:
    head = f"  {SHAPES} output_shapes(const {VECTOR}& inputs) override {{"
    if op.operator.shape is None:
        n = op.signature.outputs
        return [head, f"    return {SHAPES}({n}, inputs[0].shape());", "  }"]
    layout = _layout(op)
    names = [a.name for a in op.signature.arrays]
    unpacked = layout.unpack("inputs", names, suffix="_")
    args = ["inputs"] + [a.name if a.type.array else f"{a.name}_" for a in op.signature.arguments]
    call = f"return {op.name}_output_shapes({', '.join(args)});"
    return [head, *indent([*unpacked, call], "    "), "  }"]


def operator_definition(op: BoundOperator) -> str:
    sig = op.signature
    layout = _layout(op)
    head = function_head(f"{sig.returns} {op.name}", sig.parameters(defaults=False), " {")
    body = ["const mlx::core::Stream stream = mlx::core::to_stream(s);"]
    body += layout.pack(lambda a: f"mlx::core::contiguous({a}, false, stream)")
    if all(a.type.array is not ArrayKind.ONE for a in sig.arrays):  # it may have none
        names = " or ".join(f"'{a.name}'" for a in sig.arrays)
        message = string_literal(
            f"{op.name}: needs at least one array in {names} (its output takes the dtype "
            "of the first)"
        )
        body += ["if (inputs.empty()) {", f"  throw std::invalid_argument({message});", "}"]
    if op.operator.shape is None:
        body.append(f"{SHAPES} shapes({sig.outputs}, inputs[0].shape());")
    else:
        args = ", ".join(["inputs", *sig.names()])
        body.append(f"{SHAPES} shapes = {op.name}_output_shapes({args});")
    body.append("const std::vector<mlx::core::Dtype> dtypes(shapes.size(), inputs[0].dtype());")
    ctor = ["stream", *_ctor_args(op, layout.values())]
    primitive = f"std::make_shared<{op.class_name}>({', '.join(ctor)})"
    body.append(
        f"{VECTOR} outputs = mlx::core::array::make_arrays(std::move(shapes), dtypes, "
        f"{primitive}, inputs);"
    )
    if sig.outputs is None:
        body.append("return outputs;")
    elif sig.outputs == 1:
        body.append("return outputs[0];")
    else:
        items = ", ".join(f"outputs[{i}]" for i in range(sig.outputs))
        body.append(f"return std::make_tuple({items});")
    return "\n".join([head, *indent(body), "}"]) + "\n"


def _ctor_args(op: BoundOperator, values: list[LayoutValue]) -> list[str]:
    return [a.name for a in op.signature.values] + [v.init for v in values]
