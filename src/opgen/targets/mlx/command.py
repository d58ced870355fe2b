"""`opgen mlx`: an MLX extension (nanobind bindings, gradients, stub, CMake) from a spec.

The reader and the generator are imported when the command runs, so other
commands do not pay for them.
"""

from __future__ import annotations

import argparse
from typing import TextIO

from opgen.extension_output import add_listing_arguments, list_or_write


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
    add_listing_arguments(parser)


def run_mlx(args: argparse.Namespace, out: TextIO, err: TextIO) -> int:
    from opgen.spec.mlx.reader import load_mlx_library
    from opgen.targets.mlx.generate import cpp_sources, generate

    library = load_mlx_library(args.spec, namespace=args.namespace, module=args.module)
    args.retain(library)
    outputs = generate(library, args.output_dir, args.spec)
    written = list_or_write(args, outputs, cpp_sources(library), out)
    if written is None:
        return 0
    action = "would write" if args.dry_run else "wrote"
    primitives = sum(op.is_primitive for op in library.operators)
    differentiable = sum(bool(op.grads) for op in library.operators)
    out.write(
        f"{library.module}: {len(library.operators)} operators ({primitives} primitives, "
        f"{differentiable} with gradient formulas): {len(written.files)} files in "
        f"{args.output_dir}, {action} {len(written.changed)}\n"
    )
    return 0
