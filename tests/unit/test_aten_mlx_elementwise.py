"""What elementwise lowerings need of the reader, the target and the C++ runtime.

An entry that promotes its operands itself (`promotion: none` with `promote:`) gets them
as operands, a tensor or a number, with no promotion prologue. The runtime's integer and
floating division helpers (`div_trunc`, `div_floor`, `remainder_trunc`,
`remainder_floor`), its sign bit and its check of add's `alpha`, compiled into a small
program, give what torch gives on the same values, or refuse where torch raises.
"""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest
from tests.unit.runtime_programs import compile_program

from opgen.spec.lowering.model import LoweringSpec, Promotion
from opgen.spec.lowering.reader import read_lowering
from opgen.spec.model import load_spec
from opgen.targets.aten_mlx import functions

NATIVE = """\
- func: sub.Tensor(Tensor self, Tensor other, *, Scalar alpha=1) -> Tensor
  variants: function, method
  dispatch:
    CompositeExplicitAutograd: sub
  tags: [core, pointwise]
- func: sub_.Tensor(Tensor(a!) self, Tensor other, *, Scalar alpha=1) -> Tensor(a!)
  variants: method
  dispatch:
    CompositeExplicitAutograd: sub_
  tags: pointwise
- func: sub.out(Tensor self, Tensor other, *, Scalar alpha=1, Tensor(a!) out) -> Tensor(a!)
  dispatch:
    CompositeExplicitAutograd: sub_out
  tags: pointwise
"""
TAGS = """\
- tag: core
  desc: Core ATen operators.
- tag: pointwise
  desc: Pointwise operators.
"""
LOWERING = """\
- op: sub.Tensor
  promotion: none
  promote: [self, other]
  code: |
    if (operand_dtype(self) == bool_ || operand_dtype(other) == bool_) {
      refuse(op, "self", "subtraction with a bool tensor");
    }
    ResultType result_type(op);
    result_type.add(self);
    result_type.add(other);
    const Promoted promote_to{op, result_type.dtype(), result_type.dtype()};
    check_alpha(op, promote_to.compute, alpha);
    return promote_to.finish(subtract(promote_to(self), multiply(promote_to(other), Alpha{alpha, promote_to.compute})));
"""  # noqa: E501


@pytest.fixture(scope="module")
def lowering(tmp_path_factory: pytest.TempPathFactory) -> LoweringSpec:
    folder = tmp_path_factory.mktemp("elementwise")
    (folder / "native_functions.yaml").write_text(NATIVE)
    (folder / "tags.yaml").write_text(TAGS)
    (folder / "sub.yaml").write_text(LOWERING)
    spec = load_spec(str(folder / "native_functions.yaml"), str(folder / "tags.yaml"))
    return read_lowering([str(folder / "sub.yaml")], spec, mlx=None)


def test_operands_promoted_by_the_body_are_listed_without_a_promotion(
    lowering: LoweringSpec,
) -> None:
    sub = lowering.by_name["aten::sub.Tensor"]
    assert (sub.promotion, sub.promoted) == (Promotion.NONE, ("self", "other"))


def test_operands_promoted_by_the_body_come_as_they_are_given(lowering: LoweringSpec) -> None:
    """Tensors or numbers (Operand), under their own names, with no prologue; an
    in-place variant's self, which it writes, is an array."""
    lines = functions.function_definition(lowering.by_name["aten::sub.Tensor"], lowering)
    assert lines[1] == (
        "mlx::core::array aten_sub_Tensor(const Operand& self, const Operand& other, "
        "const Scalar& alpha) {"
    )
    assert not any("result_type.add(self_arg)" in line for line in lines)
    assert lines[-2] == "  return computed;"
    inplace = functions.function_definition(lowering.by_name["aten::sub_.Tensor"], lowering)
    assert inplace[1] == (
        "mlx::core::array aten_sub__Tensor(const mlx::core::array& self, const Operand& other, "
        "const Scalar& alpha) {"
    )


