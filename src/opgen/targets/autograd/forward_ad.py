"""Forward-mode AD in a VariableType kernel: tangents of the outputs from the inputs'.

For each forward formula (`ForwardDerivative`, one per group of outputs) the
kernel computes, when any input it reads has a tangent
(`_any_has_forward_grad_<outputs>`), the outputs' new tangents: it unpacks
each input's tangent (`self_t`, zeros where undefined) and primal (`self_p`),
evaluates the formula, and sets all tangents at the end (setting one could
change an input another formula still reads, pytorch/pytorch#67367).

Foreach functions do this per list element, with vectors of flags and of
tangents. An out= function, or one without forward formulas and without a
decomposition to fall back on, refuses inputs with tangents
(`TORCH_CHECK_NOT_IMPLEMENTED`).
"""

from __future__ import annotations

from opgen.api.types import OPTIONAL_TENSOR, TENSOR, OptionalCType, TupleCType, VectorCType
from opgen.autograd.model import ForwardDerivative, is_differentiable
from opgen.autograd.views import is_tensor_list_type, is_tensor_type
from opgen.diagnostics import SpecError
from opgen.spec.types import BaseType, ListType
from opgen.targets.autograd.autograd_kernel import VariableTypeKernel
from opgen.template import Template

_NEW_TANGENT = Template(
    "${definition}\n"
    "if (${condition}) {\n"
    "    ${unpacked}\n"
    "    ${target}_new_fw_grad_opt = ${formula};\n"
    "}\n"
)

_NEW_FOREACH_TANGENTS = Template(
    "${definition}\n"
    "for (const auto& i : c10::irange(${target}.size())) {\n"
    "  if (${condition}) {\n"
    "      ${unpacked}\n"
    "      ${target}[i] = ${formula};\n"
    "  }\n"
    "}\n"
)

_NOT_IMPLEMENTED_YET = (
    "because it has not been implemented yet.\\nPlease file an issue to PyTorch at "
    "https://github.com/pytorch/pytorch/issues/new?template=feature-request.yml "
    "so that we can prioritize its implementation."
)


def any_has_forward_grad_name(var_names: tuple[str, ...]) -> str:
    return f"_any_has_forward_grad_{'_'.join(var_names)}"


def _has_tangent(name: str, is_list: bool) -> str:
    return f"isFwGradDefinedTensorList({name})" if is_list else f"isFwGradDefined({name})"


def any_input_has_tangent(kernel: VariableTypeKernel) -> str:
    """Whether any differentiable argument (outputs included) has a tangent."""
    f, info = kernel.f, kernel.info
    checks = []
    for a in (*f.func.arguments.flat_non_out, *f.func.arguments.out):
        if not is_differentiable(a.name, a.type, info):
            continue
        if not (is_tensor_type(a.type) or is_tensor_list_type(a.type)):
            raise SpecError(f"{kernel.name}: unsupported input type {a.type} for forward AD", f.loc)
        checks.append(_has_tangent(a.name, is_tensor_list_type(a.type)))
    return f"({' || '.join(checks)})"


def _formula_inputs_have_tangent(kernel: VariableTypeKernel, derivative: ForwardDerivative) -> str:
    """Whether any input whose tangent the formula reads has one."""
    required = derivative.required_inputs_fw_grad
    assert required is not None, "the loader sets the tangents a formula reads"
    inputs = kernel.differentiable_inputs
    if not required:
        # A formula reading no tangent (stack) only makes sense on one tensor list.
        if not (len(inputs) == 1 and is_tensor_list_type(inputs[0].type)):
            raise SpecError(
                f"the forward formula of {kernel.name} reads no input tangent, which is "
                "only supported for a function whose one differentiable input is a tensor list",
                kernel.location,
            )
        return "true"
    checks = [
        _has_tangent(inp.name, is_tensor_list_type(inp.type))
        for inp in inputs
        if inp.name in required
    ]
    return f"({' || '.join(checks)})"


