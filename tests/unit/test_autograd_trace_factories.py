"""Tracer kernels, `torch::` factories and annotated Python arguments, one function at a time.

Each case is a spec snippet and the exact text opgen renders for it (upstream's
gen_trace_type, gen_variable_factories and gen_annotated_fn_args render the
same; the conformance tests check every function of torch's spec).
"""

from __future__ import annotations

from collections.abc import Callable

from opgen.api.signatures import SignatureSet
from opgen.python_bindings.bound import (
    is_py_nn_function,
    is_py_torch_function,
    is_py_variable_method,
    should_generate_py_binding,
)
from opgen.spec import Spec
from opgen.spec.native import NativeFunction
from opgen.targets.autograd.annotated_fn_args import annotated_args
from opgen.targets.autograd.trace_type import should_trace, trace_inputs, trace_kernel
from opgen.targets.autograd.variable_factories import (
    factory_wrappers,
    fully_qualified_type,
    is_factory_function,
)

FunctionOf = Callable[[str], NativeFunction]
SpecOf = Callable[[str], Spec]

BELOW_TRACER = "ks & c10::DispatchKeySet(c10::DispatchKeySet::FULL_AFTER, c10::DispatchKey::Tracer)"


def kernel(f: NativeFunction) -> str:
    return trace_kernel(f, SignatureSet().of(f))


def test_zero_is_recorded_as_zeros_like_with_its_options_when_forced_out_of_place(
    function_of: FunctionOf,
) -> None:
    f = function_of("- func: zero_(Tensor(a!) self) -> Tensor(a!)\n  variants: method, function")
    assert kernel(f) == (
        "at::Tensor & zero_(c10::DispatchKeySet ks, at::Tensor & self) {\n"
        "  torch::jit::Node* node = nullptr;\n"
        "  std::shared_ptr<jit::tracer::TracingState> tracer_state;\n"
        "  if (jit::tracer::isTracing()) {\n"
        "    tracer_state = jit::tracer::getTracingState();\n"
        "    at::Symbol op_name;\n"
        "\n"
        "    if (tracer_state->force_outplace) {\n"
        '      op_name = c10::Symbol::fromQualString("aten::zeros_like");\n'
        "    } else {\n"
        '      op_name = c10::Symbol::fromQualString("aten::zero_");\n'
        "    }\n"
        "    node = tracer_state->createNode(op_name, /*num_outputs=*/0);\n"
        "    jit::tracer::recordSourceLocation(node);\n"
        '    jit::tracer::addInputs(node, "self", self);\n'
        "    if (tracer_state->force_outplace) {\n"
        '          jit::tracer::addInputs(node, "options", ::std::optional<ScalarType>());\n'
        '          jit::tracer::addInputs(node, "options", layout_or_default(::std::nullopt));\n'
        '          jit::tracer::addInputs(node, "options", device_or_default(::std::nullopt));\n'
        '          jit::tracer::addInputs(node, "options", '
        "pinned_memory_or_default(::std::nullopt));\n"
        "          ::std::optional<MemoryFormat> memory_format = c10::MemoryFormat::Preserve;\n"
        '          jit::tracer::addInputs(node, "memory_format", memory_format);\n'
        "    } else {\n"
        "\n"
        "    }\n"
        "    tracer_state->insertNode(node);\n"
        '    jit::tracer::ensureUniqueIfOutOfPlaced("zero_", self);\n'
        "    jit::tracer::setTracingState(nullptr);\n"
        "  }\n"
        f"  at::_ops::zero_::redispatch({BELOW_TRACER}, self);\n"
        "  if (tracer_state) {\n"
        "    jit::tracer::setTracingState(std::move(tracer_state));\n"
        "    jit::tracer::addOutput(node, self);\n"
        "  }\n"
        "  return self;\n"
        "}\n"
    )


def test_an_out_factory_records_the_out_options_when_forced_out_of_place(
    function_of: FunctionOf,
) -> None:
    f = function_of(
        "- func: arange.start_out(Scalar start, Scalar end, Scalar step=1, *, Tensor(a!) out)"
        " -> Tensor(a!)"
    )
    assert trace_inputs(f) == (
        'jit::tracer::addInputs(node, "start", start);\n'
        'jit::tracer::addInputs(node, "end", end);\n'
        'jit::tracer::addInputs(node, "step", step);\n'
        "\n"
        "if (tracer_state->force_outplace) {\n"
        '  jit::tracer::addInputs(node, "out", '
        "c10::optTypeMetaToScalarType(out.options().dtype_opt()));\n"
        '  jit::tracer::addInputs(node, "out", out.options().layout());\n'
        '  jit::tracer::addInputs(node, "out", out.options().device());\n'
        '  jit::tracer::addInputs(node, "out", out.options().pinned_memory());\n'
        "} else {\n"
        '  jit::tracer::addInputs(node, "out", out);\n'
        "}\n"
    )
    # An out= operator is recorded under its functional name.
    assert 'fromQualString("aten::arange");' in kernel(f)
    assert 'ensureUniqueIfOutOfPlaced("arange_out", out);' in kernel(f)


