"""mylib's kernels written in Python: one real kernel and the fake (shape-only) kernels."""

from __future__ import annotations

import torch
from torch import Tensor


def softclip_cpu(x: Tensor, limit: float = 1.0) -> Tensor:
    return limit * torch.tanh(x / limit)


def softclip_fake(x: Tensor, limit: float = 1.0) -> Tensor:
    return torch.empty_like(x)


def rms_norm_backward_fake(
    grad: Tensor, x: Tensor, weight: Tensor, eps: float, output_mask: list[bool]
) -> tuple[Tensor | None, Tensor | None]:
    # Like the C++ kernel, an output that is not asked for is undefined (None).
    grad_x = torch.empty_like(x) if output_mask[0] else None
    grad_weight = torch.empty_like(weight) if output_mask[1] else None
    return grad_x, grad_weight


def fused_mul_add_fake(
    x: Tensor, y: Tensor, bias: Tensor | None = None, *, alpha: float = 1.0
) -> Tensor:
    shapes = [x.shape, y.shape] + ([bias.shape] if bias is not None else [])
    return x.new_empty(torch.broadcast_shapes(*shapes))