def emit_any_has_forward_grad(kernel: VariableTypeKernel) -> list[str]:
    """The flags `_any_has_forward_grad_<outputs>`, per formula (per element for foreach)."""
    if kernel.is_foreach:
        return [line for d in kernel.fw_derivatives for line in _foreach_flags(kernel, d)]
    info = kernel.info
    conditions = info.output_differentiability_conditions if info else None
    lines = []
    for derivative in kernel.fw_derivatives:
        condition = _formula_inputs_have_tangent(kernel, derivative)
        if conditions:
            assert len(conditions) == 1, "one output_differentiability condition"
            condition = f"({conditions[0]}) && {condition}"
        name = any_has_forward_grad_name(derivative.var_names)
        lines.append(f"[[maybe_unused]] auto {name} = {condition};")
    return lines


def _foreach_flags(kernel: VariableTypeKernel, derivative: ForwardDerivative) -> list[str]:
    lines = []
    conditions = []
    required = derivative.required_inputs_fw_grad
    for inp in kernel.differentiable_inputs:
        if required is None or inp.name not in required:
            continue
        name, type = inp.name, inp.type
        if kernel.inplace:
            foreach_arg = kernel.foreach_arg_of[inp.name]
            name, type = foreach_arg.name, foreach_arg.type
        if is_tensor_list_type(type):
            if name != "self":
                lines.append(_same_size_check(name))
            conditions.append(f"isFwGradDefined({name}[i])")
        else:
            conditions.append(f"isFwGradDefined({name})")
    flags = any_has_forward_grad_name(derivative.var_names)
    lines.append(f"std::vector<bool> {flags}(self.size());")
    lines.append("for (const auto& i : c10::irange(self.size())) {")
    lines.append(f"  {flags}[i] = {' || '.join(conditions)};")
    lines.append("}")
    return lines


def _same_size_check(name: str) -> str:
    return (
        "TORCH_CHECK(\n"
        f"    self.size() == {name}.size(),\n"
        '      "Tensor lists must have the same number of tensors, got ",\n'
        "    self.size(),\n"
        '      " and ",\n'
        f"    {name}.size());\n"
    )


def emit_forbid_fw_derivatives(kernel: VariableTypeKernel, *, is_out_fn: bool = False) -> str:
    """Refusing inputs with tangents."""
    msg = "because it is an out= function" if is_out_fn else _NOT_IMPLEMENTED_YET
    return (
        f"TORCH_CHECK_NOT_IMPLEMENTED(!({any_input_has_tangent(kernel)}), "
        f'"Trying to use forward AD with {kernel.name} that does not support it {msg}");\n'
    )


def _tangent_of(name: str, expr: str, zeros_fn: str) -> str:
    """`<name>_t`: the tangent of `expr`, zeros where it has none but a value."""
    return (
        f"auto {name}_t_raw = toNonOptFwGrad({expr});\n"
        f"auto {name}_tensor = toNonOptTensor({expr});\n"
        f"auto {name}_t = ({name}_t_raw.defined() || !{name}_tensor.defined())\n"
        f"  ? {name}_t_raw : at::{zeros_fn}({name}_tensor.sym_sizes(), {name}_tensor.options());\n"
    )


def _primal_of(name: str, expr: str) -> str:
    return f"auto {name}_p = toNonOptPrimal({expr});\n"


def _zeros_fn(kernel: VariableTypeKernel, input_name: str) -> str:
    # An inplace function writes its result into self's tangent: real zeros.
    if kernel.inplace and input_name == "self":
        return "zeros_symint"
    return "_efficientzerotensor_symint"


