"""The body of a VariableType kernel: the statements, in the order the kernel runs them.

1. unpack the tensor arguments (`auto& self_ = unpack(self, "self", 0);`);
2. if a derivative is required: whether any input requires grad or has a
   tangent, inplace checks, the backward node (`grad_fn`) with its edges and
   saved inputs;
3. the redispatch below autograd (`at::redispatch::...`), with debug checks,
   binding the results to the return names;
4. history on the outputs (`set_history`, or `rebase_history` for functions
   writing their inputs), complex-output checks, forward AD, saved outputs;
5. return.

Inplace foreach functions build one node per list element (`grad_fns`).
"""

from __future__ import annotations

from collections.abc import Sequence

from opgen.api import cpp
from opgen.api.types import Binding
from opgen.autograd.views import modifies_arguments
from opgen.releases import INTRUSIVE_NODES, NODE_CREATION_HOOKS, Release
from opgen.spec.types import ListType
from opgen.targets.autograd.autograd_kernel import VariableTypeKernel
from opgen.targets.autograd.debug_checks import with_debug_checks
from opgen.targets.autograd.forward_ad import (
    any_has_forward_grad_name,
    any_input_has_tangent,
    emit_any_has_forward_grad,
    emit_forbid_fw_derivatives,
    emit_fw_derivatives,
)
from opgen.targets.autograd.kernel_lists import (
    RESET_GRAD_ACCUMULATOR,
    gradient_implemented_for_complex,
)
from opgen.targets.autograd.saved_variables import (
    emit_save_inputs,
    emit_save_outputs,
    loop_over_grad_fns,
)
from opgen.targets.autograd.wrappers import (
    TMP_VAR,
    assign_return_value,
    get_return_value,
    tie_return_values,
    unpack_args,
)
from opgen.template import Template

# The C++ types of outputs the complex check covers (of the differentiable outputs,
# only `at::Tensor` ones in practice: returned lists are `::std::vector`s).
_TENSOR_LIST_LIKE = frozenset(
    {
        "at::TensorList",
        "const c10::List<::std::optional<at::Tensor>> &",
        "const at::ITensorListRef &",
    }
)

_IF_ANY_REQUIRES_GRAD = Template("if (_any_requires_grad) {\n  ${setup}\n}\n")


def emit_body(kernel: VariableTypeKernel, bindings: Sequence[Binding]) -> list[str]:
    """The kernel's statements, each may span lines; `bindings` are the wrapper's
    (`wrappers.unpack_args`)."""
    f = kernel.f
    requires = kernel.requires_derivative
    unpack, unpacked = unpack_args(bindings)
    body = list(unpack)
    if requires:
        body.append(_any_requires_grad(kernel))
        body += emit_any_has_forward_grad(kernel)
        if kernel.inplace:
            body += [
                f"check_inplace({o.name}, _any_requires_grad);"
                for o in kernel.differentiable_outputs
            ]
        body += _original_self(kernel)
        body += _setup_derivative(kernel)
    body.append(_call(kernel, unpacked))
    if requires:
        body.append(_history(kernel))
        body += _complex_checks(kernel)
    if kernel.is_out_fn:
        body.append(emit_forbid_fw_derivatives(kernel, is_out_fn=True))
    elif requires and not kernel.try_jit_decomposition:
        if kernel.fw_derivatives:
            body += emit_fw_derivatives(kernel)
        else:
            body.append(emit_forbid_fw_derivatives(kernel))
    if requires:
        # After forward AD, which may still read the outputs' old state.
        body.append(emit_save_outputs(kernel))
        if kernel.release.has(NODE_CREATION_HOOKS):  # once the node is complete
            body.append(_fire_creation_hooks(kernel))
    if str(f.func.name.name) in RESET_GRAD_ACCUMULATOR:
        assert kernel.inplace, "only inplace functions reset self's gradient accumulator"
        body.append("reset_grad_accumulator(self);")
    if f.func.returns:
        body.append(f"return {get_return_value(f)};")
    return body


