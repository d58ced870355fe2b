"""The flags of one `opgen mlx` run."""

from __future__ import annotations

from opgen.frozen import frozen
from opgen.targets.contract import RunOptions


@frozen
class MlxOptions:
    spec: str  # the MLX operator spec, either dialect
    run: RunOptions  # -o/--output-dir is its output directory
    module: str | None = None  # the extension module's name; default: the spec's, else the ns
    namespace: str | None = None  # the C++ namespace; default: the spec's
