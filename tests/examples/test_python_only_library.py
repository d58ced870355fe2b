"""A library without C++: opgen generates a package that defines the operators itself and
registers Python kernels, fake kernels and Python gradient formulas. It passes opcheck and
gradcheck (run in a fresh interpreter, since a namespace can be defined once per process)."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from opgen.cli import main

pytest.importorskip("torch")

SPEC = """
- func: pylib::cube(Tensor x) -> Tensor
  python_dispatch:
    CompositeExplicitAutograd: pykernels:cube
- func: pylib::mul_add(Tensor x, Tensor y, float alpha=1.0) -> (Tensor, Tensor)
  python_dispatch:
    CPU: pykernels:mul_add
  fake: pykernels:mul_add_fake
  doc: (x * y * alpha, x + y)
- func: pylib::ramp(int n, *, ScalarType? dtype=None, Device? device=None) -> Tensor
  python_dispatch:
    CPU: pykernels:ramp
  fake: pykernels:ramp_fake
"""
DERIVATIVES = """
- name: pylib::cube(Tensor x) -> Tensor
  x: grad * 3 * result / x
- name: pylib::mul_add(Tensor x, Tensor y, float alpha=1.0) -> (Tensor, Tensor)
  x, y: (grads[0] * y * alpha + grads[1], grads[0] * x * alpha + grads[1])
"""
KERNELS = """
import torch

def cube(x):
    return x * x * x

def mul_add(x, y, alpha=1.0):
    return x * y * alpha, x + y

def mul_add_fake(x, y, alpha=1.0):
    shape = torch.broadcast_shapes(x.shape, y.shape)
    return x.new_empty(shape), x.new_empty(shape)

def ramp(n, *, dtype=None, device=None):
    return torch.arange(n, dtype=dtype, device=device)

def ramp_fake(n, *, dtype=None, device=None):
    return torch.empty(n, dtype=dtype or torch.int64, device=device)
"""
CHECKS = """
import torch, pylib
from torch.library import opcheck
x = torch.rand(3, 4, dtype=torch.float64, requires_grad=True) + 0.5
y = torch.rand(3, 4, dtype=torch.float64, requires_grad=True)
opcheck(torch.ops.pylib.cube.default, (x,))
opcheck(torch.ops.pylib.mul_add.default, (x, y, 0.5))
opcheck(torch.ops.pylib.ramp.default, (4,), {"dtype": torch.float64})  # a factory
assert pylib.ramp(3).tolist() == [0, 1, 2] and pylib.ramp(3, device="meta").is_meta
assert torch.autograd.gradcheck(pylib.cube, (x,))
assert torch.autograd.gradcheck(lambda a, b: pylib.mul_add(a, b, alpha=2.0), (x, y))
print(pylib.mul_add.__doc__)
"""


def test_python_only_library(tmp_path: Path) -> None:
    (tmp_path / "native_functions.yaml").write_text(textwrap.dedent(SPEC))
    (tmp_path / "derivatives.yaml").write_text(textwrap.dedent(DERIVATIVES))
    (tmp_path / "pykernels.py").write_text(textwrap.dedent(KERNELS))
    out = tmp_path / "out"
    status = main(["torch-library", str(tmp_path / "native_functions.yaml"), "-o", str(out)])
    assert status == 0
    assert sorted(p.name for p in out.rglob("*") if p.is_file()) == [
        "__init__.py",
        "__init__.pyi",
        "py.typed",
    ]
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(out), str(tmp_path)])}
    done = subprocess.run([sys.executable, "-c", CHECKS], capture_output=True, text=True, env=env)
    assert done.returncode == 0, done.stderr
    assert done.stdout == "(x * y * alpha, x + y)\n"
