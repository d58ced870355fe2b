"""VariableType, byte for byte against upstream gen_autograd.

For the configurations "default" and "selection" of `autograd_trees.CONFIGS`,
opgen's emitter must produce exactly the family's files torchgen writes, with
the same bytes: `VariableType.h`, the intermediate template
`templates/VariableType.cpp`, `VariableType_0.cpp` ... `VariableType_9.cpp` and
`VariableTypeEverything.cpp`. (With --disable-autograd the family is not
written; generate.EMITTERS marks it as part of autograd proper.)

The per-configuration test runs the emitter on torchgen's own derivatives model
(converted to opgen's classes), so it checks the emitter alone; another runs
it on opgen's model, read by opgen's loader. The operator lists VariableType
keeps by hand must be upstream's.
"""

from __future__ import annotations

import re
from collections.abc import Callable

import pytest
import torchgen.packaged.autograd.gen_variable_type as upstream

from opgen.targets.autograd import debug_checks, kernel_lists
from opgen.targets.autograd.generate import EMITTERS
from opgen.targets.autograd.variable_type import emit_variable_type

from .aten_trees import Tree
from .autograd_trees import CONFIGS, AutogradInputs, assert_family, opgen_autograd_files

FAMILY = re.compile(
    r"out/(VariableType(_\d+|Everything)\.cpp|VariableType\.h|templates/VariableType\.cpp)\Z"
)


def in_family(path: str) -> bool:
    return bool(FAMILY.match(path))


def test_emitter_is_registered_first_as_part_of_autograd_proper() -> None:
    assert EMITTERS[0] == (True, emit_variable_type)


@pytest.mark.parametrize("config", ["default", "selection"])
def test_family_matches_torchgen(
    config: str,
    autograd_inputs: AutogradInputs,
    torchgen_autograd_trees: Callable[[str], Tree],
) -> None:
    flags = CONFIGS[config]
    ours = opgen_autograd_files(flags, autograd_inputs, [emit_variable_type], upstream_model=True)
    assert_family(torchgen_autograd_trees(config), ours, in_family)


def test_family_matches_torchgen_with_opgens_derivatives_model(
    autograd_inputs: AutogradInputs, torchgen_autograd_trees: Callable[[str], Tree]
) -> None:
    ours = opgen_autograd_files(CONFIGS["default"], autograd_inputs, [emit_variable_type])
    assert_family(torchgen_autograd_trees("default"), ours, in_family)


def test_hand_kept_operator_lists_are_upstreams() -> None:
    assert kernel_lists.DONT_REQUIRE_DERIVATIVE == upstream.DONT_REQUIRE_DERIVATIVE
    assert (
        kernel_lists.GRADIENT_IMPLEMENTED_FOR_COMPLEX == upstream.GRADIENT_IMPLEMENTED_FOR_COMPLEX
    )
    assert kernel_lists.RESET_GRAD_ACCUMULATOR == upstream.RESET_GRAD_ACCUMULATOR
    assert (
        upstream._foreach_ops_without_differentiability_info
    ) == kernel_lists.FOREACH_WITHOUT_DIFFERENTIABILITY_INFO
    assert upstream._foreach_ops_with_different_arity == kernel_lists.FOREACH_WITH_DIFFERENT_ARITY
    assert debug_checks.DONT_ENFORCE_SAME_TENSOR_IMPL_OR_STORAGE == (
        upstream.DONT_ENFORCE_SAME_TENSOR_IMPL_OR_STORAGE
    )
    assert debug_checks.DONT_ENFORCE_TENSOR_IMPL_USE_COUNT == (
        upstream.DONT_ENFORCE_TENSOR_IMPL_USE_COUNT
    )
    assert debug_checks.DONT_ENFORCE_STORAGE_IMPL_USE_COUNT == (
        upstream.DONT_ENFORCE_STORAGE_IMPL_USE_COUNT
    )
