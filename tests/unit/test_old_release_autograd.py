"""What torch 2.10 to 2.12 generate differently from 2.13: autograd, Python bindings, lazy IR.

Each test renders one small piece for an older release and for 2.13 and checks
the exact text of both: how VariableType holds and creates backward nodes
(`INTRUSIVE_NODES`), how a node unpacks its saved outputs, how many shards
VariableType and TraceType have, which operators handle complex gradients,
how a method without arguments asks for `__torch_function__`, which Tensor
queries get generated bindings, and how a lazy node's `ToString` returns.
"""

from __future__ import annotations

from collections.abc import Callable

import pytest
from tests.unit.autograd_infos import FOO_OUT, derivative, differentiability_info, saved

from opgen.api.signatures import SignatureSet
from opgen.api.types import TENSOR, VectorCType
from opgen.autograd.backward_nodes import backward_node
from opgen.autograd.model import (
    DEFAULT_KEY,
    DifferentiabilityInfo,
    NativeFunctionWithDifferentiabilityInfo,
)
from opgen.python_bindings.bound import is_py_variable_method, should_generate_py_binding
from opgen.python_bindings.overloads import group_by_name, load_signatures
from opgen.releases import Release
from opgen.spec import Spec
from opgen.spec.native import NativeFunction
from opgen.spec.schema import FunctionSchema
from opgen.targets.autograd.autograd_kernel import VariableTypeKernel
from opgen.targets.autograd.functions import node_definition
from opgen.targets.autograd.kernel_lists import gradient_implemented_for_complex
from opgen.targets.autograd.variable_type_body import emit_body
from opgen.targets.autograd.wrappers import autograd_shards
from opgen.targets.lazy.nodes import non_native_node
from opgen.targets.lazy.options import LazyOptions, NodeStyle
from opgen.targets.python.method_impl import method_impl

FunctionOf = Callable[[str], NativeFunction]
SpecOf = Callable[[str], Spec]

R2_10, R2_11, R2_12, R2_13 = Release(2, 10), Release(2, 11), Release(2, 12), Release(2, 13)


def info_of(
    f: NativeFunction, inputs: tuple[str, ...], formula: str, op: str, saved_outputs: int = 0
) -> DifferentiabilityInfo:
    """An entry with one formula for `inputs`, saving `result` (a tensor, or a foreach
    function's tensors) when `saved_outputs`."""
    result = VectorCType(TENSOR) if f.func.name.name.base.startswith("_foreach") else TENSOR
    outputs = [saved("result", result)] if saved_outputs else []
    return differentiability_info(f, [derivative(inputs, formula, (), outputs)], op=op)


def body(f: NativeFunction, info: DifferentiabilityInfo | None, release: Release) -> list[str]:
    fn = NativeFunctionWithDifferentiabilityInfo(
        f, None if info is None else {DEFAULT_KEY: info}, None
    )
    kernel = VariableTypeKernel.of(fn, DEFAULT_KEY, release)
    return emit_body(kernel, SignatureSet().of(f).dispatcher.bindings)


EXP = """\
- func: exp(Tensor self) -> Tensor
  dispatch:
    CPU: exp
"""


@pytest.mark.parametrize(
    ("release", "declaration", "creation"),
    [
        (
            R2_12,
            "std::shared_ptr<ExpBackward0> grad_fn;\n",
            "  grad_fn = std::shared_ptr<ExpBackward0>(new ExpBackward0(), deleteNode);\n",
        ),
        (
            R2_13,
            "c10::intrusive_ptr<ExpBackward0> grad_fn;\n",
            "  grad_fn = c10::make_intrusive<ExpBackward0>();\n",
        ),
    ],
)
def test_a_kernel_holds_its_node_in_a_shared_ptr_before_2_13(
    function_of: FunctionOf, release: Release, declaration: str, creation: str
) -> None:
    f = function_of(EXP)
    lines = body(f, info_of(f, ("self",), "grad * result.conj()", "ExpBackward0", 1), release)
    assert lines[2:4] == [
        declaration,
        "if (_any_requires_grad) {\n"
        f"{creation}"
        "  grad_fn->set_next_edges(collect_next_edges( self ));\n"
        "}\n",
    ]


@pytest.mark.parametrize(
    ("release", "declaration"),
    [(R2_12, "std::shared_ptr<Node> grad_fn;\n"), (R2_13, "c10::intrusive_ptr<Node> grad_fn;\n")],
)
def test_an_out_kernel_declares_its_node_alike(
    function_of: FunctionOf, release: Release, declaration: str
) -> None:
    f = function_of(FOO_OUT)
    assert body(f, None, release)[3] == declaration


FOREACH_MAXIMUM = """\
- func: _foreach_maximum_.Scalar(Tensor(a!)[] self, Scalar scalar) -> ()
  device_check: NoCheck
  variants: function
  dispatch:
    CPU: foo
"""


def test_an_inplace_foreach_kernel_builds_shared_nodes_before_2_13(
    function_of: FunctionOf,
) -> None:
    f = function_of(FOREACH_MAXIMUM)
    old, new = body(f, None, R2_12), body(f, None, R2_13)
    assert old[3] == "std::vector<std::shared_ptr<NotImplemented>> grad_fns;\n"
    assert new[3] == "std::vector<c10::intrusive_ptr<NotImplemented>> grad_fns;\n"
    loop = (
        "if (_any_requires_grad) {\n"
        "  for (const auto& i : c10::irange( self.size() )) {\n"
        "    const auto ith_requires_grad = compute_requires_grad(self[i]);\n"
        "    check_inplace(self[i], ith_requires_grad);\n"
        "    grad_fns.push_back([&]() -> {pointer} {\n"
        "        if (!ith_requires_grad) {\n"
        "            return nullptr;\n"
        "        } else {\n"
        "            auto grad_fn = {creation};\n"
        "            grad_fn->set_next_edges(collect_next_edges( self[i] ));\n"
        "            return grad_fn;\n"
        "        }\n"
        "    }());\n"
        "  }\n"
        "}\n"
    )
    assert old[4] == loop.replace("{pointer}", "std::shared_ptr<NotImplemented>").replace(
        "{creation}",
        'std::shared_ptr<NotImplemented>(new NotImplemented("_foreach_maximum_"), deleteNode)',
    )
    assert new[4] == loop.replace("{pointer}", "c10::intrusive_ptr<NotImplemented>").replace(
        "{creation}", 'c10::make_intrusive<NotImplemented>("_foreach_maximum_")'
    )