def _names_of_args_with_derivatives(kernel: VariableTypeKernel) -> list[str]:
    """The inputs with formulas; an inplace foreach function's under their own names."""
    names = [arg.name for arg in kernel.args_with_derivatives]
    if kernel.is_inplace_foreach and kernel.info is not None:
        own = {ref.name: arg.name for arg, ref in kernel.foreach_pairs}
        names = [own.get(name, name) for name in names]
    return names


def _any_requires_grad(kernel: VariableTypeKernel) -> str:
    info = kernel.info
    extra = ""
    if info is not None and info.output_differentiability_conditions:
        conditions = info.output_differentiability_conditions
        assert len(conditions) == 1, "one output_differentiability condition"
        extra = f"_any_requires_grad &= ({conditions[0]});"
    args = ", ".join(_names_of_args_with_derivatives(kernel))
    return f"[[maybe_unused]] auto _any_requires_grad = compute_requires_grad( {args} );\n{extra}\n"


def _original_self(kernel: VariableTypeKernel) -> list[str]:
    """An inplace function's copy of self before the call, for formulas that read it."""
    if not kernel.inplace:
        return []
    foreach = kernel.is_inplace_foreach
    lines = [
        "std::vector<::std::optional<at::Tensor>> original_selfs(self.size());"
        if foreach
        else "::std::optional<at::Tensor> original_self;"
    ]
    conditions = [
        any_has_forward_grad_name(d.var_names)
        for d in kernel.fw_derivatives
        if d.required_original_self_value
    ]
    if not conditions:
        return lines
    if not foreach:
        return [
            *lines,
            f"if ({' || '.join(conditions)}) {{",
            "  original_self = self.clone();",
            "}",
        ]
    return [
        *lines,
        "for (const auto& i : c10::irange(self.size())) {",
        f"  if ({' || '.join(c + '[i]' for c in conditions)}) {{",
        "    original_selfs[i] = self[i].clone();",
        "  }",
        "}",
    ]


def _requires_no_grad(args: list[str], base_name: str) -> str:
    return (
        f"if (compute_requires_grad( {', '.join(args)} )) {{\n"
        f'  throw_error_out_requires_grad("{base_name}");\n'
        "}\n"
    )


def _setup_derivative(kernel: VariableTypeKernel) -> list[str]:
    """Declaring the backward node, and building it when an input requires grad."""
    if kernel.is_out_fn:
        # out= functions are not differentiable: nothing may require grad.
        return [
            f"{_node_pointer('Node', kernel.release)} grad_fn;\n",
            _requires_no_grad([a.name for a in kernel.differentiable_inputs], kernel.base_name),
            _requires_no_grad([o.name for o in kernel.differentiable_outputs], kernel.base_name),
        ]
    info = kernel.info
    has_formulas = info is not None and info.has_derivatives
    # An info with formulas has a node class (DifferentiabilityInfo.op).
    op = (info.op if info is not None and has_formulas else None) or "NotImplemented"
    ctor = "" if has_formulas else f'"{kernel.name}"'
    pointer = _node_pointer(op, kernel.release)
    if kernel.is_inplace_foreach:
        declaration = f"std::vector<{pointer}> grad_fns;\n"
        setup = _build_foreach_nodes(kernel, op, ctor).split("\n")
    else:
        declaration = f"{pointer} grad_fn;\n"
        edges = ", ".join(a.name for a in kernel.args_with_derivatives)
        setup = [
            f"grad_fn = {_new_node(op, ctor, kernel.release)};",
            f"grad_fn->set_next_edges(collect_next_edges( {edges} ));",
            "",
        ]
    setup += emit_save_inputs(kernel)
    return [
        *_check_no_requires_grad(kernel),
        declaration,
        _IF_ANY_REQUIRES_GRAD.substitute(setup=setup),
    ]


def _node_pointer(op: str, release: Release) -> str:
    """The pointer type a kernel holds its node by (before 2.13, nodes were shared)."""
    if release.has(INTRUSIVE_NODES):
        return f"c10::intrusive_ptr<{op}>"
    return f"std::shared_ptr<{op}>"


