"""Whole-process `opgen dump --signatures` against the same output computed through torchgen.

The torchgen side parses the spec with `parse_native_yaml` and derives every
key with torchgen's API modules, exactly as the conformance oracle does
(tests/conformance/torchgen_signatures.py), and prints the same JSON Lines.
Both outputs are checked to be identical before timing.

    python benchmarks/bench_signatures.py [--runs 11]
"""

from __future__ import annotations

import subprocess
import sys

from paired import REPO, run_pairs, setup

TORCHGEN_DUMP = (
    "import sys\n"
    "from tests.conformance.torchgen_signatures import torchgen_dump_lines\n"
    "lines = torchgen_dump_lines(sys.argv[1], sys.argv[2])\n"
    "sys.stdout.writelines(line + '\\n' for line in lines)\n"
)


def main() -> int:
    runs, native, tags = setup(__doc__.splitlines()[0])
    ours = [sys.executable, "-m", "opgen", "dump", "--signatures", native, "--tags", tags]
    theirs = [sys.executable, "-c", TORCHGEN_DUMP, native, tags]
    outputs = [
        subprocess.run(c, check=True, capture_output=True, text=True, cwd=REPO).stdout
        for c in (ours, theirs)
    ]
    if outputs[0] != outputs[1]:
        print("the two outputs differ; run the conformance tests", file=sys.stderr)
        return 1
    times = run_pairs(ours, theirs, runs)
    print(times.report("opgen dump --signatures", "torchgen, same output"))
    return 0


if __name__ == "__main__":
    sys.exit(main())
