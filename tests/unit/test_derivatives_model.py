"""The derivatives model of PyTorch's derivatives.yaml, from small specs and formulas.

Each test gives a spec and a derivatives file inline, and checks one rule of
how formulas become `DifferentiabilityInfo`s: what a node saves, how nodes
are named, how forward formulas are expanded, and what a function matched to
an info gets. (The whole of torch's file is compared with upstream's model in
tests/conformance/test_autograd_model.py.)
"""

from __future__ import annotations

import io
import textwrap
from collections.abc import Callable
from pathlib import Path

import pytest

from opgen.api import cpp
from opgen.api.types import INT64, SYM_INT, SYM_INT_ARRAY_REF, TYPE_AND_SIZE, NamedCType
from opgen.autograd.load_derivatives import load_derivative_infos
from opgen.autograd.match import match_differentiability_info
from opgen.autograd.model import (
    DerivativeInfos,
    DifferentiabilityInfo,
    NativeFunctionWithDifferentiabilityInfo,
    SavedAttribute,
)
from opgen.cli import main
from opgen.spec import Spec, load_spec

SPEC = """
- func: mul.Tensor(Tensor self, Tensor other) -> Tensor
  variants: function, method
  dispatch:
    CPU: mul_cpu
- func: mul_.Tensor(Tensor(a!) self, Tensor other) -> Tensor(a!)
  variants: method
  dispatch:
    CPU: mul_cpu_
- func: mul.Scalar(Tensor self, Scalar other) -> Tensor
  variants: function, method
  dispatch:
    CPU: mul_scalar
- func: conv2d_forward(Tensor self, Tensor weight, SymInt[2] stride) -> Tensor
  dispatch:
    CPU: conv2d_cpu
- func: max.dim(Tensor self, int dim, bool keepdim=False) -> (Tensor values, Tensor indices)
  variants: function, method
  dispatch:
    CPU: max_cpu
- func: abs(Tensor self) -> Tensor
  variants: function, method
  dispatch:
    CPU: abs_cpu
- func: abs_(Tensor(a!) self) -> Tensor(a!)
  variants: function, method
  dispatch:
    CPU: abs_cpu_
- func: pad_like(Tensor self, str? mode=None) -> Tensor
  dispatch:
    CPU: pad_like
- func: transpose.int(Tensor(a) self, int dim0, int dim1) -> Tensor(a)
  variants: function, method
  dispatch:
    CompositeExplicitAutograd: transpose
- func: transpose_copy.int(Tensor self, int dim0, int dim1) -> Tensor
  tags: view_copy
  dispatch:
    CompositeExplicitAutogradNonFunctional: transpose_copy
"""

TAGS = "- tag: view_copy\n  desc: a copy\n- tag: generated\n  desc: generated\n"


class Model:
    """A spec and the infos of a derivatives file over it."""

    def __init__(self, spec: Spec, infos: DerivativeInfos) -> None:
        self.spec = spec
        self.infos = infos

    def info(self, schema_name: str, key: str = "Default") -> DifferentiabilityInfo:
        for schema, per_key in self.infos.infos.items():
            if str(schema.name) == schema_name:
                return per_key[key]
        raise KeyError(schema_name)

    def matched(self, name: str) -> NativeFunctionWithDifferentiabilityInfo:
        functions = sorted(self.spec.functions, key=lambda f: cpp.name(f.func))
        for fn in match_differentiability_info(functions, self.infos):
            if str(fn.func.func.name) == name:
                return fn
        raise KeyError(name)


ModelOf = Callable[[str], Model]


@pytest.fixture
def model_of(tmp_path: Path) -> ModelOf:
    def load(derivatives: str) -> Model:
        (tmp_path / "native_functions.yaml").write_text(SPEC)
        (tmp_path / "tags.yaml").write_text(TAGS)
        (tmp_path / "derivatives.yaml").write_text(textwrap.dedent(derivatives))
        spec = load_spec(str(tmp_path / "native_functions.yaml"), str(tmp_path / "tags.yaml"))
        return Model(spec, load_derivative_infos(spec, str(tmp_path / "derivatives.yaml")))

    return load


MUL = "mul.Tensor(Tensor self, Tensor other) -> Tensor"


