"""`opgen autograd`: the command line of `python -m torchgen.packaged.autograd.gen_autograd`.

The four positional arguments are upstream's; the options are opgen's own or
what PyTorch's build passes to the generator as function arguments (an
operator selection, `disable_autograd`).
"""

from __future__ import annotations

import argparse
from typing import TextIO

from opgen.jobs import add_jobs_argument, default_jobs
from opgen.targets.autograd.options import AutogradOptions


def add_arguments(parser: argparse.ArgumentParser) -> None:
    add = parser.add_argument
    add("native_functions", metavar="NATIVE", help="native_functions.yaml")
    add("tags", metavar="TAGS", help="tags.yaml")
    add("out", metavar="OUT", help="output directory")
    add(
        "autograd",
        metavar="AUTOGRAD_DIR",
        help="the directory of derivatives.yaml, deprecated.yaml and templates/",
    )
    add(
        "--op-selection-yaml-path",
        "--op_selection_yaml_path",
        metavar="FILE",
        help="generate autograd kernels only for the operators a selective-build YAML "
        "selects for training",
    )
    add(
        "--disable-autograd",
        "--disable_autograd",
        action="store_true",
        help="generate no VariableType, ADInplaceOrViewType or TraceType sources",
    )
    add("--dry-run", action="store_true", help="write no generated file (-o is still written)")
    add(
        "-o",
        "--output-dependencies",
        metavar="FILE",
        help="also write the list of generated files (a CMake set())",
    )
    add_jobs_argument(parser, "the files")


def options_from(args: argparse.Namespace) -> AutogradOptions:
    return AutogradOptions(
        native_yaml=args.native_functions,
        tags_yaml=args.tags,
        out=args.out,
        autograd_dir=args.autograd,
        op_selection_yaml_path=args.op_selection_yaml_path,
        disable_autograd=args.disable_autograd,
        dry_run=args.dry_run,
        output_dependencies=args.output_dependencies,
        jobs=default_jobs() if args.jobs is None else args.jobs,
    )


def run_autograd(args: argparse.Namespace, out: TextIO, err: TextIO) -> int:
    # Imported here so that the other commands do not pay for the target.
    from opgen.forked import can_fork
    from opgen.output import dependency_files, write_files, write_if_changed
    from opgen.targets.autograd.generate import generate

    options = options_from(args)
    run = generate(options)
    args.retain(run)
    jobs = options.jobs if can_fork() else 1
    write_files([run.outputs], dry_run=options.dry_run, make_roots=not options.dry_run, jobs=jobs)
    if options.output_dependencies:
        lists = dependency_files(options.output_dependencies, [("", run.outputs)])
        for path, text in lists.items():
            write_if_changed(path, text)
    return 0
