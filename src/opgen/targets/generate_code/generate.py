"""One `opgen generate-code` run: every generator of generate_code.py over one model.

generate_code.py runs `gen_autograd_python`, `gen_autograd`, `gen_annotated_fn_args`,
`gen_functionalization_view_meta_classes` and, with `--gen-lazy-ts-backend`, the
TorchScript lazy backend, each loading the spec again (and the first two
derivatives.yaml). Here the spec and the derivatives are read once, and handed to
each target's own `read`; `emit` is each target's `emit` of its model, and the
writer then writes every set in one pass (`opgen.writer`).

The targets are read in upstream's order (so a run with several errors reports
the first one upstream would): the Python bindings, autograd, annotated_fn_args.py,
the ViewMeta bindings, the lazy backend.
"""

from __future__ import annotations

import os
from typing import TYPE_CHECKING

from opgen.diagnostics import SpecError
from opgen.frozen import frozen
from opgen.output import OutputSet
from opgen.spec.model import LoadOptions, Spec, load_spec
from opgen.spec.selection import OperatorSelection
from opgen.spec.yaml.load import load_yaml
from opgen.spec.yaml.values import YamlList
from opgen.targets.autograd.options import AutogradOptions
from opgen.targets.autograd_dir import AutogradDirOptions, notices
from opgen.targets.contract import Generated, RunOptions
from opgen.targets.generate_code.options import (
    GENERATE_CODE_GENERATOR,
    TS_KERNELS,
    TS_NODE_BASE,
    TS_NODE_BASE_HEADER,
    GenerateCodeOptions,
    Subset,
)
from opgen.targets.python.options import PythonOptions
from opgen.targets.python.view_meta_bindings import ViewMetaBindings, ViewMetaOptions

if TYPE_CHECKING:
    from opgen.targets.autograd.annotated_fn_args import AnnotatedFnArgs
    from opgen.targets.autograd.run import AutogradRun
    from opgen.targets.lazy.files import LazyModel
    from opgen.targets.lazy.options import LazyBackendOptions
    from opgen.targets.python.run import PythonRun


@frozen(eq=False)
class GenerateCodeRun:
    """The model of each target the run generates (None: not in `--subset`)."""

    spec: Spec  # read once, for every target
    python: PythonRun | None
    autograd: AutogradRun | None
    annotated_fn_args: AnnotatedFnArgs | None
    view_meta: ViewMetaBindings
    lazy: LazyModel | None  # the TorchScript backend (`--gen-lazy-ts-backend`)


def read(options: GenerateCodeOptions) -> GenerateCodeRun:
    """Every target's model, over one read of the spec and derivatives.yaml; raises
    SpecError for bad input."""
    from opgen.autograd.load_derivatives import load_derivative_infos
    from opgen.targets.autograd import annotated_fn_args
    from opgen.targets.autograd import generate as autograd
    from opgen.targets.python import generate as python
    from opgen.targets.python import view_meta_bindings

    selection = _selection(options)
    spec = load_spec(options.native_yaml, options.tags_yaml, LoadOptions(release=options.release))
    python_run = autograd_run = annotated = None
    if options.generates(Subset.PYBINDINGS) or options.generates(Subset.LIBTORCH):
        derivatives_yaml = os.path.join(options.autograd_dir, "derivatives.yaml")
        derivatives = load_derivative_infos(spec, derivatives_yaml)
        if options.generates(Subset.PYBINDINGS):
            python_run = python.read(_python_options(options), spec=spec, derivatives=derivatives)
        if options.generates(Subset.LIBTORCH):
            autograd_run = autograd.read(
                _autograd_options(options), spec=spec, derivatives=derivatives, selection=selection
            )
    if options.generates(Subset.PYTHON):
        annotated = annotated_fn_args.read(_annotated_fn_args_options(options), spec=spec)
    view_meta = view_meta_bindings.read(_view_meta_options(options), spec=spec, selection=selection)
    lazy = None
    if options.gen_lazy_ts_backend:
        from opgen.spec.external_backend import read_external_backend
        from opgen.targets.lazy.generate import model_of

        backend = read_external_backend(load_yaml(options.ts_backend_yaml), spec)
        lazy = model_of(
            _lazy_options(options),
            options.aten_dir,
            spec,
            backend,
            generator=GENERATE_CODE_GENERATOR,
        )
    return GenerateCodeRun(spec, python_run, autograd_run, annotated, view_meta, lazy)


