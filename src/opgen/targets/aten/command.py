"""`opgen aten`: the command line of `python -m torchgen.gen`, flag for flag.

Every flag keeps torchgen's spellings (both the dashed and the underscored
form), meaning and default, so build scripts can swap the command and keep
their arguments.
"""

from __future__ import annotations

import argparse

from opgen.jobs import add_jobs_argument, default_jobs
from opgen.targets.aten.options import AtenOptions, AtenPart
from opgen.targets.contract import LazyTarget, RunOptions, UsageError
from opgen.targets.torch_version import add_torch_version_argument, choose_release

_DEFAULTS = AtenOptions()


def add_arguments(parser: argparse.ArgumentParser) -> None:
    add = parser.add_argument
    add(
        "-s",
        "--source-path",
        default=_DEFAULTS.source_path,
        metavar="DIR",
        help="the ATen source directory: native/native_functions.yaml, native/tags.yaml "
        "and templates/ (default: %(default)s)",
    )
    add(
        "-o",
        "--output-dependencies",
        metavar="FILE",
        help="also write, for each output family, the list of files it generates "
        "(a CMake set(); the family's prefix is added to FILE's name)",
    )
    add(
        "--dry-run",
        action="store_true",
        help="write no generated file (the -o lists are still written)",
    )
    add(
        "--per-operator-headers",
        action="store_true",
        help="also generate one set of headers per operator under ops/",
    )
    add(
        "-d",
        "--install-dir",
        "--install_dir",
        default=_DEFAULTS.run.output_dir,
        metavar="DIR",
        help="output directory (default: %(default)s)",
    )
    add(
        "--aoti-install-dir",
        "--aoti_install_dir",
        default=_DEFAULTS.aoti_install_dir,
        metavar="DIR",
        help="output directory of the AOTInductor C shim (default: %(default)s)",
    )
    add(
        "--headeronly-install-dir",
        "--headeronly_install_dir",
        metavar="DIR",
        help="output directory of header-only files such as enum_tag.h "
        "(default: <install-dir>/core)",
    )
    add("--rocm", action="store_true", help="read CUDA as ROCm/HIP")
    add("--mps", action="store_true", help="generate MPS registrations")
    add("--xpu", action="store_true", help="generate XPU registrations")
    add("--mtia", action="store_true", help="generate MTIA registrations")
    add(
        "--op-registration-whitelist",
        "--op_registration_whitelist",
        nargs="*",
        metavar="OP",
        help="register only these operators (namespace::name, no overload)",
    )
    add(
        "--op-selection-yaml-path",
        "--op_selection_yaml_path",
        metavar="FILE",
        help="register only the operators a selective-build YAML selects",
    )
    add(
        "--backend-whitelist",
        "--backend_whitelist",
        nargs="*",
        metavar="KEY",
        help="generate registrations only for these dispatch keys (and the composite ones)",
    )
    add(
        "--static-dispatch-backend",
        "--static_dispatch_backend",
        nargs="*",
        metavar="KEY",
        help="call these backends' kernels directly instead of through the dispatcher",
    )
    add(
        "--skip-dispatcher-op-registration",
        "--skip_dispatcher_op_registration",
        action="store_true",
        help="register no operator with the dispatcher",
    )
    add(
        "--force-schema-registration",
        "--force_schema_registration",
        action="store_true",
        help="register every schema, even of operators not selected",
    )
    add(
        "--generate",
        nargs="*",
        choices=[g.value for g in AtenPart],
        default=[g.value for g in AtenPart],
        help="generate only these parts (default: all)",
    )
    add(
        "--update-aoti-c-shim",
        action="store_true",
        help="rewrite the AOTInductor C shim headers instead of checking them",
    )
    add(
        "--extend-aoti-c-shim",
        action="store_true",
        help="generate C shims for an out-of-tree spec, extending the in-tree ones",
    )
    add(
        "--native-aot-ops-dir",
        "--native_aot_ops_dir",
        metavar="DIR",
        help="where the <op>/aot.py native AOT declarations are, from torch 2.15 on (default: "
        "torch/_native/ops of the PyTorch checkout holding --source-path; '' for none)",
    )
    add(  # opgen's own: torchgen always has the table, as part of itself
        "--aoti-fallback-ops",
        metavar="FILE",
        help="the AOTInductor fallback-op table, torchgen/aoti/fallback_ops.py (default: "
        "beside --source-path in torch's wheel or a PyTorch checkout, else the installed "
        "torchgen's)",
    )
    add_jobs_argument(parser, "the files")  # opgen's own: not a flag of torchgen.gen
    add_torch_version_argument(parser)  # opgen's own too


def options_from(args: argparse.Namespace) -> AtenOptions:
    def names(values: list[str] | None) -> tuple[str, ...] | None:
        return None if values is None else tuple(values)

    release = choose_release(args.torch_version, [args.source_path])
    options = AtenOptions(
        run=RunOptions(
            args.install_dir,
            jobs=default_jobs() if args.jobs is None else args.jobs,
            dry_run=args.dry_run,
            output_dependencies=args.output_dependencies,
        ),
        source_path=args.source_path,
        per_operator_headers=args.per_operator_headers,
        aoti_install_dir=args.aoti_install_dir,
        headeronly_install_dir=args.headeronly_install_dir,
        rocm=args.rocm,
        mps=args.mps,
        xpu=args.xpu,
        mtia=args.mtia,
        op_registration_whitelist=names(args.op_registration_whitelist),
        op_selection_yaml_path=args.op_selection_yaml_path,
        backend_whitelist=names(args.backend_whitelist),
        static_dispatch_backend=names(args.static_dispatch_backend),
        skip_dispatcher_op_registration=args.skip_dispatcher_op_registration,
        force_schema_registration=args.force_schema_registration,
        generate=frozenset(AtenPart(g) for g in args.generate),
        update_aoti_c_shim=args.update_aoti_c_shim,
        extend_aoti_c_shim=args.extend_aoti_c_shim,
        aoti_fallback_ops=args.aoti_fallback_ops,
        native_aot_ops_dir=args.native_aot_ops_dir,
        release=release.release,
        release_notice=release.notice,
    )
    problems = options.usage_errors()
    if problems:
        raise UsageError(*problems)
    return options


TARGET = LazyTarget(
    name="aten",
    help="generate ATen's files, as `python -m torchgen.gen` does",
    description=(
        "Generate ATen's files from --source-path, byte for byte as `python -m torchgen.gen` "
        "does, with the same flags."
    ),
    add_arguments=add_arguments,
    options=options_from,
    reader="opgen.targets.aten.generate:read",
    emitter="opgen.targets.aten.generate:emit",
)
