"""`opgen python` end to end: whole trees.

The command takes the inputs of upstream's `gen_autograd_python(NATIVE, TAGS,
OUT, AUTOGRAD_DIR)` and must write the same tree: on torch's packaged spec,
and on the trimmed autograd variation (its deprecated.yaml cut to the
functions it keeps). How it writes (the output list, dry runs, reruns,
workers): test_autograd_dir_commands.py.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from .aten_trees import Tree
from .autograd_trees import AutogradInputs
from .python_trees import opgen_python_tree
from .test_aten_tree import first_difference


def test_same_tree_as_torchgen(
    autograd_inputs: AutogradInputs, torchgen_python: Tree, tmp_path: Path
) -> None:
    ours = opgen_python_tree(autograd_inputs, tmp_path)
    assert ours.files == torchgen_python.files, first_difference(torchgen_python, ours)


def test_same_tree_as_torchgen_on_the_trimmed_variation(
    torchgen_python_variations: Callable[[str, bool], tuple[AutogradInputs, Tree]],
    tmp_path: Path,
) -> None:
    inputs, theirs = torchgen_python_variations("trimmed", False)
    ours = opgen_python_tree(inputs, tmp_path)
    assert ours.files == theirs.files, first_difference(theirs, ours)
