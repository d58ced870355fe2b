"""ADInplaceOrViewType and ViewFuncs, byte for byte against upstream gen_autograd.

For every configuration of `autograd_trees.CONFIGS`, opgen's two emitters must
produce exactly the files of the family torchgen writes, with the same bytes:
`ADInplaceOrViewType_0.cpp`, `ADInplaceOrViewType_1.cpp` and
`ADInplaceOrViewTypeEverything.cpp` (not written with --disable-autograd),
`ViewFuncs.h` and `ViewFuncs.cpp` (always written).

The per-configuration test runs the emitters on torchgen's own derivatives
model (converted to opgen's classes), so it checks the emitters alone; the
last test runs them on opgen's model, read by opgen's loader.
"""

from __future__ import annotations

import re
from collections.abc import Callable

import pytest

from opgen.targets.autograd.generate import EMITTERS
from opgen.targets.autograd.inplace_or_view import emit_inplace_or_view
from opgen.targets.autograd.view_funcs import emit_view_funcs
from opgen.targets.emitters import Emitted

from .aten_trees import Tree
from .autograd_trees import CONFIGS, AutogradInputs, assert_family, opgen_autograd_files

FAMILY = re.compile(r"out/(ADInplaceOrViewType(_\d+|Everything)\.cpp|ViewFuncs\.(h|cpp))\Z")

# (part of autograd proper, emitter), as generate.EMITTERS registers them.
FAMILY_EMITTERS = ((True, emit_inplace_or_view), (False, emit_view_funcs))


def family_emitters(flags: tuple[str, ...]) -> list[Callable[..., Emitted]]:
    disabled = "--disable-autograd" in flags
    return [emit for proper, emit in FAMILY_EMITTERS if not (proper and disabled)]


def test_emitters_are_registered_in_order() -> None:
    registered = [entry for entry in EMITTERS if entry in FAMILY_EMITTERS]
    assert registered == list(FAMILY_EMITTERS)


@pytest.mark.parametrize("config", sorted(CONFIGS))
def test_family_matches_torchgen(
    config: str,
    autograd_inputs: AutogradInputs,
    torchgen_autograd_trees: Callable[[str], Tree],
) -> None:
    flags = CONFIGS[config]
    ours = opgen_autograd_files(flags, autograd_inputs, family_emitters(flags), upstream_model=True)
    assert_family(torchgen_autograd_trees(config), ours, lambda path: bool(FAMILY.match(path)))


def test_family_matches_torchgen_with_opgens_derivatives_model(
    autograd_inputs: AutogradInputs, torchgen_autograd_trees: Callable[[str], Tree]
) -> None:
    flags = CONFIGS["default"]
    ours = opgen_autograd_files(flags, autograd_inputs, family_emitters(flags))
    assert_family(torchgen_autograd_trees("default"), ours, lambda path: bool(FAMILY.match(path)))
