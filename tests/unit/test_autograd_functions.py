"""The backward nodes of Functions.h / Functions.cpp, from tiny hand-built derivatives.

Each test builds the differentiability info a derivatives entry would give,
directly, and checks one rule of the node it becomes: how each saved value is
held, which formulas check for defined gradients, how several inputs share a
formula, what a foreach formula loops over, and which infos get a node at all.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import pytest
from tests.unit.autograd_infos import derivative, differentiability_info, saved

from opgen.api.types import (
    INT_ARRAY_REF,
    SCALAR,
    SCALAR_TYPE,
    TENSOR,
    TENSOR_LIST,
    ArrayRefCType,
    BaseCType,
    CType,
    VectorCType,
)
from opgen.autograd.backward_nodes import (
    GetterForm,
    backward_node,
    infos_with_derivatives,
)
from opgen.autograd.model import (
    DEFAULT_KEY,
    DerivativeInfos,
    DifferentiabilityInfo,
    NativeFunctionWithDifferentiabilityInfo,
)
from opgen.diagnostics import SpecError
from opgen.spec.native import NativeFunction
from opgen.targets.autograd.functions import backward_body, node_declaration, node_definition

FunctionOf = Callable[[str], NativeFunction]
Saved = Sequence[tuple[str, CType]]

FOREACH_EXP = """\
- func: _foreach_exp(Tensor[] self) -> Tensor[]
  device_check: NoCheck
