"""Whole-process `opgen check` against torchgen's `parse_native_yaml`, on torch's spec.

Both sides run as fresh processes, alternating, so that start-up and imports
count and machine noise hits both alike. Prints each side's median and the
median of the per-pair ratios.

    python benchmarks/bench_check.py [--runs 11]
"""

from __future__ import annotations

import argparse
import compileall
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path


def torchgen_native_dir() -> Path:
    import torchgen  # only to find the packaged spec; the timed runs import it afresh

    return Path(os.path.dirname(torchgen.__file__)) / "packaged" / "ATen" / "native"


def timed(command: list[str]) -> float:
    start = time.perf_counter()
    subprocess.run(command, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    return time.perf_counter() - start


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
    # Both sides load compiled bytecode, as an installed package does: pip
    # compiles torchgen's at install time, but an editable opgen (or one run with
    # PYTHONDONTWRITEBYTECODE set) would otherwise be compiled on every run.
    import opgen

    compileall.compile_dir(os.path.dirname(opgen.__file__), quiet=1)
    timed(opgen_command), timed(torchgen)  # warm the file cache
    ours, theirs = [], []
    for _ in range(args.runs):
        ours.append(timed(opgen_command))
        theirs.append(timed(torchgen))
    ratios = [t / o for o, t in zip(ours, theirs, strict=True)]
    print(f"opgen check:                 median {statistics.median(ours):.3f} s")
    print(f"torchgen parse_native_yaml:  median {statistics.median(theirs):.3f} s")
    print(f"speed-up (median of {args.runs} paired ratios): {statistics.median(ratios):.2f}x")
    return 0


if __name__ == "__main__":
    sys.exit(main())
