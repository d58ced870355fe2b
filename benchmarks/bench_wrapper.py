"""Per-call time of opgen's generated operators and Python wrappers, against hand-written code.

Builds the example library (examples/torch_library) with a hand-written TORCH_LIBRARY
equivalent of `mylib::scale` compiled in (handwritten_scale.cpp: the same kernel, `m.def` and
`m.impl`, a plain `torch::autograd::Function`), optimised as tests and setup.py build it.
Then it times, on a one-element tensor:

- operators, called through overload objects bound beforehand, with and without
  `requires_grad`: the generated `mylib::scale`, the hand-written one, and ATen's
  `torch.mul` (the target: generated within 1.1x of hand-written);
- Python wrappers: each wrapper against the same call written as
  `torch.ops.mylib.<op>.<overload>(...)` and against a bound overload.

The statements of a comparison alternate within each round; the report gives the median
time per call and the median of the per-round ratios.

    python benchmarks/bench_wrapper.py [--runs 15] [--number 20000] [--build-dir DIR]
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import timeit
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from tests.examples.example_build import build_example

BENCHMARKS = Path(__file__).resolve().parent

SETUP = (
    "generated = torch.ops.mylib.scale.default\nhandwritten = torch.ops.handwritten.scale.default\n"
)
OPERATORS = {  # label: statement
    "generated mylib::scale": "generated(x, 2.0)",
    "hand-written TORCH_LIBRARY": "handwritten(x, 2.0)",
    "ATen torch.mul": "torch.mul(x, 2.0)",
}
WRAPPERS = {
    "scale": (
        "mylib.scale(x, 2.0)",
        "torch.ops.mylib.scale.default(x, 2.0)",
        "op(x, 2.0)",
        "op = torch.ops.mylib.scale.default",
    ),
    "fused_mul_add (keyword argument)": (
        "mylib.fused_mul_add(x, x, alpha=0.5)",
        "torch.ops.mylib.fused_mul_add.default(x, x, alpha=0.5)",
        "op(x, x, alpha=0.5)",
        "op = torch.ops.mylib.fused_mul_add.default",
    ),
}


def timings(
    statements: list[str], setup: str, runs: int, number: int, *, grad: bool = False
) -> list[list[float]]:
    """Seconds per call of each statement, in `runs` rounds that alternate the statements,
    so that a slow moment of the machine hits all of them alike."""
    env: dict[str, object] = {"__name__": "__bench__"}
    exec(f"import torch, mylib\nx = torch.ones(1, requires_grad={grad})\n{setup}", env)
    rounds = []
    for _ in range(runs):
        rounds.append([timeit.timeit(s, globals=env, number=number) / number for s in statements])
    return rounds


def median_us(rounds: list[list[float]], i: int) -> float:
    return statistics.median(r[i] for r in rounds) * 1e6


def report_operators(runs: int, number: int) -> None:
    statements = list(OPERATORS.values())
    for grad in (False, True):
        rounds = timings(statements, SETUP, runs, number, grad=grad)
        print(f"operators, requires_grad={grad}:")
        for i, label in enumerate(OPERATORS):
            ratio = statistics.median(r[i] / r[1] for r in rounds)
            print(f"  {label:<28} {median_us(rounds, i):6.2f} us  (x{ratio:.3f} hand-written)")


def report_wrappers(runs: int, number: int) -> None:
    print("Python wrappers, requires_grad=False:")
    for name, (wrapper, raw, bound, setup) in WRAPPERS.items():
        rounds = timings([wrapper, raw, bound], setup, runs, number)
        vs_direct = statistics.median(r[0] / r[1] for r in rounds)
        vs_bound = statistics.median(r[0] / r[2] for r in rounds)
        print(
            f"  {name}: wrapper {median_us(rounds, 0):.2f} us, torch.ops.mylib... "
            f"{median_us(rounds, 1):.2f} us (median ratio {vs_direct:.3f}), bound overload "
            f"{median_us(rounds, 2):.2f} us (median ratio {vs_bound:.3f})"
        )


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=15)
    parser.add_argument("--number", type=int, default=20000)
    parser.add_argument("--build-dir", help="keep the compiled example here between runs")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        build = Path(args.build_dir or Path(tmp) / "build")
        build_example(Path(tmp) / "generated", build, [BENCHMARKS / "handwritten_scale.cpp"])
        print(f"median per call, {args.runs} x {args.number} calls, one-element tensor")
        report_operators(args.runs, args.number)
        report_wrappers(args.runs, args.number)
    return 0


if __name__ == "__main__":
    sys.exit(main())
