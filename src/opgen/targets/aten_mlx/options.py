"""The flags of one `opgen aten-mlx` run."""

from __future__ import annotations

from opgen.frozen import frozen
from opgen.releases import NEWEST, Release
from opgen.targets.contract import RunOptions


@frozen
class AtenMlxOptions:
    lowering: tuple[str, ...]  # the lowering spec's files, read together in order
    run: RunOptions  # -o/--output-dir is its output directory
    # The ATen directory holding native/native_functions.yaml and native/tags.yaml; default:
    # the installed torchgen's packaged copy.
    source_path: str | None = None
    module: str | None = None  # the Python package's name; default: the spec's, else aten_mlx
    shards: int = 4  # the C++ files the functions are spread over, compiled in parallel
    release: Release = NEWEST  # the torch release whose spec rules apply
    release_notice: str | None = None  # how the release was chosen, for stderr