def test_properties_used_are_saved_instead_of_the_tensor(model_of: ModelOf) -> None:
    model = model_of(
        f"""
        - name: {MUL}
          self: grad.expand_symint(other.sym_sizes()) * other.sym_size(-1)
          other: zeros_like(self)
        """
    )
    info = model.info("mul.Tensor")
    other, self = info.derivatives  # formulas in key order
    assert self.formula == "grad.expand_symint(other_sym_sizes) * other_sym_argsize_minus_1"
    assert self.saved_inputs == (
        SavedAttribute(NamedCType("other_sym_sizes", SYM_INT_ARRAY_REF), "other.sym_sizes()"),
        SavedAttribute(NamedCType("other_sym_argsize_minus_1", SYM_INT), "other.sym_size(-1)"),
    )
    assert other.formula == "self_info.zeros()"
    assert other.saved_inputs == (SavedAttribute(NamedCType("self_info", TYPE_AND_SIZE), "self"),)
    assert [s.nctype.name for s in info.all_saved_inputs] == [
        "self_info",
        "other_sym_sizes",
        "other_sym_argsize_minus_1",
    ]


def test_tensors_still_used_are_saved_whole_and_outputs_as_result(model_of: ModelOf) -> None:
    info = model_of(f"- name: {MUL}\n  self: grad * other * result\n").info("mul.Tensor")
    (d,) = info.derivatives
    assert [(s.nctype.name, s.nctype.cpp_type(), s.expr) for s in d.saved_inputs] == [
        ("other", "at::Tensor", "other")
    ]
    assert [s.nctype.name for s in d.saved_outputs] == ["result"]
    assert info.op == "MulBackward0"
    assert [b.name for b in info.args_with_derivatives] == ["self"]


def test_nodes_are_numbered_per_name_and_keyed_per_dispatch_key(model_of: ModelOf) -> None:
    model = model_of(
        f"""
        - name: {MUL}
          self: grad * other
        - name: mul.Scalar(Tensor self, Scalar other) -> Tensor
          dispatch:
            Default:
              self: grad * other
            AutogradNestedTensor:
              self: grad * other
        - name: conv2d_forward(Tensor self, Tensor weight, SymInt[2] stride) -> Tensor
          self: grad
        """
    )
    assert model.info("mul.Tensor").op == "MulBackward0"
    assert model.info("mul.Scalar").op == "MulBackward1"
    assert model.info("mul.Scalar", "AutogradNestedTensor").op == "MulBackwardAutogradNestedTensor0"
    assert model.info("conv2d_forward").op == "Conv2DBackward0"  # str.title(); no "Forward"
    assert model.infos.used_dispatch_keys == {"Default", "AutogradNestedTensor"}


def test_non_differentiable_inputs_get_no_node(model_of: ModelOf) -> None:
    info = model_of(f"- name: {MUL}\n  self, other: non_differentiable\n").info("mul.Tensor")
    assert (info.op, info.derivatives, info.non_differentiable_arg_names) == (
        None,
        (),
        ("self", "other"),
    )


def test_named_gradients(model_of: ModelOf) -> None:
    model = model_of(
        """
        - name: max.dim(Tensor self, int dim, bool keepdim=False) -> (Tensor values, Tensor indices)
          self: value_selecting_reduction_backward(grad_values, dim, indices, self.sym_sizes())
          output_differentiability: [True, False]
        """
    )
    info = model.info("max.dim")
    assert info.available_named_gradients == ("grad_values",)
    assert info.used_named_gradients == {"grad_values"}
    assert info.output_differentiability == (True, False)
    assert [s.nctype.name for s in info.all_saved_outputs] == ["indices"]


def test_auto_element_wise_conjugates_the_backward_formula(model_of: ModelOf) -> None:
    model = model_of(
        "- name: abs(Tensor self) -> Tensor\n"
        "  self: grad * self.sgn()\n"
        "  result: auto_element_wise\n"
    )
    (fw,) = model.info("abs").forward_derivatives
    assert fw.formula == "(self_t.conj() * self_p.sgn()).conj()"
    assert (fw.required_inputs_fw_grad, fw.required_inputs_primal) == (("self",), ("self",))


