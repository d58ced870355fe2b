"""A transformers Llama exported from PyTorch, run and differentiated on MLX by aten_mlx."""

import aten_mlx
import mlx.core as mx
import numpy as np
import torch
from transformers import LlamaConfig, LlamaForCausalLM

torch.manual_seed(0)
config = LlamaConfig(
    vocab_size=100, hidden_size=32, intermediate_size=64, num_hidden_layers=2,
    num_attention_heads=4, num_key_value_heads=2,
)  # fmt: skip
model = LlamaForCausalLM(config).eval()
tokens = torch.randint(0, 100, (2, 8))
exported = torch.export.export(model, (tokens,), {"use_cache": False})
program = aten_mlx.load(exported.run_decompositions())

logits = program(tokens)[0]  # a tuple of mx.arrays, in the program's order
want = model(tokens, use_cache=False).logits
print("logits: max abs difference", np.abs(np.array(logits) - want.detach().numpy()).max())


def loss(parameters):  # a pure function of the parameters: mx.grad differentiates it
    return mx.mean(mx.square(program.run(parameters, tokens)[0]))


grads = mx.grad(loss)(program.parameters)
want.square().mean().backward()
worst = max(
    np.abs(np.array(grads[name]) - p.grad.numpy()).max() for name, p in model.named_parameters()
)
print("gradients: max abs difference", worst)
