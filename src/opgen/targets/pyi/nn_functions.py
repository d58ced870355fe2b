"""The declarations of `torch/_C/_nn.pyi`, all of them facts written down here.

Unlike `torch._C._VariableFunctions`, PyTorch declares `torch._C._nn` by hand:
its stubs describe how `torch.nn.functional` calls the bindings (a reduction
is a string there, for one) rather than what the schemas say, and cover
functions bound outside the generated bindings. These are those
declarations, as data, in sections (`sections`, a little different in some
releases); the first is sorted by name. Checked against the stubs of torch 2.10
to 2.15.
"""

from __future__ import annotations

from opgen.api import pyi
from opgen.frozen import frozen
from opgen.targets.pyi.stubs import Definition, Import

_INPUT = "input: Tensor"
_TARGET = "target: Tensor"
_WEIGHT = "weight: Tensor | None = None"
_REDUCTION = "reduction: str = ..."
_KERNEL = "kernel_size: _int | _size"
_OUTPUT_SIZE = "output_size: _int | _size"
_STRIDE_PADDING = ("stride: _int | _size | None = None", "padding: _int | _size = 0")
_PAIR = "tuple[Tensor, Tensor]"


@frozen
class Section:
    """Declarations under one comment."""

    comment: str
    definitions: tuple[Definition, ...]


def _nn(name: str, *parameters: str, returns: str = "Tensor") -> Definition:
    return Definition(name, parameters, returns)


def _pooling(dims: int) -> tuple[Definition, ...]:
    return (
        _nn(f"adaptive_avg_pool{dims}d", _INPUT, _OUTPUT_SIZE),
        _nn(f"adaptive_max_pool{dims}d", _INPUT, _OUTPUT_SIZE, returns=_PAIR),
        _nn(
            f"avg_pool{dims}d",
            _INPUT,
            _KERNEL,
            *_STRIDE_PADDING,
            "ceil_mode: bool = False",
            "count_include_pad: bool = True",
            "divisor_override: int | None = None",
        ),
        _nn(
            f"fractional_max_pool{dims}d",
            _INPUT,
            _KERNEL,
            _OUTPUT_SIZE,
            "_random_samples: Tensor",
            returns=_PAIR,
        ),
        _nn(
            f"max_pool{dims}d_with_indices",
            _INPUT,
            _KERNEL,
            *_STRIDE_PADDING,
            "dilation: _int | _size = 1",
            "ceil_mode: bool = False",
            returns=_PAIR,
        ),
    )


def _loss(name: str, *parameters: str) -> Definition:
    return _nn(name, _INPUT, _TARGET, *parameters)


def _activation(name: str, *parameters: str) -> tuple[Definition, ...]:
    """An activation and its in-place form."""
    return (_nn(name, _INPUT, *parameters), _nn(f"{name}_", _INPUT, *parameters))


_BOUND = (
    *_pooling(2),
    *_pooling(3),
    _loss("binary_cross_entropy", _WEIGHT, _REDUCTION),
    _nn(
        "col2im",
        _INPUT,
        _OUTPUT_SIZE,
        _KERNEL,
        "dilation: _int | _size",
        *_STRIDE_PADDING,
    ),
    _loss(
        "cross_entropy_loss",
        _WEIGHT,
        _REDUCTION,
        "ignore_index: int = -100",
        "label_smoothing: float = 0.0",
    ),
    _nn("elu", _INPUT, "alpha: float = 1.0", "scale: float = 1.0", "input_scale: float = 1.0"),
    _nn("elu_", _INPUT, "alpha: float = ..."),
    _nn("gelu", _INPUT, "approximate: str = ..."),
    _nn("glu", _INPUT, "dim: int = -1"),
    _nn("hardsigmoid", _INPUT, "*", "out: Tensor | None = None"),
    _nn("hardsigmoid_", _INPUT),
    *_activation("hardswish"),
    _nn(
        "hardtanh",
        _INPUT,
        "min_val: float = ...",
        "max_val: float = ...",
        "*",
        "out: Tensor | None = None",
    ),
    _nn("hardtanh_", _INPUT, "min_val: float = ...", "max_val: float = ..."),
    _loss("huber_loss", _REDUCTION, "delta: float = 1.0"),
    _nn(
        "im2col",
        _INPUT,
        _KERNEL,
        "dilation: _int | _size",
        "padding: _int | _size",
        "stride: _int | _size",
    ),
    _loss("l1_loss", _REDUCTION),
    _nn("leaky_relu", _INPUT, "negative_slope: float = ...", "*", "out: Tensor | None = None"),
    _nn("leaky_relu_", _INPUT, "negative_slope: float = ..."),
    _nn("linear", _INPUT, "weight: Tensor", "bias: Tensor | None = None"),
    _nn("log_sigmoid", _INPUT),
    _nn("max_unpool2d", _INPUT, "indices: Tensor", "output_size: Sequence[int] | None"),
    _nn(
        "max_unpool3d",
        _INPUT,
        "indices: Tensor",
        "output_size: Sequence[int] | None",
        "stride: _int | _size",
        "padding: _int | _size",
    ),
    *_activation("mish"),
    _loss("mse_loss", _REDUCTION),
    _loss("multi_margin_loss", "p: float = 1.0", "margin: float = 1.0", _WEIGHT, _REDUCTION),
    _loss("multilabel_margin_loss", _REDUCTION),
    _loss("nll_loss_nd", _WEIGHT, _REDUCTION, "ignore_index: int = -100"),
    _nn("one_hot", "tensor: Tensor", "num_classes: int = ..."),
    _nn("pad", _INPUT, "pad: Sequence[int]", "mode: str = ...", "value: float | None = None"),
    *_activation("relu6"),
    _nn(
        "scaled_dot_product_attention",
        "query: Tensor",
        "key: Tensor",
        "value: Tensor",
        "attn_mask: Tensor | None = None",
        "dropout_p: float = 0.0",
        "is_causal: bool = False",
        "scale: float | None = None",
        "enable_gqa: bool = False",
    ),
    *_activation("silu"),
    _loss("smooth_l1_loss", _REDUCTION, "beta: float = 1.0"),
    _loss("soft_margin_loss", _REDUCTION),
    _nn("softplus", _INPUT, "beta: float = ...", "threshold: float = ..."),
    _nn("softshrink", _INPUT, "lambd: float = ..."),
)


