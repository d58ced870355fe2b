"""`opgen torch-library`: generate a PyTorch custom-op library from a library spec.

The generator's modules are imported when the command runs, so other commands
do not pay for them.
"""

from __future__ import annotations

import argparse
import os
from typing import TYPE_CHECKING, TextIO

from opgen.diagnostics import write_diagnostics
from opgen.extension_output import add_listing_arguments, list_or_write

if TYPE_CHECKING:
    from opgen.targets.torch_library.library import Library, LibraryPaths


def add_library_arguments(parser: argparse.ArgumentParser) -> None:
    """The inputs of a library, shared with `opgen check --library`."""
    add = parser.add_argument
    add(
        "--derivatives",
        metavar="DERIVATIVES_YAML",
        help="gradient formulas (derivatives.yaml); for a library spec the default is "
        "derivatives.yaml beside the spec, if there is one",
    )
    add(
        "--python-path",
        action="append",
        default=[],
        metavar="DIR",
        help="where the modules of Python kernels and fake kernels are found "
        "(repeatable; default: the spec's directory)",
    )
    add("--package", metavar="NAME", help="the Python package; default: the namespace")


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("native_yaml", metavar="SPEC", help="the library spec")
    parser.add_argument(
        "--tags", metavar="TAGS_YAML", help="the tags file; default: tags.yaml beside SPEC"
    )
    add_library_arguments(parser)
    parser.add_argument(
        "-o", "--output-dir", required=True, metavar="DIR", help="where to write the files"
    )
    add_listing_arguments(parser)


def beside(spec: str, given: str | None, name: str) -> str | None:
    if given is not None:
        return given
    path = os.path.join(os.path.dirname(spec), name)
    return path if os.path.isfile(path) else None


def library_paths(args: argparse.Namespace) -> LibraryPaths:
    from opgen.targets.torch_library.library import LibraryPaths

    spec = args.native_yaml
    return LibraryPaths(
        spec=spec,
        tags=beside(spec, args.tags, "tags.yaml"),
        derivatives=beside(spec, args.derivatives, "derivatives.yaml"),
        package=args.package,
        python_path=tuple(args.python_path),
    )


def summary(library: Library) -> str:
    kinds = "C++ and Python" if library.compiled else "Python only"
    return (
        f"{library.namespace}: {len(library.operators)} operators, "
        f"{len(library.derivatives)} with gradient formulas ({kinds})"
    )


def load(args: argparse.Namespace) -> Library:
    from opgen.targets.torch_library.library import load_library

    return load_library(library_paths(args))


def run(args: argparse.Namespace, out: TextIO, err: TextIO) -> int:
    from opgen.targets.torch_library.generate import cpp_sources, generate

    library = load(args)
    write_diagnostics(library.warnings, err)
    outputs = generate(library, args.output_dir, args.native_yaml)
    written = list_or_write(args, outputs, cpp_sources(library), out)
    if written is None:
        return 0
    action = "would write" if args.dry_run else "wrote"
    out.write(
        f"{summary(library)}: {len(written.files)} files in {args.output_dir}, "
        f"{action} {len(written.changed)}\n"
    )
    return 0
