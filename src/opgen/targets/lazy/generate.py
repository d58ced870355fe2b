"""`opgen lazy`'s generation: what `opgen backend` writes, in a function the backend calls,
and the lazy IR.

The shape-inference header (`--shape-inference-hdr`) is both the include the
generated kernels use and the file checked, relative to the working
directory, as upstream does: each generated kernel that cannot take its
shapes from a meta kernel calls a `compute_shape_<kernel>` function, which
the header must declare on a line of its own.
"""

from __future__ import annotations

from collections.abc import Sequence
from functools import partial

from opgen.diagnostics import SpecError
from opgen.output import OutputSet
from opgen.spec.external_backend import ExternalBackend
from opgen.spec.groups import NativeFunctionsGroup
from opgen.spec.keys import DispatchKey
from opgen.spec.model import Spec
from opgen.spec.native import NativeFunction
from opgen.targets.backend.files import KeyTexts
from opgen.targets.backend.generate import in_parts, output_set
from opgen.targets.contract import Generated
from opgen.targets.lazy.files import LazyPartTexts
from opgen.targets.lazy.options import LazyBackendOptions

GENERATOR = "torchgen/gen_lazy_tensor.py"


# The texts of one part of the spec, as plain values (which a forked worker sends back
# without pickling): the class header's and registrations', and the lazy files'.
_PartTexts = tuple[dict[str, KeyTexts], LazyPartTexts]


def generate(options: LazyBackendOptions) -> Generated:
    """The backend's files and its IR; raises SpecError for bad input."""
    # What the parts use, imported before they fork.
    import opgen.targets.lazy.checks

    if options.backend.impl_path is not None:
        import opgen.targets.backend.kernel_check  # noqa: F401

    parts = in_parts(options.backend, partial(_texts, options))
    files = _files(options, parts.aten, parts.backend, parts.results, GENERATOR)
    return Generated((files,), model=parts.models, render_in_one_process=True)


def generate_from(
    options: LazyBackendOptions,
    aten: str,
    spec: Spec,
    backend: ExternalBackend,
    *,
    generator: str = GENERATOR,
) -> Generated:
    """`generate` over inputs already read: the ATen directory (templates), the spec,
    and the backend YAML read against it; `generator` is the script the generated
    comments name."""
    files = _files(options, aten, backend, [_texts(options, spec, backend)], generator)
    return Generated((files,), model=spec, render_in_one_process=True)


def _texts(options: LazyBackendOptions, spec: Spec, backend: ExternalBackend) -> _PartTexts:
    """The texts of one part of the spec (or all of it), after the checks that need it."""
    from opgen.api.signatures import SignatureSet
    from opgen.spec.groups import grouped_lines
    from opgen.targets.backend.files import BackendRun, key_texts
    from opgen.targets.lazy.checks import check_properties, check_shape_inference_header
    from opgen.targets.lazy.files import lazy_texts

    lazy = options.lazy
    key = backend.backend_key
    if key is None:
        raise SpecError(
            "a lazy backend must list kernels under 'supported:' or 'full_codegen:'",
            backend.location,
        )
    check_properties(backend)
    # Upstream's lazy generator sorts the grouped spec by functional name (a stable sort,
    # so spec order within a name).
    named = [
        ((_functional_name(item), line), item)
        for item, line in zip(spec.grouped, grouped_lines(spec.grouped), strict=True)
    ]
    named.sort(key=_name_only)
    items = [item for _, item in named]
    positions = [position for position, _ in named]
    run = BackendRun(backend, _kernel_class(key), spec.functions, items, positions, SignatureSet())
    generated = frozenset(op.name for op in backend.full_codegen)
    if options.backend.impl_path is not None:
        from opgen.targets.backend.kernel_check import check_kernel_definitions

        check_kernel_definitions(run, options.backend.impl_path, generated=generated)
    texts = lazy_texts(run, lazy, options.run.release)
    check_shape_inference_header(run, lazy)
    return key_texts(run), texts


def _files(
    options: LazyBackendOptions,
    aten: str,
    backend: ExternalBackend,
    parts: Sequence[_PartTexts],
    generator: str,
) -> OutputSet:
    from opgen.targets.backend.files import (
        RegistrationStyle,
        add_native_functions_header,
        add_registrations,
        merged_key_texts,
    )
    from opgen.targets.lazy.files import add_lazy_files, merged_lazy_texts

    lazy = options.lazy
    key = backend.backend_key
    assert key is not None, "every part checked that the backend has kernels"
    texts = merged_key_texts(backend_texts for backend_texts, _ in parts)
    output_dir = options.run.output_dir
    files = output_set(output_dir, aten, generator)
    add_native_functions_header(
        files, backend, _kernel_class(key), texts, backend_name=lazy.backend_name
    )
    style = RegistrationStyle(
        output_dir,
        build_in_tree=lazy.build_in_tree,
        per_operator_headers=lazy.per_operator_headers,
        eager=False,
        backend_name=lazy.backend_name,
    )
    add_registrations(files, backend, texts, style)
    lazy_parts = merged_lazy_texts([lazy_texts for _, lazy_texts in parts])
    add_lazy_files(files, backend, lazy_parts, lazy, output_dir)
    return files


def _kernel_class(key: DispatchKey) -> str:
    """The kernel class: upstream's lazy generator ignores `class_name:`."""
    return f"{key}NativeFunctions"


def _name_only(named: tuple[tuple[str, int], object]) -> str:
    return named[0][0]


def _functional_name(item: NativeFunction | NativeFunctionsGroup) -> str:
    f = item.functional if isinstance(item, NativeFunctionsGroup) else item
    return str(f.func.name.name)
