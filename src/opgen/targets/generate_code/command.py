"""`opgen generate-code`: the command line of PyTorch's `tools/setup_helpers/generate_code.py`.

Upstream's flags, in the spellings it accepts (both dashed and underscored here),
and opgen's own: `--autograd-dir`, `--torch-version`, `--dry-run` and `-j`.
`tools/autograd` (derivatives.yaml, deprecated.yaml, templates/) is found where
generate_code.py finds it in a checkout (`<root>/tools/autograd` for a spec at
`<root>/aten/src/ATen/native/`), or beside the ATen directory in torchgen's packaged
copy (`packaged/autograd` beside `packaged/ATen`).
"""

from __future__ import annotations

import argparse
import os

from opgen.jobs import add_jobs_argument, default_jobs
from opgen.targets.contract import LazyTarget, RunOptions, UsageError
from opgen.targets.generate_code.options import GenerateCodeOptions, Subset
from opgen.targets.torch_version import add_torch_version_argument, choose_release

# generate_code.py's default, relative to the working directory (a checkout's root).
DEFAULT_TAGS = "aten/src/ATen/native/tags.yaml"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    add = parser.add_argument
    add(
        "--native-functions-path",
        "--native_functions_path",
        required=True,
        metavar="FILE",
        help="native_functions.yaml, in an ATen directory (<ATen>/native/)",
    )
    add(
        "--tags-path",
        "--tags_path",
        default=DEFAULT_TAGS,
        metavar="FILE",
        help=f"tags.yaml (default: {DEFAULT_TAGS})",
    )
    add(
        "--gen-dir",
        "--gen_dir",
        default=".",
        metavar="DIR",
        help="the root the files go under: torch/csrc/... and torch/testing/... "
        "(default: the working directory)",
    )
    add(
        "--install-dir",
        "--install_dir",
        metavar="DIR",
        help="deprecated upstream: write autograd/, functionalization/ and lazy/ under DIR "
        "and annotated_fn_args.py into DIR, instead of under --gen-dir",
    )
    add(
        "--subset",
        choices=[s.value for s in Subset],
        help="only gen_autograd (libtorch), gen_autograd_python (pybindings) or "
        "gen_annotated_fn_args (python); the ViewMeta bindings are always written",
    )
    add(
        "--disable-autograd",
        "--disable_autograd",
        action="store_true",
        help="no VariableType, ADInplaceOrViewType or TraceType sources",
    )
    add(
        "--selected-op-list-path",
        "--selected_op_list_path",
        metavar="FILE",
        help="a YAML list of operator names (overloads ignored) to generate autograd for",
    )
    add(
        "--operators-yaml-path",
        "--operators_yaml_path",
        metavar="FILE",
        help="a selective-build YAML of the operators to generate autograd for",
    )
    add(
        "--force-schema-registration",
        "--force_schema_registration",
        action="store_true",
        help="accepted for compatibility; it changes nothing, as upstream",
    )
    add(
        "--gen-lazy-ts-backend",
        "--gen_lazy_ts_backend",
        action="store_true",
        help="also generate the TorchScript lazy backend (from <ATen>/native/"
        "ts_native_functions.yaml, checked against torch/csrc/lazy/ts_backend/"
        "ts_native_functions.cpp in the working directory)",
    )
    add(
        "--per-operator-headers",
        "--per_operator_headers",
        action="store_true",
        help="the lazy backend includes per-operator ATen headers",
    )
    add(
        "--autograd-dir",
        "--autograd_dir",
        metavar="DIR",
        help="derivatives.yaml, deprecated.yaml and templates/ (default: tools/autograd of "
        "the checkout the spec is in, or packaged/autograd beside packaged/ATen)",
    )
    add("--dry-run", action="store_true", help="generate and check, write no file")
    add_jobs_argument(parser, "the files")
    add_torch_version_argument(parser)


def find_autograd_dir(native_yaml: str) -> str | None:
    """`tools/autograd` of the checkout, or `autograd` beside torchgen's packaged ATen."""
    aten = os.path.dirname(os.path.dirname(os.path.abspath(native_yaml)))
    checkout = os.path.join(aten, os.pardir, os.pardir, os.pardir, "tools", "autograd")
    packaged = os.path.join(os.path.dirname(aten), "autograd")
    for candidate in (checkout, packaged):
        if os.path.isfile(os.path.join(candidate, "derivatives.yaml")):
            return os.path.normpath(candidate)
    return None


def options_from(args: argparse.Namespace) -> GenerateCodeOptions:
    if args.selected_op_list_path is not None and args.operators_yaml_path is not None:
        raise UsageError(
            "--selected-op-list-path and --operators-yaml-path cannot be given together"
        )
    autograd_dir = args.autograd_dir or find_autograd_dir(args.native_functions_path)
    if autograd_dir is None:
        raise UsageError(
            f"no tools/autograd (derivatives.yaml) found for {args.native_functions_path}: "
            "neither <root>/tools/autograd of a checkout nor packaged/autograd beside "
            "packaged/ATen; give --autograd-dir"
        )
    release = choose_release(args.torch_version, [args.native_functions_path, autograd_dir])
    if args.install_dir is None:
        install_dir = os.path.join(args.gen_dir, "torch", "csrc")
        python_install_dir = os.path.join(
            args.gen_dir, "torch", "testing", "_internal", "generated"
        )
    else:
        install_dir = python_install_dir = args.install_dir
    return GenerateCodeOptions(
        native_yaml=args.native_functions_path,
        tags_yaml=args.tags_path,
        autograd_dir=autograd_dir,
        install_dir=install_dir,
        python_install_dir=python_install_dir,
        run=RunOptions(
            args.gen_dir,
            jobs=default_jobs() if args.jobs is None else args.jobs,
            dry_run=args.dry_run,
        ),
        subset=None if args.subset is None else Subset(args.subset),
        disable_autograd=args.disable_autograd,
        selected_op_list_path=args.selected_op_list_path,
        operators_yaml_path=args.operators_yaml_path,
        gen_lazy_ts_backend=args.gen_lazy_ts_backend,
        per_operator_headers=args.per_operator_headers,
        release=release.release,
        release_notice=release.notice,
    )


TARGET = LazyTarget(
    name="generate-code",
    help="generate what PyTorch's tools/setup_helpers/generate_code.py does, in one run",
    description=(
        "Generate the autograd files, the Python bindings, annotated_fn_args.py, the "
        "ViewMeta classes' Python bindings and (with --gen-lazy-ts-backend) the TorchScript "
        "lazy backend, byte for byte as PyTorch's tools/setup_helpers/generate_code.py does, "
        "with its flags, from one load of the spec and derivatives.yaml."
    ),
    add_arguments=add_arguments,
    options=options_from,
    reader="opgen.targets.generate_code.generate:read",
    emitter="opgen.targets.generate_code.generate:emit",
)