def test_auto_linear_calls_the_function_on_tangents(model_of: ModelOf) -> None:
    model = model_of(
        """
        - name: conv2d_forward(Tensor self, Tensor weight, SymInt[2] stride) -> Tensor
          self, weight: conv_backward(grad, self, weight, stride, grad_input_mask)
          result: auto_linear
        """
    )
    (fw,) = model.info("conv2d_forward").forward_derivatives
    assert fw.formula == "at::conv2d_forward_symint(self_t, weight_t, stride)"


def test_an_inplace_function_reuses_the_out_of_place_forward_formula(model_of: ModelOf) -> None:
    model = model_of(
        "- name: abs(Tensor self) -> Tensor\n  self: grad * self.sgn()\n"
        "  result: self_t * self_p.sgn()\n"
    )
    fn = model.matched("abs_")
    assert fn.info is not None and fn.info["Default"] is model.info("abs")
    assert fn.fw_derivatives is not None
    (fw,) = fn.fw_derivatives["Default"]
    assert fw.formula == (
        "self_t_raw.defined() ? self_t_raw.copy_(original_self_t * original_self_p.sgn()) "
        ": original_self_t * original_self_p.sgn()"
    )
    assert (fw.var_names, fw.required_original_self_value, fw.is_reusing_outplace_formula) == (
        ("self",),
        True,
        True,
    )


def test_a_view_copy_shares_its_views_formulas(model_of: ModelOf) -> None:
    model = model_of(
        "- name: transpose.int(Tensor(a) self, int dim0, int dim1) -> Tensor(a)\n"
        "  self: grad.transpose(dim0, dim1)\n"
    )
    view, copy = model.info("transpose.int"), model.info("transpose_copy.int")
    assert (copy.name, copy.op) == ("transpose_copy.", "TransposeBackward0_copy")
    assert copy.derivatives is view.derivatives
    assert [str(s) for s in model.infos.infos] == [
        "transpose.int(Tensor(a) self, int dim0, int dim1) -> Tensor(a)",
        "transpose_copy.int(Tensor self, int dim0, int dim1) -> Tensor",
    ]


def test_an_optional_string_is_saved_whole_and_passed_as_a_view(model_of: ModelOf) -> None:
    model = model_of(
        "- name: pad_like(Tensor self, str? mode=None) -> Tensor\n"
        "  self: pad_backward(grad, mode, self.dim())\n"
    )
    (d,) = model.info("pad_like").derivatives
    assert d.formula == (
        "pad_backward(grad, mode.has_value() ? std::optional<std::string_view>(mode.value()) "
        ": std::nullopt, self_dim)"
    )
    assert [(s.nctype.name, s.nctype.cpp_type()) for s in d.saved_inputs] == [
        ("self_dim", INT64.cpp_type()),
        ("mode", "::std::optional<c10::string_view>"),
    ]


def test_check_summarises_a_good_file(tmp_path: Path) -> None:
    (tmp_path / "native_functions.yaml").write_text(SPEC)
    (tmp_path / "tags.yaml").write_text(TAGS)
    (tmp_path / "derivatives.yaml").write_text(f"- name: {MUL}\n  self: grad * other\n")
    out, err = io.StringIO(), io.StringIO()
    argv = ["check", str(tmp_path / "native_functions.yaml"), "--derivatives"]
    status = main([*argv, str(tmp_path / "derivatives.yaml")], out, err)
    assert (status, err.getvalue()) == (0, "")
    assert out.getvalue().splitlines()[1] == (
        f"{tmp_path / 'derivatives.yaml'}: ok: 1 operator with formulas (1 backward node; "
        "dispatch key Default), used by 2 functions"
    )


def test_check_without_derivatives_reads_none(tmp_path: Path) -> None:
    (tmp_path / "native_functions.yaml").write_text(SPEC)
    (tmp_path / "tags.yaml").write_text(TAGS)
    (tmp_path / "derivatives.yaml").write_text("not a list\n")
    out = io.StringIO()
    assert main(["check", str(tmp_path / "native_functions.yaml")], out, io.StringIO()) == 0
    assert len(out.getvalue().splitlines()) == 1
