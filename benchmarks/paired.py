"""Paired whole-process timing: opgen and torchgen as fresh processes, alternating.

Start-up and imports count, and machine noise hits both sides alike. The
result is each side's median and the median of the per-pair ratios.

For generators that write a tree (`clean_builds`): both sides first run once
and must write identical trees; then each timed run writes into a fresh, empty
directory (a clean build), made and removed outside the timing; then each side
runs once more, untimed, for its peak memory (PSS, workers included).
"""

from __future__ import annotations

import argparse
import compileall
import filecmp
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]


def add_release_argument(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--torch-version",
        metavar="X.Y.Z",
        help="measure against that release's torchgen and inputs, fetched as the release "
        "conformance suite fetches them (default: the installed torch's)",
    )


def use_release(version: str | None) -> tuple[Path, list[str]]:
    """The packaged ATen directory to generate from, and opgen's extra flags.

    With a version, every process this script starts finds that release's torchgen
    first (PYTHONPATH, bytecode-compiled as pip would), and opgen is told the release.
    """
    if version is None:
        return torchgen_native_dir().parent, []
    sys.path.insert(0, str(REPO / "tests" / "conformance"))
    from releases import release_root

    root = release_root(version)
    compileall.compile_dir(str(root / "torchgen"), quiet=1)
    os.environ["PYTHONPATH"] = str(root)
    return root / "torchgen" / "packaged" / "ATen", ["--torch-version", version]


def torchgen_native_dir() -> Path:
    import torchgen  # only to find the packaged spec; the timed runs import it afresh

    return Path(os.path.dirname(torchgen.__file__)) / "packaged" / "ATen" / "native"


def setup(description: str) -> tuple[int, str, str]:
    """Parse `--runs`; return it with torch's native_functions.yaml and tags.yaml."""
    parser = argparse.ArgumentParser(description=description)
    parser.add_argument("--runs", type=int, default=11, help="pairs of runs (default 11)")
    runs = parser.parse_args().runs
    native_dir = torchgen_native_dir()
    return runs, str(native_dir / "native_functions.yaml"), str(native_dir / "tags.yaml")


def timed(command: list[str]) -> float:
    return measured(command)[0]


def measured(command: list[str], cwd: Path = REPO) -> tuple[float, int]:
    """Wall time in seconds and peak resident set size in KiB of one run of `command`."""
    start = time.perf_counter()
    process = subprocess.Popen(
        command, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, cwd=cwd
    )
    _, status, usage = os.wait4(process.pid, 0)
    elapsed = time.perf_counter() - start
    process.returncode = os.waitstatus_to_exitcode(status)
    if process.returncode != 0:
        raise subprocess.CalledProcessError(process.returncode, command)
    return elapsed, usage.ru_maxrss  # KiB on Linux


def peak_memory(command: list[str], interval: float = 0.005, cwd: Path = REPO) -> int:
    """Peak memory in KiB of one run of `command` and the processes it forks, together.

    Sums the proportional set size (PSS: shared pages split between the
    processes sharing them) of the process and its descendants, sampled every
    `interval` seconds; so a forked worker counts only with the pages it owns.
    Sampling costs time, so runs measured here are not timed.
    """
    process = subprocess.Popen(
        command, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, cwd=cwd
    )
    peak = 0
    while process.poll() is None:
        peak = max(peak, sum(_pss(pid) for pid in _tree(process.pid)))
        time.sleep(interval)
    if process.returncode != 0:
        raise subprocess.CalledProcessError(process.returncode, command)
    return peak


def _tree(pid: int) -> list[int]:
    try:
        children = Path(f"/proc/{pid}/task/{pid}/children").read_text().split()
    except OSError:
        return [pid]
    return [pid, *(p for child in children for p in _tree(int(child)))]


def _pss(pid: int) -> int:
    try:
        for line in Path(f"/proc/{pid}/smaps_rollup").read_text().splitlines():
            if line.startswith("Pss:"):
                return int(line.split()[1])
    except OSError:  # the process has just ended
        pass
    return 0


@dataclass(frozen=True)
class PairedTimes:
    ours: list[float]
    theirs: list[float]

    @property
    def ratio(self) -> float:
        return statistics.median(t / o for o, t in zip(self.ours, self.theirs, strict=True))

    def report(self, our_label: str, their_label: str) -> str:
        width = max(len(our_label), len(their_label)) + 1
        return (
            f"{our_label + ':':<{width}} median {statistics.median(self.ours):.3f} s\n"
            f"{their_label + ':':<{width}} median {statistics.median(self.theirs):.3f} s\n"
            f"speed-up (median of {len(self.ours)} paired ratios): {self.ratio:.2f}x"
        )


