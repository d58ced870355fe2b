"""Fixtures of the conformance tests: torchgen's output trees, computed once per test session."""

from __future__ import annotations

import functools
from collections.abc import Callable
from pathlib import Path

import pytest

from .aten_trees import CONFIGS, Tree, opgen_tree, torchgen_tree
from .autograd_trees import CONFIGS as AUTOGRAD_CONFIGS
from .autograd_trees import AutogradInputs, torchgen_autograd_tree
from .python_trees import python_variation, torchgen_python_tree


@pytest.fixture(scope="session")
def torchgen_aten_dir(torchgen_native_dir: Path) -> Path:
    return torchgen_native_dir.parent


@pytest.fixture(scope="session")
def torchgen_aten_tree(
    torchgen_aten_dir: Path, tmp_path_factory: pytest.TempPathFactory
) -> Callable[[str], Tree]:
    """`tree(config)`: torchgen's tree for a configuration of CONFIGS, run once a test
    session for all the ATen suites."""

    @functools.cache
    def tree(config: str) -> Tree:
        root = tmp_path_factory.mktemp(f"aten-{config}") / "torchgen"
        return torchgen_tree(CONFIGS[config], torchgen_aten_dir, root)

    return tree


@pytest.fixture(scope="session")
def aten_trees(
    torchgen_aten_dir: Path,
    torchgen_aten_tree: Callable[[str], Tree],
    tmp_path_factory: pytest.TempPathFactory,
) -> Callable[[str], tuple[Tree, Tree]]:
    """`trees(config)`: (torchgen's tree, opgen's tree) for a configuration of CONFIGS."""

    @functools.cache
    def trees(config: str) -> tuple[Tree, Tree]:
        root = tmp_path_factory.mktemp(f"aten-{config}-opgen")
        ours = opgen_tree(CONFIGS[config], torchgen_aten_dir, root)
        return torchgen_aten_tree(config), ours

    return trees


@pytest.fixture(scope="session")
def autograd_inputs(torchgen_native_dir: Path) -> AutogradInputs:
    """torch's packaged spec and autograd directory (derivatives.yaml, templates)."""
    return AutogradInputs(
        str(torchgen_native_dir / "native_functions.yaml"),
        str(torchgen_native_dir / "tags.yaml"),
        str(torchgen_native_dir.parents[1] / "autograd"),
    )


@pytest.fixture(scope="session")
def torchgen_autograd_trees(
    autograd_inputs: AutogradInputs, tmp_path_factory: pytest.TempPathFactory
) -> Callable[[str], Tree]:
    """`trees(config)`: torchgen's autograd tree for a configuration of autograd_trees.CONFIGS."""

    @functools.cache
    def trees(config: str) -> Tree:
        root = tmp_path_factory.mktemp(f"autograd-{config}") / "torchgen"
        return torchgen_autograd_tree(AUTOGRAD_CONFIGS[config], autograd_inputs, root)

    return trees


@pytest.fixture(scope="session")
def torchgen_python(
    autograd_inputs: AutogradInputs, tmp_path_factory: pytest.TempPathFactory
) -> Tree:
    """torchgen's Python bindings (gen_autograd_python) on torch's own inputs."""
    return torchgen_python_tree(autograd_inputs, tmp_path_factory.mktemp("python") / "torchgen")


@pytest.fixture(scope="session")
def torchgen_python_variations(
    autograd_inputs: AutogradInputs, tmp_path_factory: pytest.TempPathFactory
) -> Callable[[str, bool], tuple[AutogradInputs, Tree]]:
    """`variation(name, functions_only)`: an autograd variation laid out for the Python
    bindings (python_trees.python_variation), and upstream's tree for it (only
    python_functions.h/.cpp with `functions_only`), each built once."""
    inputs: dict[str, AutogradInputs] = {}
    trees: dict[tuple[str, bool], Tree] = {}

    def variation(name: str, functions_only: bool) -> tuple[AutogradInputs, Tree]:
        if name not in inputs:
            root = tmp_path_factory.mktemp(f"python-variation-{name}")
            inputs[name] = python_variation(name, root / "inputs", autograd_inputs)
        if (name, functions_only) not in trees:
            root = tmp_path_factory.mktemp(f"python-variation-{name}-torchgen")
            # The oracle cache is keyed by input paths, not contents: never use it here.
            with pytest.MonkeyPatch.context() as patch:
                patch.delenv("OPGEN_ORACLE_DIR", raising=False)
                trees[name, functions_only] = torchgen_python_tree(
                    inputs[name], root, functions_only=functions_only
                )
        return inputs[name], trees[name, functions_only]

    return variation
