"""The MLX example library (examples/mlx_library), built and held to plain MLX.

opgen generates both extension modules from the example's specs (ops.yaml in
opgen's spec language, kernels.yaml in the MLX dialect) and CMake builds them
with the example's CMakeLists.txt, once per test session, into a temporary
directory or under OPGEN_EXAMPLE_BUILD_DIR (kept between test sessions; CMake
rebuilds only what changed). The package is then assembled as setup.py
installs it. Every operator is checked against a reference written with
plain MLX operations: results, gradients (`mx.grad`, `mx.vjp`,
`mx.value_and_grad`) against the reference's and against central finite
differences in float32, `mx.compile`, bad calls, and the stub (against the
runtime signatures, and with `mypy --strict` on a typed program).
"""

from __future__ import annotations

import ast
import importlib
import os
import re
import shutil
import sys
import sysconfig
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from types import ModuleType
from typing import Any

# The test extras install mlx, nanobind and numpy; CMake must be on PATH. A missing one
# fails the tests rather than skipping them.
import mlx.core as mx
import numpy as np
import pytest
from tests.examples.finite_differences import finite_differences
from tests.examples.mlx_build import build_extension

EXAMPLE = Path(__file__).parents[2] / "examples" / "mlx_library"
SPECS = {"ops": "ops.yaml", "kernels": "kernels.yaml"}

Fn = Callable[..., Any]


def build_package(generated: Path, build: Path, package_root: Path) -> Path:
    """Generate, compile and assemble `mlx_library` under `package_root`; its directory."""
    build_extension([EXAMPLE / spec for spec in SPECS.values()], EXAMPLE, generated, build)
    package = package_root / "mlx_library"
    shutil.copytree(EXAMPLE / "mlx_library", package, dirs_exist_ok=True)
    suffix = sysconfig.get_config_var("EXT_SUFFIX")
    for module in SPECS:
        shutil.copyfile(build / f"{module}{suffix}", package / f"{module}{suffix}")
        shutil.copyfile(generated / f"{module}.pyi", package / f"{module}.pyi")
    return package


@pytest.fixture(scope="session")
def ml(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ModuleType]:
    kept = os.environ.get("OPGEN_EXAMPLE_BUILD_DIR")
    # Kept, the generated files stay too: opgen rewrites only what changed, so CMake
    # recompiles nothing when nothing changed.
    work = Path(kept) / "mlx_library" if kept else tmp_path_factory.mktemp("mlx")
    root = tmp_path_factory.mktemp("mlx_package")
    build_package(work / "generated", work / "cmake", root)
    sys.path.insert(0, str(root))
    try:
        yield importlib.import_module("mlx_library")
    finally:
        sys.path.remove(str(root))


# -- references in plain MLX ---------------------------------------------------------------


def rms_norm(x: Any, weight: Any, eps: float = 1e-05) -> Any:
    return x * mx.rsqrt(mx.mean(x * x, axis=-1, keepdims=True) + eps) * weight


def softplus(x: Any, *, beta: float = 1.0, threshold: float | None = None) -> Any:
    y = mx.logaddexp(mx.zeros_like(x), beta * x) / beta
    return y if threshold is None else mx.where(beta * x > threshold, x, y)


def scaled_add(a: Any, b: Any, *, alpha: float = 1.0) -> Any:
    return a + alpha * b


def linear(x: Any, w: Any, bias: Any = None) -> Any:
    y = x @ w.T
    return y if bias is None else y + bias


def weighted_sum(xs: Sequence[Any], weights: Any = None) -> Any:
    terms = [x if weights is None else weights[i] * x for i, x in enumerate(xs)]
    return sum(terms[1:], terms[0])


def mean_var(x: Any, axis: int = -1) -> tuple[Any, Any]:
    return mx.mean(x, axis=axis), mx.var(x, axis=axis)


def axpby(x: Any, y: Any, alpha: float = 1.0, beta: float = 1.0) -> Any:
    return alpha * x + beta * y


def clip_scale(x: Any, *, limit: float = 1.0, scale: float = 2.0) -> Any:
    return scale * mx.clip(x, -limit, limit)


def swish(x: Any, *, beta: float = 1.0) -> Any:
    return x * mx.sigmoid(beta * x)


def minmax(x: Any) -> tuple[Any, Any]:
    return mx.min(x), mx.max(x)


