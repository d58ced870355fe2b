"""Whole-process `opgen aten` against `python -m torchgen.gen` with the same flags, on torch's ATen.

Each run writes into fresh, empty output directories (a clean build), made
and removed outside the timing. Runs alternate; the script prints both
medians, the median of the paired ratios and both sides' peak RSS. Before
timing, it checks that the two output trees are identical.

It then runs each side once more, untimed, sampling the memory of the
process and of any worker it forks (PSS, so shared pages count once).

    python benchmarks/bench_aten.py [--runs 5] [--jobs N] [-- extra torchgen.gen flags]
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
    parser.add_argument("flags", nargs="*", help="flags for both generators")
    args = parser.parse_args()
    aten = torchgen_native_dir().parent

    def command(generator: list[str], root: Path) -> list[str]:
        layout = ["-s", str(aten), "-d", str(root / "out")]
        layout += ["--aoti-install-dir", str(root / "aoti")]
        return [*generator, *layout, *args.flags]

    ours = [sys.executable, "-m", "opgen", "aten"]
    if args.jobs is not None:
        ours += ["-j", str(args.jobs)]
    theirs = [sys.executable, "-m", "torchgen.gen"]
    builds = clean_builds(ours, theirs, command, args.runs)
    if builds is None:
        return 1
    flags = " ".join(args.flags) or "default flags"
    print(
        builds.report(
            f"opgen aten vs python -m torchgen.gen ({flags})", "opgen aten", "torchgen.gen"
        )
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
