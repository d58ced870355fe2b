"""`opgen autograd` end to end: whole trees.

The command reads torch's packaged spec and autograd directory, as
`python -m torchgen.packaged.autograd.gen_autograd` does, and must write the
same tree in every configuration of `autograd_trees.CONFIGS`. How it writes
(the output list, dry runs, reruns, workers): test_autograd_dir_commands.py.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from .aten_trees import Tree
from .autograd_trees import CONFIGS, AutogradInputs, opgen_autograd_tree
from .test_aten_tree import first_difference


@pytest.mark.parametrize("config", sorted(CONFIGS))
def test_same_tree_as_torchgen(
    config: str,
    autograd_inputs: AutogradInputs,
    torchgen_autograd_trees: Callable[[str], Tree],
    tmp_path: Path,
) -> None:
    theirs = torchgen_autograd_trees(config)
    ours = opgen_autograd_tree(CONFIGS[config], autograd_inputs, tmp_path)
    assert ours.files == theirs.files, first_difference(theirs, ours)
