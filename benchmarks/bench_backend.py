"""Whole-process `opgen backend` and `opgen lazy` against torchgen's gen_backend_stubs and
gen_lazy_tensor.

Each reads torch's packaged spec and templates and a backend YAML of
tests/conformance/data/backends: `opgen backend` the torch_xla-style one,
`opgen lazy` the TorchScript-style one with TorchScript lowerings. Upstream's
lazy generator runs through tests/conformance/lazy_oracle.py (its module
cannot find the spec from a wheel). Each run writes into a fresh, empty
output directory, which it names by a relative path from its own working
directory, as a build does; runs alternate, and the script prints both
medians and the median of the paired ratios, after checking that the two
output trees are identical.

    python benchmarks/bench_backend.py [--runs 11] [--torch-version X.Y.Z]
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import sys
from pathlib import Path

from paired import REPO, add_release_argument, clean_builds, use_release

BACKENDS = REPO / "tests" / "conformance" / "data" / "backends"
ORACLE = REPO / "tests" / "conformance" / "lazy_oracle.py"


def shape_inference_header() -> str:
    torch = importlib.util.find_spec("torch")
    assert torch is not None and torch.submodule_search_locations is not None
    root = Path(next(iter(torch.submodule_search_locations)))
    return str(root / "include" / "torch" / "csrc" / "lazy" / "core" / "shape_inference.h")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=11, help="pairs of runs (default 11)")
    add_release_argument(parser)
    args = parser.parse_args()
    aten, release_flags = use_release(args.torch_version)
    source = ["--source-path", str(aten), *release_flags] if release_flags else []
    stubs_yaml = str(BACKENDS / "xla.yaml")

    def stubs(generator: list[str], root: Path) -> list[str]:
        return [*generator, "-s", stubs_yaml, "-o", "out"]

    builds = clean_builds(
        [sys.executable, "-m", "opgen", "backend", *source],
        [sys.executable, "-m", "torchgen.gen_backend_stubs"],
        stubs,
        args.runs,
        in_root=True,
    )
    if builds is None:
        return 1
    print(builds.report("opgen backend vs gen_backend_stubs", "opgen backend", "gen_backend_stubs"))

    lazy_yaml, header = str(BACKENDS / "ts_lazy.yaml"), shape_inference_header()
    ours = [sys.executable, "-m", "opgen", "lazy", *source, "-s", lazy_yaml, "-o", "out"]
    ours += ["--gen-ts-lowerings", "--shape-inference-hdr", header]
    arguments = {"source_yaml": lazy_yaml, "output_dir": "out", "dry_run": False}
    arguments.update(impl_path=None, gen_ts_lowerings=True, shape_inference_hdr=header)
    theirs = [sys.executable, str(ORACLE), json.dumps(arguments)]
    builds = clean_builds(ours, theirs, lambda generator, root: generator, args.runs, in_root=True)
    if builds is None:
        return 1
    print(builds.report("opgen lazy vs gen_lazy_tensor", "opgen lazy", "gen_lazy_tensor"))
    return 0


if __name__ == "__main__":
    sys.exit(main())
