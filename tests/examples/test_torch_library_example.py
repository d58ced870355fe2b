"""The example library, built from its spec: every operator passes torch.library.opcheck
(all default checks) on realistic inputs, and the differentiable ones pass gradcheck."""

from __future__ import annotations

import importlib.machinery
import os
import shutil
import subprocess
import sys
from collections.abc import Callable
from typing import Any

import pytest
from tests.examples.example_build import EXAMPLE, BuiltExample

torch = pytest.importorskip("torch")


def _randn(*shape: int, grad: bool = False) -> Any:
    return torch.randn(*shape, dtype=torch.float64, requires_grad=grad)


def _samples() -> dict[str, list[tuple[tuple[Any, ...], dict[str, Any]]]]:
    """Sample (args, kwargs) per operator overload, with and without gradients."""
    return {
        "rms_norm.default": [
            ((_randn(3, 4, grad=True), _randn(4, grad=True)), {}),
            ((_randn(2, 3, 5), _randn(5, grad=True), 1e-3), {}),
        ],
        "rms_norm_backward.default": [
            ((_randn(3, 4), _randn(3, 4), _randn(4), 1e-6, [True, True]), {}),
            ((_randn(2, 5), _randn(2, 5), _randn(5), 1e-6, [True, False]), {}),
        ],
        "scale.default": [((_randn(3, 4, grad=True), 2.5), {}), ((_randn(6), -1), {})],
        "scale_.default": [((_randn(3, 4), 2.5), {}), ((_randn(6), 3), {})],
        "scale.out": [
            ((_randn(3, 4), 0.5), {"out": _randn(3, 4)}),
            ((_randn(2), 2), {"out": _randn(0)}),
        ],
        "fused_mul_add.default": [
            ((_randn(3, 4, grad=True), _randn(3, 4, grad=True)), {}),
            (
                (_randn(3, 4, grad=True), _randn(4, grad=True), _randn(3, 1, grad=True)),
                {"alpha": 0.5},
            ),
        ],
        "weighted_sum.default": [
            (([_randn(3, grad=True), _randn(3, grad=True)],), {}),
            (([_randn(2, 2), _randn(2, 2), _randn(2, 2)], [0.5, 2.0, -1.0]), {}),
        ],
        "grid.default": [((2, 3), {}), ((4, 1), {"dtype": torch.float64})],
        "hann.default": [((5,), {}), ((4,), {"dtype": torch.float64, "device": "cpu"})],
        "softclip.default": [((_randn(3, 4, grad=True),), {}), ((_randn(5) * 4, 2.0), {})],
        "sort_desc.default": [((_randn(3, 5, grad=True),), {}), ((_randn(4, 2), 0), {})],
    }


OVERLOADS = sorted(_samples())


@pytest.fixture(scope="module")
def mylib(built_example: BuiltExample) -> Any:
    import mylib

    return mylib


@pytest.mark.parametrize("overload", OVERLOADS)
def test_opcheck(mylib: Any, overload: str) -> None:
    name, _, kind = overload.partition(".")
    op = getattr(getattr(torch.ops.mylib, name), kind)
    for args, kwargs in _samples()[overload]:
        torch.library.opcheck(op, args, kwargs)


def test_every_operator_has_samples() -> None:
    import yaml

    with open(EXAMPLE / "native_functions.yaml", encoding="utf-8") as f:
        entries = yaml.safe_load(f)
    heads = [e["func"].partition("(")[0].removeprefix("mylib::") for e in entries]
    assert sorted(h if "." in h else f"{h}.default" for h in heads) == OVERLOADS


