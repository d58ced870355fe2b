"""`opgen aten`: the inputs read into one run (`read`), then each file family's emitter
over it, in torchgen's order (`EMITTERS`, `emit`)."""

from __future__ import annotations

from opgen.diagnostics import Location, SpecError
from opgen.releases import CPU_DLL_CUDA_KERNELS_CHECKED
from opgen.spec.keys import CUDA_DISPATCH_KEYS
from opgen.spec.model import LoadOptions, Spec, load_spec
from opgen.spec.selection import OperatorSelection
from opgen.targets.aten.aoti import emit_aoti_c_shim
from opgen.targets.aten.backend_select import emit_backend_select
from opgen.targets.aten.declarations_yaml import emit_declarations_yaml
from opgen.targets.aten.dispatch_headers import emit_dispatch_headers
from opgen.targets.aten.functionalization import emit_functionalization
from opgen.targets.aten.functions import emit_functions_sources
from opgen.targets.aten.native_aot_files import (
    emit_native_aot_stub_declarations,
    emit_native_aot_stub_definitions,
)
from opgen.targets.aten.native_headers import CPU_DLL_CUDA_KERNELS
from opgen.targets.aten.op_lists import (
    emit_aten_op_list,
    emit_interned_strings,
    emit_registration_declarations,
    emit_tag_enum,
)
from opgen.targets.aten.operator_headers import emit_headers
from opgen.targets.aten.operators import emit_operators_sources
from opgen.targets.aten.options import AtenOptions, AtenPart
from opgen.targets.aten.registration import emit_registrations
from opgen.targets.aten.run import AtenRun
from opgen.targets.aten.schema_registration import emit_schema_registration
from opgen.targets.aten.ufunc import emit_ufunc_kernels
from opgen.targets.aten.view_copy import emit_view_copy_kernels
from opgen.targets.aten.view_meta import emit_view_meta
from opgen.targets.aten.vmap import emit_vmap_plumbing
from opgen.targets.contract import Generated
from opgen.targets.emitters import Emitter, run_emitters

# (part, emitter), in the order torchgen generates: sources, headers, Declarations.yaml.
EMITTERS: tuple[tuple[AtenPart, Emitter[AtenRun]], ...] = (
    (AtenPart.sources, emit_operators_sources),
    (AtenPart.sources, emit_functions_sources),
    (AtenPart.sources, emit_registrations),
    (AtenPart.sources, emit_backend_select),
    (AtenPart.sources, emit_native_aot_stub_definitions),
    (AtenPart.sources, emit_schema_registration),
    (AtenPart.sources, emit_aten_op_list),
    (AtenPart.sources, emit_functionalization),
    (AtenPart.sources, emit_view_meta),
    (AtenPart.sources, emit_view_copy_kernels),
    (AtenPart.sources, emit_ufunc_kernels),
    (AtenPart.sources, emit_aoti_c_shim),
    (AtenPart.headers, emit_headers),
    (AtenPart.headers, emit_dispatch_headers),
    (AtenPart.headers, emit_vmap_plumbing),
    (AtenPart.headers, emit_registration_declarations),
    (AtenPart.headers, emit_native_aot_stub_declarations),
    (AtenPart.headers, emit_interned_strings),
    (AtenPart.headers, emit_tag_enum),
    (AtenPart.declarations_yaml, emit_declarations_yaml),
)


def read(options: AtenOptions) -> AtenRun:
    """The run the options describe: the spec and every other input its parts need,
    read, checked and planned; raises SpecError for bad input, UsageError for a
    fallback-op table of another release."""
    selection = OperatorSelection.from_flags(
        options.op_registration_whitelist, options.op_selection_yaml_path
    )
    spec = load_spec(
        options.native_yaml,
        options.tags_yaml,
        LoadOptions(ignore_keys=options.ignored_keys, release=options.release),
    )
    if options.release.has(CPU_DLL_CUDA_KERNELS_CHECKED):
        _check_cpu_dll_cuda_kernels(spec, options.native_yaml)
    return AtenRun.of(options, spec, selection)


def emit(run: AtenRun, options: AtenOptions) -> Generated:
    """The files of the parts `--generate` asks for (raises SpecError for a checked-in
    AOTInductor shim header that is out of date)."""
    outputs = run.outputs()
    emitters = [emit for part, emit in EMITTERS if part in options.generate]
    emitted = run_emitters(run, emitters, outputs.by_name())
    return Generated(
        tuple(outputs.all()),
        dependency_lists=outputs.with_dependency_lists(),
        notices=() if options.release_notice is None else (options.release_notice,),
        notes=emitted.notes,
    )


def generate(options: AtenOptions) -> Generated:
    """The files the options describe (`read`, then `emit`): the Python API."""
    return emit(read(options), options)


def _check_cpu_dll_cuda_kernels(spec: Spec, native_yaml: str) -> None:
    """Every CUDA kernel declared as built into torch_cpu must be one of the spec's.

    torchgen keeps the list of them by hand; a kernel renamed or removed in the spec
    would leave the list stale, so 2.15's torchgen refuses such a spec.
    """
    registered = {
        metadata.kernel
        for key, index in spec.backend_indices.items()
        if key in CUDA_DISPATCH_KEYS
        for metadata in index.index.values()
    }
    missing = sorted(CPU_DLL_CUDA_KERNELS - registered)
    if missing:
        families = ", ".join(sorted(str(k) for k in CUDA_DISPATCH_KEYS))
        raise SpecError(
            f"the CUDA kernels that torch builds into torch_cpu (declared TORCH_API) must be "
            f"registered under a CUDA-family dispatch key ({families}), and these are not: "
            f"{', '.join(missing)}",
            Location(native_yaml, 1),
        )
