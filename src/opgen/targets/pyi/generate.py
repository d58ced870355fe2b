"""The stub files: what each holds, from the spec's stubs, the tables and the docstrings.

`read(options)` reads the inputs into a `PyiModel`; `emit(model, options)` returns
every file, each family made by its emitter (`EMITTERS`):
- `torch/_C/_VariableFunctions.pyi` and its copy `torch/_VF.pyi`: hand-written
  declarations first, then the derived ones, per name, names sorted;
- `torch/return_types.pyi` and `torch/_C/_nn.pyi`;
- the fragment `torch/_C/TensorBase.pyi.fragment`: the generated part of the class
  body, for PyTorch's hand-written `torch/_C/__init__.pyi` (Tensor methods:
  hand-written, derived, then the Python operators).
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Mapping

from opgen.api import pyi
from opgen.api.signatures import SignatureSet
from opgen.frozen import frozen
from opgen.output import OutputSet, TemplateDir
from opgen.releases import Release
from opgen.spec.model import LoadOptions, Spec, load_spec
from opgen.targets.contract import Generated
from opgen.targets.emitters import Emitted, Emitter, run_emitters
from opgen.targets.pyi import nn_functions, return_types, torch_functions
from opgen.targets.pyi.docs import FUNCTION_PREFIX, TENSOR_PREFIX, load_docstrings
from opgen.targets.pyi.hints import SpecStubs, spec_stubs
from opgen.targets.pyi.options import PYI_GENERATOR, PyiOptions
from opgen.targets.pyi.stubs import Definition, Stub, add_all, render_imports, sorted_stubs
from opgen.targets.pyi.tensor_methods import tensor_methods, tensor_operators
from opgen.template import Template

TEMPLATES = os.path.join(os.path.dirname(__file__), "templates")

VARIABLE_FUNCTIONS = "torch/_C/_VariableFunctions.pyi"
VF = "torch/_VF.pyi"
RETURN_TYPES = "torch/return_types.pyi"
NN = "torch/_C/_nn.pyi"
TENSOR_BASE = "torch/_C/TensorBase.pyi.fragment"


@frozen(eq=False)
class PyiModel:
    """What the stub files are made of: the spec's stubs, and the docstrings."""

    stubs: SpecStubs  # derived from the spec, with the release's hints
    docstrings: Mapping[str, str]  # by name (`docs`); empty without --docs
    templates: TemplateDir  # opgen's own (`templates/`)
    output_dir: str  # OUT: the files go to OUT/torch/...
    release: Release
    spec: Spec  # what the stubs were derived from: kept alive with the model

    def output_set(self) -> OutputSet:
        return OutputSet(self.output_dir, self.templates, generator=PYI_GENERATOR)


def read(options: PyiOptions) -> PyiModel:
    """The inputs the options name, read, and the spec's stubs; raises SpecError for bad
    input."""
    from opgen.python_bindings.overloads import load_deprecated

    release = options.release
    spec = load_spec(options.native_yaml, options.tags_yaml, LoadOptions(release=release))
    deprecated = () if options.deprecated_yaml is None else load_deprecated(options.deprecated_yaml)
    docstrings = {} if options.docs_dir is None else load_docstrings(options.docs_dir)
    stubs = spec_stubs(spec.functions, deprecated, SignatureSet(), pyi.hints_for(release))
    templates = TemplateDir(TEMPLATES, Template.from_file)
    return PyiModel(stubs, docstrings, templates, options.out, release, spec)


def emit(model: PyiModel, options: PyiOptions) -> Generated:
    """Every stub file. A dry run renders them too: what it checks is that they can be
    written."""
    emitted = run_emitters(model, EMITTERS, {OUTPUT: model.output_set()})
    notice = options.release_notice
    return Generated(
        tuple(emitted.files.values()),
        notices=() if notice is None else (notice,),
        dry_run_renders=True,
    )


