"""Per-call overhead of opgen's generated Python wrappers against raw `torch.ops` calls.

Builds the example library (examples/torch_library), then times, on a one-element
tensor, each wrapper against the same call written as `torch.ops.mylib.<op>.<overload>(...)`
and against a call through an overload object bound beforehand (the cheapest way to
call an operator from Python). The three alternate within each round; the report gives
the median time per call and the median of the per-round ratios.

    python benchmarks/bench_wrapper.py [--runs 15] [--number 20000]
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

CASES = {
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


def timings(statements: list[str], setup: str, runs: int, number: int) -> list[list[float]]:
    """Seconds per call of each statement, in `runs` rounds that alternate the statements,
    so that a slow moment of the machine hits all of them alike."""
    env: dict[str, object] = {"__name__": "__bench__"}
    exec(f"import torch, mylib\nx = torch.ones(1)\n{setup}", env)
    rounds = []
    for _ in range(runs):
        rounds.append([timeit.timeit(s, globals=env, number=number) / number for s in statements])
    return rounds


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=15)
    parser.add_argument("--number", type=int, default=20000)
    parser.add_argument("--build-dir", help="keep the compiled example here between runs")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        build_example(Path(tmp) / "generated", Path(args.build_dir or Path(tmp) / "build"))
        print(f"median per call, {args.runs} x {args.number} calls, one-element tensor")
        for name, (wrapper, raw, bound, setup) in CASES.items():
            rounds = timings([wrapper, raw, bound], setup, args.runs, args.number)
            ours, direct, prebound = (
                statistics.median(r[i] for r in rounds) * 1e6 for i in range(3)
            )
            vs_direct = statistics.median(r[0] / r[1] for r in rounds)
            vs_bound = statistics.median(r[0] / r[2] for r in rounds)
            print(
                f"{name}: wrapper {ours:.2f} us, torch.ops.mylib... {direct:.2f} us "
                f"(median ratio {vs_direct:.3f}), bound overload {prebound:.2f} us "
                f"(median ratio {vs_bound:.3f})"
            )
    return 0


if __name__ == "__main__":
    sys.exit(main())
