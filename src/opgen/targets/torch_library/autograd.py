"""Autograd kernels from gradient formulas, in C++ (compiled libraries) or Python.

C++: each operator with formulas gets a `torch::autograd::Function`. Its
forward runs the operator below autograd and saves what the formulas use
(tensors with `save_for_backward`, other values in `saved_data`); its backward
binds the names the formulas see (inputs, `grad`, `grads`, the outputs,
`grad_input_mask`) and evaluates each formula only for inputs that need a
gradient. An input that needs a gradient and has no formula is an error at
backward time, as in PyTorch. The kernel registered for `Autograd` calls the
Function only when there is something to differentiate: when no input
requires grad (or grad mode is off) and none carries a forward-mode tangent,
it redispatches below autograd, as ATen's own kernels do. Formulas are
compiled with `using namespace at;` and see the library's C++ API (`ns::op`),
its kernel declarations and the derivatives file's `include:` headers.

Each formula is emitted on a line of its own behind a `#line` directive naming
its place in derivatives.yaml, at its column there, so that a compiler error
in a formula points at the formula. The directive after it, back to the
generated file, needs the line it lands on, which only the rendered file
knows (`opgen.targets.line_directives`, shared with `opgen mlx`).

Python (libraries without C++): the same, as `setup_context` and `backward`
functions for `torch.library.register_autograd`; formulas see `torch` too.
"""

from __future__ import annotations

from collections.abc import Sequence

from opgen.api import dispatcher as dispatcher_api
from opgen.api.signatures import FunctionSignatures
from opgen.frozen import frozen
from opgen.spec.arguments import Argument
from opgen.spec.derivatives import DerivativesEntry, Formula, FormulaHeader, output_names, uses
from opgen.spec.native import NativeFunction
from opgen.targets.line_directives import placed_lines

# Emitted once before the Autograd kernels.
PREAMBLE = """\
using namespace at;  // formulas name ATen functions unqualified

// Whether autograd has work for an input: a gradient to record (it requires grad
// and grad mode is on) or a forward-mode gradient to carry.
inline bool needs_autograd(const at::Tensor& t) {
  return t.defined() &&
      ((t.requires_grad() && at::GradMode::is_enabled()) || t._fw_grad(/*level=*/0).defined());
}

inline bool needs_autograd(const std::optional<at::Tensor>& t) {
  return t.has_value() && needs_autograd(*t);
}
"""


@frozen
class LibraryAutogradKernel:
    code: str  # the Function and the kernel that applies it
    registration: str  # its `m.impl(...)` line


@frozen
class _Verbatim:
    """A line emitted as it is, never indented: a `#line` directive, or a formula at
    its column in derivatives.yaml."""

    text: str


_Lines = list[str | _Verbatim]


def function_name(f: NativeFunction) -> str:
    """`RmsNormFunction` for `rms_norm`, `ScaleTensorFunction` for `scale.Tensor`."""
    words = f"{f.func.name.name}_{f.func.name.overload_name}".split("_")
    return "".join(w[:1].upper() + w[1:] for w in words if w) + "Function"


def _used(d: DerivativesEntry[NativeFunction], name: str) -> bool:
    return any(uses(formula.text, name) for formula in d.formulas)


def _is_tensor(a: Argument) -> bool:
    return str(a.type) in ("Tensor", "Tensor?")


def cpp_kernel(d: DerivativesEntry[NativeFunction]) -> LibraryAutogradKernel:
    f = d.function
    dispatcher = FunctionSignatures(f).dispatcher
    cls = function_name(f)
    multi = len(f.func.returns) > 1
    forward_returns = "torch::autograd::variable_list" if multi else "at::Tensor"
    params = dispatcher.defined_parameters
    names = ", ".join(b.name for b in dispatcher.arguments())
    lines: _Lines = [
        f"struct {cls} : public torch::autograd::Function<{cls}> {{",
        f"  static {forward_returns} forward(torch::autograd::AutogradContext* ctx, {params}) {{",
        *_indent(_forward_body(d, dispatcher.type(), names), 4),
        "  }",
        "",
        "  static torch::autograd::variable_list backward(",
        "      torch::autograd::AutogradContext* ctx, torch::autograd::variable_list grads) {",
        *_indent(_backward_body(d), 4),
        "  }",
        "};",
        "",
        f"{dispatcher.defn(name=_kernel_name(f), is_redispatching_fn=True)} {{",
        *_indent(_kernel_body(f, cls, dispatcher.type(), names), 2),
        "}",
    ]
    code = "".join(f"{line.text if isinstance(line, _Verbatim) else line}\n" for line in lines)
    return LibraryAutogradKernel(code, f'm.impl("{f.func.name}", TORCH_FN({_kernel_name(f)}));')


