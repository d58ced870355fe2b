"""Whole-process `opgen python` against upstream's `gen_autograd_python`.

Both read torch's packaged spec (native_functions.yaml, tags.yaml) and autograd
directory (derivatives.yaml, deprecated.yaml, templates). Upstream has no
command line for the Python bindings, so its side is a `python -c` that calls
`gen_autograd_python`, as PyTorch's build does. Each run writes into a fresh,
empty output directory (a clean build); runs alternate (`paired.clean_builds`:
the trees are checked identical first, and each side's peak memory is sampled
once more after the timing). The script prints both medians, the median of
the paired ratios, and each side's peak RSS and PSS.

    python benchmarks/bench_python.py [--runs 5] [--jobs N]
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from paired import clean_builds, torchgen_native_dir

# Upstream's side, with the generator named in generated comments as PyTorch's build names it.
UPSTREAM = """\
import sys
import torchgen.packaged.autograd.gen_autograd as module
sys.modules["__main__"].__file__ = module.__file__
module.gen_autograd_python(*sys.argv[1:])
"""


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

    ours = [sys.executable, "-m", "opgen", "python"]
    if args.jobs is not None:
        ours += ["-j", str(args.jobs)]
    theirs = [sys.executable, "-c", UPSTREAM]
    builds = clean_builds(ours, theirs, command, args.runs)
    if builds is None:
        return 1
    print(
        builds.report("opgen python vs gen_autograd_python", "opgen python", "gen_autograd_python")
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
