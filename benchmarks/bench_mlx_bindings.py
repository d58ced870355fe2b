"""Per-call time of opgen's nanobind bindings for MLX, against MLX's own bindings.

Two modules, each built as `opgen mlx` builds every extension (its generated
`<module>.cmake`, a Release build):

- `mlxbench`, an extension: a tiny spec whose composite operators' `_impl`s
  just call `mlx::core::add`, `multiply`, `exp` and `sum(a, axes, keepdims)`;
- `mlxbound`, bound functions: the entries of `add`, `multiply`, `exp`,
  `sum`, `linalg.norm`, `array.reshape`, `array.__add__`, indexing
  (`array.__getitem__`, `array.__setitem__`) and `array.at` with its `add` of
  examples/mlx_core/mlx_core.yaml, as they are there (array or Python scalar
  arguments with MLX's weak scalars, `int | Sequence[int] | None` axes, `sum`
  a method too, `__add__` with its reflected and in-place forms).

Each generated function is timed against MLX's own binding of the same
operation (`mx.add`, ...) on small arrays: array arguments, a scalar argument
(`add(a, 1.0)`), a reduction over an int axis and over a tuple of axes. Each
method is timed as users call it (`a.sum()`, `a + 1.0`, `a[i, 1]`,
`a.at[i].add(1.0)`; an assignment with the zeros it assigns to), with the generated
methods set on `mx.array` for one chunk of calls and MLX's own for the next.
The calls only build graph nodes (nothing is evaluated), so what differs is
the binding: argument conversion, defaults, the stream.

The two statements of a pair alternate within each round; the report gives
the median time per call and the median of the per-round ratios (goal: at
most 1.0x of MLX's own for the bound functions, 1.05x for the extension).

With `--instructions`, each statement is instead run under valgrind's callgrind, in a
process of its own, and the report gives the instructions per call: those of a run of
`--number` calls less those of a run of none.

    python benchmarks/bench_mlx_bindings.py [--runs 15] [--number 20000] [--build-dir DIR]
    python benchmarks/bench_mlx_bindings.py --instructions [--number 5000]
"""

from __future__ import annotations

import argparse
import re
import statistics
import subprocess
import sys
import tempfile
import timeit
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from tests.examples.mlx_build import build_extension

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
include("${OPGEN_GENERATED}/mlxbound.cmake")
opgen_add_mlxbench_module(mlxbench impls.cpp)
opgen_add_mlxbound_module(mlxbound)
"""
CHUNK = 1000  # calls of one statement before the other's, within a round
CORE_SPEC = Path(__file__).parents[1] / "examples" / "mlx_core" / "mlx_core.yaml"
BOUND = (
    *("add", "multiply", "exp", "sum", "linalg.norm", "array.reshape", "array.__add__"),
    *("array.__getitem__", "array.__setitem__", "array.at", "array.at.add"),
)
PAIRS = {  # label: (opgen's statement, MLX's statement)
    "add(a, b)": ("ob.add(a, b)", "mx.add(a, b)"),
    "multiply(a, b)": ("ob.multiply(a, b)", "mx.multiply(a, b)"),
    "exp(a)": ("ob.exp(a)", "mx.exp(a)"),
    "sum(a, [1], True)": ("ob.sum(a, [1], True)", "mx.sum(a, [1], True)"),
    "add(a, b, stream=cpu)": ("ob.add(a, b, stream=mx.cpu)", "mx.add(a, b, stream=mx.cpu)"),
}
BOUND_PAIRS = {  # label: (the bound function's statement, MLX's statement)
    "add(a, b)": ("bd.add(a, b)", "mx.add(a, b)"),
    "add(a, 1.0)": ("bd.add(a, 1.0)", "mx.add(a, 1.0)"),
    "multiply(2, a)": ("bd.multiply(2, a)", "mx.multiply(2, a)"),
    "exp(a)": ("bd.exp(a)", "mx.exp(a)"),
    "sum(a, 1)": ("bd.sum(a, 1)", "mx.sum(a, 1)"),
    "sum(a, (0, 1))": ("bd.sum(a, (0, 1))", "mx.sum(a, (0, 1))"),
    "sum(a)": ("bd.sum(a)", "mx.sum(a)"),
    "linalg.norm(a)": ("bd.linalg.norm(a)", "mx.linalg.norm(a)"),
}
# label: the statement, run with the generated methods set on mx.array, then with MLX's
METHODS = {
    s: (s, s)
    for s in [
        *("a.sum()", "a.sum(axis=1)", "a.reshape(2, 8)", "a.reshape((16,))"),
        *("a + b", "a + 1.0", "1.0 + a"),
        *("a[0]", "a[1:3]", "a[:, 1]", "a[i]", "a[i, 1]"),
        *("a.at[i].add(1.0)", "a.at[1].add(b[0])", "c = mx.zeros((4, 4)); c[1] = 1.0"),
    ]
}


def bound_spec() -> str:
    """The example's entries of the functions in BOUND, under a module of their own."""
    entries = CORE_SPEC.read_text().split("\n- ")
    picked = [e for e in entries[1:] if e.split("\n", 1)[0].removeprefix("name: ") in BOUND]
    if len(picked) != len(BOUND):
        sys.exit(f"{CORE_SPEC} lacks some of {', '.join(BOUND)}")
    header = "- namespace: mlx::core\n  module: mlxbound\n"
    return header + "".join(f"- {e.rstrip()}\n" for e in picked)


