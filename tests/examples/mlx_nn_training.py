"""Trains a small mlx.nn model for a few steps; prints the losses, and what was served, as JSON.

    python mlx_nn_training.py [--module NAME]

With `--module`, the module NAME serves mlx.core as `mlx_tests_runner.serve`
has it (functions, submodules, the methods of `array`) before mlx.nn is
imported, so that every layer, loss, optimizer step and gradient runs on it.
The model uses convolution, group and layer norms, attention with a causal
mask, an embedding, a GRU, GELU and SiLU, cross-entropy and MSE losses, and
AdamW: a run on the module gives the losses of a run on plain mlx.core.
"""

from __future__ import annotations

import argparse
import json
from typing import Any

from mlx_tests_runner import serve


def losses(steps: int = 5) -> list[float]:
    import mlx.core as mx
    import mlx.nn as nn
    import mlx.optimizers as optim

    mx.random.seed(0)

    class Net(nn.Module):  # type: ignore[misc]
        def __init__(self) -> None:
            super().__init__()
            self.conv = nn.Conv2d(3, 8, 3, padding=1)
            self.group_norm = nn.GroupNorm(2, 8)
            self.norm = nn.LayerNorm(8)
            self.embedding = nn.Embedding(10, 8)
            self.attention = nn.MultiHeadAttention(8, 2)
            self.rnn = nn.GRU(8, 8)
            self.linear = nn.Linear(8, 4)

        def __call__(self, x: Any, tokens: Any) -> Any:
            h = self.group_norm(nn.gelu(self.conv(x)))
            h = h.reshape(h.shape[0], -1, h.shape[-1])
            h = self.norm(h) + self.embedding(tokens)[:, :1, :]
            mask = nn.MultiHeadAttention.create_additive_causal_mask(h.shape[1])
            h = self.rnn(self.attention(h, h, h, mask=mask))
            return self.linear(nn.silu(h).mean(axis=1))

    model = Net()
    mx.eval(model.parameters())
    x = mx.random.normal((2, 4, 4, 3))
    tokens = mx.random.randint(0, 10, (2, 3))
    y = mx.array([1, 3])

    def loss(m: Any, x: Any, tokens: Any, y: Any) -> Any:
        out = m(x, tokens)
        return nn.losses.cross_entropy(out, y).mean() + 0.1 * nn.losses.mse_loss(out, 0 * out)

    optimizer = optim.AdamW(learning_rate=1e-2)
    step = nn.value_and_grad(model, loss)
    found = []
    for _ in range(steps):
        value, grads = step(model, x, tokens, y)
        optimizer.update(model, grads)
        mx.eval(model.parameters(), optimizer.state)
        found.append(value.item())
    return found


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--module")
    args = parser.parse_args()
    served = serve(args.module) if args.module else []
    print(json.dumps({"served": served, "losses": losses()}))


if __name__ == "__main__":
    main()
