"""The parts of a PyTorch checkout that `generate_code.py` reads, made from torch's wheel.

`aten/src/ATen` holds the packaged spec (with the TorchScript lazy backend's YAML,
opgen's test copy, under `native/`) and links to the packaged templates;
`torch/csrc/lazy/core` links to torch's installed headers (the lazy backend checks
its shape-inference header there), and `torch/csrc/lazy/ts_backend/
ts_native_functions.cpp` defines the backend's hand-written kernels. Used by the
generate-code conformance test and by benchmarks/bench_pytorch_build.py.
"""

from __future__ import annotations

import functools
import shutil
from pathlib import Path

import torch
import torchgen

DATA = Path(__file__).parent / "data"
ORACLE = Path(__file__).parent / "generate_code_oracle.py"
PACKAGED = Path(torchgen.__file__).parent / "packaged"
TS_YAML = DATA / "backends" / "ts_lazy.yaml"


def checkout(root: Path, packaged: Path = PACKAGED) -> None:
    """`root` laid out as the parts of a PyTorch checkout that generate_code.py reads,
    from `packaged` (a release's `torchgen/packaged`; default: the installed one's)."""
    native = root / "aten" / "src" / "ATen" / "native"
    native.mkdir(parents=True)
    for name in ("native_functions.yaml", "tags.yaml"):
        shutil.copy(packaged / "ATen" / "native" / name, native / name)
    shutil.copy(TS_YAML, native / "ts_native_functions.yaml")
    (native.parent / "templates").symlink_to(packaged / "ATen" / "templates")
    lazy = root / "torch" / "csrc" / "lazy"
    (lazy / "ts_backend").mkdir(parents=True)
    (lazy / "core").symlink_to(Path(torch.__file__).parent / "include/torch/csrc/lazy/core")
    (lazy / "ts_backend" / "ts_native_functions.cpp").write_text(ts_kernels())


@functools.cache
def ts_kernels() -> str:
    """A definition of each kernel the TorchScript YAML lists as hand-written, named
    as torchgen names it (`supported:` and `autograd:` entries; `_symint` for those
    listed under `symint:`). The names are the same in every supported release."""
    import yaml
    from torchgen.api import dispatcher
    from torchgen.gen import parse_native_yaml
    from torchgen.model import OperatorName

    listed = yaml.safe_load(TS_YAML.read_text())
    functions = {
        f.func.name: f
        for f in parse_native_yaml(
            str(PACKAGED / "ATen/native/native_functions.yaml"),
            str(PACKAGED / "ATen/native/tags.yaml"),
        ).native_functions
    }
    lines = []
    for name in (*listed["supported"], *listed["autograd"]):
        kernel = dispatcher.name(functions[OperatorName.parse(name)].func)
        if name in listed["symint"]:
            kernel += "_symint"
        lines.append(f"at::Tensor LazyNativeFunctions::{kernel}(...) {{}}\n")
    return "".join(lines)
