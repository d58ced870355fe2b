"""`opgen executorch`'s emitters over one run (`run.read`), in upstream's order, and `emit`."""

from __future__ import annotations

from opgen.targets.contract import Generated
from opgen.targets.emitters import Emitter, run_emitters
from opgen.targets.executorch.custom_ops import emit_custom_ops
from opgen.targets.executorch.functions_header import emit_functions_header
from opgen.targets.executorch.native_headers import emit_native_headers
from opgen.targets.executorch.options import ExecutorchOptions, ExecutorchPart
from opgen.targets.executorch.run import OUT, ExecutorchRun
from opgen.targets.executorch.unboxed_kernels import (
    emit_register_kernels_header,
    emit_unboxed_kernels,
)

# (part, emitter): the headers, then the sources.
EMITTERS: tuple[tuple[ExecutorchPart, Emitter[ExecutorchRun]], ...] = (
    (ExecutorchPart.headers, emit_functions_header),
    (ExecutorchPart.headers, emit_register_kernels_header),
    (ExecutorchPart.headers, emit_native_headers),
    (ExecutorchPart.sources, emit_unboxed_kernels),
    (ExecutorchPart.sources, emit_custom_ops),
)


def emit(run: ExecutorchRun, options: ExecutorchOptions) -> Generated:
    """The parts `--generate` asks for; raises SpecError for bad input."""
    out = run.output_set()
    emitters = [emit for part, emit in EMITTERS if part in options.generate]
    emitted = run_emitters(run, emitters, {OUT: out})
    return Generated(
        (out,),
        dependency_lists=(("", out),),
        notices=() if options.release_notice is None else (options.release_notice,),
        notes=emitted.notes,
        warnings=(*run.warnings, *emitted.warnings),
    )
