"""`opgen annotated-fn-args`: the command line of torchgen's `gen_annotated_fn_args`.

A drop-in for `python -m torchgen.packaged.autograd.gen_annotated_fn_args
NATIVE TAGS OUT AUTOGRAD_DIR`, which writes OUT/annotated_fn_args.py
(annotated_fn_args.py) from AUTOGRAD_DIR/templates/annotated_fn_args.py.in.
"""

from __future__ import annotations

import argparse
from typing import TextIO

from opgen.targets.autograd_dir import add_input_arguments


def add_arguments(parser: argparse.ArgumentParser) -> None:
    add_input_arguments(parser, autograd_dir="the directory of templates/")
    parser.add_argument("--dry-run", action="store_true", help="write no file")


def run_annotated_fn_args(args: argparse.Namespace, out: TextIO, err: TextIO) -> int:
    # Imported here so that the other commands do not pay for the target.
    from opgen.output import write_files
    from opgen.spec.model import load_spec
    from opgen.targets.autograd.annotated_fn_args import annotated_fn_args_outputs

    spec = load_spec(args.native_functions, args.tags)
    args.retain(spec)
    outputs = annotated_fn_args_outputs(spec, args.out, args.autograd)
    write_files([outputs], dry_run=args.dry_run, make_roots=not args.dry_run)
    return 0
