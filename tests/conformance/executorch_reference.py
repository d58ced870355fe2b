"""Where ExecuTorch's reference files are: templates, kernel YAMLs, the `.pte` schema
and a model, kept outside the project (`../shared/executorch` beside the checkout, or
`OPGEN_EXECUTORCH_REFERENCE`). The tests that need them fail without them."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

REFERENCE = Path(
    os.environ.get(
        "OPGEN_EXECUTORCH_REFERENCE",
        Path(__file__).resolve().parents[3] / "shared" / "executorch",
    )
)

# The kernel and custom-op YAMLs in ExecuTorch's dialect.
KERNEL_YAMLS = [
    "kernels/portable/functions.yaml",
    "kernels/portable/custom_ops.yaml",
    "kernels/portable/et_copy_ops.yaml",
    "kernels/optimized/optimized.yaml",
    "kernels/aten/functions.yaml",
    "examples/portable/custom_ops/custom_ops.yaml",
    "kernels/test/custom_kernel_example/my_functions.yaml",
    "backends/cortex_m/ops/operators.yaml",
]


def reference(name: str) -> Path:
    """The reference file `name`; the test fails, saying where to put them, if it is missing."""
    path = REFERENCE / name
    if not path.is_file():
        pytest.fail(
            f"ExecuTorch's reference files are not at {REFERENCE}: set "
            "OPGEN_EXECUTORCH_REFERENCE to the directory of ../shared/executorch"
        )
    return path


def has_op_entries(name: str) -> bool:
    """Whether a reference YAML has `op:` entries (so it is no custom-ops YAML); False if
    the file is missing, so that its tests run and fail in `reference`."""
    path = REFERENCE / name
    if not path.is_file():
        return False
    return any(line.startswith("- op:") for line in path.read_text(encoding="utf-8").splitlines())
