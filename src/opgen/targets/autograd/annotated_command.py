"""`opgen annotated-fn-args`: the command line of torchgen's `gen_annotated_fn_args`.

A drop-in for `python -m torchgen.packaged.autograd.gen_annotated_fn_args
NATIVE TAGS OUT AUTOGRAD_DIR`, which writes OUT/annotated_fn_args.py
(annotated_fn_args.py) from AUTOGRAD_DIR/templates/annotated_fn_args.py.in.
"""

from __future__ import annotations

import argparse

from opgen.targets.autograd_dir import AutogradDirOptions, add_input_arguments, option_fields
from opgen.targets.contract import LazyTarget
from opgen.targets.torch_version import add_torch_version_argument


def add_arguments(parser: argparse.ArgumentParser) -> None:
    add_input_arguments(parser, autograd_dir="the directory of templates/")
    parser.add_argument("--dry-run", action="store_true", help="write no file")
    add_torch_version_argument(parser)


def options_from(args: argparse.Namespace) -> AutogradDirOptions:
    return AutogradDirOptions(**option_fields(args))


TARGET = LazyTarget(
    name="annotated-fn-args",
    help="generate annotated_fn_args.py, as torchgen's gen_annotated_fn_args does",
    description=(
        "Generate annotated_fn_args.py (the arguments of every Python binding, for PyTorch's "
        "__torch_function__ tests), byte for byte as "
        "`python -m torchgen.packaged.autograd.gen_annotated_fn_args` does."
    ),
    add_arguments=add_arguments,
    options=options_from,
    reader="opgen.targets.autograd.annotated_fn_args:read",
    emitter="opgen.targets.autograd.annotated_fn_args:emit",
)
