"""ADInplaceOrView kernels and ViewFunc classes of small operators: the rules, exact text.

Each function is given with no derivatives entry, so every tensor output is
differentiable (`gen_differentiable_outputs`).
"""

from __future__ import annotations

from collections.abc import Callable

import pytest

from opgen.api.dispatcher import DispatcherSignature
from opgen.api.types import ArgumentStyle
from opgen.autograd.model import NativeFunctionWithDifferentiabilityInfo
from opgen.diagnostics import SpecError
from opgen.spec.native import NativeFunction
from opgen.targets.autograd.inplace_or_view import has_kernel, kernel_body, view_replay
from opgen.targets.autograd.view_funcs import ViewFuncClass, state_access, view_func_name
from opgen.targets.autograd.wrappers import (
    extract_bindings,
    method_definition,
    type_wrapper_name,
    wrapper_formals,
)

FunctionOf = Callable[[str], NativeFunction]

EXPAND = "- func: expand(Tensor(a) self, SymInt[] size, *, bool implicit=False) -> Tensor(a)"
UNBIND = "- func: unbind.int(Tensor(a -> *) self, int dim=0) -> Tensor(a)[]"
AS_STRIDED = (
    "- func: as_strided(Tensor(a) self, SymInt[] size, SymInt[] stride, "
    "SymInt? storage_offset=None) -> Tensor(a)"
)


def kernel(f: NativeFunction) -> str:
    sig = DispatcherSignature.from_schema(f.func, style=ArgumentStyle.of(f))
    body = kernel_body(NativeFunctionWithDifferentiabilityInfo(f, None, None), sig)
    return method_definition(sig.returns_text, type_wrapper_name(f), wrapper_formals(sig), body)


def test_inplace_kernel_bumps_the_version_of_what_it_returns(function_of: FunctionOf) -> None:
    f = function_of("- func: transpose_(Tensor(a!) self, int dim0, int dim1) -> Tensor(a!)")
    assert kernel(f) == (
        "at::Tensor & transpose_(c10::DispatchKeySet ks, at::Tensor & self, int64_t dim0, "
        "int64_t dim1) {\n"
        "  {\n"
        "    at::AutoDispatchBelowADInplaceOrView guard;\n"
        "    at::_ops::transpose_::redispatch(ks & c10::after_ADInplaceOrView_keyset, self, "
        "dim0, dim1);\n"
        "  }\n"
        "  increment_version(self);\n"
        "  return self;\n"
        "}\n"
    )


def test_only_views_and_mutations_that_return_get_a_kernel(function_of: FunctionOf) -> None:
    assert has_kernel(function_of(EXPAND))
    assert has_kernel(function_of("- func: abs_(Tensor(a!) self) -> Tensor(a!)"))
    assert not has_kernel(function_of("- func: abs(Tensor self) -> Tensor"))
    # autograd cannot support a mutation it cannot see returned (pytorch#53796)
    assert not has_kernel(
        function_of(
            "- func: split_copy.Tensor_out(Tensor self, SymInt split_size, int dim=0, *, "
            "Tensor(a!)[] out) -> ()"
        )
    )


def test_view_replay_captures_array_refs_as_vectors(function_of: FunctionOf) -> None:
    expand = function_of(EXPAND)
    assert view_replay(expand, extract_bindings(expand), None).splitlines() == [
        "std::unique_ptr<torch::autograd::ViewFunc> func(nullptr);",
        "std::function<at::Tensor(const at::Tensor&)> rev_func=nullptr;",
        "if (false ||",
        "    !self.unsafeGetTensorImpl()->support_as_strided() ||",
        "    self.unsafeGetTensorImpl()->is_python_dispatch() ||",
        "    c10::AutogradState::get_tls_state().get_view_replay_enabled()) {",
        "  auto size_vec = size.vec();",
        "  func = std::make_unique<torch::autograd::generated::ExpandViewFunc>(size, implicit);",
        "  rev_func = [=](const at::Tensor& input_view) {",
        "    return at::functionalization::FunctionalInverses::expand_inverse(self, input_view, "
        "at::functionalization::InverseReturnMode::AlwaysView, size_vec, implicit);",
        "  };",
        "}",
    ]


def test_views_that_change_metadata_always_replay(function_of: FunctionOf) -> None:
    view_as_real = function_of("- func: view_as_real(Tensor(a) self) -> Tensor(a)")
    replay = view_replay(view_as_real, extract_bindings(view_as_real), None)
    assert replay.splitlines()[2] == "if (true ||"


