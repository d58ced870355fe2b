"""Small MLX extensions built with CMake, each showing one property of what `opgen mlx` makes.

One CMake project builds four modules from four specs, once per test session (in a
temporary directory, or under OPGEN_EXAMPLE_BUILD_DIR, kept between test sessions):

- `bcast`, which builds: gradient formulas that give the output's shape for
  inputs that broadcast are summed back to each input's shape, in composite
  operators (`custom_vjp`) and in primitives (`Primitive::vjp`), and a formula
  giving any other shape is a ValueError naming the operator and the input;
- `missing`, whose `_impl` is declared and never defined: the link fails,
  naming the function demangled, instead of the import;
- `bad_formula`, whose formula names only MLX functions but calls one with the
  wrong arguments: the compiler's error names the spec's file, line and column;
- `defaults`, bound functions whose defaults are Python's infinities, NaN and a pair.
"""

from __future__ import annotations

import importlib
import io
import os
import re
import subprocess
import sys
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from types import ModuleType
from typing import Any

import mlx.core as mx
import numpy as np
import pytest
from tests.examples.finite_differences import finite_differences

from opgen.cli import main

linux = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="GNU toolchain messages")

BCAST_SPEC = """\
- namespace: bcast
  module: bcast
- func: bcast::scaled_sum(Tensor x, Tensor y, *, float alpha=2.0) -> Tensor
  doc: alpha * x + y, broadcast.
  grad:
    x: multiply(grad, array(alpha, grad.dtype()), s)
    y: grad
- func: bcast::scaled_sum_kernel(Tensor x, Tensor y, *, float alpha=2.0) -> Tensor
  doc: alpha * x + y for 2-D float32 arrays, broadcast by the kernel.
  dispatch: {cpu: scaled_sum_cpu}
  shape: Shape{std::max(x.shape(0), y.shape(0)), std::max(x.shape(1), y.shape(1))}
  grad:
    x: multiply(grad, array(alpha, grad.dtype()), s)
    y: grad
- func: bcast::transposed(Tensor x) -> Tensor
  doc: A copy of x, whose formula gives the transposed gradient.
  grad:
    x: transpose(grad, s)
- func: bcast::transposed_kernel(Tensor x) -> Tensor
  doc: The same, as a primitive.
  dispatch: {cpu: copy_cpu}
  grad:
    x: transpose(grad, s)
- func: bcast::total(Tensor[] xs) -> Tensor
  doc: "The elementwise sum of float32 arrays of one shape, as in C:\\\\sum\\\\\\nits header's
    comment ends its first line in a backslash."
  dispatch: {cpu: total_cpu}
"""

BCAST_SOURCE = """\
#include <algorithm>

#include "bcast_ops.h"

namespace bcast {

mlx::core::array scaled_sum_impl(
    const mlx::core::array& x,
    const mlx::core::array& y,
    float alpha,
    mlx::core::StreamOrDevice s) {
  return mlx::core::add(mlx::core::multiply(x, mlx::core::array(alpha, x.dtype()), s), y, s);
}

mlx::core::array transposed_impl(const mlx::core::array& x, mlx::core::StreamOrDevice s) {
  return mlx::core::copy(x, s);
}

namespace {

// Element (r, c) of a 2-D float32 array that broadcasts along its dimensions of size 1.
float at(const mlx::core::array& a, int r, int c) {
  const int row = a.shape(0) == 1 ? 0 : r;
  const int col = a.shape(1) == 1 ? 0 : c;
  return a.data<float>()[row * a.shape(1) + col];
}

}  // namespace

void scaled_sum_cpu(
    const std::vector<mlx::core::array>& inputs,
    std::vector<mlx::core::array>& outputs,
    float alpha) {
  mlx::core::array& out = outputs[0];
  for (int r = 0; r < out.shape(0); ++r) {
    for (int c = 0; c < out.shape(1); ++c) {
      out.data<float>()[r * out.shape(1) + c] = alpha * at(inputs[0], r, c) + at(inputs[1], r, c);
    }
  }
}

void total_cpu(
    const std::vector<mlx::core::array>& inputs, std::vector<mlx::core::array>& outputs) {
  float* out = outputs[0].data<float>();
  std::fill(out, out + outputs[0].size(), 0.0f);
  for (const mlx::core::array& a : inputs) {
    for (std::size_t i = 0; i < a.size(); ++i) {
      out[i] += a.data<float>()[i];
    }
  }
}

void copy_cpu(const std::vector<mlx::core::array>& inputs, std::vector<mlx::core::array>& outputs) {
  const float* in = inputs[0].data<float>();
  std::copy(in, in + inputs[0].size(), outputs[0].data<float>());
}

}  // namespace bcast
"""

MISSING_SPEC = """\
- namespace: tiny
  module: missing
- func: tiny::twice(Tensor x) -> Tensor
"""

