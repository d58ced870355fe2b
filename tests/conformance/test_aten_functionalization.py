"""Functionalization, view-copy kernels, ViewMeta classes and vmap plumbing, byte for byte.

For every configuration of `aten_trees.CONFIGS`, opgen's emitters of this family
must produce exactly the family's files torchgen writes, with the same bytes:
`RegisterFunctionalization_<N>.cpp` and `RegisterFunctionalizationEverything.cpp`,
`FunctionalInverses.h`, `CompositeViewCopyKernels.cpp`, `ViewMetaClasses.h`,
`ViewMetaClasses.cpp` (all `--generate sources`) and `VmapGeneratedPlumbing.h`
(`--generate headers`).
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from opgen.targets.aten.functionalization import emit_functionalization
from opgen.targets.aten.options import AtenPart
from opgen.targets.aten.view_copy import emit_view_copy_kernels
from opgen.targets.aten.view_meta import emit_view_meta
from opgen.targets.aten.vmap import emit_vmap_plumbing

from .aten_trees import CONFIGS, TreeOf, assert_same_files, family_files

FAMILY = re.compile(
    r"out/(RegisterFunctionalization(_\d+|Everything)\.cpp|FunctionalInverses\.h"
    r"|CompositeViewCopyKernels\.cpp|ViewMetaClasses\.(h|cpp)|VmapGeneratedPlumbing\.h)\Z"
)

EMITTERS = (
    (AtenPart.sources, emit_functionalization),
    (AtenPart.sources, emit_view_meta),
    (AtenPart.sources, emit_view_copy_kernels),
    (AtenPart.headers, emit_vmap_plumbing),
)


@pytest.mark.parametrize("config", sorted(CONFIGS))
def test_family_matches_torchgen(
    config: str,
    torchgen_aten_tree: TreeOf,
    torchgen_aten_dir: Path,
    tmp_path: Path,
) -> None:
    flags = CONFIGS[config]
    theirs_all = torchgen_aten_tree(config).files
    theirs = {p: data for p, data in theirs_all.items() if FAMILY.match(p)}
    ours = family_files(flags, torchgen_aten_dir, tmp_path / "opgen", EMITTERS)
    assert_same_files(theirs, ours)
