"""`opgen aten`'s generation: each file family's emitter over one run, in torchgen's order."""

from __future__ import annotations

from collections.abc import Callable

from opgen.targets.aten.aoti import emit_aoti_c_shim
from opgen.targets.aten.backend_select import emit_backend_select
from opgen.targets.aten.declarations_yaml import emit_declarations_yaml
from opgen.targets.aten.dispatch_headers import emit_dispatch_headers
from opgen.targets.aten.functionalization import emit_functionalization
from opgen.targets.aten.functions import emit_functions_sources
from opgen.targets.aten.native_aot import (
    emit_native_aot_stub_declarations,
    emit_native_aot_stub_definitions,
)
from opgen.targets.aten.op_lists import (
    emit_aten_op_list,
    emit_interned_strings,
    emit_registration_declarations,
    emit_tag_enum,
)
from opgen.targets.aten.operator_headers import emit_headers
from opgen.targets.aten.operators import emit_operators_sources
from opgen.targets.aten.options import AtenOptions, Generate
from opgen.targets.aten.registration import emit_registrations
from opgen.targets.aten.run import AtenRun
from opgen.targets.aten.schema_registration import emit_schema_registration
from opgen.targets.aten.ufunc import emit_ufunc_kernels
from opgen.targets.aten.view_copy import emit_view_copy_kernels
from opgen.targets.aten.view_meta import emit_view_meta
from opgen.targets.aten.vmap import emit_vmap_plumbing
from opgen.targets.contract import Generated

Emitter = Callable[[AtenRun], None]

# (part, emitter), in the order torchgen generates: sources, headers, Declarations.yaml.
EMITTERS: tuple[tuple[Generate, Emitter], ...] = (
    (Generate.sources, emit_operators_sources),
    (Generate.sources, emit_functions_sources),
    (Generate.sources, emit_registrations),
    (Generate.sources, emit_backend_select),
    (Generate.sources, emit_native_aot_stub_definitions),
    (Generate.sources, emit_schema_registration),
    (Generate.sources, emit_aten_op_list),
    (Generate.sources, emit_functionalization),
    (Generate.sources, emit_view_meta),
    (Generate.sources, emit_view_copy_kernels),
    (Generate.sources, emit_ufunc_kernels),
    (Generate.sources, emit_aoti_c_shim),
    (Generate.headers, emit_headers),
    (Generate.headers, emit_dispatch_headers),
    (Generate.headers, emit_vmap_plumbing),
    (Generate.headers, emit_registration_declarations),
    (Generate.headers, emit_native_aot_stub_declarations),
    (Generate.headers, emit_interned_strings),
    (Generate.headers, emit_tag_enum),
    (Generate.declarations_yaml, emit_declarations_yaml),
)


def generate(options: AtenOptions) -> Generated:
    """The files the options describe; raises SpecError for bad input."""
    run = emit_all(options)
    outputs = run.outputs
    return Generated(
        tuple(outputs.all()),
        dependency_lists=outputs.with_dependency_lists(),
        notes=run.notes,
        model=run,
    )


def emit_all(options: AtenOptions) -> AtenRun:
    """The run the options describe, with every output added."""
    run = AtenRun.start(options)
    for part, emit in EMITTERS:
        if part in options.generate:
            emit(run)
    return run
