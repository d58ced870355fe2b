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
    # The gradient formulas' file (--derivatives); default: derivatives.yaml beside the
    # spec, if there is one, unless `no_derivatives` (--no-derivatives): none at all.
    derivatives: str | None = None
    no_derivatives: bool = False

    def __post_init__(self) -> None:
        if self.derivatives is not None and self.no_derivatives:
            raise ValueError("a derivatives file, and no derivatives file: choose one")
