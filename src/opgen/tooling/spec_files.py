"""The spec a tool reads: `NATIVE_YAML` and `--tags`, or the bundled example; with
`--library` or `--mlx` (`opgen.tooling.dialects`), `NATIVE_YAML` is that dialect's spec."""

from __future__ import annotations

import argparse
import os
from typing import TextIO

from opgen.frozen import frozen
from opgen.releases import NEWEST, Release
from opgen.spec import LoadOptions, Spec, load_spec
from opgen.targets.contract import UsageError
from opgen.targets.torch_version import choose_release
from opgen.tooling.dialects import read_as


@frozen
class SpecPaths:
    native: str
    tags: str | None


def bundled_example() -> SpecPaths:
    """The example spec shipped with opgen."""
    # Package data, installed as plain files. (`os.path`: importing pathlib would
    # cost every command a few milliseconds.)
    root = os.path.join(os.path.dirname(os.path.dirname(__file__)), "examples")
    return SpecPaths(os.path.join(root, "native_functions.yaml"), os.path.join(root, "tags.yaml"))


def shown_name(args: argparse.Namespace, paths: SpecPaths) -> str:
    """How a summary names the spec: its path, and that it is the bundled example when
    no spec was named."""
    return paths.native + (" (the bundled example)" if args.native_yaml is None else "")


def spec_paths(native: str | None, tags: str | None) -> SpecPaths:
    """The spec to read: the bundled example if none is named; tags.yaml beside it by default."""
    if native is None:
        example = bundled_example()
        return SpecPaths(example.native, tags or example.tags)
    if tags is None:
        beside = os.path.join(os.path.dirname(native), "tags.yaml")
        tags = beside if os.path.isfile(beside) else None
    return SpecPaths(native, tags)


def add_spec_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "native_yaml",
        nargs="?",
        metavar="NATIVE_YAML",
        help="the operator spec (native_functions.yaml; with --library or --mlx, that kind of "
        "spec); default: the bundled example",
    )
    parser.add_argument(
        "--tags",
        metavar="TAGS_YAML",
        help="the tags file; default: tags.yaml beside NATIVE_YAML, if there is one",
    )


def load_named_spec(args: argparse.Namespace, command: str, release: Release = NEWEST) -> Spec:
    """The PyTorch spec the arguments name, read by `release`'s rules, handed to
    `args.retain`; a library or MLX spec is told as such (`read_as`)."""
    paths = spec_paths(args.native_yaml, args.tags)
    options = LoadOptions(release=release)
    spec = read_as(
        "pytorch", paths.native, command, lambda: load_spec(paths.native, paths.tags, options)
    )
    args.retain(spec)
    return spec


def named_release(args: argparse.Namespace, command: str, err: TextIO) -> Release | None:
    """The torch release whose rules the spec is read by; None after a usage error.

    `--torch-version`, else the release of the tree NATIVE_YAML lives in, as the
    drop-in commands choose it (`opgen.targets.torch_version`); the bundled example
    is read by the newest release's rules. Notes and errors go to `err`.
    """
    if args.torch_version is None and args.native_yaml is None:
        return NEWEST
    try:
        choice = choose_release(args.torch_version, [args.native_yaml])
    except UsageError as e:
        err.writelines(f"opgen {command}: error: {problem}\n" for problem in e.problems)
        return None
    if choice.notice is not None:
        err.write(choice.notice + "\n")
    return choice.release
