"""Which derivatives file an MLX extension spec has.

An operator's formulas are given in one of two places, never both: inline,
`grad: {x: <formula>}` in its spec entry, or in a derivatives file read by
`opgen.spec.derivatives` (`Dialect.MLX`): the one the caller names (`opgen mlx
--derivatives FILE`), else `derivatives.yaml` beside the spec if there is one,
unless the caller asks for none (`--no-derivatives`).
"""

from __future__ import annotations

import enum
import os

DERIVATIVES_FILE = "derivatives.yaml"


class Derivatives(enum.Enum):
    """Which derivatives file a spec has when the caller names no file (or None)."""

    BESIDE_SPEC = "derivatives.yaml beside the spec, if there is one"


def derivatives_file(spec_path: str, given: str | Derivatives | None) -> str | None:
    """The derivatives file to read: the one given (None: none), or the one beside the spec.

    A given file that does not exist is an error when it is read, as any input's.
    """
    if not isinstance(given, Derivatives):
        return given
    path = os.path.join(os.path.dirname(spec_path), DERIVATIVES_FILE)
    return path if os.path.isfile(path) else None