def emit(run: GenerateCodeRun, options: GenerateCodeOptions) -> Generated:
    """Every target's files, each target emitting its own model."""
    from opgen.targets.autograd import annotated_fn_args
    from opgen.targets.autograd import generate as autograd
    from opgen.targets.python import generate as python
    from opgen.targets.python import view_meta_bindings

    made: list[Generated] = []
    if run.python is not None:
        made.append(python.emit(run.python, _python_options(options)))
    if run.autograd is not None:
        made.append(autograd.emit(run.autograd, _autograd_options(options)))
    if run.annotated_fn_args is not None:
        made.append(
            annotated_fn_args.emit(run.annotated_fn_args, _annotated_fn_args_options(options))
        )
    else:  # generate_code.py creates the directory, even when it stays empty
        made.append(Generated((OutputSet(options.python_install_dir),)))
    made.append(view_meta_bindings.emit(run.view_meta, _view_meta_options(options)))
    if run.lazy is not None:
        from opgen.targets.lazy import generate as lazy

        made.append(lazy.emit(run.lazy, _lazy_options(options)))
    outputs = [output_set for generated in made for output_set in generated.outputs]
    if not any(s.root == options.autograd_out for s in outputs):
        outputs.append(OutputSet(options.autograd_out))  # created, as generate_code.py does
    return Generated(
        tuple(outputs),
        notices=notices(options.release_notice),
        notes=tuple(note for generated in made for note in generated.notes),
        warnings=tuple(warning for generated in made for warning in generated.warnings),
    )


def _selection(options: GenerateCodeOptions) -> OperatorSelection:
    """generate_code.py's operator selector: from a legacy list of names, a
    selective-build YAML, or every operator."""
    if options.operators_yaml_path is not None:
        return OperatorSelection.from_yaml_path(options.operators_yaml_path)
    if options.selected_op_list_path is None:
        return OperatorSelection.everything()
    doc = load_yaml(options.selected_op_list_path)
    names = doc.root
    if not isinstance(names, YamlList) or not all(isinstance(n, str) for n in names):
        where = names.location if isinstance(names, YamlList) else doc.location
        raise SpecError("the selected operator list must be a list of operator names", where)
    # Each name stands for all its overloads, as a root operator used for training.
    return OperatorSelection.from_allowlist(
        (str(name).split(".", 1)[0] for name in names), for_training=True
    )


# Each target's options, as generate_code.py calls its generator. The targets' own
# release notices stay unset: the run says once how its release was chosen.


def _run_options(options: GenerateCodeOptions, out: str) -> RunOptions:
    run = options.run
    return RunOptions(out, jobs=run.jobs, dry_run=run.dry_run)


def _python_options(options: GenerateCodeOptions) -> PythonOptions:
    return PythonOptions(
        options.native_yaml,
        options.tags_yaml,
        options.autograd_dir,
        _run_options(options, options.autograd_out),
        generator=GENERATE_CODE_GENERATOR,
        release=options.release,
    )


def _autograd_options(options: GenerateCodeOptions) -> AutogradOptions:
    return AutogradOptions(
        options.native_yaml,
        options.tags_yaml,
        options.autograd_dir,
        _run_options(options, options.autograd_out),
        generator=GENERATE_CODE_GENERATOR,
        release=options.release,
        disable_autograd=options.disable_autograd,
    )


def _annotated_fn_args_options(options: GenerateCodeOptions) -> AutogradDirOptions:
    # annotated_fn_args.py goes into the Python install dir, from AUTOGRAD_DIR/templates.
    return AutogradDirOptions(
        options.native_yaml,
        options.tags_yaml,
        options.autograd_dir,
        _run_options(options, options.python_install_dir),
        generator=GENERATE_CODE_GENERATOR,
        release=options.release,
    )


def _view_meta_options(options: GenerateCodeOptions) -> ViewMetaOptions:
    return ViewMetaOptions(options.native_yaml, options.functionalization_out)


def _lazy_options(options: GenerateCodeOptions) -> LazyBackendOptions:
    from opgen.targets.backend.options import BackendOptions
    from opgen.targets.lazy.options import LazyBackendOptions, LazyOptions

    run = options.run
    backend_options = BackendOptions(
        options.ts_backend_yaml,
        RunOptions(options.lazy_out, jobs=run.jobs, dry_run=run.dry_run),
        impl_path=TS_KERNELS,
        source_path=options.aten_dir,
        release=options.release,
    )
    lazy = LazyOptions(
        node_base=TS_NODE_BASE,
        node_base_hdr=TS_NODE_BASE_HEADER,
        gen_ts_lowerings=True,
        build_in_tree=True,
        per_operator_headers=options.per_operator_headers,
        gen_forced_fallback_code=True,
    )
    return LazyBackendOptions(backend_options, lazy)