BAD_FORMULA_SPEC = """\
- namespace: badf
  module: bad_formula
- func: badf::twice(Tensor x) -> Tensor
  grad:
    x: multiply(grad, s)
"""
BAD_FORMULA_SOURCE = """\
#include "badf_ops.h"

namespace badf {

mlx::core::array twice_impl(const mlx::core::array& x, mlx::core::StreamOrDevice s) {
  return mlx::core::add(x, x, s);
}

}  // namespace badf
"""

DEFAULTS_SPEC = """\
- namespace: mlx::core
  module: defaults
- name: clamp
  python_signature: "clamp(a: array, low: float = -math.inf, high: float = float('inf'), *,
    stream: StreamOrDevice = None) -> array"
  code: minimum(maximum(a, array(low, a.dtype()), s), array(high, a.dtype()), s)
- name: filled
  python_signature: "filled(shape: tuple[int, int] = [2, 1], value: float = math.nan, *,
    stream: StreamOrDevice = None) -> array"
  code: full(Shape{shape.first, shape.second}, array(value), s)
"""

CMAKE_LISTS = """\
cmake_minimum_required(VERSION 3.18)
project(mlx_findings LANGUAGES CXX)
foreach(module bcast missing bad_formula defaults)
  include("${CMAKE_CURRENT_SOURCE_DIR}/${module}/out/${module}.cmake")
endforeach()
opgen_add_bcast_module(bcast_module bcast/bcast.cpp)
opgen_add_missing_module(missing_module)
opgen_add_bad_formula_module(bad_formula_module bad_formula/bad_formula.cpp)
opgen_add_defaults_module(defaults_module)
"""


@dataclass(frozen=True)
class Project:
    root: Path  # the specs, sources and CMakeLists.txt
    build: Path  # CMake's build directory


def _write_if_changed(path: Path, text: str) -> None:
    """Unchanged files keep their times, so a kept build recompiles nothing."""
    if not path.is_file() or path.read_text(encoding="utf-8") != text:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")


def _build(project: Project, target: str) -> subprocess.CompletedProcess[str]:
    command = ["cmake", "--build", str(project.build), "--target", target]
    return subprocess.run(
        [*command, "-j", str(os.cpu_count() or 1)],
        capture_output=True,
        text=True,
        env={**os.environ, "LC_ALL": "C"},  # plain quotes in the compiler's messages
    )


@pytest.fixture(scope="session")
def project(tmp_path_factory: pytest.TempPathFactory) -> Project:
    kept = os.environ.get("OPGEN_EXAMPLE_BUILD_DIR")
    root = Path(kept) / "mlx_findings" if kept else tmp_path_factory.mktemp("mlx_findings")
    files = {
        "bcast/spec.yaml": BCAST_SPEC,
        "bcast/bcast.cpp": BCAST_SOURCE,
        "missing/spec.yaml": MISSING_SPEC,
        "bad_formula/spec.yaml": BAD_FORMULA_SPEC,
        "bad_formula/bad_formula.cpp": BAD_FORMULA_SOURCE,
        "defaults/spec.yaml": DEFAULTS_SPEC,
        "CMakeLists.txt": CMAKE_LISTS,
    }
    for name, text in files.items():
        _write_if_changed(root / name, text)
    for module in ("bcast", "missing", "bad_formula", "defaults"):
        spec, out = root / module / "spec.yaml", root / module / "out"
        err = io.StringIO()
        assert main(["mlx", str(spec), "-o", str(out)], io.StringIO(), err) == 0, err.getvalue()
    build = root / "build"
    configure = ["cmake", "-S", str(root), "-B", str(build), "-DCMAKE_BUILD_TYPE=Release"]
    subprocess.run(
        [*configure, f"-DPython_EXECUTABLE={sys.executable}"], check=True, capture_output=True
    )
    return Project(root, build)


def _module(project: Project, name: str) -> Iterator[ModuleType]:
    done = _build(project, f"{name}_module")
    assert done.returncode == 0, done.stdout + done.stderr
    sys.path.insert(0, str(project.build))
    try:
        yield importlib.import_module(name)
    finally:
        sys.path.remove(str(project.build))


@pytest.fixture(scope="session")
def bcast(project: Project) -> Iterator[ModuleType]:
    yield from _module(project, "bcast")


@pytest.fixture(scope="session")
def defaults(project: Project) -> Iterator[ModuleType]:
    yield from _module(project, "defaults")


# -- gradients of broadcast inputs ---------------------------------------------------------


def weighted(fn: Callable[..., Any]) -> Callable[..., Any]:
    """A scalar of `fn`'s output, each element weighted differently."""

    def scalar(*args: Any) -> Any:
        out = fn(*args)
        return mx.sum(out * mx.cos(mx.arange(out.size, dtype=mx.float32)).reshape(out.shape))

    return scalar