def rand(*shape: int, seed: int) -> Any:
    return mx.random.normal(shape, key=mx.random.key(seed))


def away_from(x: Any, kinks: Sequence[float], gap: float = 0.05) -> Any:
    """`x` with every element moved at least `gap` from the points where it has no derivative."""
    for k in kinks:
        x = mx.where(mx.abs(x - k) < gap, k + 2 * gap, x)
    return x


X = rand(3, 5, seed=1)
Y = rand(3, 5, seed=2)
W5 = rand(5, seed=3)
W45 = rand(4, 5, seed=4)
B4 = rand(4, seed=5)

# (name, the call as a function of its arrays, the same on the reference, the arrays)
CASES: list[tuple[str, Fn, Fn, tuple[Any, ...]]] = [
    ("rms_norm", lambda m: lambda x, w: m.rms_norm(x, w), lambda x, w: rms_norm(x, w), (X, W5)),
    (
        "rms_norm_eps",
        lambda m: lambda x, w: m.rms_norm(x, w, 0.5),
        lambda x, w: rms_norm(x, w, 0.5),
        (X, W5),
    ),
    ("softplus", lambda m: lambda x: m.softplus(x), lambda x: softplus(x), (X,)),
    (
        "softplus_beta_threshold",
        lambda m: lambda x: m.softplus(x, beta=2.0, threshold=1.0),
        lambda x: softplus(x, beta=2.0, threshold=1.0),
        (away_from(X, [0.5]),),
    ),
    ("scaled_add", lambda m: lambda a, b: m.scaled_add(a, b), scaled_add, (X, Y)),
    (
        "scaled_add_alpha",
        lambda m: lambda a, b: m.scaled_add(a, b, alpha=-3.0),
        lambda a, b: scaled_add(a, b, alpha=-3.0),
        (X, Y),
    ),
    ("linear", lambda m: lambda x, w: m.linear(x, w), linear, (X, W45)),
    ("linear_bias", lambda m: lambda x, w, b: m.linear(x, w, b), linear, (X, W45, B4)),
    (
        "weighted_sum",
        lambda m: lambda a, b, w: m.weighted_sum([a, b], w),
        lambda a, b, w: weighted_sum([a, b], w),
        (X, Y, mx.array([0.5, -2.0])),
    ),
    (
        "weighted_sum_plain",
        lambda m: lambda a, b: m.weighted_sum((a, b)),
        lambda a, b: weighted_sum([a, b]),
        (X, Y),
    ),
    ("mean_var", lambda m: lambda x: m.mean_var(x), lambda x: mean_var(x), (X,)),
    ("mean_var_axis", lambda m: lambda x: m.mean_var(x, 0), lambda x: mean_var(x, 0), (X,)),
    (
        "axpby",
        lambda m: lambda x, y: m.axpby(x, y, 2.0, -0.5),
        lambda x, y: axpby(x, y, 2.0, -0.5),
        (X, Y),
    ),
    (
        "clip_scale",
        lambda m: lambda x: m.clip_scale(x, limit=0.7),
        lambda x: clip_scale(x, limit=0.7),
        (away_from(X, [-0.7, 0.7]),),
    ),
    ("swish", lambda m: lambda x: m.swish(x, beta=1.5), lambda x: swish(x, beta=1.5), (X,)),
]
IDS = [c[0] for c in CASES]


def outputs(result: Any) -> list[Any]:
    return list(result) if isinstance(result, tuple | list) else [result]


def loss(fn: Fn) -> Callable[..., Any]:
    """A scalar of `fn`'s outputs, each element weighted differently: what is differentiated."""

    def scalar(*args: Any) -> Any:
        total = mx.array(0.0)
        for i, out in enumerate(outputs(fn(*args))):
            weights = mx.cos(mx.arange(out.size, dtype=mx.float32) + i).reshape(out.shape)
            total = total + mx.sum(out * weights)
        return total

    return scalar


def gradients(fn: Fn, arrays: Sequence[Any], *, compiled: bool = False) -> list[Any]:
    """`mx.grad` of `loss(fn)` with respect to every array, as a list."""
    argnums = list(range(len(arrays)))
    grad = mx.grad(loss(fn), argnums=argnums)
    got = (mx.compile(grad) if compiled else grad)(*arrays)
    return list(got) if len(arrays) > 1 else [got]