class Scratch:
    """Fresh, empty output directories for clean-build runs, all removed only at the end.

    Removing one run's outputs before the next would time the file system as much
    as the generator: for one to five minutes after a file is removed, ext4 reads
    the inode of each recently freed one it passes over when it creates a file
    (`recently_deleted`), and after thousands of removals, creating a file here
    takes up to 0.15 ms instead of 0.01 ms. So every run gets a directory of its
    own, and nothing is removed while runs are timed.
    """

    def __init__(self, under: str | None = None) -> None:
        self.root = Path(tempfile.mkdtemp(prefix="bench-", dir=under))
        self._made = 0

    def fresh(self, label: str) -> Path:
        self._made += 1
        directory = self.root / f"{label}-{self._made}"
        directory.mkdir()
        return directory

    def remove(self) -> None:
        shutil.rmtree(self.root, ignore_errors=True)


def compile_bytecode() -> None:
    """Both sides load compiled bytecode, as an installed package does.

    pip compiles torchgen's at install time, but an editable opgen (or one run
    with PYTHONDONTWRITEBYTECODE set) would otherwise be compiled on every run.
    """
    import opgen

    compileall.compile_dir(os.path.dirname(opgen.__file__), quiet=1)
    compileall.compile_dir(str(REPO / "tests"), quiet=1)


def run_pairs(ours: list[str], theirs: list[str], runs: int) -> PairedTimes:
    compile_bytecode()
    timed(ours), timed(theirs)  # warm the file cache
    our_times, their_times = [], []
    for _ in range(runs):
        our_times.append(timed(ours))
        their_times.append(timed(theirs))
    return PairedTimes(our_times, their_times)


def same_tree(a: Path, b: Path) -> bool:
    """Whether two directories hold the same files with the same bytes."""
    files_a = sorted(p.relative_to(a) for p in a.rglob("*") if p.is_file())
    files_b = sorted(p.relative_to(b) for p in b.rglob("*") if p.is_file())
    if files_a != files_b:
        return False
    return all(filecmp.cmp(a / p, b / p, shallow=False) for p in files_a)


@dataclass(frozen=True)
class CleanBuilds:
    """Each side's (seconds, peak RSS in KiB) per timed run, and its peak PSS in KiB."""

    ours: list[tuple[float, int]]
    theirs: list[tuple[float, int]]
    memory_ours: int
    memory_theirs: int

    def report(self, title: str, our_label: str, their_label: str) -> str:
        """Time, peak RSS of the largest process, and peak PSS of all processes together."""
        ratios = [t[0] / o[0] for o, t in zip(self.ours, self.theirs, strict=True)]
        width = max(len(our_label), len(their_label)) + 1
        lines = [f"{title}, {len(ratios)} alternating pairs"]
        for label, side, memory in (
            (our_label, self.ours, self.memory_ours),
            (their_label, self.theirs, self.memory_theirs),
        ):
            seconds = statistics.median(t for t, _ in side)
            rss = max(r for _, r in side) / 1024
            lines.append(
                f"{label + ':':<{width}} median {seconds:.3f} s, peak RSS {rss:.0f} MiB (largest "
                f"process), peak memory {memory / 1024:.0f} MiB (PSS, all processes)"
            )
        lines.append(f"speed-up (median of paired ratios): {statistics.median(ratios):.2f}x")
        return "\n".join(lines)


def clean_builds(
    ours: list[str],
    theirs: list[str],
    command: Callable[[list[str], Path], list[str]],
    runs: int,
    *,
    in_root: bool = False,
) -> CleanBuilds | None:
    """Time `command(generator, root)` for both generators, alternating, each run into a
    fresh `root`; None (after saying so) if the two sides' trees differ. With `in_root`,
    each run's working directory is its `root` (for commands that name their outputs by
    relative paths, which then read the same on both sides)."""
    compile_bytecode()
    scratch = Scratch()
    sides = (("ours", ours), ("theirs", theirs))

    def run(side: str, generator: list[str]) -> tuple[float, int]:
        root = scratch.fresh(side)
        return measured(command(generator, root), cwd=root if in_root else REPO)

    try:
        for side, generator in sides:  # the first directories: ours-1, theirs-2
            run(side, generator)
        if not same_tree(scratch.root / "ours-1", scratch.root / "theirs-2"):
            print("the two output trees differ; run the conformance tests", file=sys.stderr)
            return None
        results: dict[str, list[tuple[float, int]]] = {"ours": [], "theirs": []}
        for _ in range(runs):
            for side, generator in sides:
                results[side].append(run(side, generator))
        memory = {}
        for side, generator in sides:
            root = scratch.fresh(side)
            memory[side] = peak_memory(command(generator, root), cwd=root if in_root else REPO)
    finally:
        scratch.remove()
    return CleanBuilds(results["ours"], results["theirs"], memory["ours"], memory["theirs"])
