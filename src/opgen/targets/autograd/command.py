"""`opgen autograd`: the command line of `python -m torchgen.packaged.autograd.gen_autograd`.

The four positional arguments are upstream's; the options are opgen's own or
what PyTorch's build passes to the generator as function arguments (an
operator selection, `disable_autograd`).
"""

from __future__ import annotations

import argparse

from opgen.targets.autograd.options import AutogradOptions
from opgen.targets.autograd_dir import (
    add_input_arguments,
    add_write_arguments,
    option_fields,
)
from opgen.targets.contract import LazyTarget


def add_arguments(parser: argparse.ArgumentParser) -> None:
    add_input_arguments(
        parser, autograd_dir="the directory of derivatives.yaml, deprecated.yaml and templates/"
    )
    add = parser.add_argument
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
    add_write_arguments(parser)


def options_from(args: argparse.Namespace) -> AutogradOptions:
    return AutogradOptions(
        **option_fields(args),
        op_selection_yaml_path=args.op_selection_yaml_path,
        disable_autograd=args.disable_autograd,
    )


TARGET = LazyTarget(
    name="autograd",
    help="generate the autograd files, as torchgen's gen_autograd does",
    description=(
        "Generate the autograd files (Functions, VariableType, ADInplaceOrViewType, TraceType, "
        "ViewFuncs, variable_factories) from derivatives.yaml and the spec, byte for byte as "
        "`python -m torchgen.packaged.autograd.gen_autograd` does."
    ),
    add_arguments=add_arguments,
    options=options_from,
    reader="opgen.targets.autograd.generate:read",
    emitter="opgen.targets.autograd.generate:emit",
)