def close(a: Any, b: Any, tol: float = 1e-5) -> bool:
    return bool(mx.allclose(a, b, rtol=tol, atol=tol))


# -- results -------------------------------------------------------------------------------


@pytest.mark.parametrize(("name", "call", "reference", "arrays"), CASES, ids=IDS)
def test_results_equal_plain_mlx(
    ml: ModuleType, name: str, call: Fn, reference: Fn, arrays: tuple[Any, ...]
) -> None:
    got, want = outputs(call(ml)(*arrays)), outputs(reference(*arrays))
    assert len(got) == len(want)
    for g, w in zip(got, want, strict=True):
        assert g.shape == w.shape and g.dtype == w.dtype
        assert close(g, w), name


def test_minmax_primitive_with_a_shape_rule(ml: ModuleType) -> None:
    lo, hi = ml.minmax(X)
    assert lo.shape == hi.shape == ()
    assert lo.item() == mx.min(X).item() and hi.item() == mx.max(X).item()


def test_non_contiguous_inputs_reach_kernels_contiguous(ml: ModuleType) -> None:
    xt, yt = X.T, Y.T  # transposed views
    assert close(ml.axpby(xt, yt, 3.0, 1.0), axpby(xt, yt, 3.0, 1.0))
    assert close(ml.clip_scale(X[:, ::2]), clip_scale(X[:, ::2]))


def test_stream_keyword(ml: ModuleType) -> None:
    assert close(ml.axpby(X, Y, stream=mx.cpu), X + Y)
    assert close(ml.rms_norm(X, W5, stream=mx.default_stream(mx.cpu)), rms_norm(X, W5))


def test_an_operator_with_a_method_variant_is_a_method_too(ml: ModuleType) -> None:
    methods = ml.array_methods()
    assert sorted(methods) == ["rms_norm", "swish"]
    assert close(methods["rms_norm"](X, W5), rms_norm(X, W5))
    assert close(methods["swish"](X, beta=2.0), ml.swish(X, beta=2.0))
    try:
        for name, method in methods.items():
            setattr(mx.array, name, method)
        assert close(X.rms_norm(W5, eps=1e-3), rms_norm(X, W5, 1e-3))  # type: ignore[attr-defined]
        ours = mx.grad(lambda x: x.rms_norm(W5).sum())(X)
        assert close(ours, mx.grad(lambda x: rms_norm(x, W5).sum())(X))
    finally:
        for name in methods:
            delattr(mx.array, name)


def test_kernel_errors_reach_python(ml: ModuleType) -> None:
    with pytest.raises(RuntimeError, match="axpby: expects float32 arrays"):
        mx.eval(ml.axpby(X.astype(mx.float16), Y.astype(mx.float16)))


# -- gradients -----------------------------------------------------------------------------


@pytest.mark.parametrize(("name", "call", "reference", "arrays"), CASES, ids=IDS)
def test_gradients_equal_the_reference(
    ml: ModuleType, name: str, call: Fn, reference: Fn, arrays: tuple[Any, ...]
) -> None:
    got, want = gradients(call(ml), arrays), gradients(reference, arrays)
    for i, (g, w) in enumerate(zip(got, want, strict=True)):
        assert close(g, w, 1e-4), f"{name}: input {i}"


@pytest.mark.parametrize(("name", "call", "reference", "arrays"), CASES, ids=IDS)
def test_gradients_equal_finite_differences(
    ml: ModuleType, name: str, call: Fn, reference: Fn, arrays: tuple[Any, ...]
) -> None:
    scalar = loss(call(ml))
    grads = gradients(call(ml), arrays)
    for i, grad in enumerate(grads):
        numeric = finite_differences(scalar, arrays, i)
        assert np.allclose(np.array(grad), numeric, rtol=2e-2, atol=2e-2), f"{name}: input {i}"


def test_vjp_and_value_and_grad(ml: ModuleType) -> None:
    cotangents = [rand(3, seed=7), rand(3, seed=8)]
    (primals, vjps) = mx.vjp(lambda x: list(ml.mean_var(x)), [X], cotangents)
    (want_primals, want_vjps) = mx.vjp(lambda x: list(mean_var(x)), [X], cotangents)
    assert all(close(a, b) for a, b in zip(primals, want_primals, strict=True))
    assert close(vjps[0], want_vjps[0], 1e-4)
    value, grads = mx.value_and_grad(lambda x, y: mx.sum(ml.axpby(x, y, 2.0, 3.0) ** 2), [0, 1])(
        X, Y
    )
    assert close(value, mx.sum((2 * X + 3 * Y) ** 2), 1e-4)
    assert close(grads[0], 4 * (2 * X + 3 * Y), 1e-4)
    assert close(grads[1], 6 * (2 * X + 3 * Y), 1e-4)


