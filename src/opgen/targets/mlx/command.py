"""`opgen mlx`: an MLX extension (nanobind bindings, gradients, stub, CMake) from a spec.

The reader and the generator are imported when the command runs, so other
commands do not pay for them.
"""

from __future__ import annotations

import argparse
import os
from typing import TextIO


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
    listing = parser.add_mutually_exclusive_group()
    listing.add_argument(
        "--dry-run", action="store_true", help="generate and check everything, write nothing"
    )
    listing.add_argument(
        "--list-files",
        action="store_true",
        help="print the paths of the files it would generate, one per line; write nothing",
    )
    listing.add_argument(
        "--list-sources",
        action="store_true",
        help="print the paths of the generated C++ sources to compile; write nothing",
    )


def run_mlx(args: argparse.Namespace, out: TextIO, err: TextIO) -> int:
    from opgen.output import write_files
    from opgen.spec.mlx.reader import load_mlx_library
    from opgen.targets.mlx.generate import cpp_sources, generate

    library = load_mlx_library(args.spec, namespace=args.namespace, module=args.module)
    args.retain(library)
    outputs = generate(library, args.output_dir, args.spec)
    if args.list_sources:
        out.writelines(os.path.join(args.output_dir, s) + "\n" for s in cpp_sources(library))
        return 0
    if args.list_files:
        out.writelines(os.path.join(args.output_dir, p) + "\n" for p in outputs.paths())
        return 0
    written = write_files([outputs], dry_run=args.dry_run)
    action = "would write" if args.dry_run else "wrote"
    primitives = sum(op.is_primitive for op in library.operators)
    differentiable = sum(bool(op.grads) for op in library.operators)
    out.write(
        f"{library.module}: {len(library.operators)} operators ({primitives} primitives, "
        f"{differentiable} with gradient formulas): {len(written.files)} files in "
        f"{args.output_dir}, {action} {len(written.changed)}\n"
    )
    return 0
