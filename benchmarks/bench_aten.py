"""Whole-process `opgen aten` against `python -m torchgen.gen` with the same flags, on torch's ATen.

Both configurations real builds use are measured in one run: the default and
`--per-operator-headers` (or only the flags given after `--`). Each run writes
into fresh, empty output directories (a clean build), made and removed outside
the timing (`paired.Scratch`: all are removed only once every run is done).
Within a configuration the runs alternate, torchgen then opgen with each
`--jobs` value, each after an untimed `sync`, so that no run pays for writing
back an earlier one's outputs. The script prints each side's median wall and
CPU time (user + system, workers included), the medians of the paired ratios
and the peak RSS of the largest process. Before timing, it checks that the
output trees are identical.

It then runs each side once more, untimed, sampling the memory of the
process and of any worker it forks (PSS, so shared pages count once).

    python benchmarks/bench_aten.py [--runs 5] [--jobs N [N ...]] [--scratch DIR]
        [--torch-version X.Y.Z] [-- torchgen.gen flags]
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path

from paired import (
    REPO,
    Scratch,
    add_release_argument,
    compile_bytecode,
    peak_memory,
    same_tree,
    use_release,
)

CONFIGURATIONS = ([], ["--per-operator-headers"])


@dataclass(frozen=True)
class Run:
    wall: float  # seconds
    cpu: float  # seconds, user + system, of the process and the workers it waited for
    rss: int  # KiB, the largest process


def measured(command: list[str]) -> Run:
    # Untimed: the kernel writes earlier runs' outputs back to disk about 30 s after
    # they were written, on one of the cores, inside whichever run is going on then.
    os.sync()
    start = time.perf_counter()
    process = subprocess.Popen(
        command, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, cwd=REPO
    )
    _, status, usage = os.wait4(process.pid, 0)
    wall = time.perf_counter() - start
    if os.waitstatus_to_exitcode(status) != 0:
        raise subprocess.CalledProcessError(os.waitstatus_to_exitcode(status), command)
    return Run(wall, usage.ru_utime + usage.ru_stime, usage.ru_maxrss)


@dataclass
class Side:
    label: str
    generator: list[str]
    runs: list[Run] = field(default_factory=list)
    memory: int = 0  # KiB, peak PSS of all processes


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=5, help="rounds of runs (default 5)")
    parser.add_argument("--jobs", type=int, nargs="+", help="opgen -j values, one side each")
    parser.add_argument(
        "--scratch",
        metavar="DIR",
        help="write the outputs under DIR (default: the system's temporary directory); "
        "a tmpfs such as /dev/shm measures the generators without the disk",
    )
    add_release_argument(parser)
    parser.add_argument("flags", nargs="*", help="flags for both generators")
    args = parser.parse_args()
    aten, release_flags = use_release(args.torch_version)
    configurations = [args.flags] if args.flags else [list(c) for c in CONFIGURATIONS]
    compile_bytecode()
    scratch = Scratch(args.scratch)
    try:
        for flags in configurations:
            sides = [Side("torchgen.gen", [sys.executable, "-m", "torchgen.gen"])]
            for jobs in args.jobs or [None]:
                label = "opgen aten"
                generator = [sys.executable, "-m", "opgen", "aten", *release_flags]
                if jobs is not None:
                    label, generator = f"{label} -j {jobs}", [*generator, "-j", str(jobs)]
                sides.append(Side(label, generator))
            if not _measure(sides, aten, flags, scratch, args.runs):
                return 1
            print(_report(" ".join(flags) or "default flags", sides), flush=True)
    finally:
        scratch.remove()
    return 0


def _measure(sides: list[Side], aten: Path, flags: list[str], scratch: Scratch, runs: int) -> bool:
    def command(side: Side, root: Path | None = None) -> list[str]:
        root = root or scratch.fresh(str(sides.index(side)))
        layout = ["-s", str(aten), "-d", str(root / "out")]
        return [*side.generator, *layout, "--aoti-install-dir", str(root / "aoti"), *flags]

    first = [scratch.fresh(str(i)) for i in range(len(sides))]
    for side, root in zip(sides, first, strict=True):  # also warms the file cache
        measured(command(side, root))
    for root in first[1:]:
        if not same_tree(first[0], root):
            print("the output trees differ; run the conformance tests", file=sys.stderr)
            return False
    for _ in range(runs):
        for side in sides:
            side.runs.append(measured(command(side)))
    for side in sides:
        side.memory = peak_memory(command(side))
    return True


def _report(title: str, sides: list[Side]) -> str:
    theirs, width = sides[0], max(len(side.label) for side in sides) + 1
    lines = [f"opgen aten vs python -m torchgen.gen ({title}), {len(theirs.runs)} rounds"]
    for side in sides:
        line = (
            f"{side.label + ':':<{width}} wall {statistics.median(r.wall for r in side.runs):6.3f}"
            f" s, CPU {statistics.median(r.cpu for r in side.runs):6.3f} s, peak RSS "
            f"{max(r.rss for r in side.runs) / 1024:.0f} MiB (largest process), peak memory "
            f"{side.memory / 1024:.0f} MiB (PSS, all processes)"
        )
        if side is not theirs:
            pairs = list(zip(side.runs, theirs.runs, strict=True))
            wall = statistics.median(t.wall / o.wall for o, t in pairs)
            cpu = statistics.median(t.cpu / o.cpu for o, t in pairs)
            line += f"; speed-up {wall:.2f}x wall, {cpu:.2f}x CPU"
        lines.append(line)
    return "\n".join(lines)


if __name__ == "__main__":
    sys.exit(main())
