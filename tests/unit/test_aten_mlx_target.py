"""`opgen aten-mlx`'s generator: small lowering specs in, exact C++ and Python out.

Each test reads a lowering spec against the small ATen spec below and states what the
target writes for it: a pointwise function's promotion prologue, a reduction's input
and `axes`, an in-place and an out= variant's finish, a composition with the callee's
defaults filled in, a sized list, the Python names, stubs and OPERATORS. The last test
compiles the C++ runtime's promotion (`aten_mlx_runtime.h`) into a small program and
compares it with torch.result_type and torch's elementwise type promotion, case by case.
"""

from __future__ import annotations

import os
import subprocess
from pathlib import Path
from typing import Any

import pytest
from tests.unit.runtime_programs import compile_program

from opgen.api.aten_mlx import python_name
from opgen.spec.lowering.model import LoweringSpec
from opgen.spec.lowering.reader import read_lowering
from opgen.spec.model import Spec, load_spec
from opgen.spec.schema import OperatorName
from opgen.targets.aten_mlx import functions, package, sources

NATIVE = """\
- func: add.Tensor(Tensor self, Tensor other, *, Scalar alpha=1) -> Tensor
  variants: function, method
  dispatch:
    CompositeExplicitAutograd: add
  tags: [core, pointwise]
- func: mul.Tensor(Tensor self, Tensor other) -> Tensor
  variants: function, method
  dispatch:
    CompositeExplicitAutograd: mul
  tags: [core, pointwise]
- func: mul_.Tensor(Tensor(a!) self, Tensor other) -> Tensor(a!)
  variants: method
  dispatch:
    CompositeExplicitAutograd: mul_
  tags: pointwise
- func: mul.out(Tensor self, Tensor other, *, Tensor(a!) out) -> Tensor(a!)
  dispatch:
    CompositeExplicitAutograd: mul_out
  tags: pointwise
- func: sigmoid(Tensor self) -> Tensor
  variants: function, method
  dispatch:
    CompositeExplicitAutograd: sigmoid
  tags: [core, pointwise]
- func: silu(Tensor self) -> Tensor
  dispatch:
    CompositeExplicitAutograd: silu
  tags: [core, pointwise]
- func: sum(Tensor self, *, ScalarType? dtype=None) -> Tensor
  variants: function, method
  dispatch:
    CompositeExplicitAutograd: sum
- func: sum.dim_IntList(Tensor self, int[1]? dim, bool keepdim=False, *, ScalarType? dtype=None) -> Tensor
  variants: function, method
  dispatch:
    CompositeExplicitAutograd: sum
  tags: [core, reduction]
- func: sum.IntList_out(Tensor self, int[1]? dim, bool keepdim=False, *, ScalarType? dtype=None, Tensor(a!) out) -> Tensor(a!)
  dispatch:
    CompositeExplicitAutograd: sum_out
  tags: reduction
- func: max_pool2d(Tensor self, int[2] kernel_size, int[2] stride=[], int[2] padding=0, int[2] dilation=1, bool ceil_mode=False) -> Tensor
- func: full(SymInt[] size, Scalar fill_value, *, ScalarType? dtype=None, Layout? layout=None, Device? device=None, bool? pin_memory=None) -> Tensor
  dispatch:
    CompositeExplicitAutograd: full
  tags: core
"""  # noqa: E501
TAGS = """\
- tag: core
  desc: Core ATen operators.
- tag: pointwise
  desc: Pointwise operators.
- tag: reduction
  desc: Reductions.
"""
LOWERING = """\
- module: tiny_ops
- op: mul.Tensor
  call: multiply(self, other)
- op: sigmoid
  call: sigmoid(self)
  promotion: int_to_float
- op: silu
  compose: mul.Tensor(self, sigmoid(self))
- op: sum.dim_IntList
  call: sum(self, axes, keepdim)
  integral_to_long: true
- op: sum
  compose: sum.dim_IntList(self, None, dtype=dtype)
- op: max_pool2d
  code: |
    if (ceil_mode) {
      refuse(op, "ceil_mode", "MLX's pooling rounds down");
    }
    return max_pool(self, kernel_size, stride.empty() ? kernel_size : stride, padding, dilation);
- op: full
  code: |
    const Dtype type = dtype_or(dtype, fill_value.wrapped_dtype());
    return full(to_shape(op, "size", size), fill_value.as_array(type), type);
"""


