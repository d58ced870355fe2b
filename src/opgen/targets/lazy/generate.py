"""`opgen lazy`'s generation: what `opgen backend` writes, in a function the backend calls,
and the lazy IR.

The shape-inference header (`--shape-inference-hdr`) is both the include the
generated kernels use and the file checked, relative to the working
directory, as upstream does: each generated kernel that cannot take its
shapes from a meta kernel calls a `compute_shape_<kernel>` function, which
the header must declare on a line of its own.
"""

from __future__ import annotations

from pathlib import Path

from opgen.diagnostics import SpecError
from opgen.spec.external_backend import ExternalBackend
from opgen.spec.groups import NativeFunctionsGroup
from opgen.spec.model import Spec
from opgen.spec.native import NativeFunction
from opgen.targets.backend.generate import load_inputs, output_set
from opgen.targets.contract import Generated
from opgen.targets.lazy.options import LazyBackendOptions

GENERATOR = "torchgen/gen_lazy_tensor.py"


def generate(options: LazyBackendOptions) -> Generated:
    """The backend's files and its IR; raises SpecError for bad input."""
    aten, spec, backend = load_inputs(options.backend)
    return generate_from(options, aten, spec, backend)


def generate_from(
    options: LazyBackendOptions,
    aten: Path,
    spec: Spec,
    backend: ExternalBackend,
    *,
    generator: str = GENERATOR,
) -> Generated:
    """`generate` over inputs already read: the ATen directory (templates), the spec,
    and the backend YAML read against it; `generator` is the script the generated
    comments name."""
    from opgen.api.signatures import SignatureSet
    from opgen.targets.backend.files import (
        BackendRun,
        RegistrationStyle,
        add_native_functions_header,
        add_registrations,
    )
    from opgen.targets.backend.kernel_check import check_kernel_definitions
    from opgen.targets.lazy.checks import check_properties, check_shape_inference_header
    from opgen.targets.lazy.files import add_lazy_files, lazy_texts

    lazy = options.lazy
    key = backend.backend_key
    if key is None:
        raise SpecError(
            "a lazy backend must list kernels under 'supported:' or 'full_codegen:'",
            backend.location,
        )
    check_properties(backend)
    # Upstream's lazy generator sorts the grouped spec by functional name, and ignores
    # `class_name:`.
    items = sorted(spec.grouped, key=_functional_name)
    run = BackendRun(backend, f"{key}NativeFunctions", spec.functions, items, SignatureSet())
    generated = frozenset(op.name for op in backend.full_codegen)
    if options.backend.impl_path is not None:
        check_kernel_definitions(run, options.backend.impl_path, generated=generated)
    texts = lazy_texts(run, lazy, options.run.release)
    check_shape_inference_header(run, lazy)
    output_dir = options.run.output_dir
    files = output_set(output_dir, aten, generator)
    add_native_functions_header(files, run, backend_name=lazy.backend_name)
    style = RegistrationStyle(
        output_dir,
        build_in_tree=lazy.build_in_tree,
        per_operator_headers=lazy.per_operator_headers,
        eager=False,
        backend_name=lazy.backend_name,
    )
    add_registrations(files, run, style)
    add_lazy_files(files, run, texts, lazy, output_dir)
    return Generated((files,), model=spec)


def _functional_name(item: NativeFunction | NativeFunctionsGroup) -> str:
    f = item.functional if isinstance(item, NativeFunctionsGroup) else item
    return str(f.func.name.name)
