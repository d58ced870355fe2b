"""One `opgen autograd` run: the spec, its derivatives, and the output set files go to.

`AutogradRun.start` reads the inputs the options name; `AutogradRun.of` builds
a run from a model already loaded (the tests hand it upstream's, converted).
Every emitter reads `run.fns` (each selected native function with the
derivatives it uses, sorted by C++ name, as torchgen passes them) or
`run.derivatives` (the file's entries, in the file's order).
"""

from __future__ import annotations

from opgen.api.signatures import SignatureSet
from opgen.autograd.model import DerivativeInfos, NativeFunctionWithDifferentiabilityInfo
from opgen.frozen import frozen
from opgen.output import OutputSet, TemplateDir, template_comment_dir
from opgen.spec.model import LoadOptions, Spec, load_spec
from opgen.spec.selection import OperatorSelection
from opgen.targets.autograd.options import AUTOGRAD_GENERATOR, AutogradOptions
from opgen.template import Template


@frozen(eq=False)
class AutogradRun:
    options: AutogradOptions
    spec: Spec
    selection: OperatorSelection
    derivatives: DerivativeInfos
    fns: tuple[NativeFunctionWithDifferentiabilityInfo, ...]
    signatures: SignatureSet
    outputs: OutputSet  # <out>
    # How the files name their template in `@generated from <dir>/<template>`.
    template_comment_dir: str

    @staticmethod
    def start(options: AutogradOptions) -> AutogradRun:
        """Read the inputs the options name; raises SpecError for bad input."""
        from opgen.autograd.load_derivatives import load_derivative_infos
        from opgen.autograd.match import match_differentiability_info

        selection = OperatorSelection.from_flags(None, options.op_selection_yaml_path)
        spec = load_spec(
            options.native_yaml, options.tags_yaml, LoadOptions(release=options.run.release)
        )
        derivatives = load_derivative_infos(spec, options.derivatives_yaml)
        return AutogradRun.of(options, spec, selection, derivatives, match_differentiability_info)

    @staticmethod
    def of(
        options: AutogradOptions,
        spec: Spec,
        selection: OperatorSelection,
        derivatives: DerivativeInfos,
        match: object,
    ) -> AutogradRun:
        """A run over a loaded model; `match(functions, derivatives)` pairs functions and infos."""
        from opgen.api import cpp

        selected = [
            f for f in spec.functions if selection.is_native_function_selected_for_training(f)
        ]
        selected.sort(key=lambda f: cpp.name(f.func))
        fns = tuple(match(selected, derivatives))  # type: ignore[operator]
        templates = TemplateDir(options.template_dir, Template.from_file)
        outputs = OutputSet(
            options.out, templates, generator=options.generator or AUTOGRAD_GENERATOR
        )
        return AutogradRun(
            options,
            spec,
            selection,
            derivatives,
            fns,
            SignatureSet(),
            outputs,
            template_comment_dir(options.template_dir),
        )