"""


def make_info(
    f: NativeFunction,
    formulas: Sequence[tuple[tuple[str, ...], str]],
    *,
    op: str | None = "FooBackward0",
    saved_inputs: Saved = (),
    saved_outputs: Saved = (),
    name: str | None = None,
) -> DifferentiabilityInfo:
    """The info of an entry with these `(inputs, formula)` pairs, saving these values."""
    inputs = [saved(n, t) for n, t in saved_inputs]
    outputs = [saved(n, t) for n, t in saved_outputs]
    derivatives = [derivative(names, formula, inputs, outputs) for names, formula in formulas]
    return differentiability_info(
        f,
        derivatives,
        op=op,
        name=name or f.func.name.name.base,
        saved_inputs=inputs,
        saved_outputs=outputs,
    )


@pytest.fixture
def mul(function_of: FunctionOf) -> NativeFunction:
    return function_of("- func: mul.Tensor(Tensor self, Tensor other) -> Tensor")


def test_declaration_holds_saved_tensors_in_saved_variables(mul: NativeFunction) -> None:
    info = make_info(
        mul,
        [(("self",), "grad * other"), (("other",), "grad * self")],
        op="MulBackward0",
        saved_inputs=[("self", TENSOR), ("other", TENSOR), ("self_scalar_type", SCALAR_TYPE)],
    )
    assert node_declaration(backward_node(info)) == (
        "#ifdef _WIN32\n"
        "struct MulBackward0 : public TraceableFunction {\n"
        "  TORCH_API MulBackward0() = default;\n"
        "#else\n"
        "struct TORCH_API MulBackward0 : public TraceableFunction {\n"
        "#endif\n"
        "  using TraceableFunction::TraceableFunction;\n"
        "  variable_list apply(variable_list&& grads) override;\n"
        '  std::string name() const override { return "MulBackward0"; }\n'
        "  void release_variables() override {\n"
        "    std::lock_guard<std::mutex> lock(mutex_);\n"
        "    other_.reset_data();\n"
        "    self_.reset_data();\n"
        "  }\n"
        "\n"
        "  void compiled_args(CompiledNodeArgs& args) const override;\n"
        "  variable_list apply_with_saved(const variable_list& inputs,"
        " SwapSavedVariables& saved) override;\n"
        "  SavedVariable other_;\n"
        "  SavedVariable self_;\n"
        "  at::ScalarType self_scalar_type;\n"
        "\n"
        "};\n"
    )


def test_node_without_released_values_takes_no_lock(mul: NativeFunction) -> None:
    info = make_info(mul, [(("self",), "grad * 2")], saved_inputs=[("dim", BaseCType("int64_t"))])
    node = backward_node(info)
    declaration = node_declaration(node)
    assert "  void release_variables() override {\n\n\n  }\n" in declaration
    assert "  int64_t dim = 0;\n" in declaration
    assert "lock_guard" not in node_definition(node)


def test_saved_inputs_then_saved_outputs_each_sorted_by_name(mul: NativeFunction) -> None:
    info = make_info(
        mul,
        [(("self",), "grad * result")],
        saved_inputs=[("self", TENSOR), ("other", TENSOR)],
        saved_outputs=[("result", TENSOR)],
    )
    node = backward_node(info)
    assert [m.name for m in node.saved] == ["other", "self", "result"]
    result = node.saved[2]
    assert result.unpack == "auto result = result_.unpack(getptr());"
    assert node.saved[0].unpack == "auto other = other_.unpack();"
    definition = node_definition(node)
    assert "    args.collect(other_, false);\n" in definition
    assert "    args.collect(result_, true);\n" in definition


def test_array_refs_are_copied_into_owning_members(mul: NativeFunction) -> None:
    info = make_info(
        mul,
        [(("self",), "grad.sum_to_size(sizes)")],
        saved_inputs=[("sizes", INT_ARRAY_REF), ("values", ArrayRefCType(SCALAR))],
    )
    sizes, values = backward_node(info).saved
    assert sizes.declarations == ("std::vector<int64_t> sizes;",)
    assert sizes.ref_type == "std::vector<int64_t>&"
    assert sizes.release == ()
    # Scalar lists have a released flag that release_variables() never sets.
    assert values.declarations == (
        "std::vector<at::Scalar> values;",
        "bool values_released_ = false;",
    )
    assert values.release == ("values.clear();",)
    assert values.getter is not None and values.getter.form is GetterForm.SCALAR_LIST


def test_saved_tensor_list_is_checked_before_use(mul: NativeFunction) -> None:
    info = make_info(
        mul, [(("self",), "f(grad, tensors)")], saved_inputs=[("tensors", TENSOR_LIST)]
    )
    (tensors,) = backward_node(info).saved
    assert tensors.declarations == (
        "std::vector<SavedVariable> tensors_;",
        "bool tensors_released_ = false;",
    )
    assert tensors.release == ("tensors_.clear();", "tensors_released_ = true;")
    assert tensors.unpack == "auto tensors = unpack_list(tensors_, nullptr);"
    assert tensors.check == "TORCH_CHECK(!tensors_released_, ERR_BACKWARD_TWICE);"


def test_only_foreach_results_are_saved_as_vectors_of_tensors(mul: NativeFunction) -> None:
    info = make_info(mul, [(("self",), "f(grad, xs)")], saved_inputs=[("xs", VectorCType(TENSOR))])
    with pytest.raises(SpecError, match="only the result of a foreach function"):
        backward_node(info)


def test_non_owning_references_cannot_be_saved(mul: NativeFunction) -> None:
    info = make_info(
        mul, [(("self",), "f(grad, s)")], saved_inputs=[("s", BaseCType("c10::string_view*"))]
    )
    with pytest.raises(SpecError, match="non-owning reference"):
        backward_node(info)


def test_single_tensor_formulas_check_once_for_a_defined_gradient(mul: NativeFunction) -> None:
    info = make_info(mul, [(("self",), "grad * other"), (("other",), 'not_implemented("mul")')])
    assert backward_body(backward_node(info)) == [
        "const auto& grad = grads[0];",
        "bool any_grad_defined = any_variable_defined(grads);",
        "if (needs_input_grad[/*self*/0]) {",
        "  auto grad_result = any_grad_defined ? (grad * other) : Tensor();",
        "  copy_range(grad_inputs, self_ix, grad_result);",
        "}",
        "if (needs_input_grad[/*other*/1]) {",
        '  auto grad_result = not_implemented("mul");',
        "  copy_range(grad_inputs, other_ix, grad_result);",
        "}",
    ]


def test_formula_for_several_inputs_gets_the_mask_it_reads(mul: NativeFunction) -> None:
    info = make_info(mul, [(("self", "other"), "mul_backward(grad, grad_input_mask)")])
    assert backward_body(backward_node(info))[1:] == [
        "if (needs_input_grad[0] || needs_input_grad[1]) {",
        "    auto grad_input_mask = std::array<bool, 2>{",
        "      needs_input_grad[0],",
        "      needs_input_grad[1],",
        "    };",
        "  auto grad_result = mul_backward(grad, grad_input_mask);",
        "    if (needs_input_grad[/*self*/0]) {",
        "      copy_range(grad_inputs, self_ix, std::get<0>(grad_result));",
        "    }",
        "    if (needs_input_grad[/*other*/1]) {",
        "      copy_range(grad_inputs, other_ix, std::get<1>(grad_result));",
        "    }",
        "}",
    ]


def test_tensor_list_input_takes_one_gradient_slot_per_tensor(function_of: FunctionOf) -> None:
    cat = function_of("- func: cat(Tensor[] tensors, int dim=0) -> Tensor")
    node = backward_node(make_info(cat, [(("tensors",), "cat_backward(grad, dim)")]))
    assert node.functional_args == (("size_t", "tensors_size_"),)
    assert "  size_t tensors_size_;\n};\n" in node_declaration(node)
    assert "  auto tensors_ix = gen.range(tensors_size_);\n" in node_definition(node)


def test_foreach_formula_runs_per_defined_gradient(function_of: FunctionOf) -> None:
    f = function_of(FOREACH_EXP)
    info = make_info(f, [(("self",), "grads[i] * result[i]")], op="ForeachExpBackward0")
    body = backward_body(backward_node(info))
    assert body[:4] == [
        "if (needs_input_grad[/*self*/0]) {  // self",
        "  std::vector<Tensor> grad_result;",
        "  grad_result.reserve(grads.size());",
        "  for (const auto & i : c10::irange(grads.size())) {",
    ]
    assert "      grad_result.emplace_back(grads[i] * result[i]);" in body


def test_view_backward_is_not_traceable(function_of: FunctionOf) -> None:
    f = function_of("- func: transpose.int(Tensor(a) self, int dim0, int dim1) -> Tensor(a)")
    node = backward_node(make_info(f, [(("self",), "grad.transpose(dim0, dim1)")]))
    assert node.superclass == "Node"


def test_retain_variables_is_a_member_and_an_argument(mul: NativeFunction) -> None:
    info = make_info(mul, [(("self",), "f(grad, retain_variables)")])
    node = backward_node(info)
    assert node.functional_args[-1] == ("bool", "retain_variables")
    assert "  bool retain_variables = true;\n" in node_declaration(node)


def test_nodes_follow_the_file_then_the_derived_foreach_infos(
    function_of: FunctionOf, mul: NativeFunction
) -> None:
    exp = function_of(FOREACH_EXP)
    entry = make_info(mul, [(("self",), "grad")], op="MulBackward0")
    no_formula = make_info(mul, [], op=None)
    derived = make_info(exp, [(("self",), "grads[i]")], op="ForeachExpBackward0")
    derivatives = DerivativeInfos(
        infos={mul.func: {DEFAULT_KEY: entry, "AutogradCUDA": no_formula}},
        used_dispatch_keys=frozenset({DEFAULT_KEY, "AutogradCUDA"}),
    )
    fns = [
        NativeFunctionWithDifferentiabilityInfo(exp, {DEFAULT_KEY: derived}, None),
        NativeFunctionWithDifferentiabilityInfo(mul, {DEFAULT_KEY: entry}, None),
    ]
    assert infos_with_derivatives(derivatives, fns) == [entry, derived]
