"""Whole-process `opgen backend` and `opgen lazy` against torchgen's gen_backend_stubs and
gen_lazy_tensor.

Each reads torch's packaged spec and templates and a backend YAML the size of
torch_xla's (about 400 operators: 95 `full_codegen`, 10 `ir_gen`, 289
`supported`), written from that spec by real_size_backend.py; `opgen lazy` also
reads torch's shape-inference header, and emits the IR nodes torch_xla's build
asks for (no TorchScript lowerings). Upstream's lazy generator runs through
tests/conformance/lazy_oracle.py (its module cannot find the spec from a wheel).
Each run writes into a fresh, empty output directory, which it names by a
relative path from its own working directory, as a build does; runs alternate,
and the script prints both medians and the median of the paired ratios, after
checking that the two output trees are identical. opgen runs with its default `-j`
(one process per core, at most 4) unless `--jobs` says.

    python benchmarks/bench_backend.py [--runs 11] [--torch-version X.Y.Z] [--jobs N]
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import sys
from pathlib import Path

from paired import REPO, Scratch, add_release_argument, clean_builds, use_release
from real_size_backend import write_backend_yaml

from opgen.releases import NEWEST, parse_release

ORACLE = REPO / "tests" / "conformance" / "lazy_oracle.py"


def shape_inference_header() -> Path:
    torch = importlib.util.find_spec("torch")
    assert torch is not None and torch.submodule_search_locations is not None
    root = Path(next(iter(torch.submodule_search_locations)))
    return root / "include" / "torch" / "csrc" / "lazy" / "core" / "shape_inference.h"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=11, help="pairs of runs (default 11)")
    parser.add_argument("--jobs", type=int, help="opgen's -j (default: opgen's default)")
    add_release_argument(parser)
    args = parser.parse_args()
    aten, release_flags = use_release(args.torch_version)
    source = ["--source-path", str(aten), *release_flags] if release_flags else []
    if args.jobs is not None:
        source += ["-j", str(args.jobs)]
    header = shape_inference_header()
    inputs = Scratch()
    try:
        native = aten / "native"
        release = parse_release(args.torch_version or "") or NEWEST
        spec = (native / "native_functions.yaml", native / "tags.yaml")
        yaml = write_backend_yaml(*spec, header, inputs.root / "xla.yaml", release)
        return compare(str(yaml), str(header), source, args.runs)
    finally:
        inputs.remove()


def compare(stubs_yaml: str, header: str, source: list[str], runs: int) -> int:
    def stubs(generator: list[str], root: Path) -> list[str]:
        return [*generator, "-s", stubs_yaml, "-o", "out"]

    builds = clean_builds(
        [sys.executable, "-m", "opgen", "backend", *source],
        [sys.executable, "-m", "torchgen.gen_backend_stubs"],
        stubs,
        runs,
        in_root=True,
    )
    if builds is None:
        return 1
    print(builds.report("opgen backend vs gen_backend_stubs", "opgen backend", "gen_backend_stubs"))

    ours = [sys.executable, "-m", "opgen", "lazy", *source, "-s", stubs_yaml, "-o", "out"]
    ours += ["--shape-inference-hdr", header]
    arguments = {"source_yaml": stubs_yaml, "output_dir": "out", "dry_run": False}
    arguments.update(impl_path=None, shape_inference_hdr=header)
    theirs = [sys.executable, str(ORACLE), json.dumps(arguments)]
    builds = clean_builds(ours, theirs, lambda generator, root: generator, runs, in_root=True)
    if builds is None:
        return 1
    print(builds.report("opgen lazy vs gen_lazy_tensor", "opgen lazy", "gen_lazy_tensor"))
    return 0


if __name__ == "__main__":
    sys.exit(main())