def test_list_gradients(ml: ModuleType) -> None:
    weights = mx.array([0.5, -2.0])
    got = mx.grad(lambda xs: mx.sum(ml.weighted_sum(xs, weights) ** 2))([X, Y])
    want = mx.grad(lambda xs: mx.sum(weighted_sum(xs, weights) ** 2))([X, Y])
    assert all(close(g, w, 1e-4) for g, w in zip(got, want, strict=True))


def test_primitive_without_formulas_is_not_differentiable(ml: ModuleType) -> None:
    with pytest.raises(ValueError, match="Minmax"):
        mx.grad(lambda x: ml.minmax(x)[1])(X)


# -- mx.compile ----------------------------------------------------------------------------


@pytest.mark.parametrize(("name", "call", "reference", "arrays"), CASES, ids=IDS)
def test_compiled_functions_give_the_same_results(
    ml: ModuleType, name: str, call: Fn, reference: Fn, arrays: tuple[Any, ...]
) -> None:
    fn = call(ml)
    compiled = mx.compile(fn)
    for g, w in zip(outputs(compiled(*arrays)), outputs(fn(*arrays)), strict=True):
        assert close(g, w), name
    compiled_grads = gradients(fn, arrays, compiled=True)
    for g, w in zip(compiled_grads, gradients(fn, arrays), strict=True):
        assert close(g, w, 1e-5), name


def test_compile_tells_primitives_apart_by_their_arguments(ml: ModuleType) -> None:
    fn = mx.compile(lambda x: ml.clip_scale(x, limit=0.5) + ml.clip_scale(x, limit=1.0))
    assert close(fn(X), clip_scale(X, limit=0.5) + clip_scale(X, limit=1.0))


# -- bad calls -----------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("call", "signature"),
    [
        (lambda m: m.rms_norm(X), "rms_norm(x: mlx.core.array, weight: mlx.core.array, eps: float"),
        (lambda m: m.rms_norm(X, "w"), "rms_norm(x: mlx.core.array, weight: mlx.core.array"),
        (lambda m: m.softplus(X, 2.0), "softplus(x: mlx.core.array, *, beta: float = 1.0, "),
        (lambda m: m.axpby(X, Y, alpha="2"), "axpby(x: mlx.core.array, y: mlx.core.array, "),
        (lambda m: m.weighted_sum([X, "y"]), "weighted_sum(xs: collections.abc.Sequence[mlx.core."),
        (lambda m: m.clip_scale(x=X, lim=1.0), "clip_scale(x: mlx.core.array, *, limit: float"),
    ],
)
def test_bad_calls_raise_type_error_with_the_signature(
    ml: ModuleType, call: Fn, signature: str
) -> None:
    with pytest.raises(TypeError) as error:
        call(ml)
    assert "incompatible function arguments" in str(error.value)
    assert signature in str(error.value)


def test_docstrings_follow_the_signature(ml: ModuleType) -> None:
    doc = ml.softplus.__doc__
    assert doc.startswith("softplus(x: mlx.core.array, *, beta: float = 1.0, threshold: ")
    assert doc.endswith(
        "log(1 + exp(beta * x)) / beta, computed without overflow.\n\n"
        "Where beta * x exceeds `threshold` (if given), x itself."
    )


# -- the stub ------------------------------------------------------------------------------

# How nanobind writes the types of the stub: MLX's stream union, then qualified names.
_STREAM = "mlx.core.Stream | mlx.core.ThreadLocalStream | mlx.core.Device | mlx.core.DeviceType"
_RUNTIME_NAMES = [
    (f"{_STREAM} | None", "StreamOrDevice"),
    ("collections.abc.", ""),
    ("mlx.core.", ""),
]


def _runtime_signature(fn: Any) -> tuple[ast.FunctionDef, tuple[object, ...]]:
    text, _doc, defaults = fn.__nb_signature__[0]
    for long, short in _RUNTIME_NAMES:
        text = text.replace(long, short)
    text = re.sub(r"\\(\d+)", r"__default_\1", text)
    tree = ast.parse(text + ": ...")
    node = tree.body[0]
    assert isinstance(node, ast.FunctionDef)
    return node, defaults


