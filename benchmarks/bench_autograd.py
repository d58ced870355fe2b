"""Whole-process `opgen autograd` against `python -m torchgen.packaged.autograd.gen_autograd`.

Both read torch's packaged spec (native_functions.yaml, tags.yaml) and autograd
directory (derivatives.yaml, templates). Each run writes into a fresh, empty
output directory (a clean build), made and removed outside the timing. Runs
alternate; the script prints both medians, the median of the paired ratios
and both sides' peak RSS. Before timing, it checks that the two output trees
are identical.

It then runs each side once more, untimed, sampling the memory of the
process and of any worker it forks (PSS, so shared pages count once).

    python benchmarks/bench_autograd.py [--runs 5] [--jobs N]
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from paired import clean_builds, torchgen_native_dir


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=5, help="pairs of runs (default 5)")
    parser.add_argument("--jobs", type=int, help="opgen's -j (default: its own)")
    args = parser.parse_args()
    native = torchgen_native_dir()
    autograd = native.parents[1] / "autograd"
    inputs = [str(native / "native_functions.yaml"), str(native / "tags.yaml")]

    def command(generator: list[str], root: Path) -> list[str]:
        return [*generator, *inputs, str(root / "out"), str(autograd)]

    ours = [sys.executable, "-m", "opgen", "autograd"]
    if args.jobs is not None:
        ours += ["-j", str(args.jobs)]
    theirs = [sys.executable, "-m", "torchgen.packaged.autograd.gen_autograd"]
    builds = clean_builds(ours, theirs, command, args.runs)
    if builds is None:
        return 1
    print(builds.report("opgen autograd vs gen_autograd", "opgen autograd", "gen_autograd"))
    return 0


if __name__ == "__main__":
    sys.exit(main())
