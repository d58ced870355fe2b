"""The run: each file family's emitter, in torchgen's order."""

from __future__ import annotations

from collections.abc import Callable

from opgen.targets.autograd_dir import generated
from opgen.targets.contract import Generated
from opgen.targets.python.bindings import emit_bindings
from opgen.targets.python.enum_tag import emit_enum_tag
from opgen.targets.python.options import PythonOptions
from opgen.targets.python.python_functions import emit_python_functions
from opgen.targets.python.return_types import emit_return_types
from opgen.targets.python.run import PythonRun

Emitter = Callable[[PythonRun], None]

# In the order gen_autograd_python generates: python_functions.h/.cpp (the backward
# nodes' Python classes), then gen_python_functions' files.
EMITTERS: tuple[Emitter, ...] = (
    emit_python_functions,
    emit_bindings,
    emit_return_types,
    emit_enum_tag,
)


def emit_all(run: PythonRun) -> None:
    """Every family, into `run.outputs`."""
    for emit in EMITTERS:
        emit(run)


def generate(options: PythonOptions) -> Generated:
    """The files the options describe; raises SpecError for bad input."""
    run = PythonRun.start(options)
    emit_all(run)
    if options.view_meta_bindings is None:
        return generated(run.outputs, run)
    from opgen.spec.selection import OperatorSelection
    from opgen.targets.python.view_meta_bindings import aten_templates_beside, view_meta_bindings

    bindings = view_meta_bindings(
        run.spec,
        OperatorSelection.everything(),
        options.view_meta_bindings,
        aten_templates_beside(options.native_yaml),
    )
    return Generated(
        (run.outputs, bindings),
        dependency_lists=(("", run.outputs), ("view_meta_", bindings)),
        model=run,
    )