def autograd_includes(headers: Sequence[FormulaHeader]) -> list[str]:
    """The `#include`s of the Autograd kernels: torch's, then the formulas' headers."""
    names = dict.fromkeys(h.name for h in headers)
    return ["#include <torch/autograd.h>"] + [
        f"#include {name}" if name.startswith("<") else f'#include "{name}"' for name in names
    ]


def _kernel_name(f: NativeFunction) -> str:
    name = f.func.name
    return f"autograd_{name.name}" + (f"_{name.overload_name}" if name.overload_name else "")


def _op_handle(f: NativeFunction, function_type: str) -> list[str]:
    name = f.func.name
    return [
        "static auto op = c10::Dispatcher::singleton()",
        f'    .findSchemaOrThrow("{f.namespace}::{name.name}", "{name.overload_name}")',
        f"    .typed<{function_type}>();",
    ]


def _kernel_body(f: NativeFunction, cls: str, function_type: str, names: str) -> _Lines:
    """Redispatch below autograd if nothing needs differentiating, else apply the Function."""
    tensors = [a.name for a in f.func.arguments.flat_all if _is_tensor(a)]
    lines: _Lines = [
        f"if ({' && '.join(f'!needs_autograd({t})' for t in tensors)}) {{",
        *_indent(_op_handle(f, function_type), 2),
        "  at::AutoDispatchBelowADInplaceOrView guard;",
        f"  return op.redispatch(dispatchKeySet & c10::after_autograd_keyset, {names});",
        "}",
    ]
    if len(f.func.returns) == 1:
        return [*lines, f"return {cls}::apply({names});"]
    outputs = ", ".join(f"outputs[{i}]" for i in range(len(f.func.returns)))
    return [
        *lines,
        f"auto outputs = {cls}::apply({names});",
        f"return std::make_tuple({outputs});",
    ]


def _saved_tensors(d: DerivativesEntry[NativeFunction]) -> list[tuple[str, str]]:
    """(name in backward, expression in forward) of each tensor the formulas use."""
    f = d.function
    saved = [
        (a.name, a.name if str(a.type) == "Tensor" else f"{a.name}.value_or(at::Tensor())")
        for a in f.func.arguments.flat_all
        if _is_tensor(a) and _used(d, a.name)
    ]
    multi = len(f.func.returns) > 1
    for i, name in enumerate(_output_aliases(f)):
        if any(_used(d, alias) for alias in name):
            saved.append((name[0], f"std::get<{i}>(result)" if multi else "result"))
    return saved


def _output_aliases(f: NativeFunction) -> list[tuple[str, ...]]:
    """Each output's names in formulas: `result`/`resultN`, and its schema name if any."""
    return [
        (default, *((r.name,) if r.name else ()))
        for default, r in zip(output_names(f), f.func.returns, strict=True)
    ]


def _forward_body(d: DerivativesEntry[NativeFunction], function_type: str, names: str) -> _Lines:
    f = d.function
    lines: _Lines = [
        "at::AutoDispatchBelowADInplaceOrView guard;",
        *_op_handle(f, function_type),
        f"auto result = op.call({names});",
    ]
    saved = _saved_tensors(d)
    if saved:
        lines.append(f"ctx->save_for_backward({{{', '.join(e for _, e in saved)}}});")
    for a in f.func.arguments.flat_all:
        if str(a.type) == "Tensor?":  # its edge exists only if the tensor does
            defined = f"{a.name}.has_value() && {a.name}->defined()"
            lines.append(f'ctx->saved_data["{a.name}.defined"] = ({defined});')
        elif not _is_tensor(a) and _used(d, a.name):
            lines.append(f'ctx->saved_data["{a.name}"] = {a.name};')
    multi = len(f.func.returns) > 1
    outputs = [f"std::get<{i}>(result)" if multi else "result" for i in range(len(f.func.returns))]
    fixed = [o for o, diff in zip(outputs, d.output_differentiability, strict=True) if not diff]
    if fixed:
        lines.append(f"ctx->mark_non_differentiable({{{', '.join(fixed)}}});")
    lines.append(f"return {{{', '.join(outputs)}}};" if multi else "return result;")
    return lines


