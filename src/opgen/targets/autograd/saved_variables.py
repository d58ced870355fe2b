"""What a VariableType kernel stores in its backward node (`grad_fn->x_ = ...`).

The derivatives model lists what the formulas need (`SavedAttribute`: a name,
its C++ type in the node, the expression computing it). Inputs are saved when
the node is built, before the redispatch; outputs after it. How a value is
stored depends on its type: tensors as `SavedVariable` (an inplace function's
`self` is cloned first, since the call overwrites it), tensor lists with
`make_saved_variable_list`, array views and strings as owning copies.

Saving an input tensor only one backward formula uses is guarded by that
formula's `should_compute_output`, so nothing is kept for gradients that will
not be computed.

An inplace foreach kernel builds one node per list element; its statements
run in a loop over the nodes, with the reference operator's argument names in
the expressions replaced by the foreach arguments' (`other` -> `other[i]`).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence

from opgen.api.types import (
    I_TENSOR_LIST_REF,
    INT_ARRAY_REF,
    OPTIONAL_TENSOR,
    SCALAR,
    STRING_VIEW,
    SYM_INT_ARRAY_REF,
    TENSOR,
    TENSOR_LIST,
    ArrayRefCType,
    CType,
    ListCType,
    MutRefCType,
    OptionalCType,
    SpecialArgName,
    VectorCType,
)
from opgen.autograd.model import SavedAttribute
from opgen.autograd.views import is_tensor_list_type
from opgen.releases import STORAGE_SAVED_RESERVED
from opgen.spec.types import ListType
from opgen.targets.autograd.autograd_kernel import VariableTypeKernel
from opgen.template import Template

Guard = Callable[[SavedAttribute], "str | None"]

_SAVED_AS_VARIABLE: tuple[CType, ...] = (
    TENSOR,
    OPTIONAL_TENSOR,
    MutRefCType(OPTIONAL_TENSOR),
)
_SAVED_AS_VARIABLE_LIST: tuple[CType, ...] = (
    TENSOR_LIST,
    ListCType(OPTIONAL_TENSOR),
    I_TENSOR_LIST_REF,
    VectorCType(TENSOR),
)
# Non-owning views copied into vectors.
_SAVED_AS_VECTOR: tuple[CType, ...] = (INT_ARRAY_REF, SYM_INT_ARRAY_REF, ArrayRefCType(SCALAR))
_OPTIONAL_STRING_VIEW = OptionalCType(STRING_VIEW)
_GRAD_INPUT_MASK = re.compile(r"grad_input_mask\[(\d+)\]")

# The statements of an inplace foreach kernel, per element that has a node.
_LOOP_OVER_GRAD_FNS = Template(
    "if (!grad_fns.empty()) {\n"
    "    ${preamble}\n"
    "    for (const auto& i : c10::irange(grad_fns.size())) {\n"
    "        ${grad_fn} = grad_fns[i];\n"
    "        if (grad_fn != nullptr) {\n"
    "            ${statements}\n"
    "        }\n"
    "    }\n"
    "}\n"
)


def loop_over_grad_fns(
    kernel: VariableTypeKernel, statements: str | list[str], preamble: str = ""
) -> str:
    """`statements` for each node of an inplace foreach kernel."""
    reference = kernel.release.has(STORAGE_SAVED_RESERVED)
    grad_fn = "const auto& grad_fn" if reference else "auto grad_fn"
    return _LOOP_OVER_GRAD_FNS.substitute(preamble=preamble, statements=statements, grad_fn=grad_fn)


def _attribute_name(saved: SavedAttribute) -> str:
    name = saved.nctype.name
    return name.name if isinstance(name, SpecialArgName) else name


def _stored(
    kernel: VariableTypeKernel, saved: SavedAttribute, is_output: bool
) -> tuple[str, str, str]:
    """(member of the node, the expression stored, a statement to run first or "")."""
    name = _attribute_name(saved)
    ctype, expr, first = saved.nctype.type, saved.expr, ""
    # An inplace foreach kernel's expressions name the reference's arguments.
    foreach_name: tuple[str, str] | None = None  # (reference name, foreach expression)
    foreach_is_list = False
    if kernel.is_inplace_foreach and kernel.info is not None:
        reference_name = name.split("_scalar_type")[0]
        foreach_arg = kernel.foreach_arg_of.get(reference_name)
        if foreach_arg is not None:
            foreach_is_list = isinstance(foreach_arg.type, ListType)
            foreach_name = (reference_name, foreach_arg.name + ("[i]" if foreach_is_list else ""))
            expr = expr.replace(*foreach_name)
    if ctype in _SAVED_AS_VARIABLE or (is_output and ctype == SCALAR):
        var = name
        if var == "self" and kernel.inplace:
            assert not is_output, "an inplace function saves its output as `result`"
            original, self_var = (
                ("original_selfs[i]", "self[i]")
                if kernel.is_inplace_foreach
                else ("original_self", "self")
            )
            first = f"if (!{original}.has_value()) {original} = {self_var}.clone()"
            var = f"{original}.value()"
        if kernel.inplace and is_output:
            assert name == "result", f"an inplace function's saved output is {name}"
            var = "self[i]" if kernel.is_inplace_foreach or foreach_is_list else "self"
            expr = f"SavedVariable({var}, true, {var}.is_view())"
        else:
            expr = f"SavedVariable({var}, {str(is_output).lower()})"
            if foreach_name is not None and "original_selfs" not in expr:
                expr = expr.replace(*foreach_name)
        return name + "_", expr, first
    if ctype in _SAVED_AS_VARIABLE_LIST:
        # Only out-of-place foreach functions return a vector of tensors.
        is_foreach_output = kernel.is_foreach and is_output
        assert ctype != VectorCType(TENSOR) or is_foreach_output, f"{name} is saved as a vector"
        return name + "_", f"make_saved_variable_list({name}, {str(is_foreach_output).lower()})", ""
    if ctype in _SAVED_AS_VECTOR:
        expr += ".vec()"
    elif ctype == STRING_VIEW:
        expr = f"std::string({expr})"
    elif ctype == _OPTIONAL_STRING_VIEW:
        expr = (
            f"{expr}.has_value() ? ::std::optional<std::string>(std::string({expr}.value()))"
            " : ::std::nullopt"
        )
    return name, expr, first


def save_variables(
    kernel: VariableTypeKernel,
    saved: Sequence[SavedAttribute],
    is_output: bool,
    guard_for: Guard = lambda _: None,
) -> list[str]:
    """The statements storing `saved` in the node, sorted by name."""
    statements: list[str] = []
    for attribute in sorted(saved, key=lambda sa: str(sa.nctype.name)):
        member, expr, first = _stored(kernel, attribute, is_output)
        guard = guard_for(attribute)
        if guard is None:
            if first:
                statements.append(f"{first};")
            statements.append(f"grad_fn->{member} = {expr};")
        else:
            statements.append(f"if ({guard}) {{")
            if first:
                statements.append(f"  {first};")
            statements.append(f"  grad_fn->{member} = {expr};")
            statements.append("}")
    return statements


def _input_guard(kernel: VariableTypeKernel) -> Guard:
    """When a saved input is needed: the `should_compute_output` of the one formula using it."""
    info = kernel.info
    assert info is not None
    args = kernel.args_with_derivatives
    has_tensor_list = any(is_tensor_list_type(arg.type) for arg in args)

    def guard(saved: SavedAttribute) -> str | None:
        # Edges are hard to number with tensor lists among them (inplace foreach
        # functions' lists get no formula); guards on backward functions were found
        # useless; one input's requires_grad check is guard enough; and only tensors
        # are worth trimming.
        if (has_tensor_list and not kernel.is_inplace_foreach) or "backward" in info.name:
            return None
        if len(args) <= 1 or saved.nctype.type != TENSOR:
            return None
        used_in = [d for d in info.derivatives if saved in d.saved_inputs]
        assert used_in, f"{saved.nctype.name} is saved but no formula uses it"
        if len(used_in) != 1:
            return None
        derivative = used_in[0]
        if len(derivative.var_names) != 1:
            return _wrap_opt_if_condition(derivative.formula, str(saved.nctype.name))
        edge = next(i for i, a in enumerate(args) if a.name == derivative.var_names[0])
        return f"grad_fn->should_compute_output({edge})"

    return guard


def _wrap_opt_if_condition(formula: str, name: str) -> str | None:
    """A formula for several inputs guards a value it wraps in `wrap_opt_if(name, cond)`
    by `cond`, with `grad_input_mask[n]` read from the node; else it is not guarded."""
    start = formula.find(f"wrap_opt_if({name}")
    if start == -1:
        return None
    match = re.match(rf"wrap_opt_if\({name},(.*?)\)", formula[start:])
    assert match is not None, f"wrap_opt_if({name} without a condition in {formula}"
    # Upstream drops the first character after the comma (written as a space).
    condition = match.group(1)[1:].strip()
    return _GRAD_INPUT_MASK.sub(r"grad_fn->should_compute_output(\1)", condition)


def emit_save_inputs(kernel: VariableTypeKernel) -> list[str]:
    """Saving the inputs the formulas use, and the sizes of tensor-list inputs."""
    info = kernel.info
    if info is None or not info.has_derivatives:
        return []
    statements = save_variables(kernel, info.all_saved_inputs, False, _input_guard(kernel))
    if kernel.is_inplace_foreach:
        if not statements:
            return []
        return [loop_over_grad_fns(kernel, statements)]
    for arg in kernel.args_with_derivatives:
        if is_tensor_list_type(arg.type):
            statements.append(f"grad_fn->{arg.name}_size_ = {arg.name}.size();")
    return statements


def emit_save_outputs(kernel: VariableTypeKernel) -> str:
    """Saving the outputs the formulas use, once the node exists (out= functions save none)."""
    info = kernel.info
    if kernel.is_out_fn or info is None or not info.has_derivatives:
        return ""
    statements = save_variables(kernel, info.all_saved_outputs, True)
    if not statements:
        return ""
    if kernel.is_inplace_foreach:
        return loop_over_grad_fns(kernel, statements)
    return _IF_GRAD_FN.substitute(statements=statements)


_IF_GRAD_FN = Template("if (grad_fn) {\n  ${statements}\n}\n")
