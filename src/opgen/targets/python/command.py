"""`opgen python`: torchgen's `gen_autograd_python`, which upstream calls from Python only.

The four positional arguments are those of `opgen autograd` (and of upstream's
function); the options are opgen's own.
"""

from __future__ import annotations

import argparse
from typing import TextIO

from opgen.targets.autograd_dir import (
    add_input_arguments,
    add_write_arguments,
    option_fields,
    write_outputs,
)
from opgen.targets.python.options import PythonOptions


def add_arguments(parser: argparse.ArgumentParser) -> None:
    add_input_arguments(
        parser, autograd_dir="the directory of derivatives.yaml, deprecated.yaml and templates/"
    )
    add_write_arguments(parser)


def options_from(args: argparse.Namespace) -> PythonOptions:
    return PythonOptions(**option_fields(args))


def run_python(args: argparse.Namespace, out: TextIO, err: TextIO) -> int:
    # Imported here so that the other commands do not pay for the target.
    from opgen.targets.python.generate import generate

    options = options_from(args)
    run = generate(options)
    args.retain(run)
    write_outputs(options, [run.outputs])
    return 0
