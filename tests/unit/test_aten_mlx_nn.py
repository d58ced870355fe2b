"""`opgen aten-mlx` on what the neural-network lowerings need of the generator: a
`bool[3]` list (output_mask) passed as it is, never read as a sized int list; a pooling
stride that may be empty where the schema gives no default (a backward operator's); and
the default overload named `name.default` where other overloads share its base name (a
mutable operator such as _native_batch_norm_legit is lowered only when named exactly).
"""

from __future__ import annotations

import pytest

from opgen.spec.lowering.model import LoweringSpec
from opgen.spec.lowering.reader import read_lowering
from opgen.spec.model import Spec, load_spec
from opgen.targets.aten_mlx import functions

NATIVE = """\
- func: native_layer_norm_backward(Tensor grad_out, Tensor input, SymInt[] normalized_shape, Tensor mean, Tensor rstd, Tensor? weight, Tensor? bias, bool[3] output_mask) -> (Tensor, Tensor, Tensor)
  tags: core
- func: avg_pool2d_backward(Tensor grad_output, Tensor self, int[2] kernel_size, int[2] stride, int[2] padding) -> Tensor
  tags: core
- func: batch_norm_like(Tensor input, Tensor(a!) running_mean, bool training) -> Tensor
  dispatch:
    CompositeExplicitAutograd: batch_norm_like
  tags: core
- func: batch_norm_like.no_stats(Tensor input, bool training) -> Tensor
  dispatch:
    CompositeExplicitAutograd: batch_norm_like_no_stats
  tags: core
"""  # noqa: E501
TAGS = """\
- tag: core
  desc: Core ATen operators.
"""
LOWERING = """\
- op: native_layer_norm_backward
  code: |
    if (output_mask.size() != 3) {
      refuse(op, "output_mask", "expected 3 values");
    }
    (void)normalized_shape;
    (void)weight;
    (void)bias;
    return outputs(grad_out, input, multiply(mean, rstd));
- op: avg_pool2d_backward
  code: |
    (void)grad_output;
    (void)kernel_size;
    (void)stride;
    (void)padding;
    return self;
- op: batch_norm_like.default
  code: |
    if (training) {
      refuse(op, "training", "the running statistics would be updated in place");
    }
    (void)running_mean;
    return input;
- op: batch_norm_like.no_stats
  code: |
    (void)training;
    return input;
"""


@pytest.fixture(scope="module")
def lowering(tmp_path_factory: pytest.TempPathFactory) -> LoweringSpec:
    folder = tmp_path_factory.mktemp("nn")
    (folder / "native_functions.yaml").write_text(NATIVE)
    (folder / "tags.yaml").write_text(TAGS)
    (folder / "nn.yaml").write_text(LOWERING)
    spec: Spec = load_spec(str(folder / "native_functions.yaml"), str(folder / "tags.yaml"))
    return read_lowering([str(folder / "nn.yaml")], spec, mlx=None)


def test_a_bool_list_is_passed_as_it_is(lowering: LoweringSpec) -> None:
    """`bool[3] output_mask` is a BoolList parameter under its own name: no `sized`
    prologue, which reads int lists."""
    lines = functions.function_definition(
        lowering.by_name["aten::native_layer_norm_backward"], lowering
    )
    assert "const BoolList& output_mask" in lines[1]
    assert not any("sized(" in line for line in lines)


def test_the_default_overload_is_named_with_default(lowering: LoweringSpec) -> None:
    """`batch_norm_like.default` names the overload the spec calls `batch_norm_like`,
    exactly: a mutable operator (`Tensor(a!) running_mean`) is lowered, and the other
    overload keeps its own entry."""
    assert set(lowering.by_name) == {
        "aten::native_layer_norm_backward",
        "aten::avg_pool2d_backward",
        "aten::batch_norm_like",
        "aten::batch_norm_like.no_stats",
    }
    lines = functions.function_definition(lowering.by_name["aten::batch_norm_like"], lowering)
    assert lines[1] == (
        "mlx::core::array aten_batch_norm_like(const mlx::core::array& input, "
        "const mlx::core::array& running_mean, bool training) {"
    )


def test_an_empty_stride_is_passed_as_it_is(lowering: LoweringSpec) -> None:
    """PyTorch's pooling operators read an empty stride as the kernel size, the backward
    ones too, whose `int[2] stride` has no default: the prologue sizes only a non-empty
    stride; other sized lists are sized always."""
    lines = functions.function_definition(lowering.by_name["aten::avg_pool2d_backward"], lowering)
    assert lines[3:6] == [
        '  const IntList kernel_size = sized(op, "kernel_size", kernel_size_arg, 2);',
        "  const IntList stride = "
        'stride_arg.empty() ? stride_arg : sized(op, "stride", stride_arg, 2);',
        '  const IntList padding = sized(op, "padding", padding_arg, 2);',
    ]
