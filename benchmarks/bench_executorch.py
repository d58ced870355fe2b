"""Whole-process `opgen executorch` against ExecuTorch's codegen, on the portable kernels.

Upstream is the installed `executorch` wheel's codegen on the installed torch's
torchgen, started as ExecuTorch's CMake starts it: `python -m codegen.gen` with its
`codegen` package on the path. Both read ExecuTorch's portable `functions.yaml` and
templates (`../shared/executorch`, or `OPGEN_EXECUTORCH_REFERENCE`), torch's packaged
`native_functions.yaml` and `tags.yaml`, and write a fresh output directory with its
dependency list (`-o`), both named by relative paths from the run's own working
directory, so that the lists read the same on both sides. Runs alternate; the script prints both
medians, the median of the paired ratios and both sides' peak memory, after checking
that the two trees are identical.

    python benchmarks/bench_executorch.py [--runs 7]
"""

from __future__ import annotations

import argparse
import importlib.util
import os
import shutil
import sys
import tempfile
from pathlib import Path

from paired import REPO, clean_builds, torchgen_native_dir

sys.path.insert(0, str(REPO))
from tests.conformance.executorch_reference import reference


def codegen_root() -> Path:
    """A directory holding the wheel's `codegen` package under that name, as an
    ExecuTorch source tree does (upstream's `@generated` lines then read as in a build)."""
    found = importlib.util.find_spec("executorch.codegen")
    assert found is not None and found.submodule_search_locations is not None
    root = Path(tempfile.mkdtemp(prefix="et-codegen-"))
    (root / "codegen").symlink_to(next(iter(found.submodule_search_locations)))
    return root


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=7, help="pairs of runs (default 7)")
    args = parser.parse_args()
    native = torchgen_native_dir()
    functions = reference("kernels/portable/functions.yaml")
    templates = reference("codegen/templates/Functions.h").parents[1]
    inputs = [
        *("--functions-yaml-path", str(functions)),
        *("--aten-yaml-path", str(native / "native_functions.yaml")),
        *("--tags-path", str(native / "tags.yaml")),
        *("--source-path", str(templates)),
    ]

    def command(generator: list[str], root: Path) -> list[str]:
        return [*generator, *inputs, "--install-dir", "out", "-o", "out/deps.cmake"]

    root = codegen_root()
    os.environ["PYTHONPATH"] = str(root)  # the timed processes inherit it
    ours = [sys.executable, "-m", "opgen", "executorch"]
    theirs = [sys.executable, "-m", "codegen.gen"]
    try:
        builds = clean_builds(ours, theirs, command, args.runs, in_root=True)
    finally:
        shutil.rmtree(root)
    if builds is None:
        return 1
    print(builds.report("opgen executorch vs ExecuTorch's codegen", "opgen", "codegen.gen"))
    return 0


if __name__ == "__main__":
    sys.exit(main())
