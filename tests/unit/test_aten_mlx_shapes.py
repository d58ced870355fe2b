"""`opgen aten-mlx`'s functions for operators whose arguments have the names the
generated code could take for its own locals: `value` (fill.Scalar, scatter.value,
masked_fill, constant_pad_nd), which the body's result must not shadow."""

from __future__ import annotations

from pathlib import Path

import pytest

from opgen.spec.lowering.model import LoweringSpec
from opgen.spec.lowering.reader import read_lowering
from opgen.spec.model import load_spec
from opgen.targets.aten_mlx import functions

NATIVE = """\
- func: fill.Scalar(Tensor self, Scalar value) -> Tensor
  variants: function
  dispatch:
    CompositeExplicitAutograd: fill
  tags: core
"""
TAGS = """\
- tag: core
  desc: Core ATen operators.
"""
LOWERING = """\
- op: fill.Scalar
  call: full(self.shape(), value.as_array(self.dtype()), self.dtype())
"""


@pytest.fixture(scope="module")
def lowering(tmp_path_factory: pytest.TempPathFactory) -> LoweringSpec:
    folder: Path = tmp_path_factory.mktemp("fill")
    (folder / "native_functions.yaml").write_text(NATIVE)
    (folder / "tags.yaml").write_text(TAGS)
    (folder / "fill.yaml").write_text(LOWERING)
    spec = load_spec(str(folder / "native_functions.yaml"), str(folder / "tags.yaml"))
    return read_lowering([str(folder / "fill.yaml")], spec, mlx=None)


def test_an_argument_named_value_is_not_shadowed_by_the_result(lowering: LoweringSpec) -> None:
    """The body's value is held under a name no schema argument has, so the body reads
    the argument `value`, and the function returns what the body computed."""
    lines = functions.function_definition(lowering.by_name["aten::fill.Scalar"], lowering)
    declared = [line.strip() for line in lines if " = [&]() -> " in line]
    assert declared == ["mlx::core::array computed = [&]() -> mlx::core::array {"]
    assert "const Scalar& value" in lines[1]
    assert "computed" in lines[-2]
