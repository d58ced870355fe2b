"""opgen against another opgen: the same commands, alternating whole processes.

The other opgen is a git revision of this repository, checked out into a temporary
worktree (`--base REV`, default the tree's last commit) and run from its `src/`; both
sides run with compiled bytecode, each run writes into a fresh, empty directory, both
sides must write identical trees, and the figure per command is each side's median and
the median of the paired ratios (base time / this tree's time: above 1 is faster).

    python benchmarks/bench_ab.py [--base REV] [--runs 21] [--only aten,backend,...]

The commands: `opgen aten` (default, and with --per-operator-headers), `opgen backend` and
`opgen lazy` on a backend YAML the size of torch_xla's, and `opgen executorch` on the
portable kernels (its templates from ExecuTorch's reference files, tests/reference_data.py).
"""

from __future__ import annotations

import argparse
import compileall
import subprocess
import sys
import tempfile
from collections.abc import Callable
from pathlib import Path

from bench_backend import shape_inference_header
from paired import REPO, Scratch, clean_builds, torchgen_native_dir
from real_size_backend import write_backend_yaml

from opgen.releases import NEWEST


def worktree(revision: str, under: Path) -> Path:
    path = under / "base"
    subprocess.run(
        ["git", "-C", str(REPO), "worktree", "add", "--detach", str(path), revision],
        check=True,
        capture_output=True,
    )
    compileall.compile_dir(str(path / "src"), quiet=1)
    return path


def opgen(tree: Path) -> list[str]:
    """The command that runs `tree`'s opgen."""
    return ["env", f"PYTHONPATH={tree / 'src'}", sys.executable, "-m", "opgen"]


def commands(inputs: Path) -> dict[str, tuple[list[str], Callable[[list[str], Path], list[str]]]]:
    aten = torchgen_native_dir().parent
    header = shape_inference_header()
    native = aten / "native"
    yaml = write_backend_yaml(
        native / "native_functions.yaml", native / "tags.yaml", header, inputs / "xla.yaml", NEWEST
    )

    def into(*flags: str) -> Callable[[list[str], Path], list[str]]:
        return lambda generator, root: [*generator, *flags]

    found = {
        "aten": (["aten", "-s", str(aten)], into("-d", "out")),
        "aten --per-operator-headers": (
            ["aten", "-s", str(aten), "--per-operator-headers"],
            into("-d", "out"),
        ),
        "backend": (["backend", "-s", str(yaml)], into("-o", "out")),
        "lazy": (
            ["lazy", "-s", str(yaml), "--shape-inference-hdr", str(header)],
            into("-o", "out"),
        ),
    }
    sys.path.insert(0, str(REPO))
    from tests.reference_data import executorch_file

    templates = executorch_file("codegen/templates/Functions.h")
    functions = executorch_file("kernels/portable/functions.yaml")
    if templates is not None and functions is not None:
        found["executorch"] = (
            [
                "executorch", "--source-path", str(templates.parent.parent),
                "--aten-yaml-path", str(native / "native_functions.yaml"),
                "--tags-path", str(native / "tags.yaml"),
                "--functions-yaml-path", str(functions),
            ],
            into("--install-dir", "out"),
        )  # fmt: skip
    return found


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--base", default="HEAD", help="the revision to compare with")
    parser.add_argument("--runs", type=int, default=21, help="pairs of runs (default 21)")
    parser.add_argument("--only", help="these commands only, comma-separated")
    args = parser.parse_args()
    compileall.compile_dir(str(REPO / "src"), quiet=1)
    scratch = Path(tempfile.mkdtemp(prefix="bench-ab-"))
    inputs = Scratch()
    base = worktree(args.base, scratch)
    try:
        for name, (flags, finish) in commands(inputs.root).items():
            if args.only and name.split()[0] not in args.only.split(","):
                continue
            builds = clean_builds(
                [*opgen(REPO), *flags], [*opgen(base), *flags], finish, args.runs, in_root=True
            )
            if builds is None:
                print(f"{name}: the two trees differ")
                return 1
            print(builds.report(f"opgen {name}", "this tree", f"base {args.base}"))
    finally:
        subprocess.run(["git", "-C", str(REPO), "worktree", "remove", "--force", str(base)])
        inputs.remove()
    return 0


if __name__ == "__main__":
    sys.exit(main())
