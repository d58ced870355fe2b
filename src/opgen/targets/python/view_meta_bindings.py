"""`ViewMetaClassesPythonBinding.cpp`: the Python classes of functionalization's `ViewMeta`s.

PyTorch's `generate_code.py` writes it into `<install>/functionalization/generated`
from the ATen template of that name: one `create_binding_with_pickle<C>(...)` line
per `ViewMeta` specialization the ATen target declares in `ViewMetaClasses.h`
(`opgen.targets.aten.view_meta`): the view and inplace view of every view group
that is not CompositeImplicitAutograd, none in a selective build.
"""

from __future__ import annotations

import os

from opgen.api import functionalization as fapi
from opgen.output import OutputSet, TemplateDir
from opgen.spec.model import Spec
from opgen.spec.selection import OperatorSelection
from opgen.template import Template

FILE = "ViewMetaClassesPythonBinding.cpp"


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


def view_meta_bindings(
    spec: Spec, selection: OperatorSelection, out: str, aten_templates: str
) -> OutputSet:
    """The file, in `out`, from `aten_templates` (ATen's `templates/` directory)."""
    outputs = OutputSet(out, TemplateDir(aten_templates, Template.from_file))
    outputs.add_template(
        FILE, lambda: {"view_meta_bindings": view_meta_binding_lines(spec, selection)}
    )
    return outputs


def aten_templates_beside(native_yaml: str) -> str:
    """ATen's `templates/` for a spec at `<ATen>/native/native_functions.yaml`, as
    `generate_code.py` finds it."""
    return os.path.join(os.path.dirname(os.path.dirname(native_yaml)), "templates")
