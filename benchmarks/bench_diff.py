"""Whole-process `opgen diff` of two full specs against `opgen check` of one (target: < 2x).

python benchmarks/bench_diff.py [--runs 11] [--old NATIVE_YAML]

NEW is torch's packaged spec. OLD is `--old` (an older torch's, as
fetch_old_specs.py writes them), else a copy of NEW with the last argument of
every tenth schema renamed, so that the diff has findings to report.
"""

from __future__ import annotations

import argparse
import re
import shutil
import statistics
import sys
import tempfile
from pathlib import Path

from paired import run_pairs, torchgen_native_dir


def changed_copy(native: Path, into: Path) -> Path:
    """`native` with the last argument of every tenth schema renamed, beside its tags.yaml."""
    lines = native.read_text().split("\n")
    count = 0
    for i, line in enumerate(lines):
        if line.startswith("- func: ") and "(" in line and not line.endswith("() -> ()"):
            count += 1
            if count % 10 == 0:
                lines[i] = re.sub(
                    r"(?<![\w])(?!self\b)(\w+)((?:=[^,)]*)?\)) -> ",
                    r"\1_renamed\2 -> ",
                    line,
                    count=1,
                )
    into.mkdir(parents=True, exist_ok=True)
    (into / "native_functions.yaml").write_text("\n".join(lines))
    shutil.copy(native.parent / "tags.yaml", into / "tags.yaml")
    return into / "native_functions.yaml"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=11, help="pairs of runs (default 11)")
    parser.add_argument(
        "--old", metavar="NATIVE_YAML", help="the old spec (default: a changed copy)"
    )
    args = parser.parse_args()
    new = torchgen_native_dir() / "native_functions.yaml"
    with tempfile.TemporaryDirectory() as tmp:
        old = Path(args.old) if args.old else changed_copy(new, Path(tmp) / "old")
        check = [sys.executable, "-m", "opgen", "check", str(new)]
        # diff exits 1 when it finds breaks: the timing helper wants 0, so allow them all.
        allow = Path(tmp) / "allow.yaml"
        allow.write_text(
            "- {name: '*', category: backward-incompatible, reason: bench, until: 2999-01-01}\n"
            "- {name: '*', category: forward-incompatible, reason: bench, until: 2999-01-01}\n"
        )
        diff = [sys.executable, "-m", "opgen", "diff", str(old), str(new), "--allow", str(allow)]
        times = run_pairs(check, diff, args.runs)
    print(f"opgen check (one spec):  median {statistics.median(times.ours):.3f} s")
    print(f"opgen diff (two specs):  median {statistics.median(times.theirs):.3f} s")
    print(f"diff / check (median of {args.runs} paired ratios): {times.ratio:.2f}x (target < 2x)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
