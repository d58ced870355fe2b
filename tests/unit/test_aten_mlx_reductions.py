"""The runtime's reduction helpers (`aten_mlx_runtime.h`) against torch: the stable order
of sorts (NaN last, first when descending; equal elements in their order), the index of
the first extreme (NaN the most extreme), the variance with a correction (at or past the
count: inf or nan), and the shapes of reductions of arrays without elements."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest
from tests.unit.runtime_programs import compile_program

# Each input line: a helper, a number (descending, largest, correction or axis) and the
# float32 values of a 1-d array; each output line the result's values, or `refused`.
PROGRAM = r"""
#include <iomanip>
#include <iostream>
#include <sstream>
#include <string>
#include <vector>

#include "aten_mlx_runtime.h"

using namespace aten_mlx;

int main() {
  std::string line;
  while (std::getline(std::cin, line)) {
    std::istringstream words(line);
    std::string helper, word;
    double number = 0;
    words >> helper >> number;
    std::vector<float> values;
    while (words >> word) {
      values.push_back(std::stof(word));
    }
    const array x(values.begin(), mlx::core::Shape{static_cast<int>(values.size())});
    try {
      array result = x;
      if (helper == "order") {
        result = stable_order(x, 0, number != 0);
      } else if (helper == "extreme") {
        result = arg_extreme(x, 0, false, number != 0);
      } else if (helper == "variance") {
        result = variance("test", x, {0}, number, false);
      } else {
        check_reducible("test", x, {0});
        result = mlx::core::zeros(reduced_shape(x, {0}, number != 0), mlx::core::float32);
        std::cout << "shape " << result.ndim() << "\n";
        continue;
      }
      result = mlx::core::astype(result, mlx::core::float64);
      result.eval();
      std::ostringstream text;
      text << std::setprecision(9);
      for (std::size_t i = 0; i < result.size(); ++i) {
        text << (i ? " " : "") << result.data<double>()[i];
      }
      std::cout << text.str() << "\n";
    } catch (const std::invalid_argument&) {
      std::cout << "refused\n";
    }
  }
}
"""
ARRAYS = (
    "3 1 2 1 3 1",
    "nan 1 -inf nan inf 1 0 -0",
    "2 2 2 2 2 2 2 2 2 2 2 2 2 2 2 2 2 2 2 1",
    "5",
    "1 1e30 -1e30 nan",
    "-2.5 7.25 0.5 -2.5",
)


@pytest.fixture(scope="module")
def program(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return compile_program(PROGRAM, tmp_path_factory.mktemp("reductions"), "reductions")


def run_lines(program: Path, lines: list[str]) -> list[str]:
    run = subprocess.run(
        [str(program)], input="\n".join(lines) + "\n", capture_output=True, text=True
    )
    assert run.returncode == 0, run.stderr[-2000:]
    return run.stdout.splitlines()


def torch_line(line: str) -> list[float] | str:
    import torch

    helper, number, *words = line.split()
    x = torch.tensor([float(w) for w in words])
    if helper == "order":
        return torch.sort(x, stable=True, descending=number != "0")[1].tolist()
    if helper == "extreme":
        return [int((torch.argmax if number != "0" else torch.argmin)(x))]
    return [float(torch.var(x, correction=float(number)))]


def test_the_reduction_helpers_are_torchs(program: Path) -> None:
    """Stable orders, first extremes with NaN propagating, and corrected variances, as
    torch computes them, over ties, NaN, infinities and signed zeros."""
    lines = [
        f"{helper} {number} {values}"
        for values in ARRAYS
        for helper, numbers in (
            ("order", ("0", "1")),
            ("extreme", ("0", "1")),
            ("variance", ("0", "1", "0.5", "6", "20")),
        )
        for number in numbers
    ]
    wrong = []
    for line, actual in zip(lines, run_lines(program, lines), strict=True):
        expected = torch_line(line)
        got = [float(v) for v in actual.split()]
        assert not isinstance(expected, str)
        same = len(got) == len(expected) and all(
            (e != e and g != g) or e == g or abs(e - g) <= 1e-5 * abs(e)
            for e, g in zip(expected, got, strict=True)
        )
        if not same:
            wrong.append(f"{line}: torch {expected}, runtime {got}")
    assert wrong == []


def test_a_reduction_without_identity_over_nothing_is_refused(program: Path) -> None:
    """max, argmax and their kind refuse an empty dimension, as torch raises; a
    reduction's shape keeps the reduced dimension as 1 with keepdim, drops it without."""
    assert run_lines(program, ["shape 0", "shape 1 4 5", "shape 0 4 5"]) == [
        "refused",
        "shape 1",
        "shape 0",
    ]