@linux
@pytest.mark.parametrize(
    ("operator", "x_shape", "y_shape"),
    [
        ("scaled_sum", (4, 1), (1, 5)),
        ("scaled_sum", (4, 1), (3, 1, 5)),
        ("scaled_sum_kernel", (4, 1), (1, 5)),
    ],
)
def test_broadcast_gradients_are_summed_to_each_input(
    bcast: ModuleType, operator: str, x_shape: tuple[int, ...], y_shape: tuple[int, ...]
) -> None:
    """`grad * alpha` has the output's shape; each input gets it summed to its own shape, as
    PyTorch's engine does (over the leading dimensions it lacks and where it has size 1)."""
    x = mx.random.normal(x_shape, key=mx.random.key(1))
    y = mx.random.normal(y_shape, key=mx.random.key(2))
    scalar = weighted(lambda a, b: getattr(bcast, operator)(a, b, alpha=3.0))
    grads = mx.grad(scalar, argnums=[0, 1])(x, y)
    for i, (array, grad) in enumerate(zip((x, y), grads, strict=True)):
        assert grad.shape == array.shape
        numeric = finite_differences(scalar, [x, y], i)
        assert np.allclose(np.array(grad), numeric, rtol=2e-2, atol=2e-2), f"input {i}"


@linux
@pytest.mark.parametrize("operator", ["transposed", "transposed_kernel"])
def test_a_gradient_of_another_shape_is_an_error_naming_the_input(
    bcast: ModuleType, operator: str
) -> None:
    message = (
        f"{operator}: the gradient formula for 'x' gives shape (5, 4), which is neither the "
        "input's shape (4, 5) nor a broadcast of it"
    )
    with pytest.raises(ValueError, match=f"^{re.escape(message)}$"):
        mx.grad(weighted(getattr(bcast, operator)))(mx.ones((4, 5)))


@linux
def test_gradients_of_the_input_shape_are_the_formulas(bcast: ModuleType) -> None:
    x, y = mx.ones((2, 3)), mx.ones((2, 3))
    gx, gy = mx.grad(lambda a, b: bcast.scaled_sum(a, b).sum(), argnums=[0, 1])(x, y)
    assert np.array_equal(np.array(gx), np.full((2, 3), 2.0))
    assert np.array_equal(np.array(gy), np.ones((2, 3)))


# -- what a primitive's operator refuses --------------------------------------------------


@linux
def test_a_primitive_given_no_array_is_an_error_naming_the_operator_and_argument(
    bcast: ModuleType,
) -> None:
    """Its output takes the dtype of its first input; with none, it is refused."""
    total = bcast.total([mx.ones((2, 2)), mx.full((2, 2), 2.0)])
    assert np.array_equal(np.array(total), np.full((2, 2), 3.0))
    message = "total: needs at least one array in 'xs' (its output takes the dtype of the first)"
    with pytest.raises(ValueError, match=f"^{re.escape(message)}$"):
        bcast.total([])


@linux
def test_a_doc_line_ending_in_a_backslash_keeps_the_next_line_of_code(
    project: Project, bcast: ModuleType
) -> None:
    """The module built, `total` declared after its doc: the comment's line is closed."""
    header = (project.root / "bcast" / "out" / "bcast_ops.h").read_text()
    line = "// The elementwise sum of float32 arrays of one shape, as in C:\\sum\\ //\n"
    assert f"{line}// its header's comment ends its first line in a backslash.\n" in header


# -- defaults of bound functions ----------------------------------------------------------


@linux
def test_infinite_and_nan_defaults_reach_the_function(defaults: ModuleType) -> None:
    x = mx.array([-1e30, 0.5, 1e30])
    assert np.array_equal(np.array(defaults.clamp(x)), np.array(x))
    assert np.array_equal(np.array(defaults.clamp(x, 0.0)), np.array(x).clip(0.0))
    filled = defaults.filled()
    assert filled.shape == (2, 1) and np.isnan(np.array(filled)).all()
    assert defaults.clamp.__doc__.startswith(
        "clamp(a: array, low: float = -inf, high: float = inf, *, stream: StreamOrDevice = None)"
    )
    assert defaults.filled.__doc__.startswith("filled(shape: tuple[int, int] = (2, 1), ")


# -- mistakes reported by the build --------------------------------------------------------


@linux
def test_a_missing_impl_fails_to_link_naming_it(project: Project) -> None:
    """The module links with every symbol resolved: `twice_impl`, declared by the generated
    header and defined nowhere, is the linker's error, demangled (the stream parameter's
    variant is MLX's `StreamOrDevice`)."""
    done = _build(project, "missing_module")
    assert done.returncode != 0
    undefined = r"undefined reference to `tiny::twice_impl\(mlx::core::array const&, std::variant<"
    assert re.search(undefined + r"[\w:, ]+>\)'\n", done.stdout + done.stderr)


@linux
def test_a_formula_that_does_not_compile_points_at_the_spec(project: Project) -> None:
    """`multiply(grad, s)` names MLX's `multiply`, so opgen accepts it; the compiler then
    rejects its second argument, at its line and column in the spec."""
    done = _build(project, "bad_formula_module")
    assert done.returncode != 0
    spec = project.root / "bad_formula" / "spec.yaml"
    assert (
        f"{spec}:5:23: error: invalid initialization of reference of type "
        "'const mlx::core::array&' from expression of type 'const mlx::core::Stream'\n"
        "    5 |     x: multiply(grad, s)\n"
        "      |                       ^\n"
    ) in done.stdout + done.stderr
