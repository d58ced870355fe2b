"""Reference data the tests read that is neither opgen's nor on the package index.

- ExecuTorch's codegen templates, the kernel YAMLs its wheel leaves out and a model
  (`add.pte`): `$OPGEN_EXECUTORCH_REFERENCE`, else `../shared/executorch` beside the
  checkout. What the `executorch` wheel does ship (the portable kernels' YAMLs, the
  Cortex-M operators, the program schema) is read from the installed wheel when that
  directory does not have it.
- MLX's own tests (`test_ops.py` and its harness `mlx_tests.py`, at MLX 0.32.2), which
  MLX's wheel does not ship: `$OPGEN_MLX_TESTS`, else `../shared/mlx/tests`.

A test whose data is missing is skipped, with one line naming what is missing and the
variable that points at it, so that a fresh clone runs everything it can. With
`OPGEN_REQUIRE_REFERENCE_DATA=1` (as `.ci/run` sets) it fails instead.
"""

from __future__ import annotations

import importlib.util
import os
from pathlib import Path
from typing import NoReturn

import pytest

CHECKOUT = Path(__file__).resolve().parents[1]
REQUIRE = "OPGEN_REQUIRE_REFERENCE_DATA"


def missing(what: str, variable: str, default: Path) -> NoReturn:
    """Skip the test (fail it under OPGEN_REQUIRE_REFERENCE_DATA=1): `what` is missing."""
    message = f"{what} not found: set {variable} to its directory (default: {default})"
    if os.environ.get(REQUIRE) == "1":
        pytest.fail(f"{message}; {REQUIRE}=1 makes this an error", pytrace=False)
    pytest.skip(message)


def _directory(variable: str, default: Path) -> Path:
    given = os.environ.get(variable)
    return Path(given) if given else default


EXECUTORCH_VARIABLE = "OPGEN_EXECUTORCH_REFERENCE"
EXECUTORCH_DEFAULT = CHECKOUT.parent / "shared" / "executorch"
EXECUTORCH = _directory(EXECUTORCH_VARIABLE, EXECUTORCH_DEFAULT)


def _executorch_wheel() -> Path | None:
    """The installed `executorch` package's directory, found without importing it."""
    spec = importlib.util.find_spec("executorch")
    if spec is None or not spec.submodule_search_locations:
        return None
    return Path(next(iter(spec.submodule_search_locations)))


def executorch_file(name: str) -> Path | None:
    """ExecuTorch's file `name` (a path in its repository), from the reference directory,
    else from the installed wheel; None if neither has it."""
    for root in (EXECUTORCH, _executorch_wheel()):
        if root is not None and (root / name).is_file():
            return root / name
    return None


def executorch_reference(name: str) -> Path:
    """ExecuTorch's file `name`; the test is skipped (or fails) without it."""
    found = executorch_file(name)
    if found is None:
        missing(
            "ExecuTorch's reference files (codegen templates, kernel YAMLs, add.pte)",
            EXECUTORCH_VARIABLE,
            EXECUTORCH_DEFAULT,
        )
    return found


MLX_TESTS_VARIABLE = "OPGEN_MLX_TESTS"
MLX_TESTS_DEFAULT = CHECKOUT.parent / "shared" / "mlx" / "tests"


def mlx_tests() -> Path:
    """The directory of MLX's own tests; the test is skipped (or fails) without it."""
    directory = _directory(MLX_TESTS_VARIABLE, MLX_TESTS_DEFAULT)
    if not (directory / "test_ops.py").is_file() or not (directory / "mlx_tests.py").is_file():
        missing(
            "MLX 0.32.2's own tests (test_ops.py, test_linalg.py, ..., mlx_tests.py)",
            MLX_TESTS_VARIABLE,
            MLX_TESTS_DEFAULT,
        )
    return directory
