"""The run: each file family's emitter, in torchgen's order."""

from __future__ import annotations

from collections.abc import Callable

from opgen.targets.aten.functionalization import emit_functionalization
from opgen.targets.aten.options import AtenOptions, Generate
from opgen.targets.aten.run import AtenOutputs, AtenRun
from opgen.targets.aten.view_copy import emit_view_copy_kernels
from opgen.targets.aten.view_meta import emit_view_meta
from opgen.targets.aten.vmap import emit_vmap_plumbing

Emitter = Callable[[AtenRun], None]

# (part, emitter), in the order torchgen generates: sources, headers, Declarations.yaml.
EMITTERS: tuple[tuple[Generate, Emitter], ...] = (
    (Generate.sources, emit_functionalization),
    (Generate.sources, emit_view_meta),
    (Generate.sources, emit_view_copy_kernels),
    (Generate.headers, emit_vmap_plumbing),
)


def generate(options: AtenOptions) -> AtenOutputs:
    """Every output of the run the options describe; raises SpecError for bad input."""
    run = AtenRun.start(options)
    for part, emit in EMITTERS:
        if part in options.generate:
            emit(run)
    return run.outputs