@pytest.fixture(scope="module")
def lowering(tmp_path_factory: pytest.TempPathFactory) -> LoweringSpec:
    folder = tmp_path_factory.mktemp("tiny")
    (folder / "native_functions.yaml").write_text(NATIVE)
    (folder / "tags.yaml").write_text(TAGS)
    (folder / "tiny.yaml").write_text(LOWERING)
    spec: Spec = load_spec(str(folder / "native_functions.yaml"), str(folder / "tags.yaml"))
    return read_lowering([str(folder / "tiny.yaml")], spec, mlx=None)


def definition(lowering: LoweringSpec, name: str) -> list[str]:
    """The C++ function of the operator `name`, its spec's directory written `$DIR`."""
    lines = functions.function_definition(lowering.by_name[name], lowering)
    folder = os.path.dirname(lowering.files[0])
    return [line.replace(folder, "$DIR") for line in lines]


def test_a_pointwise_function_promotes_its_operands_first(lowering: LoweringSpec) -> None:
    """Each promoted Tensor is an Operand (an array or a number) named `<name>_arg`; the
    body sees it as an array of the dtype the operator computes in, under its own name
    (the caller's array itself when it has that dtype, else a cast held beside it), and
    its value is returned in the promoted result dtype."""
    assert definition(lowering, "aten::mul.Tensor") == [
        "// aten::mul.Tensor: mul.Tensor(Tensor self, Tensor other) -> Tensor",
        "mlx::core::array aten_mul_Tensor(const Operand& self_arg, const Operand& other_arg) {",
        '  static constexpr const char* op = "aten::mul.Tensor";',
        "  ResultType result_type(op);",
        "  result_type.add(self_arg);",
        "  result_type.add(other_arg);",
        "  const Promoted promote = promoted(op, Promotion::default_, result_type.dtype());",
        "  std::optional<mlx::core::array> self_held;",
        "  const mlx::core::array& self = promote.bind(self_arg, self_held);",
        "  std::optional<mlx::core::array> other_held;",
        "  const mlx::core::array& other = promote.bind(other_arg, other_held);",
        "  mlx::core::array computed = [&]() -> mlx::core::array {",
        "    using namespace mlx::core;",
        '#line 3 "$DIR/tiny.yaml"',
        "        return multiply(self, other);",
        "#line OPGEN_GENERATED_LINE",
        "  }();",
        "  return promote.finish(std::move(computed));",
        "}",
    ]


def test_promotion_says_which_kind(lowering: LoweringSpec) -> None:
    assert (
        "  const Promoted promote = promoted(op, Promotion::int_to_float, result_type.dtype());"
        in definition(lowering, "aten::sigmoid")
    )


def test_a_reduction_gets_its_input_in_the_dtype_it_reduces_in_and_its_axes(
    lowering: LoweringSpec,
) -> None:
    """`dtype` (or int64 for bool and integers, `integral_to_long`) is applied before the
    body, and `dim` is MLX's axes."""
    assert definition(lowering, "aten::sum.dim_IntList")[1:6] == [
        "mlx::core::array aten_sum_dim_IntList(const mlx::core::array& self_arg, "
        "const std::optional<IntList>& dim, bool keepdim, "
        "const std::optional<mlx::core::Dtype>& dtype) {",
        '  static constexpr const char* op = "aten::sum.dim_IntList";',
        "  std::optional<mlx::core::array> self_held;",
        "  const mlx::core::array& self = reduction_input(self_arg, dtype, true, self_held);",
        '  const std::vector<int> axes = reduction_axes(op, "dim", dim, self.ndim());',
    ]