def _new_node(op: str, ctor: str, release: Release) -> str:
    """A new node of class `op`, held as `_node_pointer` says."""
    if release.has(INTRUSIVE_NODES):
        return f"c10::make_intrusive<{op}>({ctor})"
    # A shared node is deleted by deleteNode, which unlinks long chains of nodes
    # iteratively rather than by recursion.
    return f"std::shared_ptr<{op}>(new {op}({ctor}), deleteNode)"


def _build_foreach_nodes(kernel: VariableTypeKernel, op: str, ctor: str) -> str:
    """One node per element of self, built only where the element's inputs require grad."""
    if kernel.info is not None:
        elements = {
            ref.name: arg.name + ("[i]" if isinstance(arg.type, ListType) else "")
            for arg, ref in kernel.foreach_pairs
        }
    else:
        elements = {"self": "self[i]"}
    args = ", ".join(elements.get(a.name, a.name) for a in kernel.args_with_derivatives)
    return (
        "for (const auto& i : c10::irange( self.size() )) {\n"
        f"  const auto ith_requires_grad = compute_requires_grad({args});\n"
        "  check_inplace(self[i], ith_requires_grad);\n"
        f"  grad_fns.push_back([&]() -> {_node_pointer(op, kernel.release)} {{\n"
        "      if (!ith_requires_grad) {\n"
        "          return nullptr;\n"
        "      } else {\n"
        f"          auto grad_fn = {_new_node(op, ctor, kernel.release)};\n"
        f"          grad_fn->set_next_edges(collect_next_edges( {args} ));\n"
        "          return grad_fn;\n"
        "      }\n"
        "  }());\n"
        "}\n"
    )


def _check_no_requires_grad(kernel: VariableTypeKernel) -> list[str]:
    """Differentiable inputs without a formula must not require grad."""
    info = kernel.info
    checks = []
    for arg in kernel.differentiable_inputs:
        if arg in kernel.args_with_derivatives:
            continue
        if info is not None and arg.name in info.non_differentiable_arg_names:
            continue
        # Double-backward formulas take `input` and `output` but differentiate only input.
        if arg.name == "output":
            continue
        checks.append(f'check_no_requires_grad({arg.name}, "{arg.name}", "{kernel.name}");')
    return checks


def _redispatch(kernel: VariableTypeKernel, unpacked: list[Binding]) -> str:
    func = kernel.f.func
    api_name = cpp.name(
        func, faithful_name_for_out_overloads=True, symint_overload=func.has_symint()
    )
    args = ", ".join(["ks & c10::after_autograd_keyset", *(b.name for b in unpacked)])
    return f"at::redispatch::{api_name}({args})"


def _jvp_decomposition_call(kernel: VariableTypeKernel, guard: str, call: str) -> str:
    """The call, or with a tangent on any input, the operator's decomposition run for jvp."""
    func = kernel.f.func
    return_types = ", ".join(
        cpp.return_type(r, style=kernel.style).cpp_type() for r in func.returns
    )
    if len(func.returns) > 1:
        return_types = f"std::tuple<{return_types}>"
    arg_names = ", ".join(a.name for a in func.arguments.flat_all)
    op_name = kernel.name
    return (
        f"auto {TMP_VAR} = ([&]() {{\n"
        f"  if ({any_input_has_tangent(kernel)}) {{\n"
        f'    static c10::OperatorName full_name("aten::{op_name}", '
        f'"{func.name.overload_name}");\n'
        "    static ::std::optional<c10::OperatorHandle> opt_op = "
        "c10::Dispatcher::singleton().findSchema(full_name);\n"
        f"    return impl::run_jit_decomposition_with_args_for_jvp<{return_types}>"
        f'("{op_name}", *opt_op, ks, {arg_names});\n'
        "  } else {\n"
        f"    {guard}\n"
        f"    return {call};\n"
        "  }\n"
        "})();\n"
    )


