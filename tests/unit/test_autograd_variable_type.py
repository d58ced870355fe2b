"""VariableType kernels of small operators: the rules, exact text.

Each test gives an operator (and, where it matters, the differentiability info a
derivatives entry would give, built directly) and checks one rule: which
operators get the boxed not-implemented kernel, what a kernel without
derivative or an out= kernel does, how inputs are saved in the backward node
and when saving is guarded, how the per-key template is built, and which
derivatives entries are refused.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Sequence

import pytest
from tests.unit.autograd_infos import FOO_OUT, derivative, differentiability_info, saved

from opgen.api.signatures import SignatureSet
from opgen.api.types import STRING_VIEW, TENSOR, CType
from opgen.autograd.model import (
    DEFAULT_KEY,
    Derivative,
    DifferentiabilityInfo,
    NativeFunctionWithDifferentiabilityInfo,
)
from opgen.diagnostics import SpecError
from opgen.releases import Release
from opgen.spec.native import NativeFunction
from opgen.targets.autograd.autograd_kernel import VariableTypeKernel
from opgen.targets.autograd.saved_variables import emit_save_inputs
from opgen.targets.autograd.variable_type import intermediate_env, kernel_fragments
from opgen.targets.autograd.variable_type_body import emit_body

FunctionOf = Callable[[str], NativeFunction]
Formulas = Sequence[tuple[tuple[str, ...], str, Sequence[tuple[str, CType, str]]]]

MUL = """\
- func: mul.Tensor(Tensor self, Tensor other) -> Tensor
  dispatch:
    CPU: mul
