"""The example's Autograd kernels skip the Function when there is nothing to differentiate
(no input requires grad, or grad mode is off), and still hand forward-mode tangents to it,
which raises as PyTorch's C++ Functions do."""

from __future__ import annotations

from typing import Any

import pytest
from tests.examples.example_build import BuiltExample

torch = pytest.importorskip("torch")


@pytest.fixture(scope="module")
def mylib(built_example: BuiltExample) -> Any:
    import mylib

    return mylib


def test_no_graph_without_gradients(mylib: Any) -> None:
    x = torch.ones(2, requires_grad=True)
    assert mylib.scale(x, 2.0).grad_fn is not None
    with torch.no_grad():
        y = mylib.scale(x, 2.0)
    assert (y.grad_fn, y.requires_grad, y.tolist()) == (None, False, [2.0, 2.0])
    values, indices = mylib.sort_desc(torch.tensor([1.0, 3.0, 2.0]))
    assert (values.grad_fn, values.tolist(), indices.tolist()) == (None, [3.0, 2.0, 1.0], [1, 2, 0])


@pytest.mark.parametrize("no_grad", [False, True])
def test_forward_mode_tangents_reach_the_function(mylib: Any, no_grad: bool) -> None:
    import torch.autograd.forward_ad as fwAD

    with fwAD.dual_level(), torch.set_grad_enabled(not no_grad):
        dual = fwAD.make_dual(torch.ones(2), torch.ones(2))
        with pytest.raises(RuntimeError, match="jvp is not implemented for the c\\+\\+ API"):
            mylib.scale(dual, 2.0)