def _unpacked_inputs(kernel: VariableTypeKernel, derivative: ForwardDerivative) -> str:
    """The tangents and primals the formula reads, as `<input>_t` and `<input>_p`."""
    required = derivative.required_inputs_fw_grad or ()
    primals = derivative.required_inputs_primal or ()
    text = ""
    zeros_fn = ""
    for inp in kernel.differentiable_inputs:
        expr, type = inp.name, inp.type
        if kernel.is_inplace_foreach:
            foreach_arg = kernel.foreach_arg_of[inp.name]
            expr, type = foreach_arg.name, foreach_arg.type
        if kernel.is_foreach and is_tensor_list_type(type):
            expr += "[i]"
        zeros_fn = _zeros_fn(kernel, inp.name)
        if inp.name in required:
            text += _tangent_of(inp.name, expr, zeros_fn)
            if zeros_fn == "_efficientzerotensor_symint":
                text += f"update_wrapped_number({inp.name}_tensor, {inp.name}_t);\n"
        if inp.name in primals:
            text += _primal_of(inp.name, expr)
    if derivative.required_original_self_value:
        original = "original_selfs[i]" if kernel.is_inplace_foreach else "original_self"
        # Upstream zero-fills with the rule of the last differentiable input.
        text += _tangent_of("original_self", original, zeros_fn)
        text += _primal_of("original_self", original)
    elif kernel.inplace and derivative.is_reusing_outplace_formula:
        # The out-of-place formula may keep self_t, which the inplace op then changes.
        text += "self_t = GradMode::is_enabled() ? self_t.clone() : self_t;"
    return text


def _set_tangent(out: str, is_inplace: str) -> str:
    return (
        f"if ({out}_new_fw_grad_opt.has_value() && {out}_new_fw_grad_opt.value().defined() "
        f"&& {out}.defined()) {{\n"
        "  // The hardcoded 0 here will need to be updated once we support multiple levels.\n"
        f"  {out}._set_fw_grad({out}_new_fw_grad_opt.value(), /* level */ 0, "
        f"/* is_inplace_op */ {is_inplace});\n"
        "}\n"
    )


def _set_foreach_tangents(out: str, is_inplace: str) -> str:
    return (
        f"for (const auto& i : c10::irange({out}_new_fw_grad_opts.size())) {{\n"
        f"  auto& {out}_new_fw_grad_opt = {out}_new_fw_grad_opts[i];\n"
        f"  if ({out}_new_fw_grad_opt.has_value() && {out}_new_fw_grad_opt.value().defined() "
        f"&& {out}[i].defined()) {{\n"
        "    // The hardcoded 0 here will need to be updated once we support multiple levels.\n"
        f"    {out}[i]._set_fw_grad({out}_new_fw_grad_opt.value(), /* level */ 0, "
        f"/* is_inplace_op */ {is_inplace});\n"
        "  }\n"
        "}\n"
    )


def _set_tuple_tangent(all_outs: str, index: int, out: str) -> str:
    element = f"std::get<{index}>({all_outs}_new_fw_grad_opt.value())"
    return (
        f"if ({all_outs}_new_fw_grad_opt.has_value() && {element}.defined()\n"
        f"    && {out}.defined()) {{\n"
        f"  {out}._set_fw_grad({element}, /* level */ 0, /* is_inplace_op */ false);\n"
        "}\n"
    )


def _set_list_tangents(out: str, is_inplace: str) -> str:
    return (
        f"if ({out}_new_fw_grad_opt.has_value()) {{\n"
        f"  auto {out}_new_fw_grad = {out}_new_fw_grad_opt.value();\n"
        f"  TORCH_INTERNAL_ASSERT({out}.size() == {out}_new_fw_grad.size());\n"
        f"  for (const auto i : c10::irange({out}.size())) {{\n"
        f"    if ({out}_new_fw_grad[i].defined() && {out}[i].defined()) {{\n"
        "      // The hardcoded 0 here will need to be updated once we support multiple levels.\n"
        f"      {out}[i]._set_fw_grad({out}_new_fw_grad[i], /* level */ 0, "
        f"/* is_inplace_op */ {is_inplace});\n"
        "    }\n"
        "  }\n"
        "}\n"
    )