def _call(kernel: VariableTypeKernel, unpacked: list[Binding]) -> str:
    """The redispatch below autograd, binding its results, with debug checks around it."""
    f = kernel.f
    call = _redispatch(kernel, unpacked)
    # Views and functions writing their inputs skip ADInplaceOrView too: it would
    # record the view or bump the version a second time.
    if kernel.view_info is not None or modifies_arguments(f):
        guard = "at::AutoDispatchBelowAutograd guard;"
    else:
        guard = "at::AutoDispatchBelowADInplaceOrView guard;"
    if modifies_arguments(f) or not f.func.returns:
        assert not kernel.try_jit_decomposition
        text = f"{{\n  {guard}\n  {call};\n}}\n"
    else:
        if kernel.try_jit_decomposition:
            text = _jvp_decomposition_call(kernel, guard, call)
        else:
            text = f"auto {TMP_VAR} = ([&]() {{\n  {guard}\n  return {call};\n}})();\n"
        returns_tensor = any(r.type.is_tensor_like() for r in f.func.returns)
        value = f"std::move({TMP_VAR})" if returns_tensor else TMP_VAR
        text += assign_return_value(tie_return_values(f), value)
    return with_debug_checks(kernel, text, unpacked)


def _rebases(kernel: VariableTypeKernel) -> bool:
    """Whether the kernel rebases its outputs' history (inplace, not a view) or sets it."""
    return modifies_arguments(kernel.f) and kernel.view_info is None


def _history(kernel: VariableTypeKernel) -> str:
    """Attaching the node to the differentiable outputs; with node-creation hooks, an
    inplace kernel keeps the node `rebase_history` attached (a view's CopySlices)."""
    rebase = _rebases(kernel)
    fn = "rebase" if rebase else "set"
    keep = rebase and kernel.release.has(NODE_CREATION_HOOKS)
    if not kernel.is_inplace_foreach:
        outputs = ", ".join(o.name for o in kernel.differentiable_outputs)
        call = f"{fn}_history(flatten_tensor_args( {outputs} ), grad_fn);"
        if keep:
            return (
                "c10::intrusive_ptr<Node> _rebased_fn;\n"
                f"if (grad_fn) {{\n    _rebased_fn = {call}\n}}\n"
            )
        return f"if (grad_fn) {{\n    {call}\n}}\n"
    loop = loop_over_grad_fns(
        kernel,
        ("_rebased_fns[i] = " if keep else "")
        + f"{fn}_history(differentiable_outputs[i], grad_fns[i]);",
        preamble="auto differentiable_outputs = flatten_tensor_args( self );\n"
        "TORCH_INTERNAL_ASSERT(differentiable_outputs.size() == grad_fns.size());",
    )
    if keep:
        return (
            "c10::SmallVector<c10::intrusive_ptr<Node>, 8> _rebased_fns(grad_fns.size());\n" + loop
        )
    return loop


def _fire_creation_hooks(kernel: VariableTypeKernel) -> str:
    """Telling node-creation hooks about the kernel's node(s)."""
    rebase = _rebases(kernel)
    if not kernel.is_inplace_foreach:
        node = "_rebased_fn" if rebase else "grad_fn"
        return f"if ({node}) {{\n    fire_node_creation_hooks({node});\n}}\n"
    node = "_rebased_fns[i]" if rebase else "grad_fns[i]"
    return (
        "for (const auto& i : c10::irange(grad_fns.size())) {\n"
        f"    if ({node}) {{\n        fire_node_creation_hooks({node});\n    }}\n}}\n"
    )


def _complex_checks(kernel: VariableTypeKernel) -> list[str]:
    """Rejecting complex outputs where the backward is not known to handle them."""
    base_name = kernel.base_name
    if base_name in gradient_implemented_for_complex(kernel.release):
        return []
    return [
        f'throw_error_for_complex_autograd({o.name}, "{base_name}");'
        for o in kernel.differentiable_outputs
        if o.cpp_type == "at::Tensor" or o.cpp_type in _TENSOR_LIST_LIKE
    ]