def _parameters(node: ast.FunctionDef) -> list[tuple[str, bool, str]]:
    """(name, keyword-only, annotation) of each parameter."""
    args = node.args
    return [
        (a.arg, keyword, ast.unparse(a.annotation or ast.Constant(None)))
        for keyword, group in ((False, args.args), (True, args.kwonlyargs))
        for a in group
    ]


def test_stub_matches_the_runtime_signatures(ml: ModuleType) -> None:
    for module_name in SPECS:
        module = importlib.import_module(f"mlx_library.{module_name}")
        stub = ast.parse(Path(str(module.__file__)).with_name(f"{module_name}.pyi").read_text())
        functions = [n for n in stub.body if isinstance(n, ast.FunctionDef)]
        assert sorted(f.name for f in functions) == sorted(
            n for n in dir(module) if not n.startswith("_")
        )
        for function in functions:
            runtime, defaults = _runtime_signature(getattr(module, function.name))
            assert _parameters(function) == _parameters(runtime), function.name
            assert ast.unparse(function.returns) == ast.unparse(runtime.returns)  # type: ignore[arg-type]
            stub_defaults = function.args.defaults + function.args.kw_defaults
            runtime_defaults = runtime.args.defaults + runtime.args.kw_defaults
            assert len(stub_defaults) == len(runtime_defaults), function.name
            for s, r in zip(stub_defaults, runtime_defaults, strict=True):
                assert s is not None and r is not None
                index = int(ast.unparse(r).removeprefix("__default_"))
                if not (isinstance(s, ast.Constant) and s.value is Ellipsis):
                    assert ast.literal_eval(s) == defaults[index], function.name


SAMPLE = """\
from collections.abc import Sequence

import mlx.core as mx

import mlx_library as ml
from mlx_library import kernels, ops


def total(xs: Sequence[mx.array]) -> mx.array:
    return ml.weighted_sum(xs, mx.array([1.0, 2.0]))


x = mx.ones((2, 3))
w = mx.ones((3,))
y: mx.array = ml.rms_norm(x, w, 1e-6, stream=mx.cpu)
mean, var = ops.mean_var(x, axis=0)
lo, hi = kernels.minmax(x)
q = ml.linear(x, mx.ones((4, 3)), None) + ml.linear(x, mx.ones((4, 3)), mx.ones((4,)))
r = ml.softplus(x, beta=2.0, threshold=None) + ml.swish(x, beta=0.5)
s = ml.axpby(x, x, 2.0, beta=3.0) + ml.clip_scale(x, limit=0.5, scale=3.0)
t: mx.array = total([x, x]) + ml.scaled_add(x, x, alpha=2.0) + mean + var + lo + hi
"""
BAD_SAMPLE = """\
import mlx.core as mx

import mlx_library as ml

x = mx.ones((2, 3))
ml.rms_norm(x)
ml.softplus(x, 2.0)
n: int = ml.axpby(x, x)
ml.mean_var(x, axis="0")
"""


def test_stub_passes_mypy_strict(ml: ModuleType, tmp_path: Path) -> None:
    mypy = pytest.importorskip("mypy.api", reason="the stub is checked with mypy")
    root = str(Path(str(ml.__file__)).parents[1])
    (tmp_path / "sample.py").write_text(SAMPLE)
    (tmp_path / "bad.py").write_text(BAD_SAMPLE)
    flags = ["--strict", "--cache-dir", str(tmp_path / "cache"), "--no-incremental"]
    os.environ["MYPYPATH"] = root
    try:
        good = mypy.run([*flags, str(tmp_path / "sample.py")])
        bad = mypy.run([*flags, str(tmp_path / "bad.py")])
    finally:
        del os.environ["MYPYPATH"]
    assert good[2] == 0, good[0]
    assert [line.split(": error: ")[1] for line in bad[0].splitlines() if ": error: " in line] == [
        'Missing positional argument "weight" in call to "rms_norm"  [call-arg]',
        'Too many positional arguments for "softplus"  [call-arg]',
        'Incompatible types in assignment (expression has type "array", variable has type "int")'
        "  [assignment]",
        'Argument "axis" to "mean_var" has incompatible type "str"; expected "int"  [arg-type]',
    ]
