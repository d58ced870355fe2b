"""One `opgen generate-code` run: every generator of generate_code.py over one model.

generate_code.py runs `gen_autograd_python`, `gen_autograd`, `gen_annotated_fn_args`,
`gen_functionalization_view_meta_classes` and, with `--gen-lazy-ts-backend`, the
TorchScript lazy backend, each loading the spec again (and the first two
derivatives.yaml). Here the spec and the derivatives are read once, and each
target's emitters fill their own output sets from that one model; the writer then
writes every set in one pass (`opgen.writer`).
"""

from __future__ import annotations

import os

from opgen.autograd.model import DerivativeInfos
from opgen.diagnostics import SpecError
from opgen.output import OutputSet
from opgen.spec.model import LoadOptions, Spec, load_spec
from opgen.spec.selection import OperatorSelection
from opgen.spec.yaml.load import load_yaml
from opgen.spec.yaml.values import YamlList
from opgen.targets.contract import Generated, RunOptions
from opgen.targets.generate_code.options import (
    GENERATE_CODE_GENERATOR,
    TS_KERNELS,
    TS_NODE_BASE,
    TS_NODE_BASE_HEADER,
    GenerateCodeOptions,
    Subset,
)


def generate(options: GenerateCodeOptions) -> Generated:
    """The files the options describe; raises SpecError for bad input."""
    from opgen.autograd.load_derivatives import load_derivative_infos
    from opgen.targets.autograd.annotated_fn_args import annotated_fn_args_outputs
    from opgen.targets.python.view_meta_bindings import aten_templates_beside, view_meta_bindings

    release = options.run.release
    selection = _selection(options)
    spec = load_spec(options.native_yaml, options.tags_yaml, LoadOptions(release=release))
    # Every directory generate_code.py creates, even when it stays empty.
    autograd = OutputSet(options.autograd_out)
    python = OutputSet(options.python_install_dir)
    sets: list[OutputSet] = []
    if options.generates(Subset.PYBINDINGS) or options.generates(Subset.LIBTORCH):
        derivatives = load_derivative_infos(
            spec, os.path.join(options.autograd_dir, "derivatives.yaml")
        )
        if options.generates(Subset.PYBINDINGS):
            sets.append(_python_outputs(options, spec, derivatives))
        if options.generates(Subset.LIBTORCH):
            sets.append(_autograd_outputs(options, spec, selection, derivatives))
    if options.generates(Subset.PYTHON):
        python = annotated_fn_args_outputs(
            spec,
            options.python_install_dir,
            options.autograd_dir,
            release,
            generator=GENERATE_CODE_GENERATOR,
        )
    sets.append(python)
    sets.append(
        view_meta_bindings(
            spec,
            selection,
            options.functionalization_out,
            aten_templates_beside(options.native_yaml),
        )
    )
    if options.gen_lazy_ts_backend:
        sets.extend(_lazy_outputs(options, spec))
    if not any(s.root == autograd.root for s in sets):
        sets.append(autograd)
    return Generated(tuple(sets), model=spec)


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


def _run_options(options: GenerateCodeOptions, out: str) -> RunOptions:
    run = options.run
    return RunOptions(out, jobs=run.jobs, dry_run=run.dry_run, release=run.release)


def _python_outputs(
    options: GenerateCodeOptions, spec: Spec, derivatives: DerivativeInfos
) -> OutputSet:
    from opgen.targets.python.generate import emit_all
    from opgen.targets.python.options import PythonOptions
    from opgen.targets.python.run import PythonRun

    python_options = PythonOptions(
        options.native_yaml,
        options.tags_yaml,
        options.autograd_dir,
        _run_options(options, options.autograd_out),
        generator=GENERATE_CODE_GENERATOR,
    )
    run = PythonRun.of(python_options, spec, derivatives)
    emit_all(run)
    return run.outputs


def _autograd_outputs(
    options: GenerateCodeOptions,
    spec: Spec,
    selection: OperatorSelection,
    derivatives: DerivativeInfos,
) -> OutputSet:
    from opgen.autograd.match import match_differentiability_info
    from opgen.targets.autograd.generate import emit_all
    from opgen.targets.autograd.options import AutogradOptions
    from opgen.targets.autograd.run import AutogradRun

    autograd_options = AutogradOptions(
        options.native_yaml,
        options.tags_yaml,
        options.autograd_dir,
        _run_options(options, options.autograd_out),
        generator=GENERATE_CODE_GENERATOR,
        disable_autograd=options.disable_autograd,
    )
    run = AutogradRun.of(
        autograd_options,
        spec,
        selection,
        derivatives,
        match_differentiability_info,
    )
    emit_all(run)
    return run.outputs


def _lazy_outputs(options: GenerateCodeOptions, spec: Spec) -> tuple[OutputSet, ...]:
    from opgen.spec.external_backend import read_external_backend
    from opgen.targets.backend.options import BackendOptions
    from opgen.targets.lazy.generate import generate_from
    from opgen.targets.lazy.options import LazyBackendOptions, LazyOptions

    backend_options = BackendOptions(
        options.ts_backend_yaml,
        _run_options(options, options.lazy_out),
        impl_path=TS_KERNELS,
        source_path=options.aten_dir,
    )
    lazy = LazyOptions(
        node_base=TS_NODE_BASE,
        node_base_hdr=TS_NODE_BASE_HEADER,
        gen_ts_lowerings=True,
        build_in_tree=True,
        per_operator_headers=options.per_operator_headers,
        gen_forced_fallback_code=True,
    )
    backend = read_external_backend(load_yaml(options.ts_backend_yaml), spec)
    generated = generate_from(
        LazyBackendOptions(backend_options, lazy),
        options.aten_dir,
        spec,
        backend,
        generator=GENERATE_CODE_GENERATOR,
    )
    return tuple(generated.outputs)
