"""`opgen aten` against `python -m torchgen.gen`: whole output trees, byte for byte.

Each configuration of `CONFIGS` runs both generators into their own root (the
same layout of install, AOTInductor and dependency-list directories) and
compares every file. Dependency lists name their root as `<root>`.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path

import pytest

from opgen.cli import main

from .aten_trees import CONFIGS, Tree, layout_flags, read_tree, unified_diff

Trees = Callable[[str], tuple[Tree, Tree]]


def first_difference(theirs: Tree, ours: Tree) -> str:
    """A short account of how two trees differ: missing and extra files, then one diff."""
    missing = sorted(set(theirs.files) - set(ours.files))
    extra = sorted(set(ours.files) - set(theirs.files))
    differing = sorted(
        p for p in set(theirs.files) & set(ours.files) if theirs.files[p] != ours.files[p]
    )
    lines = [
        f"missing {len(missing)}: {missing[:8]}",
        f"extra {len(extra)}: {extra[:8]}",
        f"differing {len(differing)}: {differing[:8]}",
    ]
    if differing:
        path = differing[0]
        lines.append(unified_diff(path, theirs.files[path], ours.files[path]))
    return "\n".join(lines)


@pytest.mark.parametrize("config", list(CONFIGS))
def test_same_tree_as_torchgen(config: str, aten_trees: Trees) -> None:
    theirs, ours = aten_trees(config)
    assert ours.files == theirs.files, first_difference(theirs, ours)


def test_rerun_touches_nothing(torchgen_aten_dir: Path, tmp_path: Path) -> None:
    """Also: rendering in one process or in two gives the same bytes."""
    flags = layout_flags(torchgen_aten_dir, tmp_path)
    assert main(["aten", *flags, "--jobs", "1"]) == 0
    before = {p: p.stat().st_mtime_ns for p in tmp_path.rglob("*") if p.is_file()}
    assert main(["aten", *flags, "--jobs", "2"]) == 0
    after = {p: p.stat().st_mtime_ns for p in tmp_path.rglob("*") if p.is_file()}
    assert after == before


def test_dry_run_writes_only_dependency_lists(torchgen_aten_dir: Path, tmp_path: Path) -> None:
    assert main(["aten", *layout_flags(torchgen_aten_dir, tmp_path), "--dry-run"]) == 0
    written = sorted(p.relative_to(tmp_path).as_posix() for p in tmp_path.rglob("*") if p.is_file())
    assert written == [
        "deps/core_generated.cmake",
        "deps/cpu_vec_generated.cmake",
        "deps/cuda_generated.cmake",
        "deps/generated.cmake",
        "deps/ops_generated.cmake",
    ]
    full = read_tree(tmp_path)
    assert full.files["deps/generated.cmake"].startswith(b"set(\ngenerated\n")
    assert not os.path.exists(tmp_path / "out")