def test_multi_output_view_marks_each_tensor_of_its_list(function_of: FunctionOf) -> None:
    lines = kernel(function_of(UNBIND)).splitlines()
    assert lines[5] == "  for (auto view_idx : c10::irange(_tmp.size())) {"
    assert lines[12] == (
        "      func = std::make_unique<torch::autograd::generated::UnbindIntViewFunc>"
        "(dim, view_idx);"
    )
    assert lines[14] == (
        "        return at::functionalization::FunctionalInverses::unbind_int_inverse(self, "
        "input_view, at::functionalization::InverseReturnMode::AlwaysView, view_idx, dim);"
    )
    assert lines[17].startswith("    as_view(/* base */ self, /* output */ _tmp[view_idx], ")
    assert "GradMode::is_enabled() ? CreationMeta::MULTI_OUTPUT_NODE" in lines[17]
    assert lines[-4:] == [
        "  }",
        "  auto result = std::move(_tmp);",
        "  return result;",
        "}",
    ]


def test_replay_rejects_arguments_it_cannot_capture(function_of: FunctionOf) -> None:
    f = function_of("- func: view.dtype(Tensor(a) self, ScalarType dtype) -> Tensor(a)")
    with pytest.raises(SpecError, match="argument dtype of C\\+\\+ type at::ScalarType") as error:
        kernel(f)
    (diagnostic,) = error.value.diagnostics
    assert diagnostic.location is not None and diagnostic.location.line == 1


@pytest.mark.parametrize(
    ("schema", "camel", "snake"),
    [
        (UNBIND, "UnbindIntViewFunc", "unbind_int_view_func"),
        ("- func: _conj(Tensor(a) self) -> Tensor(a)", "_ConjViewFunc", "_conj_view_func"),
        (
            "- func: view_as_real(Tensor(a) self) -> Tensor(a)",
            "ViewAsRealViewFunc",
            "view_as_real_view_func",
        ),
    ],
)
def test_view_func_names(function_of: FunctionOf, schema: str, camel: str, snake: str) -> None:
    f = function_of(schema)
    assert view_func_name(f) == camel
    assert view_func_name(f, camel_case=False) == snake
    assert view_func_name(f, include_namespace=True) == f"torch::autograd::generated::{camel}"


def test_saved_symints_are_read_and_replaced_in_argument_order(function_of: FunctionOf) -> None:
    params = [b for b in extract_bindings(function_of(AS_STRIDED)) if b.name != "self"]
    access = state_access(params, "symints", "::std::vector<c10::SymInt>")
    count = "size.size() + stride.size() + (storage_offset.has_value() ? 1 : 0)"
    assert access.count == count
    assert access.get == [
        "::std::vector<c10::SymInt> symints;",
        f"symints.reserve({count});",
        "symints.insert(symints.end(), size.begin(), size.end());",
        "symints.insert(symints.end(), stride.begin(), stride.end());",
        "if(storage_offset.has_value()) symints.insert(symints.end(), *(storage_offset));",
        "return symints;",
    ]
    assert access.set == [
        "auto i = 0;",
        "std::copy(symints.begin() + i, symints.begin() + i + size.size(), size.begin());",
        "i += size.size();",
        "std::copy(symints.begin() + i, symints.begin() + i + stride.size(), stride.begin());",
        "i += stride.size();",
        "if(storage_offset.has_value()) storage_offset = symints[i];",
    ]


def test_nothing_saved_gives_an_empty_vector(function_of: FunctionOf) -> None:
    access = state_access([], "tensors", "::std::vector<at::Tensor>")
    assert (access.get, access.set, access.count) == (
        ["::std::vector<at::Tensor> tensors;", "return tensors;"],
        [],
        "0",
    )


def test_view_func_saves_owning_copies_and_the_view_index(function_of: FunctionOf) -> None:
    split = function_of(
        "- func: split_with_sizes(Tensor(a -> *) self, SymInt[] split_sizes, int dim=0)"
        " -> Tensor(a)[]"
    )
    declaration = ViewFuncClass(split).declaration().splitlines()
    assert declaration[:3] == [
        "#define SPLIT_WITH_SIZES_VIEW_FUNC_AVAILABLE",
        "struct SplitWithSizesViewFunc : public torch::autograd::ViewFunc {",
        "  SplitWithSizesViewFunc(c10::SymIntArrayRef split_sizes, int64_t dim, int64_t view_idx)"
        " : split_sizes(split_sizes.vec()), dim(dim), view_idx(view_idx)",
    ]
    assert declaration[-5:] == [
        "  ::std::vector<c10::SymInt> split_sizes;",
        "  int64_t dim;",
        "  int64_t view_idx;",
        "};",
        "",
    ]
    assert (
        "  return at::_ops::split_with_sizes::call(input_base, split_sizes, dim)[view_idx];"
        in ViewFuncClass(split).definition().splitlines()
    )