def _tangent_setters(
    kernel: VariableTypeKernel, derivative: ForwardDerivative, outs: tuple[str, ...]
) -> tuple[str, list[str], str]:
    """(C++ type of the new tangent, statements setting it, extra condition to compute it)."""
    is_inplace = "true" if kernel.inplace else "false"
    types = derivative.var_types
    if all(isinstance(t, BaseType) and t.is_tensor_like() for t in types):
        if len(types) > 1:
            tangent_type = OptionalCType(TupleCType((TENSOR,) * len(types))).cpp_type()
            setters = [_set_tuple_tangent("_".join(outs), i, out) for i, out in enumerate(outs)]
            return tangent_type, setters, ""
        if kernel.is_foreach:
            expected = "self" if kernel.inplace else "result"
            assert outs[0] == expected, f"a foreach function's tangent is {expected}'s"
            setter = _set_foreach_tangents(outs[0], is_inplace)
        else:
            setter = _set_tangent(outs[0], is_inplace)
        return OPTIONAL_TENSOR.cpp_type(), [setter], f" && ({derivative.var_names[0]}.defined())"
    if isinstance(types[0], ListType) and types[0].is_tensor_like():
        assert len(types) == 1, "a formula for a tensor list computes only it"
        if kernel.is_foreach:
            # Out-of-place foreach functions with formulas of their own set element by element.
            return OPTIONAL_TENSOR.cpp_type(), [_set_foreach_tangents(outs[0], is_inplace)], ""
        tangent_type = OptionalCType(VectorCType(TENSOR)).cpp_type()
        return tangent_type, [_set_list_tangents(outs[0], is_inplace)], ""
    raise SpecError(
        f"{kernel.name}: forward derivatives of outputs of type "
        f"{', '.join(map(str, types))} are not supported",
        kernel.location,
    )


def _foreach_formula(kernel: VariableTypeKernel, formula: str) -> str:
    """The reference operator's formula, per list element."""
    if kernel.inplace:
        for foreach_arg, ref_arg in kernel.foreach_pairs:
            # Only scalars and scalar lists are renamed; tensors keep the reference's names.
            if not (is_tensor_type(foreach_arg.type) or is_tensor_list_type(foreach_arg.type)):
                element = "[i]" if isinstance(foreach_arg.type, ListType) else ""
                formula = formula.replace(ref_arg.name, foreach_arg.name + element)
    elif "result" in formula and "result[i]" not in formula:
        formula = formula.replace("result", "result[i]")
    return formula


def emit_fw_derivatives(kernel: VariableTypeKernel) -> list[str]:
    """Computing each formula's new tangents, then setting them all."""
    content: list[str] = []
    setters: list[str] = []
    for derivative in kernel.fw_derivatives:
        outs = derivative.var_names
        if kernel.f.func.name.name.inplace:
            assert len(outs) == 1, "an inplace function has one output"
            outs = ("self",)
        assert derivative.required_inputs_fw_grad is not None
        unpacked = _unpacked_inputs(kernel, derivative)
        condition = any_has_forward_grad_name(derivative.var_names)
        tangent_type, own_setters, extra_condition = _tangent_setters(kernel, derivative, outs)
        setters += own_setters
        target = "_".join(outs)
        if kernel.is_foreach:
            content.append(
                _NEW_FOREACH_TANGENTS.substitute(
                    definition=f"std::vector<{tangent_type}> {target}_new_fw_grad_opts"
                    "(self.size(), ::std::nullopt);",
                    target=f"{target}_new_fw_grad_opts",
                    condition=" || ".join(
                        any_has_forward_grad_name(d.var_names) + "[i]"
                        for d in kernel.fw_derivatives
                    ),
                    unpacked=unpacked,
                    formula=_foreach_formula(kernel, derivative.formula),
                )
            )
        else:
            content.append(
                _NEW_TANGENT.substitute(
                    definition=f"{tangent_type} {target}_new_fw_grad_opt = ::std::nullopt;",
                    condition=condition + extra_condition,
                    unpacked=unpacked,
                    target=target,
                    formula=derivative.formula,
                )
            )
    content.append("\n".join(setters))
    return content
