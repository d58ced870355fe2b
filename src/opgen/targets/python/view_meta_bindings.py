"""`ViewMetaClassesPythonBinding.cpp`: the Python classes of functionalization's `ViewMeta`s.

PyTorch's `generate_code.py` writes it into `<install>/functionalization/generated`
from the ATen template of that name: one `create_binding_with_pickle<C>(...)` line
per `ViewMeta` specialization the ATen target declares in `ViewMetaClasses.h`
(`opgen.targets.aten.view_meta`): the view and inplace view of every view group
that is not CompositeImplicitAutograd, none in a selective build.

It is no command of its own: `opgen python --view-meta-bindings` and `opgen
generate-code` read it over the spec they loaded (`read`) and emit it (`emit`, or
`emit_view_meta_bindings` for a run that gathers it with files of its own).
"""

from __future__ import annotations

import os

from opgen.api import functionalization as fapi
from opgen.frozen import frozen
from opgen.output import OutputSet, TemplateDir
from opgen.spec.model import Spec
from opgen.spec.selection import OperatorSelection
from opgen.targets.contract import Generated
from opgen.targets.emitters import Emitted, Emitter, run_emitters
from opgen.template import Template

FILE = "ViewMetaClassesPythonBinding.cpp"

# The name of the file's set, as the emitter hands it back.
VIEW_META = "view_meta"


@frozen
class ViewMetaOptions:
    """Where the spec is (ATen's `templates/` are beside it) and where the file goes."""

    native_yaml: str  # <ATen>/native/native_functions.yaml
    out: str  # the directory the file goes into

    @property
    def aten_templates(self) -> str:
        """ATen's `templates/` for a spec at `<ATen>/native/native_functions.yaml`, as
        `generate_code.py` finds it."""
        return os.path.join(os.path.dirname(os.path.dirname(self.native_yaml)), "templates")


@frozen(eq=False)
class ViewMetaBindings:
    spec: Spec
    selection: OperatorSelection
    out: str
    templates: TemplateDir  # ATen's templates/

    def output_set(self) -> OutputSet:
        """A fresh, empty set for the file."""
        return OutputSet(self.out, self.templates)


def view_meta_binding_lines(spec: Spec, selection: OperatorSelection) -> list[str]:
    if not selection.include_all_operators:
        return []
    return [
        f"  create_binding_with_pickle<{fapi.classname(f.func, with_namespace=True)}>"
        "(functionalization);"
        for g in spec.view_groups
        if not g.composite
        for f in (g.view, g.view_inplace)
        if f is not None
    ]


def read(options: ViewMetaOptions, *, spec: Spec, selection: OperatorSelection) -> ViewMetaBindings:
    """The file's model over a spec read already, for the operators `selection` selects."""
    templates = TemplateDir(options.aten_templates, Template.from_file)
    return ViewMetaBindings(spec, selection, options.out, templates)


def emit_view_meta_bindings(model: ViewMetaBindings) -> Emitted:
    """The file, its lines computed when it renders."""
    out = model.output_set()
    out.add_template(
        FILE, lambda: {"view_meta_bindings": view_meta_binding_lines(model.spec, model.selection)}
    )
    return Emitted({VIEW_META: out})


EMITTERS: tuple[Emitter[ViewMetaBindings], ...] = (emit_view_meta_bindings,)


def emit(model: ViewMetaBindings, options: ViewMetaOptions) -> Generated:
    """The file, in one set (`-o` lists it as `view_meta_`)."""
    out = model.output_set()
    emitted = run_emitters(model, EMITTERS, {VIEW_META: out})
    return Generated(
        (out,),
        dependency_lists=(("view_meta_", out),),
        notes=emitted.notes,
        warnings=emitted.warnings,
    )
