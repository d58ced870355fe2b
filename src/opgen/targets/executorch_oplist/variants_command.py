"""`opgen executorch-op-variants`: the command line of ExecuTorch's
`python -m executorch.codegen.tools.gen_selected_op_variants`, flag for flag.

The second step of a dtype-selective build, kept a command of its own as upstream's
is, so that a build replaces each of its two commands by one of opgen's: it reads the
`selected_operators.yaml` that `opgen executorch-oplist` (or gen_oplist) wrote and
writes `selected_op_variants.h` into `--output-dir`. Upstream's flags, in both the
spellings it accepts, and no others (ExecuTorch's CMake passes the abbreviation
`--yaml-file=`, which argparse completes).
"""

from __future__ import annotations

import argparse

from opgen.targets.contract import LazyTarget, RunOptions
from opgen.targets.executorch_oplist.options import OpVariantsOptions


def add_arguments(parser: argparse.ArgumentParser) -> None:
    add = parser.add_argument
    add(
        "--yaml-file-path",
        "--yaml_file_path",
        required=True,
        metavar="YAML",
        help="the selected_operators.yaml to read",
    )
    add(
        "--output-dir",
        "--output_dir",
        required=True,
        metavar="DIR",
        help="where to write selected_op_variants.h",
    )


def op_variants_options(args: argparse.Namespace) -> OpVariantsOptions:
    return OpVariantsOptions(yaml_file_path=args.yaml_file_path, run=RunOptions(args.output_dir))


TARGET = LazyTarget(
    name="executorch-op-variants",
    help="write selected_op_variants.h for a dtype-selective ExecuTorch build, as "
    "gen_selected_op_variants does",
    description=(
        "Write selected_op_variants.h (which dtypes of each operator's kernels to build) from "
        "a selected_operators.yaml, byte for byte as "
        "`python -m executorch.codegen.tools.gen_selected_op_variants` does, with the same "
        "flags."
    ),
    add_arguments=add_arguments,
    options=op_variants_options,
    reader="opgen.targets.executorch_oplist.generate:read_op_variants",
    emitter="opgen.targets.executorch_oplist.generate:emit_op_variants",
)