def test_an_in_place_variant_writes_its_self(lowering: LoweringSpec) -> None:
    """The in-place variant computes the new value in the dtype `self` had (its self is
    an array, never a number) and writes it into the array the caller passed."""
    lines = definition(lowering, "aten::mul_.Tensor")
    assert lines[1:3] == [
        "mlx::core::array aten_mul__Tensor(const mlx::core::array& self_arg, "
        "const Operand& other_arg) {",
        '  static constexpr const char* op = "aten::mul_.Tensor";',
    ]
    assert lines[-2:] == [
        "  return finish_inplace(op, promote.finish(std::move(computed)), self_arg, true);",
        "}",
    ]


def test_an_out_variant_writes_the_value_into_out(lowering: LoweringSpec) -> None:
    """out= is taken, its dtype checked (PyTorch's can_cast), and the value written into
    it in its dtype (resized to the result's shape, as PyTorch resizes it)."""
    assert definition(lowering, "aten::mul.out")[1] == (
        "mlx::core::array aten_mul_out(const Operand& self_arg, const Operand& other_arg, "
        "const mlx::core::array& out) {"
    )
    assert definition(lowering, "aten::mul.out")[-2] == (
        '  return finish_out(op, "out", promote.finish(std::move(computed)), out);'
    )
    assert definition(lowering, "aten::sum.IntList_out")[-2] == (
        '  return finish_out(op, "out", computed, out);'
    )


def test_a_composition_calls_the_lowered_functions_with_every_argument(
    lowering: LoweringSpec,
) -> None:
    """Arguments a composition leaves out take the callee's schema defaults, as C++."""
    assert definition(lowering, "aten::sum") == [
        "// aten::sum: sum(Tensor self, *, ScalarType? dtype=None) -> Tensor",
        "mlx::core::array aten_sum(const mlx::core::array& self, "
        "const std::optional<mlx::core::Dtype>& dtype) {",
        '  static constexpr const char* op = "aten::sum";',
        "  mlx::core::array computed = [&]() -> mlx::core::array {",
        "    using namespace mlx::core;",
        "    return aten_sum_dim_IntList(self, std::nullopt, false, dtype);",
        "  }();",
        "  return computed;",
        "}",
    ]
    assert "    return aten_mul_Tensor(self, aten_sigmoid(self));" in definition(
        lowering, "aten::silu"
    )


def test_a_sized_list_takes_one_number_for_every_element(lowering: LoweringSpec) -> None:
    """`int[2] padding=1` as PyTorch reads it: the body sees the list of two. An empty
    list, where the schema's default is one (`stride=[]`), stands for a value the operator
    derives (max_pool2d's stride: kernel_size), and is passed as it is."""
    assert definition(lowering, "aten::max_pool2d")[1:7] == [
        "mlx::core::array aten_max_pool2d(const mlx::core::array& self, "
        "const IntList& kernel_size_arg, const IntList& stride_arg, "
        "const IntList& padding_arg, const IntList& dilation_arg, bool ceil_mode) {",
        '  static constexpr const char* op = "aten::max_pool2d";',
        '  const IntList kernel_size = sized(op, "kernel_size", kernel_size_arg, 2);',
        "  const IntList stride = "
        'stride_arg.empty() ? stride_arg : sized(op, "stride", stride_arg, 2);',
        '  const IntList padding = sized(op, "padding", padding_arg, 2);',
        '  const IntList dilation = sized(op, "dilation", dilation_arg, 2);',
    ]


