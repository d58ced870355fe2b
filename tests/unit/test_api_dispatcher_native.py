"""The dispatcher, native and structured conventions: declarations from small schemas."""

from __future__ import annotations

from collections.abc import Callable

from opgen.api import native, structured
from opgen.api.dispatcher import DispatcherSignature
from opgen.api.native import NativeSignature, kernel_signature
from opgen.api.structured import StructuredImplSignature
from opgen.api.types import ArgumentStyle
from opgen.spec import Spec
from opgen.spec.keys import DispatchKey
from opgen.spec.native import NativeFunction

FunctionOf = Callable[[str], NativeFunction]
SpecOf = Callable[[str], Spec]
PLAIN = ArgumentStyle()

ZEROS = (
    "- func: zeros(SymInt[] size, *, ScalarType? dtype=None, Layout? layout=None, "
    "Device? device=None, bool? pin_memory=None) -> Tensor\n"
    "  dispatch:\n    CompositeExplicitAutograd: zeros_symint"
)


def test_dispatcher_spreads_options_has_no_defaults_and_takes_symints(
    function_of: FunctionOf,
) -> None:
    f = function_of(ZEROS)
    assert DispatcherSignature(f.func, PLAIN).decl() == (
        "at::Tensor zeros(c10::SymIntArrayRef size, ::std::optional<at::ScalarType> dtype, "
        "::std::optional<at::Layout> layout, ::std::optional<at::Device> device, "
        "::std::optional<bool> pin_memory)"
    )


def test_dispatcher_keeps_schema_order_for_out_functions(function_of: FunctionOf) -> None:
    f = function_of("- func: abs.out(Tensor self, *, Tensor(a!) out) -> Tensor(a!)")
    sig = DispatcherSignature(f.func, PLAIN)
    assert sig.decl() == "at::Tensor & abs_out(const at::Tensor & self, at::Tensor & out)"
    assert sig.defn(name="wrapper", is_redispatching_fn=True) == (
        "at::Tensor & wrapper(c10::DispatchKeySet dispatchKeySet, const at::Tensor & self, "
        "at::Tensor & out)"
    )
    assert sig.ptr_type() == "at::Tensor & (*)(const at::Tensor &, at::Tensor &)"
    assert sig.type() == "at::Tensor & (const at::Tensor &, at::Tensor &)"
    assert [e.expr for e in sig.exprs()] == ["self", "out"]


def test_native_names_carry_the_overload_and_keep_defaults(function_of: FunctionOf) -> None:
    f = function_of(
        "- func: sum.dim_IntList(Tensor self, int[1]? dim, bool keepdim=False, *, "
        "ScalarType? dtype=None) -> Tensor"
    )
    assert native.name(f.func) == "sum_dim_IntList"
    assert NativeSignature(f.func, False, PLAIN).decl() == (
        "at::Tensor sum_dim_IntList(const at::Tensor & self, at::OptionalIntArrayRef dim, "
        "bool keepdim=false, ::std::optional<at::ScalarType> dtype=::std::nullopt)"
    )


def test_native_options_are_optional_and_symint_follows_the_kernel_name(
    spec_of: SpecOf,
) -> None:
    spec = spec_of(ZEROS)
    f = spec.functions[0]
    sig = kernel_signature(f, spec.backend_indices[DispatchKey.CompositeExplicitAutograd])
    assert sig.decl() == (
        "at::Tensor zeros(c10::SymIntArrayRef size, ::std::optional<at::ScalarType> dtype={}, "
        "::std::optional<at::Layout> layout={}, ::std::optional<at::Device> device={}, "
        "::std::optional<bool> pin_memory={})"
    )


def test_native_out_functions_have_no_defaults_and_optional_tensors_by_reference(
    function_of: FunctionOf,
) -> None:
    f = function_of(
        "- func: clamp.out(Tensor self, Scalar? min=None, Tensor? w=None, *, Tensor(a!) out)"
        " -> Tensor(a!)"
    )
    assert NativeSignature(f.func, False, PLAIN).decl(name="clamp_out") == (
        "at::Tensor & clamp_out(const at::Tensor & self, const ::std::optional<at::Scalar> & min, "
        "const ::std::optional<at::Tensor> & w, at::Tensor & out)"
    )


STRUCTURED = (
    (
        "- func: pow.Tensor_Scalar(Tensor self, Scalar exponent, Tensor? w=None) -> Tensor\n"
        "  structured_delegate: pow.Tensor_Scalar_out\n"
        "- func: pow.Tensor_Scalar_out(Tensor self, Scalar exponent, Tensor? w=None, *, "
        "Tensor(a!) out) -> Tensor(a!)\n"
    )
    + """\
  structured: True
  precomputed:
  - exponent -> int e, bool is_int
  - int extra
  dispatch:
    CPU: pow_out
"""
)


def test_structured_meta_and_impl(spec_of: SpecOf) -> None:
    (g,) = spec_of(STRUCTURED).groups
    assert [b.defn() for b in structured.meta_arguments(g)] == [
        "const at::Tensor & self",
        "const at::Scalar & exponent",
        "at::OptionalTensorRef w",
    ]
    assert StructuredImplSignature(g, "pow_out").defn() == (
        "TORCH_IMPL_FUNC(pow_out)(const at::Tensor & self, int64_t e, bool is_int, "
        "at::OptionalTensorRef w, int64_t extra, const at::Tensor & out)"
    )
    assert [b.name for b in structured.out_arguments(g)] == ["out"]