def test_an_out_function_with_tensor_inputs_records_nothing_for_outs_out_of_place(
    function_of: FunctionOf,
) -> None:
    f = function_of(
        "- func: topk.values(Tensor self, SymInt k, *, Tensor(a!) values, Tensor(b!) indices)"
        " -> (Tensor(a!) values, Tensor(b!) indices)"
    )
    assert trace_inputs(f).endswith(
        "if (tracer_state->force_outplace) {\n"
        "\n"
        "} else {\n"
        '  jit::tracer::addInputs(node, "values", values);\n'
        '  jit::tracer::addInputs(node, "indices", indices);\n'
        "}\n"
    )
    assert kernel(f).endswith(
        "    jit::tracer::addOutput(node, values);\n"
        "    jit::tracer::addOutput(node, indices);\n"
        "  }\n"
        "  return std::forward_as_tuple(values, indices);\n"
        "}\n"
    )


def test_functions_without_tensor_results_and_recorded_composites_only_redispatch(
    spec_of: SpecOf,
) -> None:
    spec = spec_of(
        """\
        - func: is_nonzero(Tensor self) -> bool
        - func: conv2d(Tensor input, Tensor weight, SymInt groups=1) -> Tensor
        """
    )
    is_nonzero, conv2d = spec.functions
    assert not should_trace(is_nonzero) and not should_trace(conv2d)
    assert kernel(is_nonzero) == (
        "bool is_nonzero(c10::DispatchKeySet ks, const at::Tensor & self) {\n"
        f"  auto result =at::_ops::is_nonzero::redispatch({BELOW_TRACER}, self);\n"
        "  return result;\n"
        "}\n"
    )
    assert kernel(conv2d) == (
        "at::Tensor conv2d(c10::DispatchKeySet ks, const at::Tensor & input, "
        "const at::Tensor & weight, c10::SymInt groups) {\n"
        f"  auto result =at::_ops::conv2d::redispatch({BELOW_TRACER}, input, weight, groups);\n"
        "  return result;\n"
        "}\n"
    )


def test_other_inplace_operators_are_recorded_as_their_out_of_place_operator(
    function_of: FunctionOf,
) -> None:
    f = function_of("- func: index_put_(Tensor(a!) self, Tensor?[] indices) -> Tensor(a!)")
    text = kernel(f)
    assert (
        "    if (tracer_state->force_outplace) {\n"
        '      op_name = c10::Symbol::fromQualString("aten::index_put");\n'
        "    } else {\n"
        '      op_name = c10::Symbol::fromQualString("aten::index_put_");\n'
        "    }\n"
    ) in text
    assert '    jit::tracer::addInputs(node, "indices", indices);\n' in text


def test_a_factory_gets_a_variable_factory_per_cpp_form(spec_of: SpecOf) -> None:
    f = spec_of(
        """\
        - func: ones(SymInt[] size, *, ScalarType? dtype=None, Layout? layout=None,
            Device? device=None, bool? pin_memory=None) -> Tensor
          dispatch:
            CompositeExplicitAutograd: ones
        """
    ).functions[0]
    assert is_factory_function(f)
    group = SignatureSet().of(f).cpp
    assert factory_wrappers(group) == (
        "inline at::Tensor ones(at::IntArrayRef size, at::TensorOptions options = {}) {\n"
        "  at::AutoDispatchBelowADInplaceOrView guard;\n"
        "  return autograd::make_variable(at::ones(size, "
        "at::TensorOptions(options).requires_grad(::std::nullopt)), "
        "/*requires_grad=*/options.requires_grad());\n"
        "}\n"
        "inline at::Tensor ones_symint(c10::SymIntArrayRef size, "
        "at::TensorOptions options = {}) {\n"
        "  at::AutoDispatchBelowADInplaceOrView guard;\n"
        "  return autograd::make_variable(at::ones_symint(size, "
        "at::TensorOptions(options).requires_grad(::std::nullopt)), "
        "/*requires_grad=*/options.requires_grad());\n"
        "}\n"
    )


