"""`opgen lazy` writes what torchgen's gen_lazy_tensor writes, byte for byte.

Each configuration is a backend YAML of `data/backends/` and keyword
arguments of upstream's `run_gen_lazy_tensor`, which `opgen lazy` takes as
flags of the same names. Upstream runs through `lazy_oracle.py`; both run in
a directory where `torch/` links to torch's installed headers, so that the
default shape-inference header (`torch/csrc/lazy/core/shape_inference.h`,
read relative to the working directory) is torch's own, checked as upstream
checks it.
"""

from __future__ import annotations

import io
import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import torch

from opgen.cli import main

from .aten_trees import DATA, Tree, assert_same_files, oracle_tree, read_tree

BACKENDS = DATA / "backends"
ORACLE = Path(__file__).parent / "lazy_oracle.py"

# torch_xla's arguments to run_gen_lazy_tensor (its own node and tensor classes).
_XLA = {
    "node_base": "XlaNode",
    "node_base_hdr": "torch_xla/csrc/ir.h",
    "tensor_class": "torch_xla::XLATensor",
    "tensor_class_hdr": "torch_xla/csrc/tensor.h",
    "backend_name": "XLA",
    "backend_namespace": "torch_xla",
    "create_from_first_tensor": True,
    "create_tensor": "XLATensor::Create",
    "create_aten_from_ltc_tensor": "torch_xla::bridge::AtenFromXlaTensor",
    "metrics_counter": 'TORCH_LAZY_FN_COUNTER_TIMED_TRACING("xla::")',
    "get_device_fn": "torch_xla::bridge::GetXlaDevice",
    "get_tensor_or_wrap_number": "torch_xla::bridge::GetXlaTensorOrCreateForWrappedNumber",
    "try_get_tensor": "torch_xla::bridge::TryGetXlaTensor",
    "lazy_tensor_ptr": "XLATensorPtr",
    "use_lazy_shape": False,
    "gen_forced_fallback_code": True,
    "build_in_tree": True,
    "per_operator_headers": True,
}
CONFIGS: dict[str, tuple[str, dict[str, Any]]] = {
    "ts_lowerings": ("ts_lazy", {"gen_ts_lowerings": True}),
    "ts_plain": ("ts_lazy", {}),
    "ts_custom_base": (
        "ts_lazy",
        {
            "node_base": "MyNode",
            "node_base_hdr": "my/node.h",
            "backend_name": "MyLazy",
            "gen_forced_fallback_code": True,
        },
    ),
    "xla": ("xla", _XLA),
}


def opgen_flags(kwargs: dict[str, Any]) -> list[str]:
    flags = []
    for name, value in kwargs.items():
        flag = "--" + name.replace("_", "-")
        if value is True:
            flags.append(flag)
        elif value is False:
            flags.append(f"--no-{name.replace('_', '-')}")
        else:
            flags.extend((flag, str(value)))
    return flags


def upstream_tree(yaml: Path, kwargs: dict[str, Any], root: Path) -> Tree:
    arguments = {"source_yaml": str(yaml), "output_dir": "out", "dry_run": False}
    arguments.update(impl_path=None, link=True, **kwargs)
    command = [sys.executable, str(ORACLE), json.dumps(arguments)]
    return oracle_tree(command, root, key=("gen_lazy_tensor", yaml.read_text(), kwargs))


def run_opgen(root: Path, monkeypatch: pytest.MonkeyPatch, *argv: str) -> tuple[int, str]:
    """`opgen lazy ARGV` in `root`, with torch's headers linked as `torch/` meanwhile:
    the exit status and what it printed to stderr."""
    root.mkdir(parents=True, exist_ok=True)
    monkeypatch.chdir(root)
    link = root / "torch"
    link.symlink_to(Path(torch.__file__).parent / "include" / "torch")
    err = io.StringIO()
    try:
        return main(["lazy", *argv], io.StringIO(), err), err.getvalue()
    finally:
        link.unlink()


@pytest.mark.parametrize("jobs", ["1", "3"])
@pytest.mark.parametrize("config", CONFIGS)
def test_lazy_tree_is_upstreams(
    config: str, jobs: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """In one process, or in parts read by three (`test_backend_command` checks that the
    YAMLs make three parts)."""
    name, kwargs = CONFIGS[config]
    yaml = BACKENDS / f"{name}.yaml"
    theirs = upstream_tree(yaml, kwargs, tmp_path / "upstream")
    ours = tmp_path / "opgen"
    flags = [*opgen_flags(kwargs), "-j", jobs]
    assert run_opgen(ours, monkeypatch, "-s", str(yaml), "-o", "out", *flags) == (0, "")
    assert len(theirs.files) == 6
    assert_same_files(theirs.files, read_tree(ours).files)


def test_unexpressible_operator_fails_on_both_sides(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """With a value class of its own, tensor lists are no IR values: `cat` has no device."""
    yaml = BACKENDS / "ts_lazy.yaml"
    with pytest.raises(subprocess.CalledProcessError):
        upstream_tree(yaml, {"lazy_value_class": "my::Value"}, tmp_path / "upstream")
    flags = ("--lazy-value-class", "my::Value", "-s", str(yaml), "-o", "out")
    status, err = run_opgen(tmp_path / "opgen", monkeypatch, *flags, "-j", "1")
    assert status == 1
    assert err.startswith(f"{yaml}:33:5: error: 'cat' has no argument the IR holds as a value")
    assert "'stack' has no argument" in err
    # Read in parts, the run fails with the same errors, as one process finds them.
    assert run_opgen(tmp_path / "parts", monkeypatch, *flags, "-j", "3") == (status, err)


def test_missing_shape_function_is_located(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    yaml = tmp_path / "lazy.yaml"
    # torch's header declares compute_shape_zero (the functional variant), not zero_.
    yaml.write_text(
        "backend: Lazy\ncpp_namespace: torch::lazy\nfull_codegen:\n  - abs\n  - zero_\n"
    )
    status, err = run_opgen(tmp_path, monkeypatch, "-s", str(yaml), "-o", "out")
    assert status == 1
    assert err == (
        f"{yaml}:5:5: error: torch/csrc/lazy/core/shape_inference.h does not declare the "
        "shape function the generated kernel of 'zero_' calls; declare it there, on a line of "
        "its own, and define it: TORCH_API std::vector<torch::lazy::Shape> "
        "compute_shape_zero_(at::Tensor & self);\n"
        "    - zero_\n"
        "      ^~~~~\n"
    )
    assert not (tmp_path / "out").exists()