def _backward_body(d: DerivativesEntry[NativeFunction]) -> _Lines:
    f = d.function
    lines: _Lines = [*_saved_bindings(d)]
    if _used(d, "grad"):
        lines.append("const at::Tensor& grad = grads[0];")
    lines.append("size_t edge = 0;")
    arguments = list(f.func.arguments.flat_all)
    for a in arguments:
        if str(a.type) == "Tensor":
            lines.append(f"const bool needs_{a.name} = ctx->needs_input_grad(edge++);")
        elif str(a.type) == "Tensor?":
            lines.append(
                f'const bool needs_{a.name} = ctx->saved_data["{a.name}.defined"].toBool() '
                "&& ctx->needs_input_grad(edge++);"
            )
    lines.append(f"torch::autograd::variable_list grad_inputs({len(arguments)});")
    position = {a.name: i for i, a in enumerate(arguments)}
    for formula in d.formulas:
        lines.extend(_evaluate(formula, position))
    for name, message in _not_implemented(d):
        lines.append(f'TORCH_CHECK(!needs_{name}, "{message}");')
    lines.append("return grad_inputs;")
    return lines


def _saved_bindings(d: DerivativesEntry[NativeFunction]) -> list[str]:
    """The backward's variables for what the forward saved: tensors, then other values."""
    f = d.function
    style = FunctionSignatures(f).style
    lines: list[str] = []
    saved = _saved_tensors(d)
    if saved:
        lines.append("auto saved = ctx->get_saved_variables();")
    by_name = {a.name: a for a in f.func.arguments.flat_all}
    for i, (name, _) in enumerate(saved):
        a = by_name.get(name)
        if a is not None and str(a.type) == "Tensor?":
            lines.append(
                f"std::optional<at::Tensor> {name} = saved[{i}].defined() ? "
                f"std::optional<at::Tensor>(saved[{i}]) : std::nullopt;"
            )
        else:
            lines.append(f"at::Tensor {name} = saved[{i}];")
            aliases = next((al for al in _output_aliases(f) if al[0] == name), ())
            lines.extend(f"const at::Tensor& {alias} = {name};" for alias in aliases[1:])
    for a in f.func.arguments.flat_all:
        if not _is_tensor(a) and _used(d, a.name):
            ctype = dispatcher_api.argument_type(a, style=style, owning=True).remove_const_ref()
            owning = ctype.cpp_type()
            lines.append(f'auto {a.name} = ctx->saved_data["{a.name}"].to<{owning}>();')
    return lines


def _not_implemented(d: DerivativesEntry[NativeFunction]) -> list[tuple[str, str]]:
    """The tensor inputs without a formula, each with the error for needing its gradient."""
    f = d.function
    return [
        (a.name, f"{f.namespace}::{f.func.name}: the derivative for '{a.name}' is not implemented")
        for a in f.func.arguments.flat_all
        if _is_tensor(a) and d.formula_of(a.name) is None
    ]


def _evaluate(formula: Formula, position: dict[str, int]) -> _Lines:
    inputs = formula.inputs
    if len(inputs) == 1:
        (name,) = inputs
        target = f"grad_inputs[{position[name]}] ="
        return [f"if (needs_{name}) {{", *_indent(_formula_lines(formula, target), 2), "}"]
    needs = " || ".join(f"needs_{n}" for n in inputs)
    mask = ", ".join(f"needs_{n}" for n in inputs)
    lines: _Lines = [
        f"if ({needs}) {{",
        f"  const std::array<bool, {len(inputs)}> grad_input_mask = {{{mask}}};",
        *_indent(_formula_lines(formula, "auto grad_result ="), 2),
    ]
    for i, name in enumerate(inputs):
        lines.append(
            f"  if (needs_{name}) grad_inputs[{position[name]}] = std::get<{i}>(grad_result);"
        )
    lines.append("}")
    return lines


