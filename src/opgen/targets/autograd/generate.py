"""The run: each file family's emitter, in torchgen's order."""

from __future__ import annotations

from collections.abc import Callable

from opgen.targets.autograd.functions import emit_functions
from opgen.targets.autograd.inplace_or_view import emit_inplace_or_view
from opgen.targets.autograd.options import AutogradOptions
from opgen.targets.autograd.run import AutogradRun
from opgen.targets.autograd.trace_type import emit_trace_type
from opgen.targets.autograd.variable_factories import emit_variable_factories
from opgen.targets.autograd.variable_type import emit_variable_type
from opgen.targets.autograd.view_funcs import emit_view_funcs
from opgen.targets.autograd_dir import generated
from opgen.targets.contract import Generated

Emitter = Callable[[AutogradRun], None]

# (part of autograd proper, emitter), in the order gen_autograd generates. With
# --disable-autograd only the families marked False are generated.
EMITTERS: tuple[tuple[bool, Emitter], ...] = (
    (True, emit_variable_type),
    (True, emit_inplace_or_view),
    (True, emit_trace_type),
    (False, emit_functions),
    (False, emit_variable_factories),
    (False, emit_view_funcs),
)


def generate(options: AutogradOptions) -> Generated:
    """The files the options describe; raises SpecError for bad input."""
    run = AutogradRun.start(options)
    emit_all(run)
    return generated(run.outputs, run)


def emit_all(run: AutogradRun) -> None:
    """Every family the run's options ask for, into `run.outputs`."""
    for autograd_proper, emit in EMITTERS:
        if not (autograd_proper and run.options.disable_autograd):
            emit(run)
