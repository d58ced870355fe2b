"""`opgen executorch`'s generation: each file family's emitter over one run, in upstream's order."""

from __future__ import annotations

from collections.abc import Callable

from opgen.targets.contract import Generated
from opgen.targets.executorch.custom_ops import emit_custom_ops
from opgen.targets.executorch.functions_header import emit_functions_header
from opgen.targets.executorch.native_headers import emit_native_headers
from opgen.targets.executorch.options import ExecutorchOptions, Generate
from opgen.targets.executorch.run import ExecutorchRun
from opgen.targets.executorch.unboxed_kernels import (
    emit_register_kernels_header,
    emit_unboxed_kernels,
)

Emitter = Callable[[ExecutorchRun], None]

# (part, emitter): the headers, then the sources.
EMITTERS: tuple[tuple[Generate, Emitter], ...] = (
    (Generate.headers, emit_functions_header),
    (Generate.headers, emit_register_kernels_header),
    (Generate.headers, emit_native_headers),
    (Generate.sources, emit_unboxed_kernels),
    (Generate.sources, emit_custom_ops),
)


def generate(options: ExecutorchOptions) -> Generated:
    """The files the options describe; raises SpecError for bad input."""
    run = ExecutorchRun.start(options)
    for part, emit in EMITTERS:
        if part in options.generate:
            emit(run)
    return Generated(
        [run.out],
        dependency_lists=[("", run.out)],
        warnings=run.warnings,
        model=run,
    )
