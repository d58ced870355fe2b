"""`opgen aten-mlx`: ATen operators on MLX from torch's spec and a lowering spec.

The reader and the generator are imported when the command runs.
"""

from __future__ import annotations

import argparse

from opgen.targets.aten_mlx.options import AtenMlxOptions
from opgen.targets.contract import LazyTarget, UsageError
from opgen.targets.extension_flags import add_listing_arguments, run_options
from opgen.targets.torch_version import add_torch_version_argument, choose_release


def add_arguments(parser: argparse.ArgumentParser) -> None:
    add = parser.add_argument
    add("lowering", nargs="+", metavar="LOWERING", help="the lowering spec's files, read together")
    add("-o", "--output-dir", required=True, metavar="DIR", help="where to write the files")
    add(
        "-s",
        "--source-path",
        metavar="ATEN_DIR",
        help="the ATen directory whose native/native_functions.yaml and native/tags.yaml are "
        "read (default: the installed torchgen's packaged copy)",
    )
    add("--module", metavar="NAME", help="the Python package's name (default: the spec's)")
    add(
        "--shards",
        type=int,
        default=4,
        metavar="N",
        help="spread the operators' C++ over N files, compiled in parallel (default: 4)",
    )
    add_torch_version_argument(parser)
    add_listing_arguments(parser)


def options_from(args: argparse.Namespace) -> AtenMlxOptions:
    if args.shards < 1:
        raise UsageError(f"--shards: at least 1, not {args.shards}")
    source = args.source_path
    if source is None:
        from opgen.installed_torchgen import packaged_aten

        source = packaged_aten()
        if source is None:
            raise UsageError(
                "torch's spec was not found: torchgen is not installed; name the ATen "
                "directory with -s/--source-path"
            )
    release = choose_release(args.torch_version, [source])
    return AtenMlxOptions(
        tuple(args.lowering),
        run_options(args),
        source_path=source,
        module=args.module,
        shards=args.shards,
        release=release.release,
        release_notice=release.notice,
    )


TARGET = LazyTarget(
    name="aten-mlx",
    help="generate PyTorch's ATen operators on MLX from torch's spec and a lowering spec",
    description=(
        "Generate a Python package of PyTorch's ATen operators on MLX: one function per "
        "lowered overload (a nanobind extension), OPERATORS, call(), a runtime that loads "
        "and runs torch.export programs, and a type stub, from torch's native_functions.yaml "
        "and a lowering spec."
    ),
    add_arguments=add_arguments,
    options=options_from,
    reader="opgen.targets.aten_mlx.generate:read",
    emitter="opgen.targets.aten_mlx.generate:emit",
)
