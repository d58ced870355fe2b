"""Fixtures of the conformance tests: torchgen's output trees, computed once per session."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from .aten_trees import CONFIGS, Tree, opgen_tree, torchgen_tree


@pytest.fixture(scope="session")
def torchgen_aten_dir(torchgen_native_dir: Path) -> Path:
    return torchgen_native_dir.parent


@pytest.fixture(scope="session")
def aten_trees(
    torchgen_aten_dir: Path, tmp_path_factory: pytest.TempPathFactory
) -> Callable[[str], tuple[Tree, Tree]]:
    """`trees(config)`: (torchgen's tree, opgen's tree) for a configuration of CONFIGS."""
    found: dict[str, tuple[Tree, Tree]] = {}

    def trees(config: str) -> tuple[Tree, Tree]:
        if config not in found:
            flags = CONFIGS[config]
            base = tmp_path_factory.mktemp(f"aten-{config}")
            theirs = torchgen_tree(flags, torchgen_aten_dir, base / "torchgen")
            ours = opgen_tree(flags, torchgen_aten_dir, base / "opgen")
            found[config] = (theirs, ours)
        return found[config]

    return trees
