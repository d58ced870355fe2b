"""Uses mylib once it is built and installed: `python demo.py`."""

import mylib
import torch

x = torch.randn(2, 4, requires_grad=True)
weight = torch.ones(4, requires_grad=True)
y = mylib.rms_norm(x, weight)
y.sum().backward()
print("rms_norm:", tuple(y.shape), "grad:", tuple(x.grad.shape))
result = mylib.sort_desc(torch.tensor([1.0, 3.0, 2.0]))  # a NamedTuple (values, indices)
print("sort_desc:", result.values.tolist(), result.indices.tolist())
print("grid:", mylib.grid(2, 3, dtype=torch.int64).tolist())
print("hann (a factory, no tensor argument):", mylib.hann(4).tolist())
print("softclip (a Python kernel):", mylib.softclip(torch.tensor([10.0]), 2.0).tolist())
compiled = torch.compile(lambda t: mylib.scale(mylib.fused_mul_add(t, t, alpha=0.5), 2.0))
print("torch.compile:", compiled(torch.ones(3)).tolist())
