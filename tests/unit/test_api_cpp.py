"""The C++ API convention (`opgen.api.cpp`): declarations from small schemas, exact text."""

from __future__ import annotations

from collections.abc import Callable

import pytest

from opgen.api import cpp, cpp_literals
from opgen.api.cpp import CppSignatureGroup
from opgen.api.types import ArgumentStyle
from opgen.spec.native import NativeFunction
from opgen.spec.types import Type

FunctionOf = Callable[[str], NativeFunction]


def decls(f: NativeFunction, *, method: bool = False) -> list[str]:
    group = CppSignatureGroup.from_native_function(
        f, method=method, fallback_binding=f.manual_cpp_binding
    )
    return [s.decl() for s in group.signatures()]


def test_plain_function_has_one_signature_with_defaults(function_of: FunctionOf) -> None:
    f = function_of("- func: add.Tensor(Tensor self, Tensor other, *, Scalar alpha=1) -> Tensor")
    assert decls(f) == [
        "at::Tensor add(const at::Tensor & self, const at::Tensor & other, "
        "const at::Scalar & alpha=1)"
    ]


def test_out_function_puts_outputs_first_and_faithful_form_last(function_of: FunctionOf) -> None:
    f = function_of(
        "- func: add.out(Tensor self, Tensor other, *, Scalar alpha=1, Tensor(a!) out)"
        " -> Tensor(a!)"
    )
    assert decls(f) == [
        "at::Tensor & add_out(at::Tensor & out, const at::Tensor & self, "
        "const at::Tensor & other, const at::Scalar & alpha=1)",
        "at::Tensor & add_outf(const at::Tensor & self, const at::Tensor & other, "
        "const at::Scalar & alpha, at::Tensor & out)",
    ]


def test_tensor_options_are_packed_except_in_the_faithful_form(function_of: FunctionOf) -> None:
    f = function_of(
        "- func: ones(int[] size, *, ScalarType? dtype=None, Layout? layout=None, "
        "Device? device=None, bool? pin_memory=None) -> Tensor\n"
        "  dispatch:\n    CompositeExplicitAutograd: ones"
    )
    assert decls(f) == [
        "at::Tensor ones(at::IntArrayRef size, at::TensorOptions options={})",
        "at::Tensor ones(at::IntArrayRef size, ::std::optional<at::ScalarType> dtype, "
        "::std::optional<at::Layout> layout, ::std::optional<at::Device> device, "
        "::std::optional<bool> pin_memory)",
    ]


def test_symint_functions_get_a_symint_overload(function_of: FunctionOf) -> None:
    f = function_of("- func: view(Tensor(a) self, SymInt[] size) -> Tensor(a)\n  variants: method")
    assert decls(f, method=True) == [
        "at::Tensor view(at::IntArrayRef size)",
        "at::Tensor view_symint(c10::SymIntArrayRef size)",
    ]


def test_cpp_no_default_args_and_manual_binding(function_of: FunctionOf) -> None:
    f = function_of(
        """\
        - func: sum(Tensor self, int dim=0, bool keepdim=False) -> Tensor
          manual_cpp_binding: True
          cpp_no_default_args: ['dim']
        """
    )
    assert decls(f) == [
        "at::Tensor __dispatch_sum(const at::Tensor & self, int64_t dim, bool keepdim=false)"
    ]


def test_const_ref_for_mutable_tensors(function_of: FunctionOf) -> None:
    f = function_of(
        """\
        - func: resize_(Tensor(a!) self, SymInt[] size) -> Tensor(a!)
          use_const_ref_for_mutable_tensors: True
          variants: method
        """
    )
    assert decls(f) == [
        "const at::Tensor & resize_(const at::Tensor & self, at::IntArrayRef size)",
        "const at::Tensor & resize__symint(const at::Tensor & self, c10::SymIntArrayRef size)",
    ]


@pytest.mark.parametrize(
    ("default", "type", "expected"),
    [
        ("True", "bool", "true"),
        ("None", "Tensor?", "{}"),
        ("None", "int?", "::std::nullopt"),
        ("[0,1]", "int[]", "{0,1}"),
        ("[]", "int[]", "{}"),
        ("1", "int[2]", "1"),
        ("2", "SymInt[]", "c10::SymInt(2)"),
        ("Mean", "int", "at::Reduction::Mean"),
        ("contiguous_format", "MemoryFormat", "c10::MemoryFormat::Contiguous"),
        ("'mean'", "str", '"mean"'),
        ("'say \"hi\"'", "str", '"say \\"hi\\""'),
        ("'it\\'s'", "str", '"it\'s"'),
        ("1e-05", "float", "1e-05"),
    ],
)
def test_default_expr(default: str, type: str, expected: str) -> None:
    assert cpp_literals.default_expr(default, Type.parse(type), symint=True) == expected


def test_a_list_default_must_be_a_list() -> None:
    with pytest.raises(ValueError, match="list default"):
        cpp_literals.default_expr("3", Type.parse("int[]"), symint=False)


@pytest.mark.parametrize(
    ("type", "mutable", "symint", "expected"),
    [
        ("Tensor", False, False, "const at::Tensor &"),
        ("Tensor", True, False, "at::Tensor &"),
        ("Tensor?", False, False, "const ::std::optional<at::Tensor> &"),
        ("Tensor?", True, False, "at::Tensor &"),
        ("Tensor[]", False, False, "at::TensorList"),
        ("Tensor?[]", False, False, "const c10::List<::std::optional<at::Tensor>> &"),
        ("Scalar[]", False, False, "at::ArrayRef<at::Scalar>"),
        ("SymInt", False, False, "int64_t"),
        ("SymInt", False, True, "c10::SymInt"),
        ("SymInt[]?", False, True, "at::OptionalSymIntArrayRef"),
        ("SymInt[]?", False, False, "at::OptionalIntArrayRef"),
        ("int[1]?", False, False, "at::OptionalIntArrayRef"),
        ("bool[3]", False, False, "::std::array<bool,3>"),
        ("float[]?", False, False, "::std::optional<at::ArrayRef<double>>"),
        ("str?", False, False, "::std::optional<c10::string_view>"),
        ("Generator?", False, False, "::std::optional<at::Generator>"),
    ],
)
def test_argument_types(type: str, mutable: bool, symint: bool, expected: str) -> None:
    ctype = cpp.argument_ctype(
        Type.parse(type), mutable=mutable, symint=symint, style=ArgumentStyle()
    )
    assert ctype.cpp_type() == expected


def test_tensor_lists_of_structured_groups_are_ilistrefs() -> None:
    style = ArgumentStyle(ilistref_for_tensor_lists=True)
    ctype = cpp.argument_ctype(Type.parse("Tensor[]"), mutable=False, symint=False, style=style)
    assert ctype.cpp_type() == "const at::ITensorListRef &"


def test_returns(function_of: FunctionOf) -> None:
    f = function_of(
        "- func: max.dim(Tensor self, int dim) -> (Tensor values, Tensor indices, SymInt n)"
    )
    assert cpp.returns_type(f.func.returns, style=ArgumentStyle()).cpp_type() == (
        "::std::tuple<at::Tensor,at::Tensor,c10::SymInt>"
    )
    assert cpp.return_names(f) == ["values", "indices", "n"]


def test_return_names_avoid_argument_names(function_of: FunctionOf) -> None:
    f = function_of("- func: f(Tensor self, Tensor values) -> (Tensor values, Tensor)")
    assert cpp.return_names(f) == ["values_return", "result1"]