# Each input line: a helper and two operands `dtype:value`; each output line the result
# as `dtype value`, or `refused`.
HELPERS_PROGRAM = r"""
#include <iomanip>
#include <iostream>
#include <sstream>
#include <string>

#include "aten_mlx_runtime.h"

using namespace aten_mlx;

static array value_of(const std::string& text) {
  using namespace mlx::core;
  const std::string type = text.substr(0, text.find(':'));
  const std::string number = text.substr(text.find(':') + 1);
  if (type == "float32") {
    return array(std::stof(number), float32);
  }
  if (type == "bfloat16") {
    return astype(array(std::stof(number), float32), bfloat16);
  }
  if (type == "bool") {
    return array(number == "1");
  }
  if (type == "int32") {
    return array(static_cast<std::int32_t>(std::stoll(number)), int32);
  }
  return array(static_cast<std::int64_t>(std::stoll(number)), int64);
}

int main() {
  std::string line;
  while (std::getline(std::cin, line)) {
    std::istringstream words(line);
    std::string helper, first, second;
    words >> helper >> first >> second;
    try {
      const array a = value_of(first);
      const array b = value_of(second);
      array result = a;
      if (helper == "div_trunc") {
        result = div_trunc("test", "other", a, b);
      } else if (helper == "div_floor") {
        result = div_floor("test", "other", a, b);
      } else if (helper == "remainder_trunc") {
        result = remainder_trunc("test", "other", a, b);
      } else if (helper == "remainder_floor") {
        result = remainder_floor("test", "other", a, b);
      } else if (helper == "sign_bit") {
        result = sign_bit(a);
      } else {
        check_alpha("test", a.dtype(), second == "bool:1" ? Scalar(true) : Scalar(2.5));
      }
      const bool real = is_floating(result.dtype());
      result = mlx::core::astype(result, real ? mlx::core::float64 : mlx::core::int64);
      result.eval();
      if (real) {
        std::cout << std::setprecision(17) << result.item<double>() << "\n";
      } else {
        std::cout << result.item<std::int64_t>() << "\n";
      }
    } catch (const std::invalid_argument&) {
      std::cout << "refused\n";
    }
  }
}
"""
FLOATS = ("7.5", "-7.5", "2", "-2", "0", "-0", "0.1", "-13.98", "1e30", "inf", "-inf", "nan")
INTEGERS = ("7", "-7", "2", "-2", "1", "-1", "0", "9223372036854775807", "-9223372036854775807")
LOWEST = "-9223372036854775808"  # by -1, torch's division traps (SIGFPE); the runtime wraps
HELPERS = ("div_trunc", "div_floor", "remainder_trunc", "remainder_floor")


@pytest.fixture(scope="module")
def helpers_program(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return compile_program(HELPERS_PROGRAM, tmp_path_factory.mktemp("helpers"), "helpers")


def torch_value(helper: str, first: str, second: str) -> str:
    """What torch gives for the line the program reads: its value, or `refused`."""
    import torch

    def tensor(text: str) -> torch.Tensor:
        dtype, number = text.split(":")
        if dtype in ("float32", "bfloat16"):
            return torch.tensor(float(number), dtype=getattr(torch, dtype))
        return torch.tensor(int(number), dtype=getattr(torch, dtype))

    a, b = tensor(first), tensor(second)
    try:
        if helper == "div_trunc":
            result = torch.div(a, b, rounding_mode="trunc")
        elif helper == "div_floor":
            result = torch.div(a, b, rounding_mode="floor")
        elif helper == "remainder_trunc":
            result = torch.fmod(a, b)
        elif helper == "remainder_floor":
            result = torch.remainder(a, b)
        elif helper == "sign_bit":
            result = torch.signbit(a)
        else:
            alpha = True if second == "bool:1" else 2.5
            torch.add(a, a, alpha=alpha)
            return "ok"
    except RuntimeError:
        return "refused"
    return repr(float(result.double().item()))


def same(expected: str, actual: str) -> bool:
    if expected in ("refused", "ok") or actual == "refused":
        return expected == actual or (expected == "ok" and actual != "refused")
    if expected.lstrip("-").isdigit():
        return int(float(actual)) == int(expected) or float(actual) == float(expected)
    e, a = float(expected), float(actual)
    return (e != e and a != a) or e == a or abs(e - a) <= 1e-6 * abs(e)


def test_the_runtimes_division_helpers_are_torchs(helpers_program: Path) -> None:
    """Integer division truncates or floors as torch's does (the most negative number by
    -1 wraps), a zero integer divisor is refused (torch raises ZeroDivisionError), and
    floating division follows c10's div_floor_floating and fmod, over special values."""
    lines = [
        f"{helper} {dtype}:{a} {dtype}:{b}"
        for helper in HELPERS
        for dtype, values in (("float32", FLOATS), ("int64", INTEGERS))
        for a in values
        for b in values
    ]
    lines += [f"sign_bit float32:{v} float32:0" for v in FLOATS]
    lines += [f"alpha {d}:1 bool:1" for d in ("bool", "int64", "float32")]
    lines += [f"alpha {d}:1 float32:2.5" for d in ("int64", "float32")]
    wrapped = {f"{helper} int64:{LOWEST} int64:-1": value for helper, value in (
        ("div_trunc", LOWEST), ("div_floor", LOWEST), ("remainder_trunc", "0"),
        ("remainder_floor", "0"))}  # fmt: skip
    lines += list(wrapped)
    run = subprocess.run(
        [str(helpers_program)], input="\n".join(lines) + "\n", capture_output=True, text=True
    )
    assert run.returncode == 0, run.stderr[-2000:]
    outputs = run.stdout.splitlines()
    wrong = []
    for line, actual in zip(lines, outputs, strict=True):
        helper, first, second = line.split()
        expected = wrapped.get(line) or torch_value(helper, first, second)
        if helper == "alpha":
            expected = "refused" if expected == "refused" else "ok"
        if not same(expected, actual):
            wrong.append(f"{line}: torch {expected}, runtime {actual}")
    assert wrong == []