@pytest.mark.parametrize(("release", "node"), [(R2_12, "shared_from_this()"), (R2_13, "getptr()")])
def test_a_node_unpacks_its_saved_outputs_with_itself(
    function_of: FunctionOf, release: Release, node: str
) -> None:
    exp = function_of(EXP)
    info = info_of(exp, ("self",), "grad * result.conj()", "ExpBackward0", 1)
    assert f"  auto result = result_.unpack({node});\n" in node_definition(
        backward_node(info, release)
    )
    foreach = function_of(
        "- func: _foreach_exp(Tensor[] self) -> Tensor[]\n  device_check: NoCheck\n"
    )
    info = info_of(foreach, ("self",), "grads[i] * result[i]", "ForeachExpBackward0", 1)
    (saved,) = backward_node(info, release).saved
    assert saved.unpack == f"auto result = unpack_list(result_, {node});"


def test_variable_type_and_trace_type_have_five_shards_before_2_13() -> None:
    assert [autograd_shards(r) for r in (R2_10, R2_11, R2_12, R2_13)] == [5, 5, 5, 10]


def test_complex_gradients_of_ldexp_from_2_11_and_linear_narrow_copy_from_2_12() -> None:
    names = ("ldexp", "linear", "narrow_copy")
    assert [
        [name in gradient_implemented_for_complex(r) for name in names]
        for r in (R2_10, R2_11, R2_12, R2_13)
    ] == [[False, False, False], [True, False, False], [True, True, True], [True, True, True]]


def test_a_kernel_rejects_complex_outputs_of_linear_before_2_12(function_of: FunctionOf) -> None:
    f = function_of(
        "- func: linear(Tensor input, Tensor weight, Tensor? bias=None) -> Tensor\n"
        "  dispatch:\n"
        "    CPU: linear\n"
    )
    info = info_of(f, ("input",), "grad.mm(weight)", "LinearBackward0")
    check = 'throw_error_for_complex_autograd(result, "linear");'
    assert check in body(f, info, R2_11)
    assert check not in body(f, info, R2_12)


ABS = """\
- func: abs(Tensor self) -> Tensor
  variants: function, method
"""


@pytest.mark.parametrize(
    ("release", "condition"),
    [(R2_12, "if(check_has_torch_function(self_)) {"), (R2_13, "if (has_torch_function(self_)) {")],
)
def test_a_method_without_arguments_checks_for_torch_function(
    spec_of: SpecOf, release: Release, condition: str
) -> None:
    signatures = SignatureSet()
    pairs = load_signatures(spec_of(ABS).functions, (), signatures, method=True)
    ((name, overloads),) = group_by_name(pairs, is_py_variable_method).items()
    assert method_impl(name, None, overloads, signatures, method=True, release=release) == (
        "// abs\n"
        "static PyObject * THPVariable_abs(PyObject* self_, PyObject* args)\n"
        "{\n"
        "  HANDLE_TH_ERRORS\n"
        "  const Tensor& self = THPVariable_Unpack(self_);\n"
        f"  {condition}\n"
        '    return handle_torch_function(self_, "abs");\n'
        "  }\n"
        "  // aten::abs(Tensor self) -> Tensor\n"
        "\n"
        "  auto dispatch_abs = [](const at::Tensor & self) -> at::Tensor {\n"
        "    pybind11::gil_scoped_release no_gil;\n"
        "    return self.abs();\n"
        "  };\n"
        "  return wrap(dispatch_abs(self));\n"
        "  END_HANDLE_TH_ERRORS\n"
        "}\n"
        "\n"
    )


def test_tensor_queries_have_generated_bindings_before_2_12(spec_of: SpecOf) -> None:
    spec = spec_of(
        """\
        - func: dim(Tensor self) -> int
          variants: method
          manual_cpp_binding: True

        - func: numel(Tensor self) -> int
          variants: function, method
          manual_cpp_binding: True

        - func: size.int(Tensor self, int dim) -> int
          variants: function, method
          manual_cpp_binding: True
        """
    )
    bound = {
        str(r): [str(f.func.name) for f in spec.functions if should_generate_py_binding(f, r)]
        for r in (R2_11, R2_12)
    }
    assert bound == {"2.11": ["dim", "numel"], "2.12": []}


@pytest.mark.parametrize(
    ("release", "returned"), [(R2_12, "ss.str()"), (R2_13, "std::move(ss).str()")]
)
def test_a_lazy_node_returns_its_stream_text(release: Release, returned: str) -> None:
    schema = FunctionSchema.parse("foo(Tensor self, int dim) -> Tensor")
    node = non_native_node(schema, [], None, NodeStyle.of(LazyOptions(), release))
    assert (
        "  std::string ToString() const override {\n"
        "    std::stringstream ss;\n"
        "    ss << Node::ToString();\n"
        '    ss << ", dim=" << dim;\n'
        f"    return {returned};\n"
        "  }\n"
    ) in node
