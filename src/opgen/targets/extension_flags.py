"""The flags the extension targets (`opgen torch-library`, `opgen mlx`) share.

Both generate a library's sources for its own build, which asks them either
to write the files, or only to list them: `--list-files` (every generated
file), `--list-sources` (the C++ sources to compile, for setup.py or CMake),
`--dry-run` (generate and check everything, write nothing). The three are
mutually exclusive.
"""

from __future__ import annotations

import argparse

from opgen.targets.contract import Listing, RunOptions


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


def run_options(args: argparse.Namespace) -> RunOptions:
    """The run's options from `-o/--output-dir` and the listing flags."""
    listing = Listing.SOURCES if args.list_sources else Listing.FILES if args.list_files else None
    return RunOptions(args.output_dir, dry_run=args.dry_run, listing=listing)
