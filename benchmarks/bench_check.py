"""Whole-process `opgen check` against torchgen's `parse_native_yaml`, on torch's spec.

python benchmarks/bench_check.py [--runs 11]
"""

from __future__ import annotations

import argparse
import sys

from paired import run_pairs, torchgen_native_dir


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=11, help="pairs of runs (default 11)")
    args = parser.parse_args()

    native_dir = torchgen_native_dir()
    native, tags = str(native_dir / "native_functions.yaml"), str(native_dir / "tags.yaml")
    opgen_command = [sys.executable, "-m", "opgen", "check", native, "--tags", tags]
    torchgen = [
        sys.executable,
        "-c",
        "import sys; from torchgen.gen import parse_native_yaml; "
        "parse_native_yaml(sys.argv[1], sys.argv[2])",
        native,
        tags,
    ]
    times = run_pairs(opgen_command, torchgen, args.runs)
    print(times.report("opgen check", "torchgen parse_native_yaml"))
    return 0


if __name__ == "__main__":
    sys.exit(main())
