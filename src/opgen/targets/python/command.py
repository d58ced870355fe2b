"""`opgen python`: torchgen's `gen_autograd_python`, which upstream calls from Python only.

The four positional arguments are those of `opgen autograd` (and of upstream's
function); the options are opgen's own. `--view-meta-bindings DIR` also writes
`ViewMetaClassesPythonBinding.cpp` into DIR, as PyTorch's `generate_code.py` does
with torchgen's `gen_functionalization_view_meta_classes`.
"""

from __future__ import annotations

import argparse

from opgen.targets.autograd_dir import (
    add_input_arguments,
    add_write_arguments,
    option_fields,
)
from opgen.targets.contract import LazyTarget
from opgen.targets.python.options import PythonOptions


def add_arguments(parser: argparse.ArgumentParser) -> None:
    add_input_arguments(
        parser, autograd_dir="the directory of derivatives.yaml, deprecated.yaml and templates/"
    )
    parser.add_argument(
        "--view-meta-bindings",
        "--view_meta_bindings",
        metavar="DIR",
        help="also write ViewMetaClassesPythonBinding.cpp (the ViewMeta classes' Python "
        "bindings) into DIR, from the templates/ of the ATen directory the spec is in",
    )
    add_write_arguments(parser)


def options_from(args: argparse.Namespace) -> PythonOptions:
    return PythonOptions(**option_fields(args), view_meta_bindings=args.view_meta_bindings)


TARGET = LazyTarget(
    name="python",
    help="generate the Python bindings, as torchgen's gen_autograd_python does",
    description=(
        "Generate the Python bindings (python_functions, python_torch_functions, "
        "python_variable_methods, python_<module>_functions, python_return_types, "
        "python_enum_tag) from the spec, derivatives.yaml and deprecated.yaml, byte for byte "
        "as torchgen's gen_autograd_python does."
    ),
    add_arguments=add_arguments,
    options=options_from,
    reader="opgen.targets.python.generate:read",
    emitter="opgen.targets.python.generate:emit",
)
