"""`opgen lazy`'s run: what `opgen backend` writes, in a function the backend calls,
and the lazy IR.

`read` reads the backend YAML against the spec, in parts as `opgen backend` does
(`opgen.targets.backend.generate.in_parts`); each part checks the YAML's lazy parts,
plans its operators (`plan`), checks the shape-inference header against the plan and
renders the per-operator texts. The model (`files.LazyModel`) holds the texts merged,
and `emit` fills the templates with them (`files.EMITTERS`).

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
from opgen.frozen import frozen
from opgen.releases import Release
from opgen.spec.external_backend import ExternalBackend
from opgen.spec.groups import NativeFunctionsGroup
from opgen.spec.keys import DispatchKey
from opgen.spec.model import Spec
from opgen.spec.native import NativeFunction
from opgen.targets.backend.files import KeyTexts
from opgen.targets.backend.generate import in_parts, templates
from opgen.targets.contract import Generated
from opgen.targets.lazy.files import LazyModel, LazyPartTexts
from opgen.targets.lazy.options import LazyBackendOptions, LazyOptions

GENERATOR = "torchgen/gen_lazy_tensor.py"


# The texts of one part of the spec, as plain values (which a forked worker sends back
# without pickling): the class header's and registrations', and the lazy files'.
_PartTexts = tuple[dict[str, KeyTexts], LazyPartTexts]


@frozen
class _PartWork:
    """What each part of the spec is read for: the flags its texts depend on."""

    lazy: LazyOptions
    impl_path: str | None
    release: Release


def read(options: LazyBackendOptions) -> LazyModel:
    """The backend YAML read against the spec, and every text of its files; raises SpecError
    for bad input."""
    # What the parts use, imported before they fork.
    import opgen.targets.lazy.checks
    import opgen.targets.lazy.plan

    if options.backend.impl_path is not None:
        import opgen.targets.backend.kernel_check  # noqa: F401

    parts = in_parts(options.backend, partial(_texts, _work(options)))
    return _model(options, parts.aten, parts.backend, parts.results, parts.models, GENERATOR)


def model_of(
    options: LazyBackendOptions,
    aten: str,
    spec: Spec,
    backend: ExternalBackend,
    *,
    generator: str = GENERATOR,
) -> LazyModel:
    """`read` over inputs already read: the ATen directory (templates), the spec, and the
    backend YAML read against it; `generator` is the script the generated comments name."""
    texts = _texts(_work(options), spec, backend)
    return _model(options, aten, backend, [texts], [spec], generator)


def emit(model: LazyModel, options: LazyBackendOptions) -> Generated:
    """The backend's files and its IR."""
    from opgen.targets.backend.files import OUTPUT
    from opgen.targets.emitters import run_emitters
    from opgen.targets.lazy.files import EMITTERS

    notice = options.backend.release_notice
    emitted = run_emitters(model, EMITTERS, {OUTPUT: model.backend.output_set()})
    return Generated(tuple(emitted.files.values()), notices=() if notice is None else (notice,))


def _work(options: LazyBackendOptions) -> _PartWork:
    return _PartWork(options.lazy, options.backend.impl_path, options.backend.release)


def _texts(work: _PartWork, spec: Spec, backend: ExternalBackend) -> _PartTexts:
    """The texts of one part of the spec (or all of it), after the checks that need it."""
    from opgen.api.signatures import SignatureSet
    from opgen.spec.groups import grouped_lines
    from opgen.targets.backend.files import BackendRun, key_texts
    from opgen.targets.lazy.checks import check_properties, check_shape_inference_header
    from opgen.targets.lazy.files import lazy_texts
    from opgen.targets.lazy.options import KernelStyle, NodeStyle
    from opgen.targets.lazy.plan import plan

    lazy = work.lazy
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
    if work.impl_path is not None:
        from opgen.targets.backend.kernel_check import check_kernel_definitions

        generated = frozenset(op.name for op in backend.full_codegen)
        check_kernel_definitions(run, work.impl_path, generated=generated)
    planned = plan(run, lazy.lazy_value_class)
    texts = lazy_texts(planned, NodeStyle.of(lazy, work.release), KernelStyle.of(lazy))
    check_shape_inference_header(planned, lazy.shape_inference_hdr)
    return key_texts(run), texts


def _model(
    options: LazyBackendOptions,
    aten: str,
    backend: ExternalBackend,
    parts: Sequence[_PartTexts],
    specs: Sequence[Spec],
    generator: str,
) -> LazyModel:
    from opgen.targets.backend.files import BackendModel, RegistrationStyle, merged_key_texts
    from opgen.targets.lazy.files import merged_lazy_texts

    lazy = options.lazy
    key = backend.backend_key
    assert key is not None, "every part checked that the backend has kernels"
    style = RegistrationStyle(
        options.run.output_dir,
        build_in_tree=lazy.build_in_tree,
        per_operator_headers=lazy.per_operator_headers,
        eager=False,
        backend_name=lazy.backend_name,
    )
    files = BackendModel(
        backend,
        merged_key_texts(backend_texts for backend_texts, _ in parts),
        _kernel_class(key),
        style,
        templates(aten),
        generator,
        options.backend.release,
        tuple(specs),
    )
    return LazyModel(files, merged_lazy_texts([lazy_texts for _, lazy_texts in parts]), lazy)


def _kernel_class(key: DispatchKey) -> str:
    """The kernel class: upstream's lazy generator ignores `class_name:`."""
    return f"{key}NativeFunctions"


def _name_only(named: tuple[tuple[str, int], object]) -> str:
    return named[0][0]


def _functional_name(item: NativeFunction | NativeFunctionsGroup) -> str:
    f = item.functional if isinstance(item, NativeFunctionsGroup) else item
    return str(f.func.name.name)