def test_like_functions_are_factories_and_methods_are_not(spec_of: SpecOf) -> None:
    spec = spec_of(
        """\
        - func: zeros_like(Tensor self) -> Tensor
          dispatch:
            CompositeExplicitAutograd: zeros_like
        - func: new_zeros(Tensor self, SymInt[] size, *, ScalarType? dtype=None,
            Layout? layout=None, Device? device=None, bool? pin_memory=None) -> Tensor
          variants: method
          dispatch:
            CompositeExplicitAutograd: new_zeros
        - func: abs(Tensor self) -> Tensor
        """
    )
    assert [is_factory_function(f) for f in spec.functions] == [True, False, False]
    assert factory_wrappers(SignatureSet().of(spec.functions[0]).cpp) == (
        "inline at::Tensor zeros_like(const at::Tensor & self) {\n"
        "  at::AutoDispatchBelowADInplaceOrView guard;\n"
        "  return autograd::make_variable(at::zeros_like(self), /*requires_grad=*/false);\n"
        "}\n"
    )


def test_unqualified_aten_types_get_the_namespace() -> None:
    assert fully_qualified_type("Tensor") == "at::Tensor"
    assert fully_qualified_type("const Scalar &") == "const at::Scalar &"
    assert fully_qualified_type("std::optional<ScalarType>") == "std::optional<at::ScalarType>"
    assert fully_qualified_type("at::Tensor") == "at::Tensor"
    assert fully_qualified_type("int64_t") == "int64_t"
    assert fully_qualified_type("::std::optional<at::Layout>") == "::std::optional<at::Layout>"


def test_annotated_args_list_the_arguments_without_defaults(spec_of: SpecOf) -> None:
    spec = spec_of(
        """\
        - func: max_pool2d(Tensor self, int[2] kernel_size, int[2] stride=[]) -> Tensor
        - func: index_put(Tensor self, Tensor?[] indices, *, int k, bool flag=False) -> Tensor
        - func: round.decimals(Tensor self, *, int decimals) -> Tensor
        """
    )
    max_pool2d, index_put, round_decimals = spec.functions
    assert annotated_args(max_pool2d) == (
        "max_pool2d: [{'is_kwarg_only': 'False', 'name': 'self', 'simple_type': 'Tensor'}, "
        "{'is_kwarg_only': 'False', 'name': 'kernel_size', 'simple_type': 'IntArrayRef', "
        "'size': 2}],"
    )
    assert annotated_args(index_put) == (
        "index_put: [{'is_kwarg_only': 'False', 'name': 'self', 'simple_type': 'Tensor'}, "
        "{'is_kwarg_only': 'False', 'name': 'indices', "
        "'simple_type': 'c10::List<::std::optional<Tensor>>'}, "
        "{'is_kwarg_only': 'True', 'name': 'k', 'simple_type': 'int64_t'}],"
    )
    # The overrides tests cannot pass `round`'s keyword arguments.
    assert annotated_args(round_decimals) == (
        "round: [{'is_kwarg_only': 'False', 'name': 'self', 'simple_type': 'Tensor'}],"
    )


def test_python_bindings_skip_internal_operators_and_generated_functions(
    spec_of: SpecOf,
) -> None:
    spec = spec_of(
        """\
        - func: add.Tensor(Tensor self, Tensor other, *, Scalar alpha=1) -> Tensor
          variants: function, method
        - func: add.Scalar(Tensor self, Scalar other, Scalar alpha=1) -> Tensor
        - func: conv_backward(Tensor grad) -> Tensor
        - func: relu_(Tensor(a!) self) -> Tensor(a!)
          variants: method
        - func: gelu(Tensor self) -> Tensor
          python_module: nn
        - func: _foo(Tensor self) -> Tensor
          dispatch:
            CPU: foo
          autogen: _foo.out
        """
    )
    bound = {str(f.func.name): should_generate_py_binding(f) for f in spec.functions}
    assert bound == {
        "add.Tensor": True,
        "add.Scalar": False,
        "conv_backward": False,
        "relu_": True,
        "gelu": True,
        "_foo": True,
        "_foo.out": False,
    }
    add, _, _, relu_, gelu, _, _ = spec.functions
    assert is_py_torch_function(add) and is_py_variable_method(add)
    assert is_py_variable_method(relu_) and not is_py_torch_function(relu_)
    assert is_py_nn_function(gelu) and not is_py_torch_function(gelu)
