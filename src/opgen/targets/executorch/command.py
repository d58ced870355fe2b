"""`opgen executorch`: the command line of ExecuTorch's `python -m executorch.codegen.gen`.

Every flag keeps upstream's spellings (the dashed and underscored forms it accepts,
and no others, so that the abbreviations argparse allows mean the same), meaning
and default, so that a build can swap the command and keep its arguments.
"""

from __future__ import annotations

import argparse

from opgen.targets.contract import LazyTarget, RunOptions, UsageError
from opgen.targets.executorch.options import ExecutorchOptions, ExecutorchPart
from opgen.targets.torch_version import choose_release

_DEFAULTS = ExecutorchOptions()


def add_arguments(parser: argparse.ArgumentParser) -> None:
    add = parser.add_argument
    add("-s", "--source-path", metavar="DIR", help="the directory holding templates/ (required)")
    add(
        "--functions-yaml-path",
        "--functions_yaml_path",
        metavar="YAML",
        help="the kernels of ATen operators, in ExecuTorch's dialect (functions.yaml)",
    )
    add(
        "--custom-ops-yaml-path",
        "--custom_ops_yaml_path",
        metavar="YAML",
        help="operators of ExecuTorch's own, with their kernels (custom_ops.yaml)",
    )
    add(
        "--aten-yaml-path",
        "--aten_yaml_path",
        metavar="YAML",
        help="ATen's native_functions.yaml, which gives the schemas of 'op:' entries (required)",
    )
    add(
        "-d",
        "--install-dir",
        "--install_dir",
        default=_DEFAULTS.install_dir,
        metavar="DIR",
        help="output directory (default: %(default)s)",
    )
    add(
        "-o",
        "--output-dependencies",
        metavar="FILE",
        help="also write the list of generated files (a CMake set() named after FILE)",
    )
    add("--dry-run", action="store_true", help="write no generated file (-o is still written)")
    add(
        "--static-dispatch-backend",
        "--static_dispatch_backend",
        nargs="*",
        metavar="KEY",
        help="accepted and unused, as upstream",
    )
    add(
        "--op-registration-whitelist",
        "--op_registration_whitelist",
        nargs="*",
        metavar="OP",
        help="only these operators (namespace::name, every overload); no kernel is "
        "registered without a selection file's kernel keys",
    )
    add(
        "--op-selection-yaml-path",
        "--op_selection_yaml_path",
        metavar="YAML",
        help="only the operators and kernels a selected_operators.yaml selects",
    )
    add("--tags-path", metavar="YAML", help="the tags.yaml of --aten-yaml-path (required)")
    add("--rocm", action="store_true", help="accepted, as upstream (no CUDA key is registered)")
    add(
        "--use-aten-lib",
        "--use_aten_lib",
        action="store_true",
        help="the runtime is built on ATen: ATen's operators and types, not ExecuTorch's",
    )
    add(
        "--manual_registration",
        "--manual-registration",
        action="store_true",
        help="register the kernels in register_all_kernels() (RegisterKernels.cpp), not "
        "at static initialization",
    )
    add(
        "--generate",
        nargs="*",
        choices=[g.value for g in ExecutorchPart],
        default=[g.value for g in ExecutorchPart],
        help="generate only these parts (default: all)",
    )
    add(
        "--add-exception-boundary",
        "--add_exception_boundary",
        action="store_true",
        help="catch what a kernel throws and fail the run instead",
    )


def options_from(args: argparse.Namespace) -> ExecutorchOptions:
    def names(values: list[str] | None) -> tuple[str, ...] | None:
        return None if values is None else tuple(values)

    release = choose_release(None, [args.aten_yaml_path, args.tags_path])
    options = ExecutorchOptions(
        run=RunOptions(
            args.install_dir,
            dry_run=args.dry_run,
            output_dependencies=args.output_dependencies,
        ),
        source_path=args.source_path,
        functions_yaml_path=args.functions_yaml_path or None,
        custom_ops_yaml_path=args.custom_ops_yaml_path or None,
        aten_yaml_path=args.aten_yaml_path,
        tags_path=args.tags_path,
        op_registration_whitelist=names(args.op_registration_whitelist),
        op_selection_yaml_path=args.op_selection_yaml_path,
        static_dispatch_backend=names(args.static_dispatch_backend),
        rocm=args.rocm,
        use_aten_lib=args.use_aten_lib,
        manual_registration=args.manual_registration,
        generate=frozenset(ExecutorchPart(g) for g in args.generate),
        add_exception_boundary=args.add_exception_boundary,
        release=release.release,
        release_notice=release.notice,
    )
    problems = options.usage_errors()
    if problems:
        raise UsageError(*problems)
    return options


TARGET = LazyTarget(
    name="executorch",
    help="generate ExecuTorch's kernel registrations and headers, as its codegen.gen does",
    description=(
        "Generate the files ExecuTorch builds its kernel libraries from (the unboxing "
        "registrations, Functions.h, NativeFunctions.h and, for operators of its own, their "
        "PyTorch registrations), byte for byte as `python -m executorch.codegen.gen` does, "
        "with the same flags."
    ),
    add_arguments=add_arguments,
    options=options_from,
    reader="opgen.targets.executorch.run:read",
    emitter="opgen.targets.executorch.generate:emit",
)
