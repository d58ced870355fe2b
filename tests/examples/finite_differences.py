"""Gradients by central differences, to check MLX extensions' gradient formulas against."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import mlx.core as mx
import numpy as np


def finite_differences(
    f: Callable[..., Any], arrays: Sequence[Any], i: int, h: float = 1e-2
) -> Any:
    """The gradient of the scalar `f(*arrays)` with respect to `arrays[i]`, by central
    differences in float32."""
    base = np.array(arrays[i], dtype=np.float32)
    numeric = np.zeros_like(base)
    for index in np.ndindex(base.shape):
        values = []
        for step in (h, -h):
            moved = base.copy()
            moved[index] += step
            args = list(arrays)
            args[i] = mx.array(moved)
            values.append(f(*args).item())
        numeric[index] = (values[0] - values[1]) / (2 * h)
    return numeric
