"""`opgen torch-library`: generate a PyTorch custom-op library from a library spec.

The generator's modules are imported when the command runs, so other commands
do not pay for them.
"""

from __future__ import annotations

import argparse
import os
from typing import TYPE_CHECKING

from opgen.targets.contract import LazyTarget
from opgen.targets.extension_flags import add_listing_arguments, run_options
from opgen.targets.torch_version import add_torch_version_argument, choose_release

if TYPE_CHECKING:
    from opgen.targets.torch_library.library import Library, LibraryPaths, TorchLibraryOptions


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
    add_torch_version_argument(parser)
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
        release=choose_release(args.torch_version, [spec]).release,
    )


def load(args: argparse.Namespace) -> Library:
    from opgen.targets.torch_library.library import load_library

    return load_library(library_paths(args))


def options_from(args: argparse.Namespace) -> TorchLibraryOptions:
    from opgen.targets.torch_library.library import TorchLibraryOptions

    return TorchLibraryOptions(library_paths(args), run_options(args))


TARGET = LazyTarget(
    name="torch-library",
    help="generate a PyTorch custom-op library (C++ and Python) from a library spec",
    description=(
        "Generate a PyTorch custom-op library from a library spec: schemas and registrations, "
        "kernel declarations, a C++ API, Autograd kernels from gradient formulas, and a typed "
        "Python package."
    ),
    add_arguments=add_arguments,
    options=options_from,
    reader="opgen.targets.torch_library.generate:read",
    emitter="opgen.targets.torch_library.generate:emit",
)
