"""`--torch-version`: which torch release a drop-in run generates for.

Every drop-in command (and `opgen check`) takes `--torch-version X.Y[.Z]`. Without
it, the release is the first of:

1. the `version.txt` of the PyTorch checkout the inputs live in (the first directory
   at or above them that holds one, beside `aten/` or `torchgen/`);
2. the torch distribution the inputs were unpacked from, when they live in an
   installed or unzipped wheel: its `torch-X.dist-info` or `torch/version.py`
   beside `torchgen/`;
3. the installed torch's distribution metadata (read without importing torch);
4. the newest supported release, with a note on stderr saying so.

A release newer than the newest supported one (a checkout of main) generates as the
newest, with a warning naming both; one older than the oldest is a usage error.
"""

from __future__ import annotations

import argparse
import os
import re
from collections.abc import Iterable

from opgen.frozen import frozen
from opgen.releases import NEWEST, OLDEST, SUPPORTED, Release, parse_release
from opgen.targets.contract import UsageError


def add_torch_version_argument(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--torch-version",
        "--torch_version",
        metavar="X.Y[.Z]",
        help=f"the torch release to generate for, {OLDEST} to {NEWEST} (default: the "
        "release of the PyTorch checkout or wheel the inputs are in, else the installed "
        "torch's)",
    )


@frozen
class ReleaseChoice:
    """The release a run generates for, and what to tell the user about the choice."""

    release: Release
    notice: str | None = None  # printed on stderr before the run


def choose_release(flag: str | None, inputs: Iterable[str | None]) -> ReleaseChoice:
    """The release from `--torch-version`, else from where `inputs` (paths) live."""
    if flag is not None:
        release = parse_release(flag)
        if release is None or not re.fullmatch(r"\d+\.\d+(\.\d+)?([.+a-z].*)?", flag):
            raise UsageError(f"--torch-version: '{flag}' is not a release (X.Y or X.Y.Z)")
        return _supported(release, flag, "--torch-version")
    for path in inputs:
        if path is None:
            continue
        found = tree_version(path)
        if found is not None:
            version, where = found
            release = parse_release(version)
            if release is not None:
                return _supported(release, version, where)
    version = _installed_torch()
    release = parse_release(version)
    if release is not None:
        return _supported(release, version, "the installed torch")
    return ReleaseChoice(
        NEWEST,
        f"opgen: note: no torch release found (no --torch-version, no version.txt or torch "
        f"wheel around the inputs, no installed torch); generating for torch {NEWEST}, "
        "the newest supported",
    )


def _supported(release: Release, version: str, where: str) -> ReleaseChoice:
    if release.key < OLDEST.key:
        raise UsageError(
            f"torch {version} (from {where}) is older than the releases opgen supports: "
            f"{', '.join(map(str, SUPPORTED))}"
        )
    if release.key > NEWEST.key:
        return ReleaseChoice(
            NEWEST,
            f"opgen: warning: torch {version} (from {where}) is newer than the newest "
            f"release opgen knows, {NEWEST}; generating as {NEWEST}",
        )
    return ReleaseChoice(release)


def tree_version(path: str) -> tuple[str, str] | None:
    """The torch version of the checkout or wheel that `path` lives in, and the file
    that says so; None when `path` is in neither."""
    directory = os.path.abspath(path)
    if not os.path.isdir(directory):
        directory = os.path.dirname(directory)
    while True:
        found = _version_in(directory)
        if found is not None:
            return found
        parent = os.path.dirname(directory)
        if parent == directory:
            return None
        directory = parent


def _version_in(directory: str) -> tuple[str, str] | None:
    if not os.path.isdir(os.path.join(directory, "torchgen")) and not os.path.isdir(
        os.path.join(directory, "aten")
    ):
        return None
    version_txt = os.path.join(directory, "version.txt")
    if os.path.isfile(version_txt):
        with open(version_txt, encoding="utf-8") as f:
            return f.read().strip(), version_txt
    version_py = os.path.join(directory, "torch", "version.py")
    if os.path.isfile(version_py):
        with open(version_py, encoding="utf-8") as f:
            match = re.search(r"^__version__\s*=\s*['\"]([^'\"]+)['\"]", f.read(), re.M)
        if match:
            return match[1], version_py
    try:
        names = os.listdir(directory)
    except OSError:
        return None
    for name in sorted(names):
        if name.startswith("torch-") and name.endswith(".dist-info"):
            return name[len("torch-") : -len(".dist-info")], os.path.join(directory, name)
    return None


def _installed_torch() -> str:
    """The installed torch's version from its distribution metadata, or ''."""
    # Imported here: importlib.metadata costs a run tens of milliseconds, and most
    # runs find their release without it.
    from importlib import metadata

    try:
        return metadata.version("torch")
    except metadata.PackageNotFoundError:
        return ""
