"""`opgen mlx`: an MLX extension (nanobind bindings, gradients, stub, CMake) from a spec.

The reader and the generator are imported when the command runs, so other
commands do not pay for them.
"""

from __future__ import annotations

import argparse

from opgen.targets.contract import LazyTarget
from opgen.targets.extension_flags import add_listing_arguments, run_options
from opgen.targets.mlx.options import MlxOptions

NO_DERIVATIVES_HELP = "read no derivatives file, not even the derivatives.yaml beside the spec"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    add = parser.add_argument
    add("spec", metavar="SPEC", help="the MLX operator spec (either dialect)")
    add("-o", "--output-dir", required=True, metavar="DIR", help="where to write the files")
    add(
        "--module",
        metavar="NAME",
        help="the Python extension module's name (its last component, inside a package); "
        "default: the spec's, else the namespace",
    )
    add("--namespace", metavar="NS", help="the C++ namespace; default: the spec's")
    derivatives = parser.add_mutually_exclusive_group()
    derivatives.add_argument(
        "--derivatives",
        metavar="DERIVATIVES_YAML",
        help="the gradient formulas' file; default: derivatives.yaml beside the spec, if any",
    )
    derivatives.add_argument("--no-derivatives", action="store_true", help=NO_DERIVATIVES_HELP)
    add_listing_arguments(parser)


def options_from(args: argparse.Namespace) -> MlxOptions:
    return MlxOptions(
        args.spec,
        run_options(args),
        module=args.module,
        namespace=args.namespace,
        derivatives=args.derivatives,
        no_derivatives=args.no_derivatives,
    )


TARGET = LazyTarget(
    name="mlx",
    help="generate an MLX extension (nanobind bindings with gradients) from an MLX spec",
    description=(
        "Generate an MLX extension module from an MLX operator spec: the C++ operators "
        "(custom_vjp from gradient formulas, Primitive classes for kernels), nanobind "
        "bindings, a type stub and a CMake function that builds them."
    ),
    add_arguments=add_arguments,
    options=options_from,
    reader="opgen.targets.mlx.generate:read",
    emitter="opgen.targets.mlx.generate:emit",
)