def test_a_factory_checks_its_layout_and_takes_its_code_as_written(
    lowering: LoweringSpec,
) -> None:
    """Device and pin_memory change where values live, never what they are; a layout
    other than strided is refused (`check_layout`). `code:` keeps its lines."""
    assert definition(lowering, "aten::full")[2:10] == [
        '  static constexpr const char* op = "aten::full";',
        "  check_layout(op, layout);",
        "  mlx::core::array computed = [&]() -> mlx::core::array {",
        "    using namespace mlx::core;",
        '#line 22 "$DIR/tiny.yaml"',
        "const Dtype type = dtype_or(dtype, fill_value.wrapped_dtype());",
        'return full(to_shape(op, "size", size), fill_value.as_array(type), type);',
        "#line OPGEN_GENERATED_LINE",
    ]


def test_a_shard_points_back_at_itself_after_each_body(lowering: LoweringSpec) -> None:
    text = sources.shard_source(lowering, lowering.lowerings[:1], 0, "G")
    lines = text.split("\n")
    restore = next(
        i for i, line in enumerate(lines) if line.startswith("#line") and "ops_0" in line
    )
    assert lines[restore] == f'#line {restore + 2} "aten_mlx_ops_0.cpp"'


def test_python_names() -> None:
    """`name_overload`; an in-place overload keeps its underscore; a Python keyword gets
    one more."""
    assert [
        python_name(OperatorName.parse(name))
        for name in ("add.Tensor", "add_.Tensor", "abs", "sum.IntList_out", "import")
    ] == ["add_Tensor", "add__Tensor", "abs", "sum_IntList_out", "import_"]


def test_stubs_show_the_schemas_defaults_and_keyword_only_arguments(
    lowering: LoweringSpec,
) -> None:
    stub = package.ops_stub(lowering, "G").splitlines()
    assert stub[:6] == [
        "# G",
        "from collections.abc import Sequence",
        "",
        "import mlx.core",
        "from mlx.core import Dtype, array",
        "",
    ]
    assert stub[6:] == [
        "def mul_Tensor(self: array | bool | int | float | complex, "
        "other: array | bool | int | float | complex) -> array: ...",
        "def mul__Tensor(self: array, other: array | bool | int | float | complex) -> array: ...",
        "def mul_out(self: array | bool | int | float | complex, "
        "other: array | bool | int | float | complex, *, out: array) -> array: ...",
        "def sigmoid(self: array | bool | int | float | complex) -> array: ...",
        "def silu(self: array) -> array: ...",
        "def sum(self: array, *, dtype: Dtype | None = None) -> array: ...",
        "def sum_dim_IntList(self: array, dim: int | Sequence[int] | None, "
        "keepdim: bool = False, *, dtype: Dtype | None = None) -> array: ...",
        "def sum_IntList_out(self: array, dim: int | Sequence[int] | None, "
        "keepdim: bool = False, *, dtype: Dtype | None = None, out: array) -> array: ...",
        "def max_pool2d(self: array, kernel_size: int | Sequence[int], "
        "stride: int | Sequence[int] = [], padding: int | Sequence[int] = 0, "
        "dilation: int | Sequence[int] = 1, ceil_mode: bool = False) -> array: ...",
        "def full(size: int | Sequence[int], fill_value: bool | int | float | complex, *, "
        "dtype: Dtype | None = None, layout: str | None = None, device: str | None = None, "
        "pin_memory: bool | None = None) -> array: ...",
    ]


def test_the_binding_gives_python_the_schemas_arguments(lowering: LoweringSpec) -> None:
    assert sources.binding(lowering.by_name["aten::sum.dim_IntList"]) == [
        '  m.def("sum_dim_IntList", &aten_sum_dim_IntList,',
        '      nb::arg("self"),',
        '      nb::arg("dim").none(),',
        '      nb::arg("keepdim") = nb::bool_(false),',
        "      nb::kw_only(),",
        '      nb::arg("dtype").none() = nb::none(),',
        '      nb::sig("def sum_dim_IntList(self: array, dim: int | Sequence[int] | None, '
        'keepdim: bool = False, *, dtype: Dtype | None = None) -> array"),',
        '      "aten::sum.dim_IntList: sum.dim_IntList(Tensor self, int[1]? dim, '
        'bool keepdim=False, *, ScalarType? dtype=None) -> Tensor");',
    ]


