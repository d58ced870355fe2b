"""The codegen a PyTorch build runs, end to end: upstream's commands against opgen's.

The sequence, as CMake runs it for a CPU build with per-operator headers:

1. configure (cmake/Codegen.cmake): `torchgen.gen --generate headers|sources|
   declarations_yaml --dry-run --output-dependencies FILE`, three processes;
2. build: the same three runs for real (Ninja may overlap them; here they run one
   after another, so that CPU and wall time add up per step);
3. `tools/setup_helpers/generate_code.py` with `--gen_lazy_ts_backend
   --per_operator_headers --force_schema_registration`, as caffe2/CMakeLists.txt
   passes them. It is not in the wheel: upstream's side is
   tests/conformance/generate_code_oracle.py, which makes the same torchgen calls.

Both sides run in a directory laid out as a checkout (tests/conformance/
pytorch_checkout.py), each round in fresh output directories; rounds alternate
which side goes first. Each step is a whole process: its CPU time (user + system,
forked workers included) and wall time. The script first checks that both sides
write the same trees (dependency lists compared with their roots replaced).

`opgen pyi` is not in the sequence: upstream's gen_pyi is not in the wheel
(bench_aten.py and the pyi conformance suite cover it).

    python benchmarks/bench_pytorch_build.py [--rounds 5] [--scratch DIR]
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path

from paired import REPO, Scratch, compile_bytecode

sys.path.insert(0, str(REPO / "tests" / "conformance"))
from pytorch_checkout import ORACLE, PACKAGED, checkout

KINDS = ("headers", "sources", "declarations_yaml")


@dataclass(frozen=True)
class Step:
    name: str
    command: list[str]


def steps(side: str, root: Path) -> list[Step]:
    """The sequence's commands for one side, writing under `root` (the checkout)."""
    aten = root / "aten" / "src" / "ATen"
    build = root / "build" / "aten" / "src" / "ATen"
    if side == "upstream":
        gen = [sys.executable, "-m", "torchgen.gen"]
        generate_code = [
            sys.executable,
            str(ORACLE),
            "--autograd-dir",
            str(PACKAGED / "autograd"),
        ]
    else:
        gen = [sys.executable, "-m", "opgen", "aten"]
        generate_code = [
            sys.executable,
            "-m",
            "opgen",
            "generate-code",
            "--autograd-dir",
            str(PACKAGED / "autograd"),
        ]
    common = [
        *gen,
        "--source-path",
        str(aten),
        "--install_dir",
        str(build),
        "--aoti-install-dir",
        str(root / "build" / "aoti"),
        "--per-operator-headers",
    ]
    listed = [
        Step(
            f"configure {kind}",
            [
                *common,
                "--generate",
                kind,
                "--dry-run",
                "--output-dependencies",
                str(root / "build" / "configure" / f"generated_{kind}.cmake"),
            ],
        )
        for kind in KINDS
    ]
    built = [
        Step(
            f"build {kind}",
            [
                *common,
                "--generate",
                kind,
                "--output-dependencies",
                str(build / f"generated_{kind}.cmake"),
            ],
        )
        for kind in KINDS
    ]
    native = aten / "native"
    code = Step(
        "generate_code",
        [
            *generate_code,
            "--native-functions-path",
            str(native / "native_functions.yaml"),
            "--tags-path",
            str(native / "tags.yaml"),
            "--gen-dir",
            str(root / "build" / "gen"),
            "--gen-lazy-ts-backend",
            "--per-operator-headers",
        ],
    )
    return [*listed, *built, code]


@dataclass(frozen=True)
class Timing:
    cpu: float
    wall: float


def run(step: Step, cwd: Path) -> Timing:
    start = time.perf_counter()
    process = subprocess.Popen(
        step.command, cwd=cwd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE
    )
    _, status, usage = os.wait4(process.pid, 0)
    wall = time.perf_counter() - start
    assert process.stderr is not None
    error = process.stderr.read().decode()
    if os.waitstatus_to_exitcode(status) != 0:
        raise SystemExit(f"{step.name} failed: {' '.join(step.command)}\n{error}")
    return Timing(usage.ru_utime + usage.ru_stime, wall)


def round_of(side: str, scratch: Scratch) -> list[Timing]:
    root = scratch.fresh(side)
    checkout(root)
    return [run(step, root) for step in steps(side, root)]


def same_outputs(ours: Path, theirs: Path) -> list[str]:
    """The files under build/ that differ, each side's root replaced by `<root>` (the
    dependency lists and the lazy backend's includes name it)."""
    a, b = ours / "build", theirs / "build"
    files_a = sorted(p.relative_to(a) for p in a.rglob("*") if p.is_file())
    files_b = sorted(p.relative_to(b) for p in b.rglob("*") if p.is_file())
    if files_a != files_b:
        return sorted(set(map(str, files_a)) ^ set(map(str, files_b)))[:10]
    return [
        str(rel)
        for rel in files_a
        if (a / rel).read_bytes().replace(bytes(ours), b"<root>")
        != (b / rel).read_bytes().replace(bytes(theirs), b"<root>")
    ]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=5, help="rounds per side (default 5)")
    parser.add_argument("--scratch", help="where the output trees go (default: the temp dir)")
    args = parser.parse_args()
    compile_bytecode()
    scratch = Scratch(args.scratch)
    try:
        check = {side: scratch.fresh(f"check-{side}") for side in ("opgen", "upstream")}
        for side, root in check.items():
            checkout(root)
            for step in steps(side, root):
                run(step, root)
        differ = same_outputs(check["opgen"], check["upstream"])
        if differ:
            print("the trees differ:", *differ, sep="\n  ")
            return 1
        times: dict[str, list[list[Timing]]] = {"opgen": [], "upstream": []}
        for i in range(args.rounds):
            order = ("opgen", "upstream") if i % 2 == 0 else ("upstream", "opgen")
            for side in order:
                times[side].append(round_of(side, scratch))
        print(report(times, [s.name for s in steps("opgen", scratch.root)]))
    finally:
        scratch.remove()
    return 0


def report(times: dict[str, list[list[Timing]]], names: list[str]) -> str:
    """A table of medians over rounds: each step, configure, build, the whole sequence."""

    def median(side: str, indices: range | list[int], field: str) -> float:
        return statistics.median(sum(getattr(r[i], field) for i in indices) for r in times[side])

    groups: list[tuple[str, range | list[int]]] = [
        *((name, [i]) for i, name in enumerate(names)),
        ("configure (3 dry runs)", range(0, 3)),
        ("build (3 runs)", range(3, 6)),
        ("whole sequence", range(len(names))),
    ]
    rows = [
        "| step | opgen CPU | upstream CPU | ratio | opgen wall | upstream wall | ratio |",
        "|---|---|---|---|---|---|---|",
    ]
    for label, indices in groups:
        cells = []
        for field in ("cpu", "wall"):
            ours, theirs = median("opgen", indices, field), median("upstream", indices, field)
            cells.append(f"{ours:.2f} s | {theirs:.2f} s | {theirs / ours:.1f}x")
        rows.append(f"| {label} | {' | '.join(cells)} |")
    rounds = len(times["opgen"])
    return f"medians of {rounds} alternating rounds per side\n" + "\n".join(rows)


if __name__ == "__main__":
    sys.exit(main())
