"""`opgen backend`: the command line of `python -m torchgen.gen_backend_stubs`, flag for flag.

Upstream reads the spec it ships (`torchgen/packaged/ATen`, or `aten/src/ATen`
in a PyTorch checkout); opgen reads the installed torchgen's packaged ATen
the same way, without importing it, or the ATen directory `--source-path`
names (see `generate`). `--dry-run` takes an optional value, as upstream's
`type=bool` flag does: any non-empty value, `False` included, means a dry run.
"""

from __future__ import annotations

import argparse

from opgen.jobs import add_jobs_argument, default_jobs
from opgen.targets.backend.options import BackendOptions
from opgen.targets.contract import LazyTarget, RunOptions
from opgen.targets.torch_version import add_torch_version_argument, choose_release


def add_common_arguments(parser: argparse.ArgumentParser) -> None:
    """The flags `opgen backend` and `opgen lazy` share: upstream's, and --source-path."""
    add = parser.add_argument
    add(
        "-s",
        "--source-yaml",
        "--source_yaml",
        required=True,
        metavar="YAML",
        help="the backend YAML (backend:, cpp_namespace:, supported:, ...)",
    )
    add("-o", "--output-dir", "--output_dir", required=True, metavar="DIR", help="output directory")
    add(
        "--dry-run",
        "--dry_run",
        nargs="?",
        const=True,
        default=False,
        type=lambda value: bool(value),
        metavar="VALUE",
        help="write nothing (as upstream, any non-empty VALUE counts, even False)",
    )
    add(
        "--impl-path",
        "--impl_path",
        metavar="FILE",
        help="check that this C++ file defines every kernel the YAML lists",
    )
    add(
        "--source-path",
        metavar="DIR",
        help="the ATen directory: native/native_functions.yaml, native/tags.yaml and "
        "templates/ (default: the installed torchgen's packaged ATen)",
    )
    add_torch_version_argument(parser)
    add_jobs_argument(parser, "the operators' code")  # opgen's own: not a flag of torchgen


def add_arguments(parser: argparse.ArgumentParser) -> None:
    add_common_arguments(parser)


def backend_options(args: argparse.Namespace) -> BackendOptions:
    """The flags `opgen backend` and `opgen lazy` share, as options."""
    # Without --source-path the spec is the installed torchgen's, whose release its
    # wheel's files say, which is quicker than asking the installed distributions.
    source = args.source_path
    if source is None and args.torch_version is None:
        from opgen.installed_torchgen import packaged_aten

        source = packaged_aten()
    release = choose_release(args.torch_version, [source, args.source_yaml])
    return BackendOptions(
        source_yaml=args.source_yaml,
        run=RunOptions(args.output_dir, dry_run=args.dry_run),
        impl_path=args.impl_path,
        source_path=args.source_path,
        jobs=default_jobs() if args.jobs is None else args.jobs,
        release=release.release,
        release_notice=release.notice,
    )


TARGET = LazyTarget(
    name="backend",
    help="generate an out-of-tree backend's registrations, as gen_backend_stubs does",
    description=(
        "Generate an out-of-tree backend's kernel class header and dispatcher registrations "
        "from its backend YAML, byte for byte as `python -m torchgen.gen_backend_stubs` does, "
        "with the same flags."
    ),
    add_arguments=add_arguments,
    options=backend_options,
    reader="opgen.targets.backend.generate:read",
    emitter="opgen.targets.backend.generate:emit",
)