def test_operators_maps_each_overloads_name_to_its_function(lowering: LoweringSpec) -> None:
    assert package.operators_source(lowering, "G") == (
        "# G\n"
        '"""OPERATORS: each lowered operator\'s name, and its function."""\n'
        "\n"
        "from . import _ops\n"
        "\n"
        "OPERATORS = {\n"
        '    "aten::mul.Tensor": _ops.mul_Tensor,\n'
        '    "aten::mul_.Tensor": _ops.mul__Tensor,\n'
        '    "aten::mul.out": _ops.mul_out,\n'
        '    "aten::sigmoid": _ops.sigmoid,\n'
        '    "aten::silu": _ops.silu,\n'
        '    "aten::sum": _ops.sum,\n'
        '    "aten::sum.dim_IntList": _ops.sum_dim_IntList,\n'
        '    "aten::sum.IntList_out": _ops.sum_IntList_out,\n'
        '    "aten::max_pool2d": _ops.max_pool2d,\n'
        '    "aten::full": _ops.full,\n'
        "}\n"
    )


# The runtime's promotion, compiled: each input line is a promotion kind and operands
# (`t:<dtype>` a tensor of one dimension, `z:<dtype>` a 0-d tensor, `s:<kind>` a Python
# number); each output line the result type, and the dtypes the kind computes and
# returns in, or `error`.
PROMOTION_PROGRAM = r"""
#include <iostream>
#include <sstream>
#include <string>

#include "aten_mlx_runtime.h"

using namespace aten_mlx;

static Dtype dtype_of(const std::string& name) {
  using namespace mlx::core;
  static const std::pair<const char*, Dtype> names[] = {
      {"bool", bool_}, {"uint8", uint8}, {"int8", int8}, {"int16", int16},
      {"int32", int32}, {"int64", int64}, {"float16", float16}, {"bfloat16", bfloat16},
      {"float32", float32}, {"float64", float64}, {"complex64", complex64}};
  for (const auto& [text, dtype] : names) {
    if (name == text) {
      return dtype;
    }
  }
  throw std::invalid_argument("dtype " + name);
}

static std::string name_of(Dtype dtype) {
  using namespace mlx::core;
  static const std::pair<const char*, Dtype> names[] = {
      {"bool", bool_}, {"uint8", uint8}, {"int8", int8}, {"int16", int16},
      {"int32", int32}, {"int64", int64}, {"float16", float16}, {"bfloat16", bfloat16},
      {"float32", float32}, {"float64", float64}, {"complex64", complex64}};
  for (const auto& [text, d] : names) {
    if (d == dtype) {
      return text;
    }
  }
  return "?";
}

int main() {
  std::string line;
  while (std::getline(std::cin, line)) {
    std::istringstream words(line);
    std::string kind, operand;
    words >> kind;
    try {
      ResultType result_type("test");
      while (words >> operand) {
        const std::string what = operand.substr(2);
        if (operand[0] == 't') {
          result_type.add(mlx::core::zeros({2}, dtype_of(what)));
        } else if (operand[0] == 'z') {
          result_type.add(mlx::core::zeros({}, dtype_of(what)));
        } else if (what == "bool") {
          result_type.add(Scalar(true));
        } else if (what == "int") {
          result_type.add(Scalar(std::int64_t{2}));
        } else if (what == "float") {
          result_type.add(Scalar(2.5));
        } else {
          result_type.add(Scalar(std::complex<double>(1, 1)));
        }
      }
      const Promotion promotion = kind == "int_to_float" ? Promotion::int_to_float
          : kind == "always_bool"      ? Promotion::always_bool
          : kind == "complex_to_float" ? Promotion::complex_to_float
          : kind == "bool_to_long"     ? Promotion::bool_to_long
                                       : Promotion::default_;
      const Dtype common = result_type.dtype();
      const Promoted promote = promoted("test", promotion, common);
      std::cout << name_of(common) << " " << name_of(promote.compute) << " "
                << name_of(promote.result) << "\n";
    } catch (const std::exception&) {
      std::cout << "error\n";
    }
  }
}
"""
DTYPES = (
    "bool",
    "uint8",
    "int8",
    "int16",
    "int32",
    "int64",
    "float16",
    "bfloat16",
    "float32",
    "float64",
    "complex64",
)
NUMBERS = ("bool", "int", "float", "complex")
KINDS = ("default", "int_to_float", "always_bool", "complex_to_float", "bool_to_long")


