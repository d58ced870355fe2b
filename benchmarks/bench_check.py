"""Whole-process `opgen check` against torchgen's `parse_native_yaml`, on torch's spec.

python benchmarks/bench_check.py [--runs 11]
"""

from __future__ import annotations

import sys

from paired import run_pairs, setup


def main() -> int:
    runs, native, tags = setup(__doc__.splitlines()[0])
    opgen_command = [sys.executable, "-m", "opgen", "check", native, "--tags", tags]
    torchgen = [
        sys.executable,
        "-c",
        "import sys; from torchgen.gen import parse_native_yaml; "
        "parse_native_yaml(sys.argv[1], sys.argv[2])",
        native,
        tags,
    ]
    times = run_pairs(opgen_command, torchgen, runs)
    print(times.report("opgen check", "torchgen parse_native_yaml"))
    return 0


if __name__ == "__main__":
    sys.exit(main())
