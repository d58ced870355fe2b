"""Paired whole-process timing: opgen and torchgen as fresh processes, alternating.

Start-up and imports count, and machine noise hits both sides alike. The
result is each side's median and the median of the per-pair ratios.
"""

from __future__ import annotations

import argparse
import compileall
import os
import statistics
import subprocess
import time
from dataclasses import dataclass
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]


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


def measured(command: list[str]) -> tuple[float, int]:
    """Wall time in seconds and peak resident set size in KiB of one run of `command`."""
    start = time.perf_counter()
    process = subprocess.Popen(
        command, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, cwd=REPO
    )
    _, status, usage = os.wait4(process.pid, 0)
    elapsed = time.perf_counter() - start
    process.returncode = os.waitstatus_to_exitcode(status)
    if process.returncode != 0:
        raise subprocess.CalledProcessError(process.returncode, command)
    return elapsed, usage.ru_maxrss  # KiB on Linux


def peak_memory(command: list[str], interval: float = 0.005) -> int:
    """Peak memory in KiB of one run of `command` and the processes it forks, together.

    Sums the proportional set size (PSS: shared pages split between the
    processes sharing them) of the process and its descendants, sampled every
    `interval` seconds; so a forked worker counts only with the pages it owns.
    Sampling costs time, so runs measured here are not timed.
    """
    process = subprocess.Popen(
        command, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, cwd=REPO
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