def promotion_cases() -> list[tuple[str, ...]]:
    """Operand lists: two tensors of every pair of dtypes (each dimensioned or 0-d), a
    tensor with a Python number, a 0-d tensor with a dimensioned one and a number."""
    cases: list[tuple[str, ...]] = []
    for a in DTYPES:
        for b in DTYPES:
            cases += [(f"t:{a}", f"t:{b}"), (f"t:{a}", f"z:{b}"), (f"z:{a}", f"z:{b}")]
        for number in NUMBERS:
            cases += [(f"t:{a}", f"s:{number}"), (f"z:{a}", f"s:{number}")]
            cases += [(f"t:{a}", "z:int64", f"s:{number}")]
    return cases


@pytest.fixture(scope="module")
def promotion_program(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return compile_program(PROMOTION_PROGRAM, tmp_path_factory.mktemp("promotion"), "promotion")


def torch_promotion(kind: str, operands: tuple[str, ...]) -> str:
    """What torch says for the same operands: `result compute result` as the program
    prints it (torch computes float16 and bfloat16 in float32; MLX in them), or `error`."""
    import torch
    from torch._prims_common import ELEMENTWISE_TYPE_PROMOTION_KIND, elementwise_dtypes

    values: list[Any] = []
    for operand in operands:
        what = operand[2:]
        if operand[0] in "tz":
            shape = (2,) if operand[0] == "t" else ()
            values.append(torch.zeros(shape, dtype=getattr(torch, what)))
        else:
            values.append({"bool": True, "int": 2, "float": 2.5, "complex": 1 + 1j}[what])
    try:
        if len(values) == 2:
            common = torch.result_type(values[0], values[1])
        else:
            default = ELEMENTWISE_TYPE_PROMOTION_KIND.DEFAULT
            common = elementwise_dtypes(*values, type_promotion_kind=default)[1]
        compute, result = elementwise_dtypes(
            *values, type_promotion_kind=getattr(ELEMENTWISE_TYPE_PROMOTION_KIND, kind.upper())
        )
    except RuntimeError:
        return "error"
    if {torch.complex32, torch.complex128} & {common, compute, result}:
        return "error"  # MLX has neither: the runtime refuses what it cannot return
    if kind != "always_bool" and compute == torch.float32 and result != torch.float32:
        compute = result  # MLX computes in the half-precision dtype itself
    if kind == "always_bool":
        compute = common
    names = [str(d).removeprefix("torch.") for d in (common, compute, result)]
    return " ".join(names)


def test_the_runtimes_promotion_is_torchs(promotion_program: Path) -> None:
    """torch.result_type of tensors (by dimension: more than zero, zero) and Python
    numbers, and each kind's compute and result dtypes, over every dtype MLX has; a
    result MLX has no dtype for is refused."""
    pytest.importorskip("torch")
    lines = [(kind, case) for kind in KINDS for case in promotion_cases()]
    ran = subprocess.run(
        [str(promotion_program)],
        input="".join(f"{kind} {' '.join(case)}\n" for kind, case in lines),
        capture_output=True,
        text=True,
        check=True,
    )
    results = zip(lines, ran.stdout.splitlines(), strict=True)
    compared = [(kind, case, got, torch_promotion(kind, case)) for (kind, case), got in results]
    mismatches = [
        f"{kind} {' '.join(case)}: runtime {got}, torch {want}"
        for kind, case, got, want in compared
        if got != want
    ]
    assert mismatches == []
