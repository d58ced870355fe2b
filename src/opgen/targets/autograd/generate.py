"""The run: each file family's emitter, in torchgen's order."""

from __future__ import annotations

from collections.abc import Callable

from opgen.targets.autograd.options import AutogradOptions
from opgen.targets.autograd.run import AutogradRun

Emitter = Callable[[AutogradRun], None]

# (part of autograd proper, emitter), in the order gen_autograd generates. With
# --disable-autograd only the families marked False are generated.
EMITTERS: tuple[tuple[bool, Emitter], ...] = ()


def generate(options: AutogradOptions) -> AutogradRun:
    """The run the options describe, with every output added; raises SpecError for bad input."""
    run = AutogradRun.start(options)
    for autograd_proper, emit in EMITTERS:
        if not (autograd_proper and options.disable_autograd):
            emit(run)
    return run
