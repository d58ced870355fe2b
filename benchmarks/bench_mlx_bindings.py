"""Per-call time of opgen's nanobind bindings for MLX, against MLX's own bindings.

Binds four existing `mlx::core` operations through opgen: a tiny spec whose
composite operators' `_impl`s just call `mlx::core::add`, `multiply`, `exp` and
`sum(a, axes, keepdims)`, built as `opgen mlx` builds every extension (its
generated `<module>.cmake`, a Release build). Then it times each generated
operator against MLX's own binding of the same operation (`mx.add`, ...) on
small arrays. The calls only build graph nodes (nothing is evaluated), so
what differs is the binding: argument conversion, defaults, the stream.

The two statements of a pair alternate within each round; the report gives
the median time per call and the median of the per-round ratios (goal: opgen's
no slower than 1.05x of MLX's own).

    python benchmarks/bench_mlx_bindings.py [--runs 15] [--number 20000] [--build-dir DIR]
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import timeit
from pathlib import Path

SPEC = """\
- namespace: mlxbench
  module: mlxbench
- func: mlxbench::add(Tensor a, Tensor b) -> Tensor
- func: mlxbench::multiply(Tensor a, Tensor b) -> Tensor
- func: mlxbench::exp(Tensor a) -> Tensor
- func: mlxbench::sum(Tensor a, int[] axes, bool keepdims=False) -> Tensor
"""
IMPLS = """\
#include "mlxbench_ops.h"

namespace mx = mlx::core;

namespace mlxbench {

mx::array add_impl(const mx::array& a, const mx::array& b, mx::StreamOrDevice s) {
  return mx::add(a, b, s);
}

mx::array multiply_impl(const mx::array& a, const mx::array& b, mx::StreamOrDevice s) {
  return mx::multiply(a, b, s);
}

mx::array exp_impl(const mx::array& a, mx::StreamOrDevice s) {
  return mx::exp(a, s);
}

mx::array sum_impl(const mx::array& a, const std::vector<int>& axes, bool keepdims,
                   mx::StreamOrDevice s) {
  return mx::sum(a, axes, keepdims, s);
}

} // namespace mlxbench
"""
CMAKE = """\
cmake_minimum_required(VERSION 3.18)
project(mlxbench LANGUAGES CXX)
include("${OPGEN_GENERATED}/mlxbench.cmake")
opgen_add_mlxbench_module(mlxbench impls.cpp)
"""
PAIRS = {  # label: (opgen's statement, MLX's statement)
    "add(a, b)": ("ob.add(a, b)", "mx.add(a, b)"),
    "multiply(a, b)": ("ob.multiply(a, b)", "mx.multiply(a, b)"),
    "exp(a)": ("ob.exp(a)", "mx.exp(a)"),
    "sum(a, [1], True)": ("ob.sum(a, [1], True)", "mx.sum(a, [1], True)"),
    "add(a, b, stream=cpu)": ("ob.add(a, b, stream=mx.cpu)", "mx.add(a, b, stream=mx.cpu)"),
}


def build(source: Path, build_dir: Path) -> Path:
    """Generate and compile the module; the directory that holds it."""
    source.mkdir(parents=True, exist_ok=True)
    (source / "spec.yaml").write_text(SPEC)
    (source / "impls.cpp").write_text(IMPLS)
    (source / "CMakeLists.txt").write_text(CMAKE)
    generated = source / "generated"
    run(sys.executable, "-m", "opgen", "mlx", str(source / "spec.yaml"), "-o", str(generated))
    run(
        "cmake",
        "-S",
        str(source),
        "-B",
        str(build_dir),
        f"-DOPGEN_GENERATED={generated}",
        f"-DPython_EXECUTABLE={sys.executable}",
        "-DCMAKE_BUILD_TYPE=Release",
    )
    run("cmake", "--build", str(build_dir), "-j", str(os.cpu_count() or 1))
    return build_dir


def run(*command: str) -> None:
    done = subprocess.run(command, capture_output=True, text=True)
    if done.returncode != 0:
        sys.exit(f"{' '.join(command)} failed:\n{done.stdout}\n{done.stderr}")


def timings(statements: tuple[str, str], runs: int, number: int) -> list[tuple[float, float]]:
    """Seconds per call of both statements, in `runs` rounds that alternate them."""
    env: dict[str, object] = {}
    exec("import mlx.core as mx, mlxbench as ob\na = mx.ones((4, 4))\nb = mx.ones((4, 4))", env)
    for statement in statements:  # warm up, and check that both work
        exec(statement, env)
    rounds = []
    for i in range(runs):
        order = statements if i % 2 == 0 else statements[::-1]
        times = {s: timeit.timeit(s, globals=env, number=number) / number for s in order}
        rounds.append((times[statements[0]], times[statements[1]]))
    return rounds


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=15)
    parser.add_argument("--number", type=int, default=20000)
    parser.add_argument("--build-dir", help="keep the sources and the build here between runs")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(args.build_dir or tmp)
        sys.path.insert(0, str(build(root / "source", root / "build")))
        print(f"median per call, {args.runs} x {args.number} calls, 4x4 float32 arrays")
        worst = 0.0
        for label, statements in PAIRS.items():
            rounds = timings(statements, args.runs, args.number)
            ours = statistics.median(r[0] for r in rounds) * 1e9
            theirs = statistics.median(r[1] for r in rounds) * 1e9
            ratio = statistics.median(r[0] / r[1] for r in rounds)
            worst = max(worst, ratio)
            print(f"  {label:<22} opgen {ours:6.0f} ns  mx {theirs:6.0f} ns  ratio {ratio:.3f}")
        print(f"worst ratio {worst:.3f} (goal: at most 1.05)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
