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
import filecmp
import shutil
import statistics
import sys
import tempfile
from pathlib import Path

from paired import compile_bytecode, measured, peak_memory, torchgen_native_dir


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=5, help="pairs of runs (default 5)")
    parser.add_argument("--jobs", type=int, help="opgen's -j (default: its own)")
    args = parser.parse_args()
    native = torchgen_native_dir()
    autograd = native.parents[1] / "autograd"
    inputs = [str(native / "native_functions.yaml"), str(native / "tags.yaml")]
    scratch = Path(tempfile.mkdtemp(prefix="bench-autograd-"))

    def command(generator: list[str], root: Path) -> list[str]:
        return [*generator, *inputs, str(root / "out"), str(autograd)]

    ours = [sys.executable, "-m", "opgen", "autograd"]
    if args.jobs is not None:
        ours += ["-j", str(args.jobs)]
    theirs = [sys.executable, "-m", "torchgen.packaged.autograd.gen_autograd"]
    sides = (("ours", ours), ("theirs", theirs))
    compile_bytecode()
    try:
        for side, generator in sides:
            measured(command(generator, scratch / side))
        if not _same_tree(scratch / "ours", scratch / "theirs"):
            print("the two output trees differ; run the conformance tests", file=sys.stderr)
            return 1
        results: dict[str, list[tuple[float, int]]] = {"ours": [], "theirs": []}
        for _ in range(args.runs):
            for side, generator in sides:
                root = scratch / side
                shutil.rmtree(root, ignore_errors=True)
                results[side].append(measured(command(generator, root)))
        memory = {}
        for side, generator in sides:
            root = scratch / side
            shutil.rmtree(root, ignore_errors=True)
            memory[side] = peak_memory(command(generator, root))
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
    _report(results, memory)
    return 0


def _same_tree(a: Path, b: Path) -> bool:
    files_a = sorted(p.relative_to(a) for p in a.rglob("*") if p.is_file())
    files_b = sorted(p.relative_to(b) for p in b.rglob("*") if p.is_file())
    if files_a != files_b:
        return False
    return all(filecmp.cmp(a / p, b / p, shallow=False) for p in files_a)


def _report(results: dict[str, list[tuple[float, int]]], memory: dict[str, int]) -> None:
    """Time, peak RSS of the largest process, and peak PSS of all processes together."""
    ours, theirs = results["ours"], results["theirs"]
    ratios = [t[0] / o[0] for o, t in zip(ours, theirs, strict=True)]
    print(f"opgen autograd vs gen_autograd, {len(ratios)} alternating pairs")
    for label, side, key in (("opgen autograd", ours, "ours"), ("gen_autograd", theirs, "theirs")):
        seconds = statistics.median(t for t, _ in side)
        rss = max(r for _, r in side) / 1024
        print(
            f"{label + ':':<16} median {seconds:.3f} s, peak RSS {rss:.0f} MiB (largest "
            f"process), peak memory {memory[key] / 1024:.0f} MiB (PSS, all processes)"
        )
    print(f"speed-up (median of paired ratios): {statistics.median(ratios):.2f}x")


if __name__ == "__main__":
    sys.exit(main())
