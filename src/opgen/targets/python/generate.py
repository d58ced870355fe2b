"""Reading the inputs into a `PythonRun`, and each file family's emitter over it, in
torchgen's order."""

from __future__ import annotations

from opgen.autograd.model import DerivativeInfos
from opgen.spec.model import LoadOptions, Spec, load_spec
from opgen.targets.autograd_dir import notices
from opgen.targets.contract import Generated
from opgen.targets.emitters import Emitted, Emitter, run_emitters
from opgen.targets.python.bindings import emit_bindings
from opgen.targets.python.enum_tag import emit_enum_tag
from opgen.targets.python.options import PythonOptions
from opgen.targets.python.python_functions import emit_python_functions
from opgen.targets.python.return_types import emit_return_types
from opgen.targets.python.run import OUT, PythonRun
from opgen.targets.python.view_meta_bindings import VIEW_META, emit_view_meta_bindings


def emit_view_meta(run: PythonRun) -> Emitted:
    """ViewMetaClassesPythonBinding.cpp, in a set of its own (`--view-meta-bindings`)."""
    if run.view_meta is None:
        return Emitted()
    return emit_view_meta_bindings(run.view_meta)


# (written only with --view-meta-bindings, emitter), in the order gen_autograd_python
# generates: python_functions.h/.cpp (the backward nodes' Python classes), then
# gen_python_functions' files; then generate_code.py's ViewMeta bindings.
EMITTERS: tuple[tuple[bool, Emitter[PythonRun]], ...] = (
    (False, emit_python_functions),
    (False, emit_bindings),
    (False, emit_return_types),
    (False, emit_enum_tag),
    (True, emit_view_meta),
)


def read(
    options: PythonOptions,
    *,
    spec: Spec | None = None,
    derivatives: DerivativeInfos | None = None,
) -> PythonRun:
    """The model of the inputs the options name; raises SpecError for bad input.

    A caller that has read the spec and its derivatives already (`opgen generate-code`,
    for every target it runs) hands them in; they are then not read again. `derivatives`
    must have been read against `spec`.
    """
    from opgen.autograd.load_derivatives import load_derivative_infos
    from opgen.spec.deprecated import load_deprecated_signatures

    if spec is None:
        spec = load_spec(
            options.native_yaml, options.tags_yaml, LoadOptions(release=options.release)
        )
    if derivatives is None:
        derivatives = load_derivative_infos(spec, options.derivatives_yaml)
    deprecated = load_deprecated_signatures(options.deprecated_yaml)
    view_meta = None
    if options.view_meta_bindings is not None:
        from opgen.spec.selection import OperatorSelection
        from opgen.targets.python import view_meta_bindings

        view_meta = view_meta_bindings.read(
            view_meta_bindings.ViewMetaOptions(options.native_yaml, options.view_meta_bindings),
            spec=spec,
            selection=OperatorSelection.everything(),
        )
    return PythonRun.of(options, spec, derivatives, deprecated, view_meta)


def emit(run: PythonRun, options: PythonOptions) -> Generated:
    """Every family; the ViewMeta bindings too with `--view-meta-bindings` (`-o` lists
    them apart, prefixed `view_meta_`)."""
    with_view_meta = options.view_meta_bindings is not None
    emitters = [emit for view_meta, emit in EMITTERS if with_view_meta or not view_meta]
    out = run.output_set()
    sets = {OUT: out}
    lists = [("", out)]
    if run.view_meta is not None:
        sets[VIEW_META] = run.view_meta.output_set()
        lists.append(("view_meta_", sets[VIEW_META]))
    emitted = run_emitters(run, emitters, sets)
    return Generated(
        tuple(sets.values()),
        dependency_lists=tuple(lists),
        notes=emitted.notes,
        warnings=emitted.warnings,
        notices=notices(options.release_notice),
    )
