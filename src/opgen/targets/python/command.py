"""`opgen python`: torchgen's `gen_autograd_python`, which upstream calls from Python only.

The four positional arguments are those of `opgen autograd` (and of upstream's
function); the options are opgen's own.
"""

from __future__ import annotations

import argparse
from typing import TextIO

from opgen.jobs import add_jobs_argument, default_jobs
from opgen.targets.python.options import PythonOptions


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
    add("--dry-run", action="store_true", help="write no generated file (-o is still written)")
    add(
        "-o",
        "--output-dependencies",
        metavar="FILE",
        help="also write the list of generated files (a CMake set())",
    )
    add_jobs_argument(parser, "the files")


def options_from(args: argparse.Namespace) -> PythonOptions:
    return PythonOptions(
        native_yaml=args.native_functions,
        tags_yaml=args.tags,
        out=args.out,
        autograd_dir=args.autograd,
        dry_run=args.dry_run,
        output_dependencies=args.output_dependencies,
        jobs=default_jobs() if args.jobs is None else args.jobs,
    )


def run_python(args: argparse.Namespace, out: TextIO, err: TextIO) -> int:
    # Imported here so that the other commands do not pay for the target.
    from opgen.forked import can_fork
    from opgen.output import dependency_files, write_files, write_if_changed
    from opgen.targets.python.generate import generate

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
