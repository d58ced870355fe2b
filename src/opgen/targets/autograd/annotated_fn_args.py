"""`annotated_fn_args.py`: the required arguments of every Python binding.

PyTorch's `__torch_function__` tests
(test/test_overrides.py) call every bound function with made-up arguments;
this file tells them which: for each function with a Python binding, by
namespace (`torch._C._VariableFunctions`, `torch._C._nn`, `torch._C._linalg`,
`torch._C._special`, `torch._C._fft`, then the `torch.Tensor` methods), one
line `<namespace>.<name>: [<argument>, ...],` listing the arguments without a
default, positional ones then keyword-only ones, each as a dict of strings
(`is_kwarg_only`, `name`, the parser's `simple_type`) plus a list's fixed
`size`. Within a namespace, the overloads of an operator are listed together,
where the operator first appears in the spec.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from opgen.api import python
from opgen.frozen import frozen
from opgen.output import OutputSet, TemplateDir
from opgen.python_bindings import bound
from opgen.releases import Release
from opgen.spec.arguments import Argument
from opgen.spec.model import LoadOptions, Spec, load_spec
from opgen.spec.native import NativeFunction
from opgen.spec.schema import BaseOperatorName
from opgen.targets.autograd_dir import AutogradDirOptions, notices
from opgen.targets.contract import Generated
from opgen.targets.emitters import Emitted, Emitter, run_emitters
from opgen.template import Template

# The name of the one set of files, as the emitter hands it back.
OUT = "out"

# What the file's generated comment (unused by its template) names as the generator.
ANNOTATED_FN_ARGS_GENERATOR = "torchgen/packaged/autograd/gen_annotated_fn_args.py"

# Each Python namespace and the functions it binds, in the file's order.
NAMESPACES: tuple[tuple[str, Callable[[NativeFunction], bool]], ...] = (
    ("torch._C._VariableFunctions", bound.is_py_torch_function),
    ("torch._C._nn", bound.is_py_nn_function),
    ("torch._C._linalg", bound.is_py_linalg_function),
    ("torch._C._special", bound.is_py_special_function),
    ("torch._C._fft", bound.is_py_fft_function),
    ("torch.Tensor", bound.is_py_variable_method),
)

# Operators the tests cannot call with keyword arguments: only their positional ones are listed.
NO_KEYWORD_ARGUMENTS = frozenset({"diagonal", "round_", "round", "scatter_"})


def required_arguments(args: Sequence[Argument], *, kwarg_only: bool) -> list[dict[str, object]]:
    """The arguments without a default, as the tests read them."""
    described: list[dict[str, object]] = []
    for a in args:
        if a.default is not None:
            continue
        entry: dict[str, object] = {
            "is_kwarg_only": str(kwarg_only),
            "name": a.name,
            "simple_type": python.argument_type_str(a.type, simple_type=True),
        }
        size = python.argument_type_size(a.type)
        if size:
            entry["size"] = size
        described.append(entry)
    return described


def annotated_args(f: NativeFunction) -> str:
    """`<name>: [{...}, ...],` for one function."""
    name = str(f.func.name.name)
    arguments = f.func.arguments
    described = required_arguments(arguments.flat_positional, kwarg_only=False)
    if name not in NO_KEYWORD_ARGUMENTS:
        described += required_arguments(arguments.flat_kwarg_only, kwarg_only=True)
    return f"{name}: {described!r},"


def annotated_lines(spec: Spec, release: Release) -> list[str]:
    """Every line of the `annotated_args` table, namespace by namespace."""
    bindable = [f for f in spec.functions if bound.should_generate_py_binding(f, release)]
    lines: list[str] = []
    for namespace, binds in NAMESPACES:
        by_operator: dict[BaseOperatorName, list[NativeFunction]] = {}
        for f in bindable:
            if binds(f):
                by_operator.setdefault(f.func.name.name, []).append(f)
        lines += [f"{namespace}.{annotated_args(f)}" for fs in by_operator.values() for f in fs]
    return lines


@frozen(eq=False)
class AnnotatedFnArgs:
    """What `annotated_fn_args.py` is made from, and where it goes."""

    release: Release
    spec: Spec
    out: str  # the directory the file goes into
    templates: TemplateDir  # AUTOGRAD_DIR/templates
    generator: str  # what the (unused) generated comment names


def read(options: AutogradDirOptions, *, spec: Spec | None = None) -> AnnotatedFnArgs:
    """The model of the inputs the options name; raises SpecError. A caller that has
    read the spec already (`opgen generate-code`) hands it in."""
    if spec is None:
        spec = load_spec(
            options.native_yaml, options.tags_yaml, LoadOptions(release=options.release)
        )
    return AnnotatedFnArgs(
        options.release,
        spec,
        options.out,
        TemplateDir(options.template_dir, Template.from_file),
        options.generator or ANNOTATED_FN_ARGS_GENERATOR,
    )


def emit_annotated_fn_args(model: AnnotatedFnArgs) -> Emitted:
    """`annotated_fn_args.py`, its lines computed when it renders."""
    out = OutputSet(model.out, model.templates, generator=model.generator)

    def env() -> dict[str, object]:
        lines = annotated_lines(model.spec, model.release)
        return {"annotated_args": ["    " + line for line in lines]}

    out.add_template("annotated_fn_args.py", env, template="annotated_fn_args.py.in")
    return Emitted({OUT: out})


EMITTERS: tuple[Emitter[AnnotatedFnArgs], ...] = (emit_annotated_fn_args,)


def emit(model: AnnotatedFnArgs, options: AutogradDirOptions) -> Generated:
    """`opgen annotated-fn-args`: the one file, which `-o` does not list (the command
    has no `-o`)."""
    out = OutputSet(model.out, model.templates, generator=model.generator)
    emitted = run_emitters(model, EMITTERS, {OUT: out})
    return Generated(
        (out,),
        notes=emitted.notes,
        warnings=emitted.warnings,
        notices=notices(options.release_notice),
    )
