"""The dialect of the spec language a tool reads, the flags that name it, and telling a
file read by the wrong dialect's rules.

Every tool reads three dialects: PyTorch's own (`native_functions.yaml`, the default),
a custom-op library's (`--library`: `opgen torch-library`'s, operators in the author's
namespace, with `doc:`, `fake:` and `python_dispatch:`) and an MLX extension's (`--mlx`:
`opgen mlx`'s, in either of its dialects). The spec is always the positional argument.

A file read by the rules of another dialect fails with a cascade of errors about that
dialect's keys and conventions (`unknown key 'doc'`, `inplace operator ... must return
self`). When reading fails, and only then (a run that reads its spec pays nothing, not
even the import), `read_as` asks `opgen.tooling.recognition` whether the file's entries
show another dialect, and if so reports one located error naming the flag that reads it
instead.
"""

from __future__ import annotations

import argparse
from collections.abc import Callable
from typing import Literal, TypeVar

from opgen.diagnostics import SpecError

Dialect = Literal["pytorch", "library", "mlx"]
T = TypeVar("T")


def add_dialect_arguments(parser: argparse.ArgumentParser, which: str) -> None:
    """`--library` and `--mlx`, switches that contradict each other; `which` says what
    they apply to ("the spec", "both specs", ...)."""
    group = parser.add_mutually_exclusive_group()
    group.add_argument(
        "--library",
        action="store_true",
        help=f"read {which} as a custom-op library spec, as `opgen torch-library` does",
    )
    group.add_argument(
        "--mlx",
        action="store_true",
        help=f"read {which} as an MLX extension spec (either dialect), as `opgen mlx` does",
    )


def dialect_of(args: argparse.Namespace) -> Dialect:
    if args.library:
        return "library"
    return "mlx" if args.mlx else "pytorch"


def needs_spec(dialect: Dialect) -> str:
    """The usage error of a dialect's flag without the spec: `--mlx needs the MLX spec`."""
    return f"--{dialect} needs the {'library' if dialect == 'library' else 'MLX'} spec"


def read_as(dialect: Dialect, path: str, command: str, read: Callable[[], T]) -> T:
    """`read()`, which reads the spec at `path` as `dialect`; if it fails and the file is
    written in another dialect, one located error naming the flag that reads it."""
    try:
        return read()
    except SpecError as error:
        from opgen.tooling.recognition import misread

        better = misread(error, path, dialect, command)
        if better is None:
            raise
        raise better from None
