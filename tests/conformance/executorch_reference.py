"""ExecuTorch's reference files the conformance tests read: templates, kernel YAMLs, the
`.pte` schema and a model (`tests.reference_data`: `../shared/executorch` beside the
checkout or `OPGEN_EXECUTORCH_REFERENCE`, else the installed wheel's copy). A test
whose file is missing is skipped, or fails under `OPGEN_REQUIRE_REFERENCE_DATA=1`."""

from __future__ import annotations

from pathlib import Path

from tests.reference_data import executorch_file, executorch_reference

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
    """ExecuTorch's file `name`; the test is skipped (or fails) if it is missing."""
    return executorch_reference(name)


def has_op_entries(name: str) -> bool:
    """Whether a reference YAML has `op:` entries (so it is no custom-ops YAML); False if
    the file is missing, so that its tests run and are skipped in `reference`."""
    path = executorch_file(name)
    if path is None:
        return False
    return any(line.startswith("- op:") for line in path.read_text(encoding="utf-8").splitlines())