def _reorder_weight(dims: int) -> Definition:
    return _nn(
        f"mkldnn_reorder_conv{dims}d_weight",
        "self: Tensor",
        "padding: list",
        "stride: list",
        "dilatation: list",
        "groups: int",
    )


def _parse_to(*leading: str) -> Definition:
    return Definition(
        "_parse_to",
        (*leading, "non_blocking: _bool", "copy: _bool", "*", "memory_format: memory_format"),
        "tuple[_device, _dtype, _bool, memory_format]",
        decorators=("overload",),
    )


_SIZES = ("output_size: Sequence[int] | None",)
_SCALES = ("scale_factors: Sequence[float] | None",)
_NEAREST = ("upsample_nearest", "_upsample_nearest_exact")
_INTERPOLATING = (
    "upsample_linear1d",
    "_upsample_bilinear2d_aa",
    "upsample_bilinear2d",
    "upsample_trilinear3d",
    "_upsample_bicubic2d_aa",
    "_upsample_lanczos2d_aa",
    "upsample_bicubic2d",
)
_LANCZOS = "_upsample_lanczos2d_aa"

# The sections before the last, which every release's stubs share.
_SECTIONS: tuple[Section, ...] = (
    Section(
        "Bound by the generated python_nn_functions.cpp",
        tuple(sorted(_BOUND, key=lambda d: d.name)),
    ),
    Section(
        "Kernels of aten/src/ATen/native/mkldnn/Linear.cpp",
        (_nn("mkldnn_linear", _INPUT, "weight: Tensor", "bias: Tensor | None"),),
    ),
    Section(
        "Kernels of aten/src/ATen/native/mkldnn/MKLDNNConversions.cpp",
        (_reorder_weight(2), _reorder_weight(3)),
    ),
    Section(
        "Kernels of aten/src/ATen/native/mkldnn/Prelu.cpp",
        (_nn("mkldnn_prelu", _INPUT, "weight: Tensor"),),
    ),
    Section(
        "Bound by hand in python_nn_functions.cpp: Tensor.to's argument parsing",
        (
            _parse_to("device: _device", "dtype: _dtype"),
            _parse_to("dtype: _dtype"),
            _parse_to("tensor: Tensor"),
        ),
    ),
    Section(
        "Kernels of aten/src/ATen/native/PackedSequence.cpp",
        (
            _nn(
                "pad_sequence",
                "sequences: list[Tensor] | tuple[Tensor, ...]",
                "batch_first: bool = False",
                "padding_value: float = 0.0",
                'padding_side: Literal["left", "right"] = "right"',
            ),
        ),
    ),
)


def sections(hints: pyi.Hints) -> tuple[Section, ...]:
    """Every section of a release's `_nn.pyi`."""
    return (*_SECTIONS, _interpolate(hints))


def _interpolate(hints: pyi.Hints) -> Section:
    """What `torch.nn.functional.interpolate` calls (Lanczos since torch 2.12)."""
    interpolating = [n for n in _INTERPOLATING if hints.lanczos_interpolation or n != _LANCZOS]
    return Section(
        "What torch.nn.functional.interpolate calls",
        (
            *(
                _nn(f"{kind}{d}d", _INPUT, *_SIZES, *_SCALES)
                for kind in _NEAREST
                for d in (1, 2, 3)
            ),
            *(
                _nn(name, _INPUT, *_SIZES, "align_corners: bool", *_SCALES)
                for name in interpolating
            ),
            _nn("flatten_dense_tensors", "tensors: list[Tensor]"),
            _nn(
                "unflatten_dense_tensors",
                "flat: Tensor",
                "tensors: list[Tensor]",
                returns="list[Tensor]",
            ),
        ),
    )


IMPORTS: tuple[tuple[Import, ...], ...] = (
    (Import("collections.abc", ("Sequence",)), Import("typing", ("Literal", "overload"))),
    (
        Import("torch", ("memory_format", "Tensor")),
        Import("torch.types", ("_bool", "_device", "_dtype", "_int", "_size")),
    ),
)
