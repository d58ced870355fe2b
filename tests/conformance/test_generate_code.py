"""`opgen generate-code` writes what PyTorch's `generate_code.py` writes, byte for byte.

generate_code.py is not in torch's wheel; `generate_code_oracle.py` makes its calls
to the wheel's torchgen (see there). Both sides run in a directory laid out as a
PyTorch checkout (`pytorch_checkout.checkout`).
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from opgen.cli import main

from .aten_trees import DATA, Tree, assert_same_files, read_tree
from .pytorch_checkout import ORACLE, PACKAGED, checkout

# Flags after --native-functions-path, --tags-path and --gen-dir; ${DATA} is data/.
CONFIGS: dict[str, tuple[str, ...]] = {
    "default": (),
    "lazy_ts_backend": ("--gen-lazy-ts-backend", "--per-operator-headers"),
    "disable_autograd_selected_list": (
        "--disable-autograd",
        "--selected-op-list-path",
        "${DATA}/legacy_op_list.yaml",
    ),
    "operators_yaml": ("--operators-yaml-path", "${DATA}/autograd_selection.yaml"),
    "install_dir_subset": ("--install-dir", "install", "--subset", "python"),
}


def flags(config: str, root: Path) -> list[str]:
    spec = root / "aten" / "src" / "ATen" / "native"
    return [
        "--native-functions-path",
        str(spec / "native_functions.yaml"),
        "--tags-path",
        str(spec / "tags.yaml"),
        "--gen-dir",
        "out",
        *(flag.replace("${DATA}", str(DATA)) for flag in CONFIGS[config]),
    ]


def outputs(root: Path) -> Tree:
    """What a run wrote: everything but the checkout's own files."""
    tree = read_tree(root)
    written = {
        path: data for path, data in tree.files.items() if path.startswith(("out/", "install/"))
    }
    return Tree(root, written)


@pytest.fixture(scope="module")
def upstream_trees() -> dict[str, Tree]:
    """Upstream's trees by configuration, each made once per module (`upstream_tree`)."""
    return {}


def upstream_tree(trees: dict[str, Tree], config: str, root: Path) -> Tree:
    if config not in trees:
        trees[config] = upstream(config, root)
    return trees[config]


def upstream(config: str, root: Path) -> Tree:
    root.mkdir(parents=True)
    checkout(root)
    command = [
        sys.executable,
        str(ORACLE),
        "--autograd-dir",
        str(PACKAGED / "autograd"),
        *flags(config, root),
    ]
    subprocess.run(command, check=True, cwd=root, capture_output=True)
    return outputs(root)


@pytest.mark.parametrize("config", CONFIGS)
def test_generate_code_tree_is_upstreams(
    config: str, upstream_trees: dict[str, Tree], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    theirs = upstream_tree(upstream_trees, config, tmp_path / "upstream")
    ours = tmp_path / "opgen"
    ours.mkdir()
    checkout(ours)
    monkeypatch.chdir(ours)
    argv = ["generate-code", "--autograd-dir", str(PACKAGED / "autograd"), *flags(config, ours)]
    assert main(argv) == 0
    assert len(theirs.files) > 0
    assert_same_files(theirs.files, outputs(ours).files)


def test_python_writes_the_view_meta_bindings_where_asked(
    upstream_trees: dict[str, Tree], tmp_path: Path
) -> None:
    theirs = upstream_tree(upstream_trees, "default", tmp_path / "upstream")
    checkout(tmp_path / "opgen")
    spec = tmp_path / "opgen" / "aten" / "src" / "ATen" / "native"
    out = tmp_path / "opgen" / "out"
    argv = [
        "python",
        str(spec / "native_functions.yaml"),
        str(spec / "tags.yaml"),
        str(out / "autograd"),
        str(PACKAGED / "autograd"),
        "--view-meta-bindings",
        str(out / "functionalization"),
    ]
    assert main(argv) == 0
    binding = "torch/csrc/functionalization/generated/ViewMetaClassesPythonBinding.cpp"
    assert (out / "functionalization" / Path(binding).name).read_bytes() == theirs.files[
        f"out/{binding}"
    ]
    python = {p: d for p, d in theirs.files.items() if p.startswith("out/torch/csrc/autograd/")}
    assert sorted(p.name for p in (out / "autograd").iterdir()) == sorted(
        Path(p).name for p in python if "python_" in p
    )
