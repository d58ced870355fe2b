"""The `-j N` option of the commands that render in forked workers (`opgen.forked`)."""

from __future__ import annotations

import argparse
import os

# Beyond a few processes, forking and collecting results cost more than they save.
MAX_DEFAULT_JOBS = 4


def add_jobs_argument(parser: argparse.ArgumentParser, what: str) -> None:
    """Add `-j/--jobs N` (None when not given: see `default_jobs`); `what` is rendered."""
    parser.add_argument(
        "-j",
        "--jobs",
        type=positive_int,
        default=None,
        metavar="N",
        help=f"render {what} in N processes (default: one per available core, at most "
        f"{MAX_DEFAULT_JOBS}); the output does not depend on it",
    )


def default_jobs() -> int:
    """One process per core this process may run on, at most `MAX_DEFAULT_JOBS`."""
    affinity = getattr(os, "sched_getaffinity", None)
    cores = len(affinity(0)) if affinity is not None else os.cpu_count() or 1
    return max(1, min(cores, MAX_DEFAULT_JOBS))


def positive_int(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        value = 0
    if value < 1:
        raise argparse.ArgumentTypeError(f"expected a positive integer, not {text!r}")
    return value
