"""The spec a tool reads: `NATIVE_YAML` and `--tags`, or the bundled example."""

from __future__ import annotations

import argparse
import os

from opgen.frozen import frozen
from opgen.releases import NEWEST, Release
from opgen.spec import LoadOptions, Spec, load_spec


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
        help="the operator spec (native_functions.yaml); default: the bundled example",
    )
    parser.add_argument(
        "--tags",
        metavar="TAGS_YAML",
        help="the tags file; default: tags.yaml beside NATIVE_YAML, if there is one",
    )


def load_named_spec(args: argparse.Namespace, release: Release = NEWEST) -> Spec:
    """The spec the arguments name, read by `release`'s rules, handed to `args.retain`."""
    paths = spec_paths(args.native_yaml, args.tags)
    spec = load_spec(paths.native, paths.tags, LoadOptions(release=release))
    args.retain(spec)
    return spec