@pytest.mark.parametrize(
    "name", ["rms_norm", "scale", "fused_mul_add", "fused_mul_add_bias", "softclip", "sort_desc"]
)
def test_gradcheck(mylib: Any, name: str) -> None:
    cases: dict[str, tuple[Callable[..., Any], tuple[Any, ...]]] = {
        "rms_norm": (
            lambda x, w: mylib.rms_norm(x, w),
            (_randn(3, 4, grad=True), _randn(4, grad=True)),
        ),
        "scale": (lambda x: mylib.scale(x, 1.5), (_randn(2, 3, grad=True),)),
        "fused_mul_add": (
            lambda x, y: mylib.fused_mul_add(x, y, alpha=2.0),
            (_randn(3, 4, grad=True), _randn(4, grad=True)),
        ),
        "fused_mul_add_bias": (
            lambda x, y, b: mylib.fused_mul_add(x, y, b),
            (_randn(3, 4, grad=True), _randn(3, 4, grad=True), _randn(4, grad=True)),
        ),
        "softclip": (lambda x: mylib.softclip(x, 2.0), (_randn(3, 4, grad=True),)),
        "sort_desc": (lambda x: mylib.sort_desc(x)[0], (_randn(3, 5, grad=True),)),
    }
    fn, inputs = cases[name]
    assert torch.autograd.gradcheck(fn, inputs)


@pytest.mark.parametrize("name", ["scale", "softclip"])
def test_gradgradcheck(mylib: Any, name: str) -> None:
    """Formulas made of differentiable operators give second derivatives too."""
    fn = {"scale": lambda x: mylib.scale(x, 1.5), "softclip": lambda x: mylib.softclip(x, 2.0)}
    assert torch.autograd.gradgradcheck(fn[name], (_randn(2, 3, grad=True),))


def test_wrappers_match_the_operators(mylib: Any) -> None:
    x, w = _randn(2, 4), _randn(4)
    expected = x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + 1e-6) * w
    torch.testing.assert_close(mylib.rms_norm(x, w), expected)
    values, indices = mylib.sort_desc(torch.tensor([1.0, 3.0, 2.0]))
    assert values.tolist() == [3.0, 2.0, 1.0] and indices.tolist() == [1, 2, 0]
    assert mylib.grid(2, 3).tolist() == [[0.0, 1.0, 2.0], [3.0, 4.0, 5.0]]
    out = torch.empty(0, dtype=torch.float64)
    assert mylib.scale_out(torch.ones(2, dtype=torch.float64), 3, out=out) is None
    assert out.tolist() == [3.0, 3.0]
    x = torch.ones(2)
    mylib.scale_(x, 4)
    assert x.tolist() == [4.0, 4.0]
    assert mylib.weighted_sum([torch.ones(2), torch.ones(2)], [1.0, 2.0]).tolist() == [3.0, 3.0]


def test_a_factory_runs_the_kernel_of_its_device(mylib: Any) -> None:
    """`hann` has no tensor argument: its BackendSelect kernel dispatches on `device`."""
    expected = torch.hann_window(4, dtype=torch.float64)
    torch.testing.assert_close(mylib.hann(4, dtype=torch.float64), expected)
    on_meta = mylib.hann(3, device="meta")  # the Meta kernel
    assert (on_meta.device.type, on_meta.shape, on_meta.dtype) == ("meta", (3,), torch.float32)
    compiled = torch.compile(lambda: mylib.hann(4, dtype=torch.float64), fullgraph=True)
    torch.testing.assert_close(compiled(), expected)


def test_named_outputs_come_as_a_named_tuple(mylib: Any) -> None:
    """`sort_desc` returns `(Tensor values, Tensor indices)`: a NamedTuple with those fields,
    eager and compiled."""
    x = torch.tensor([1.0, 3.0, 2.0])
    for fn in (mylib.sort_desc, torch.compile(mylib.sort_desc, fullgraph=True)):
        result = fn(x)
        assert type(result) is mylib.SortDescResult and result._fields == ("values", "indices")
        assert result.values.tolist() == [3.0, 2.0, 1.0] and result.indices.tolist() == [1, 2, 0]


def test_importing_the_package_loads_the_library(
    built_example: BuiltExample, tmp_path: Any
) -> None:
    """With `_C` beside the package (as a build puts it), `import mylib` is all it takes."""
    package = tmp_path / "mylib"
    shutil.copytree(built_example.generated / "mylib", package)
    suffix = importlib.machinery.EXTENSION_SUFFIXES[0]
    shutil.copy(built_example.library, package / f"_C{suffix}")
    code = "import torch, mylib; print(mylib.scale(torch.ones(2), 2.0).tolist())"
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(tmp_path), str(EXAMPLE)])}
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "[2.0, 2.0]"
