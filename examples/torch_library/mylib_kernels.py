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
) -> tuple[Tensor, Tensor]:
    return torch.empty_like(x), torch.empty_like(weight)


def fused_mul_add_fake(
    x: Tensor, y: Tensor, bias: Tensor | None = None, *, alpha: float = 1.0
) -> Tensor:
    shapes = [x.shape, y.shape] + ([bias.shape] if bias is not None else [])
    return x.new_empty(torch.broadcast_shapes(*shapes))
