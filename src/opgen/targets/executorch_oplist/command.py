"""`opgen executorch-oplist`: the command line of ExecuTorch's
`python -m executorch.codegen.tools.gen_oplist`, flag for flag.

The flags are upstream's, in the spellings it accepts (only `--include-all-operators`
has two), and no others, so that the abbreviations argparse allows upstream (`--model`,
`--output`) mean the same here. `--output_path` names the file, or a directory to write
`selected_operators.yaml` into. `--root_ops` and `--ops_dict` are read here, so a
malformed one is a usage error (status 2); the files they name are read by `generate`.
"""

from __future__ import annotations

import argparse
import os

from opgen.targets.contract import LazyTarget, RunOptions
from opgen.targets.executorch_oplist.options import (
    OplistOptions,
    parse_ops_dict,
    parse_root_ops,
)

DEFAULT_NAME = "selected_operators.yaml"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    add = parser.add_argument
    add(
        "--output_path",
        required=True,
        metavar="PATH",
        help=f"the file to write, or a directory to write {DEFAULT_NAME} into",
    )
    add("--model_file_path", metavar="PTE", help="an ExecuTorch program (.pte, or bundled)")
    add(
        "--ops_schema_yaml_path",
        metavar="YAML",
        help="a kernel YAML (functions.yaml, custom_ops.yaml) whose operators to select",
    )
    add("--root_ops", metavar="OPS", help="operator names, separated by commas (else spaces)")
    add(
        "--ops_dict",
        metavar="JSON",
        help='operators with their dtypes or kernel keys: {"aten::add.out": ["Float"]}',
    )
    add(
        "--include-all-operators",
        "--include_all_operators",
        action="store_true",
        help="say that the build is not selective (the operators are listed all the same)",
    )


def oplist_options(args: argparse.Namespace) -> OplistOptions:
    output_dir, output_name = output_file(args.output_path)
    return OplistOptions(
        output_name=output_name,
        run=RunOptions(output_dir),
        model_file_path=args.model_file_path or None,
        ops_schema_yaml_path=args.ops_schema_yaml_path or None,
        root_ops=parse_root_ops(args.root_ops) if args.root_ops else (),
        ops_dict=parse_ops_dict(args.ops_dict) if args.ops_dict else (),
        include_all_operators=args.include_all_operators,
    )


def output_file(output_path: str) -> tuple[str, str]:
    """The directory and name of the file `--output_path` names (a directory, or a path
    ending in a separator: the default name in it)."""
    directory, name = os.path.split(output_path)
    if not name or os.path.isdir(output_path):  # `out/` is a directory, made if need be
        return output_path or ".", DEFAULT_NAME
    return directory or ".", name


TARGET = LazyTarget(
    name="executorch-oplist",
    help="select operators for an ExecuTorch build from a model, names or a kernel YAML, "
    "as gen_oplist does",
    description=(
        "Write selected_operators.yaml for an ExecuTorch selective build, byte for byte as "
        "`python -m executorch.codegen.tools.gen_oplist` does, with the same flags: the "
        "operators of a model (.pte) with the dtypes and dim orders of its kernel calls, "
        "of a kernel YAML, or named in --root_ops and --ops_dict."
    ),
    add_arguments=add_arguments,
    options=oplist_options,
    reader="opgen.targets.executorch_oplist.generate:read",
    emitter="opgen.targets.executorch_oplist.generate:emit",
)