"""


def make_info(
    f: NativeFunction, formulas: Formulas, *, op: str = "FooBackward0"
) -> DifferentiabilityInfo:
    """The info of an entry with these `(inputs, formula, saved inputs)` triples."""
    derivatives = [
        derivative(inputs, formula, [saved(*s) for s in saves])
        for inputs, formula, saves in formulas
    ]
    return differentiability_info(f, derivatives, op=op)


RELEASE = Release(2, 13)  # the kernels below are torch 2.13's


def with_info(
    f: NativeFunction, info: DifferentiabilityInfo | None = None
) -> NativeFunctionWithDifferentiabilityInfo:
    return NativeFunctionWithDifferentiabilityInfo(
        f, None if info is None else {DEFAULT_KEY: info}, None
    )


def test_an_operator_without_derivatives_gets_the_boxed_not_implemented_kernel(
    function_of: FunctionOf,
) -> None:
    f = function_of(MUL)
    assert kernel_fragments(SignatureSet(), with_info(f), RELEASE) == {
        "type_derived_method_definitions_Default": [""],
        "wrapper_registrations_Default": [
            'm.impl("mul.Tensor", torch::autograd::autogradNotImplementedFallback());\n'
        ],
    }


def test_an_operator_that_requires_no_derivative_only_redispatches_and_checks(
    function_of: FunctionOf,
) -> None:
    f = function_of(
        "- func: argmax(Tensor self, int? dim=None, bool keepdim=False) -> Tensor\n"
        "  dispatch:\n"
        "    CPU: argmax\n"
    )
    fragments = kernel_fragments(SignatureSet(), with_info(f), RELEASE)
    assert fragments["wrapper_registrations_Default"] == [
        'm.impl("argmax",\n       TORCH_FN(VariableType::argmax)\n);\n'
    ]
    assert fragments["type_derived_method_definitions_Default"] == [
        "at::Tensor argmax(c10::DispatchKeySet ks, const at::Tensor & self, "
        "::std::optional<int64_t> dim, bool keepdim) {\n"
        '  auto& self_ = unpack(self, "self", 0);\n'
        "  #ifndef NDEBUG\n"
        "  auto self__storage_saved =\n"
        "    self_.has_storage() ? ::std::optional<Storage>(self_.storage()) : ::std::nullopt;\n"
        "  c10::intrusive_ptr<TensorImpl> self__impl_saved;\n"
        "  if (self_.defined()) self__impl_saved = self_.getIntrusivePtr();\n"
        "  #endif\n"
        "  auto _tmp = ([&]() {\n"
        "    at::AutoDispatchBelowADInplaceOrView guard;\n"
        "    return at::redispatch::argmax(ks & c10::after_autograd_keyset, self_, dim, keepdim);\n"
        "  })();\n"
        "  auto result = std::move(_tmp);\n"
        "  #ifndef NDEBUG\n"
        "  if (self__storage_saved.has_value() &&\n"
        "      !at::impl::dispatch_mode_enabled() &&\n"
        "      !at::impl::tensor_has_dispatch(self_) &&\n"
        "      !at::impl::tensor_has_dispatch(self_))\n"
        "    TORCH_INTERNAL_ASSERT(self__storage_saved.value().is_alias_of(self_.storage()));\n"
        "  if (self__impl_saved && !at::impl::dispatch_mode_enabled() "
        "&& !at::impl::tensor_has_dispatch(self_))\n"
        "    TORCH_INTERNAL_ASSERT(self__impl_saved == self_.getIntrusivePtr());\n"
        "  if (result.has_storage() && !at::impl::dispatch_mode_enabled() "
        "&& !at::impl::tensor_has_dispatch(result)) {\n"
        '    TORCH_INTERNAL_ASSERT(result.storage().use_count() == 1, "function: argmax");\n'
        "  }\n"
        "  if (!at::impl::dispatch_mode_enabled() && !at::impl::tensor_has_dispatch(result))\n"
        "    TORCH_INTERNAL_ASSERT(result.use_count() == expected_fresh_use_count(result), "
        '"function: argmax");\n'
        "  #endif\n"
        "  return result;\n"
        "}\n"
    ]


def test_an_out_kernel_refuses_gradients_and_tangents(function_of: FunctionOf) -> None:
    f = function_of(FOO_OUT)
    body = emit_body(
        VariableTypeKernel.of(with_info(f), DEFAULT_KEY, RELEASE),
        SignatureSet().of(f).dispatcher.bindings,
    )
    assert body[3:6] == [
        "c10::intrusive_ptr<Node> grad_fn;\n",
        'if (compute_requires_grad( self )) {\n  throw_error_out_requires_grad("foo");\n}\n',
        'if (compute_requires_grad( out )) {\n  throw_error_out_requires_grad("foo");\n}\n',
    ]
    assert body[-4:] == [
        "if (grad_fn) {\n    rebase_history(flatten_tensor_args( out ), grad_fn);\n}\n",
        "TORCH_CHECK_NOT_IMPLEMENTED(!((isFwGradDefined(self) || isFwGradDefined(out))), "
        '"Trying to use forward AD with foo_out that does not support it because it is '
        'an out= function");\n',
        "",
        "return out;",
    ]


def test_from_2_14_an_out_kernel_keeps_the_rebased_node_and_fires_creation_hooks(
    function_of: FunctionOf,
) -> None:
    f = function_of(FOO_OUT)
    kernel = VariableTypeKernel.of(with_info(f), DEFAULT_KEY, Release(2, 14))
    body = emit_body(kernel, SignatureSet().of(f).dispatcher.bindings)
    assert body[-5:] == [
        "c10::intrusive_ptr<Node> _rebased_fn;\n"
        "if (grad_fn) {\n"
        "    _rebased_fn = rebase_history(flatten_tensor_args( out ), grad_fn);\n"
        "}\n",
        "TORCH_CHECK_NOT_IMPLEMENTED(!((isFwGradDefined(self) || isFwGradDefined(out))), "
        '"Trying to use forward AD with foo_out that does not support it because it is '
        'an out= function");\n',
        "",
        "if (_rebased_fn) {\n    fire_node_creation_hooks(_rebased_fn);\n}\n",
        "return out;",
    ]


def test_an_input_one_formula_uses_is_saved_only_if_its_gradient_is_computed(
    function_of: FunctionOf,
) -> None:
    f = function_of(MUL)
    info = make_info(
        f,
        [
            (("self",), "grad * other", [("other", TENSOR, "other")]),
            (("other",), "grad * self", [("self", TENSOR, "self")]),
        ],
    )
    assert emit_save_inputs(VariableTypeKernel.of(with_info(f, info), DEFAULT_KEY, RELEASE)) == [
        # Sorted by name.
        "if (grad_fn->should_compute_output(0)) {",
        "  grad_fn->other_ = SavedVariable(other, false);",
        "}",
        "if (grad_fn->should_compute_output(1)) {",
        "  grad_fn->self_ = SavedVariable(self, false);",
        "}",
    ]


def test_a_formula_for_several_inputs_guards_what_it_wraps_in_wrap_opt_if(
    function_of: FunctionOf,
) -> None:
    f = function_of(MUL)
    formula = "mul_backward(grad, wrap_opt_if(self, grad_input_mask[1]), other)"
    info = make_info(f, [(("self", "other"), formula, [("self", TENSOR, "self")])])
    assert emit_save_inputs(VariableTypeKernel.of(with_info(f, info), DEFAULT_KEY, RELEASE)) == [
        "if (grad_fn->should_compute_output(1)) {",
        "  grad_fn->self_ = SavedVariable(self, false);",
        "}",
    ]


def test_an_inplace_operator_saves_a_clone_of_self(function_of: FunctionOf) -> None:
    f = function_of("- func: exp_(Tensor(a!) self) -> Tensor(a!)\n  dispatch:\n    CPU: exp_\n")
    info = make_info(f, [(("self",), "grad * self", [("self", TENSOR, "self")])])
    assert emit_save_inputs(VariableTypeKernel.of(with_info(f, info), DEFAULT_KEY, RELEASE)) == [
        "if (!original_self.has_value()) original_self = self.clone();",
        "grad_fn->self_ = SavedVariable(original_self.value(), false);",
    ]


def test_a_string_is_saved_as_an_owning_copy(function_of: FunctionOf) -> None:
    f = function_of(
        "- func: gelu(Tensor self, *, str approximate='none') -> Tensor\n"
        "  dispatch:\n"
        "    CPU: gelu\n"
    )
    info = make_info(
        f,
        [
            (
                ("self",),
                "gelu_backward(grad, self, approximate)",
                [("approximate", STRING_VIEW, "approximate")],
            )
        ],
    )
    assert emit_save_inputs(VariableTypeKernel.of(with_info(f, info), DEFAULT_KEY, RELEASE)) == [
        "grad_fn->approximate = std::string(approximate);"
    ]


def test_the_per_key_template_registers_default_as_autograd() -> None:
    assert intermediate_env(frozenset({DEFAULT_KEY, "AutogradCUDA"})) == {
        "type_derived_method_definitions": "${type_derived_method_definitions_AutogradCUDA}\n\n"
        "${type_derived_method_definitions_Default}",
        "wrapper_registrations": "TORCH_LIBRARY_IMPL(aten, AutogradCUDA, m) {\n"
        "${wrapper_registrations_AutogradCUDA}\n}\n\n"
        "TORCH_LIBRARY_IMPL(aten, Autograd, m) {\n${wrapper_registrations_Default}\n}",
    }


def test_a_formula_needs_an_operator_with_backend_kernels(function_of: FunctionOf) -> None:
    f = function_of("- func: mul.Tensor(Tensor self, Tensor other) -> Tensor\n")
    info = make_info(f, [(("self",), "grad * other", [])])
    with pytest.raises(SpecError, match="add a dispatch section"):
        kernel_fragments(SignatureSet(), with_info(f, info), RELEASE)


def test_a_formula_for_an_input_the_operator_lacks_is_an_error(function_of: FunctionOf) -> None:
    f = function_of(MUL)
    info = make_info(f, [(("self",), "grad * other", [])])
    extra = Derivative("grad", "grad", ("input",), (), (), frozenset())
    info = dataclasses.replace(info, derivatives=(*info.derivatives, extra))
    with pytest.raises(SpecError, match="derivatives for input"):
        VariableTypeKernel.of(with_info(f, info), DEFAULT_KEY, RELEASE)