def build(source: Path, build_dir: Path) -> Path:
    """Generate and compile the module; the directory that holds it."""
    source.mkdir(parents=True, exist_ok=True)
    (source / "spec.yaml").write_text(SPEC)
    (source / "bound.yaml").write_text(bound_spec())
    (source / "impls.cpp").write_text(IMPLS)
    (source / "CMakeLists.txt").write_text(CMAKE)
    specs = [source / "spec.yaml", source / "bound.yaml"]
    build_extension(specs, source, source / "generated", build_dir)
    return build_dir


SETUP = """\
import mlx.core as mx, mlxbench as ob, mlxbound as bd
a = mx.ones((4, 4))
b = mx.ones((4, 4))
i = mx.array([0, 2])
generated = bd.array_methods()
theirs = {name: vars(mx.array)[name] for name in generated}

def install(methods):
    for name, method in methods.items():
        setattr(mx.array, name, method)
"""


def timings(
    statements: tuple[str, str], runs: int, number: int, setups: tuple[str, str] = ("", "")
) -> list[tuple[float, float]]:
    """Seconds per call of both statements, in `runs` rounds of `number` calls each, each
    chunk of calls after its setup.

    Within a round the two alternate in chunks of CHUNK calls, so that a drift of the
    machine's speed (other load, frequency) falls on both alike.
    """
    env: dict[str, object] = {}
    exec(SETUP, env)
    for statement, setup in zip(statements, setups, strict=True):  # warm up, check both
        exec(f"{setup}\n{statement}", env)
    timers = [
        timeit.Timer(s, setup=setup or "pass", globals=env)
        for s, setup in zip(statements, setups, strict=True)
    ]
    chunks = max(number // CHUNK, 1)
    rounds = []
    for i in range(runs):
        totals = [0.0, 0.0]
        for j in range(chunks):
            order = (0, 1) if (i + j) % 2 == 0 else (1, 0)
            for k in order:
                totals[k] += timers[k].timeit(number=CHUNK)
        calls = chunks * CHUNK
        rounds.append((totals[0] / calls, totals[1] / calls))
    exec(setups[1], env)  # MLX's own methods back, for the next pair's SETUP to find
    return rounds


def instructions(modules: Path, statement: str, setup: str, calls: int) -> int:
    """Instructions per call of `statement`, after `setup`, as callgrind counts them."""
    counts = []
    for n in (0, calls):
        loop = f"for _ in range({n}):\n    {statement}\n"
        program = f"import sys\nsys.path.insert(0, {str(modules)!r})\n{SETUP}{setup}\n{loop}"
        command = ["valgrind", "--tool=callgrind", "--callgrind-out-file=/dev/null"]
        done = subprocess.run(
            [*command, sys.executable, "-c", program], capture_output=True, text=True, check=True
        )
        found = re.search(r"Collected : (\d+)", done.stderr)
        if found is None:
            sys.exit(f"callgrind printed no count:\n{done.stderr}")
        counts.append(int(found.group(1)))
    return (counts[1] - counts[0]) // calls


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=15)
    parser.add_argument("--number", type=int, default=20000)
    parser.add_argument("--build-dir", help="keep the sources and the build here between runs")
    parser.add_argument("--instructions", action="store_true", help="count with callgrind")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(args.build_dir or tmp)
        modules = build(root / "source", root / "build")
        sys.path.insert(0, str(modules))
        if args.instructions:
            return count_instructions(modules, args.number)
        print(f"median per call, {args.runs} x {args.number} calls, 4x4 float32 arrays")
        install = ("install(generated)", "install(theirs)")
        for title, pairs, goal, setups in (
            ("extension operators (mlxbench)", PAIRS, 1.05, ("", "")),
            ("bound functions of examples/mlx_core (mlxbound)", BOUND_PAIRS, 1.0, ("", "")),
            ("methods of examples/mlx_core (mlxbound), set on mx.array", METHODS, 1.0, install),
        ):
            print(title)
            worst = 0.0
            for label, statements in pairs.items():
                rounds = timings(statements, args.runs, args.number, setups)
                ours = statistics.median(r[0] for r in rounds) * 1e9
                theirs = statistics.median(r[1] for r in rounds) * 1e9
                ratio = statistics.median(r[0] / r[1] for r in rounds)
                worst = max(worst, ratio)
                print(f"  {label:<22} opgen {ours:6.0f} ns  mx {theirs:6.0f} ns  ratio {ratio:.3f}")
            print(f"  worst ratio {worst:.3f} (goal: at most {goal})")
    return 0


def count_instructions(modules: Path, calls: int) -> int:
    print(f"instructions per call (callgrind, {calls} calls), 4x4 float32 arrays")
    install = ("install(generated)", "install(theirs)")
    for title, pairs, setups in (
        ("extension operators (mlxbench)", PAIRS, ("", "")),
        ("bound functions of examples/mlx_core (mlxbound)", BOUND_PAIRS, ("", "")),
        ("methods of examples/mlx_core (mlxbound), set on mx.array", METHODS, install),
    ):
        print(title)
        for label, statements in pairs.items():
            ours, theirs = (
                instructions(modules, statement, setup, calls)
                for statement, setup in zip(statements, setups, strict=True)
            )
            print(f"  {label:<22} opgen {ours:6d}  mx {theirs:6d}  ratio {ours / theirs:.3f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