def emit_torch_functions(model: PyiModel) -> Emitted:
    """`torch/_C/_VariableFunctions.pyi` and its copy `torch/_VF.pyi`."""
    out = model.output_set()
    functions = _torch_functions(model.stubs, model.docstrings)
    out.add_template(VARIABLE_FUNCTIONS, functions, template="variable_functions.pyi.in")
    out.add_template(VF, functions, template="variable_functions.pyi.in")
    return Emitted({OUTPUT: out})


def emit_return_types(model: PyiModel) -> Emitted:
    out = model.output_set()
    out.add_template(RETURN_TYPES, _return_types(model.stubs), template="return_types.pyi.in")
    return Emitted({OUTPUT: out})


def emit_nn(model: PyiModel) -> Emitted:
    out = model.output_set()
    out.add_template(NN, _nn(model.stubs.hints), template="nn.pyi.in")
    return Emitted({OUTPUT: out})


def emit_tensor_base(model: PyiModel) -> Emitted:
    """The generated part of class TensorBase's body."""
    out = model.output_set()
    env = _tensor_base(model.stubs, model.docstrings)
    out.add_template(TENSOR_BASE, env, template="tensor_base.pyi.fragment.in")
    return Emitted({OUTPUT: out})


OUTPUT = "stubs"  # the one set's name
# The files, in the order they are listed.
EMITTERS: tuple[Emitter[PyiModel], ...] = (
    emit_torch_functions,
    emit_return_types,
    emit_nn,
    emit_tensor_base,
)


def _torch_functions(stubs: SpecStubs, docstrings: Mapping[str, str]) -> dict[str, object]:
    by_name: dict[str, list[Stub]] = {}
    add_all(by_name, ((d.name, d.stub()) for d in torch_functions.declarations(stubs.hints)))
    _extend(by_name, stubs.functions)
    declared = {name for name, declarations in by_name.items() if declarations}
    return {
        "imports": render_imports(torch_functions.imports(stubs.hints)),
        "all_names": _quoted(sorted(declared | stubs.structseqs.keys())),
        "definitions": sorted_stubs(by_name, docstrings, FUNCTION_PREFIX),
    }


def _tensor_base(stubs: SpecStubs, docstrings: Mapping[str, str]) -> dict[str, object]:
    by_name: dict[str, list[Stub]] = {}
    add_all(by_name, ((key, d.stub()) for key, d in tensor_methods(stubs.hints)))
    _extend(by_name, stubs.methods)
    add_all(by_name, ((key, d.stub()) for key, d in tensor_operators(stubs.hints)))
    return {"definitions": sorted_stubs(by_name, docstrings, TENSOR_PREFIX)}


def _return_types(stubs: SpecStubs) -> dict[str, object]:
    register, all_types = return_types.REGISTER, return_types.ALL_RETURN_TYPES
    return {
        "imports": render_imports(return_types.IMPORTS),
        "all_names": _quoted([register.name, all_types.name, *stubs.structseqs]),
        "register": register.stub().text,
        "structseqs": [f"{definition}\n" for definition in stubs.structseqs.values()],
        "all_return_types": all_types.stub().text,
    }


def _nn(hints: pyi.Hints) -> dict[str, object]:
    sections = nn_functions.sections(hints)
    return {
        "imports": render_imports(nn_functions.IMPORTS),
        "sections": "\n\n".join(_section(s.comment, s.definitions) for s in sections),
    }


def _section(comment: str, definitions: Iterable[Definition]) -> str:
    return "\n".join((f"# {comment}", *(d.stub().text for d in definitions)))


def _extend(by_name: dict[str, list[Stub]], more: Mapping[str, list[Stub]]) -> None:
    for name, stubs in more.items():
        by_name.setdefault(name, []).extend(stubs)


def _quoted(names: Iterable[str]) -> list[str]:
    return [f'"{name}",' for name in names]
