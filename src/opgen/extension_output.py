"""What the extension generators (`opgen torch-library`, `opgen mlx`) share on the command line.

Both generate a library's sources for its own build, which asks them either
to write the files, or only to list them: `--list-files` (every generated
file), `--list-sources` (the C++ sources to compile, for setup.py or CMake),
`--dry-run` (generate and check everything, write nothing). The three are
mutually exclusive.
"""

from __future__ import annotations

import argparse
import os
from collections.abc import Iterable
from typing import TextIO

from opgen.output import OutputSet, WriteReport


def add_listing_arguments(parser: argparse.ArgumentParser) -> None:
    listing = parser.add_mutually_exclusive_group()
    listing.add_argument(
        "--dry-run", action="store_true", help="generate and check everything, write nothing"
    )
    listing.add_argument(
        "--list-files",
        action="store_true",
        help="print the paths of the files it would generate, one per line; write nothing",
    )
    listing.add_argument(
        "--list-sources",
        action="store_true",
        help="print the paths of the generated C++ sources to compile, one per line; write nothing",
    )


def list_or_write(
    args: argparse.Namespace, outputs: OutputSet, sources: Iterable[str], out: TextIO
) -> WriteReport | None:
    """Print the listing the flags ask for (None), or write the files (what was written)."""
    from opgen.output import write_files

    if args.list_sources:
        out.writelines(os.path.join(args.output_dir, s) + "\n" for s in sources)
        return None
    if args.list_files:
        out.writelines(os.path.join(args.output_dir, p) + "\n" for p in outputs.paths())
        return None
    return write_files([outputs], dry_run=args.dry_run)
