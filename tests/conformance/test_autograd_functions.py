"""Functions.h and Functions.cpp (the backward nodes), byte for byte.

For every configuration of `autograd_trees.CONFIGS`, opgen's `emit_functions`
must produce exactly the two files torchgen's gen_autograd writes. The nodes
depend on the configuration through the foreach functions: an out-of-place
foreach function without a formula of its own gets a node derived from its
operator's, when it is selected.

The first test renders torchgen's own derivatives model (converted to opgen's
classes), so it tests the emitter alone; the second renders opgen's model, read
by opgen's loader.
"""

from __future__ import annotations

from collections.abc import Callable

import pytest

from opgen.targets.autograd.functions import emit_functions

from .aten_trees import Tree
from .autograd_trees import CONFIGS, AutogradInputs, assert_family, opgen_autograd_files


def is_functions_file(path: str) -> bool:
    return path in ("out/Functions.h", "out/Functions.cpp")


@pytest.mark.parametrize("config", sorted(CONFIGS))
def test_functions_of_upstream_model_match_torchgen(
    config: str,
    autograd_inputs: AutogradInputs,
    torchgen_autograd_trees: Callable[[str], Tree],
) -> None:
    ours = opgen_autograd_files(
        CONFIGS[config], autograd_inputs, [emit_functions], upstream_model=True
    )
    assert_family(torchgen_autograd_trees(config), ours, is_functions_file)


@pytest.mark.parametrize("config", sorted(CONFIGS))
def test_functions_match_torchgen(
    config: str,
    autograd_inputs: AutogradInputs,
    torchgen_autograd_trees: Callable[[str], Tree],
) -> None:
    ours = opgen_autograd_files(CONFIGS[config], autograd_inputs, [emit_functions])
    assert_family(torchgen_autograd_trees(config), ours, is_functions_file)