def _formula_lines(formula: Formula, target: str) -> _Lines:
    """`target <formula>;` with the formula behind a `#line` to its place in derivatives.yaml.

    A one-line formula written as is (a plain scalar on its key's line) starts at its
    column; a block scalar (`|`) starts on the line after its indicator, where the
    location points.
    """
    text = formula.text.rstrip()
    placed = placed_lines(text, formula.location, formula.written.exact, ";")
    return [target, *(_Verbatim(line) for line in placed)]


def _indent(lines: Sequence[str | _Verbatim], spaces: int) -> _Lines:
    pad = " " * spaces
    return [line if isinstance(line, _Verbatim) or not line else pad + line for line in lines]


# -- Python ------------------------------------------------------------------


def python_autograd(d: DerivativesEntry[NativeFunction]) -> str:
    """`setup_context` and `backward` for `torch.library.register_autograd`, and the call."""
    f = d.function
    arguments = list(f.func.arguments.flat_all)
    tensors = [a.name for a in arguments if _is_tensor(a) and _used(d, a.name)]
    aliases = _output_aliases(f)
    outputs = [al for al in aliases if any(_used(d, n) for n in al)]
    others = [a.name for a in arguments if not _is_tensor(a) and _used(d, a.name)]
    suffix = _python_suffix(f)
    multi = len(f.func.returns) > 1
    setup = [f"def _setup_context_{suffix}(ctx, inputs, output):"]
    setup.append(f"    {_unpacked([a.name for a in arguments])} = inputs")
    saved = tensors + [f"output[{aliases.index(al)}]" if multi else "output" for al in outputs]
    if saved:
        setup.append(f"    ctx.save_for_backward({', '.join(saved)})")
    setup.extend(f"    ctx.{name} = {name}" for name in others)
    if not saved and not others:
        setup.append("    pass")
    backward = [f"def _backward_{suffix}(ctx, *grads):"]
    names = tensors + [al[0] for al in outputs]
    if names:
        backward.append(f"    {_unpacked(names)} = ctx.saved_tensors")
    for al in outputs:
        backward.extend(f"    {alias} = {al[0]}" for alias in al[1:])
    backward.extend(f"    {name} = ctx.{name}" for name in others)
    if _used(d, "grad"):
        backward.append("    grad = grads[0]")
    position = {a.name: i for i, a in enumerate(arguments)}
    backward.append(f"    grad_inputs = [None] * {len(arguments)}")
    for formula in d.formulas:
        backward.extend(_python_evaluate(formula, position))
    for name, message in _not_implemented(d):
        backward.append(f"    if ctx.needs_input_grad[{position[name]}]:")
        backward.append(f'        raise NotImplementedError("{message}")')
    backward.append("    return tuple(grad_inputs)")
    register = (
        f'torch.library.register_autograd("{f.namespace}::{f.func.name}", _backward_{suffix}, '
        f"setup_context=_setup_context_{suffix}, lib=_lib)"
    )
    return "\n".join(setup) + "\n\n\n" + "\n".join(backward) + "\n\n\n" + register + "\n"


def _unpacked(names: list[str]) -> str:
    """The target of unpacking a sequence into `names`: `a, b`, or `a,` for one."""
    return ", ".join(names) + ("," if len(names) == 1 else "")


def _python_suffix(f: NativeFunction) -> str:
    name = f.func.name
    return f"{name.name}_{name.overload_name}" if name.overload_name else str(name.name)


def _python_evaluate(formula: Formula, position: dict[str, int]) -> list[str]:
    inputs = formula.inputs
    needs = [f"ctx.needs_input_grad[{position[n]}]" for n in inputs]
    if len(inputs) == 1:
        return [
            f"    if {needs[0]}:",
            f"        grad_inputs[{position[inputs[0]]}] = {formula.text}",
        ]
    lines = [
        f"    grad_input_mask = ({', '.join(needs)})",
        "    if any(grad_input_mask):",
        f"        grad_result = {formula.text}",
    ]
    for i, name in enumerate(inputs):
        lines.append(f"        if grad_input_mask[{i}]:")
        lines.append(f"            grad_inputs[{position[name]}] = grad_result[{i}]")
    return lines
