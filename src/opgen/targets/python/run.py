"""One `opgen python` run: the spec, its derivatives, and the output set files go to.

`PythonRun.start` reads the inputs the options name; `PythonRun.of` builds a
run from a model already loaded (tests may hand it upstream's derivatives,
converted). Emitters read `run.spec.functions` (in spec order, as upstream's
`parse_native_yaml` gives them) and `run.derivatives` (the file's entries, in
the file's order).
"""

from __future__ import annotations

from opgen.api.signatures import SignatureSet
from opgen.autograd.model import DerivativeInfos
from opgen.frozen import frozen
from opgen.output import OutputSet, TemplateDir, template_comment_dir
from opgen.spec.model import LoadOptions, Spec, load_spec
from opgen.targets.python.options import PYTHON_GENERATOR, PythonOptions
from opgen.template import Template


@frozen(eq=False)
class PythonRun:
    options: PythonOptions
    spec: Spec
    derivatives: DerivativeInfos
    signatures: SignatureSet
    outputs: OutputSet  # <out>
    # How the files name their template in `@generated from <dir>/<template>`.
    template_comment_dir: str

    @staticmethod
    def start(options: PythonOptions) -> PythonRun:
        """Read the inputs the options name; raises SpecError for bad input."""
        from opgen.autograd.load_derivatives import load_derivative_infos

        spec = load_spec(
            options.native_yaml, options.tags_yaml, LoadOptions(release=options.run.release)
        )
        derivatives = load_derivative_infos(spec, options.derivatives_yaml)
        return PythonRun.of(options, spec, derivatives)

    @staticmethod
    def of(options: PythonOptions, spec: Spec, derivatives: DerivativeInfos) -> PythonRun:
        templates = TemplateDir(options.template_dir, Template.from_file)
        outputs = OutputSet(options.out, templates, generator=options.generator or PYTHON_GENERATOR)
        return PythonRun(
            options,
            spec,
            derivatives,
            SignatureSet(),
            outputs,
            template_comment_dir(options.template_dir),
        )
