"""examples/mlx_core: mlx.core's operators from one spec, held to MLX's own tests.

opgen generates `mlx_core_ops` from examples/mlx_core/mlx_core.yaml (every function of
mlx.core that MLX's python/src/ops.cpp binds, but those listed as left hand-written) and
CMake builds it with the example's CMakeLists.txt, once per test session, into a
temporary directory or under OPGEN_EXAMPLE_BUILD_DIR (kept between test sessions). Then:

- MLX's test_ops.py (at MLX 0.32.2; OPGEN_MLX_TESTS, else ../shared/mlx/tests beside
  the checkout: `tests.reference_data`; skipped without it) runs twice, in processes of
  their own: with plain mlx.core, and with every function the module has served from
  it. Every test that passes with plain mlx.core must pass with the module.
- Each function's signature (`__nb_signature__`) is mlx.core's: the same parameter
  names, kinds (positional-only, keyword-only, variadic) and defaults, except where
  MLX's hand-written signature text is wrong about its own binding (`MLX_TEXT_DIFFERS`,
  each with what the binding does).
"""

from __future__ import annotations

import ast
import json
import os
import re
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from types import ModuleType

import mlx.core as mx
import pytest
from tests.examples.mlx_build import build_extension
from tests.reference_data import mlx_tests

ROOT = Path(__file__).parents[2]
EXAMPLE = ROOT / "examples" / "mlx_core"
RUNNER = Path(__file__).with_name("mlx_ops_runner.py")
MODULE = "mlx_core_ops"
# Of the functions ops.cpp binds (MLX 0.32.2), the example generates at least 190.
GENERATED_AT_LEAST = 190

_OPERATORS = "positional-only and keyword-only parameters"
_POSITIONAL = "the first parameters are positional-only"
# Where MLX's hand-written `nb::sig` text says other than what its binding does (checked
# at run time when the spec was written); the generated signature says what it does.
MLX_TEXT_DIFFERS = {
    **{
        name: f"{_OPERATORS}: the text shows `a`, `b` keyword-able and the stream positional"
        for name in [
            "add",
            "subtract",
            "multiply",
            "divide",
            "floor_divide",
            "remainder",
            "divmod",
            "equal",
            "not_equal",
            "less",
            "less_equal",
            "greater",
            "greater_equal",
            "left_shift",
            "right_shift",
            "bitwise_and",
            "bitwise_or",
            "bitwise_xor",
            "bitwise_left_shift",
            "bitwise_right_shift",
            "bitwise_invert",
            "array_equal",
        ]
    },
    **{
        name: f"{_OPERATORS}: the text shows `a` keyword-able or the stream positional"
        for name in [
            "conj",
            "conjugate",
            "isfinite",
            "isinf",
            "isnan",
            "isneginf",
            "isposinf",
            "round",
            "view",
            "hadamard_transform",
            "nan_to_num",
        ]
    },
    **{
        name: _POSITIONAL
        for name in [
            "concat",
            "concatenate",
            "stack",
            "full_like",
            "repeat",
            "pad",
            "slice",
            "slice_update",
            "qqmm",
            "from_fp8",
            "to_fp8",
        ]
    },
    "depends": "inputs and dependencies are positional-only; the text shows them keyword-able",
    "quantize": "global_scale is positional-or-keyword; the text shows it keyword-only",
    "vecdot": "axis is positional-or-keyword; the text shows it keyword-only",
    "roll": "only `a` is positional-only; the text puts '/' after axis",
    "sum": "the array parameter is named `array` and keyword-able; the text says `a, /`",
    "tri": "m defaults to None, k to 0 and dtype to float32; the text shows no defaults",
    "tril": "k defaults to 0; the text shows none",
    "triu": "k defaults to 0; the text shows none",
}


@pytest.fixture(scope="session")
def built(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The directory holding the built module."""
    kept = os.environ.get("OPGEN_EXAMPLE_BUILD_DIR")
    work = Path(kept) / "mlx_core" if kept else tmp_path_factory.mktemp("mlx_core")
    return generate_and_build(EXAMPLE / "mlx_core.yaml", EXAMPLE, work)


def generate_and_build(spec: Path, project: Path, work: Path) -> Path:
    """`opgen mlx` on `spec` into work/generated, then the CMake `project` into
    work/cmake; the directory holding the module."""
    return build_extension([spec], project, work / "generated", work / "cmake")


@pytest.fixture(scope="session")
def core(built: Path) -> Iterator[ModuleType]:
    sys.path.insert(0, str(built))
    try:
        import mlx_core_ops

        yield mlx_core_ops
    finally:
        sys.path.remove(str(built))


def functions(module: ModuleType) -> list[str]:
    return sorted(n for n in vars(module) if not n.startswith("_") and callable(getattr(module, n)))


def run_test_ops(tmp: Path, built: Path | None) -> dict[str, object]:
    out = tmp / ("generated.json" if built else "baseline.json")
    command = [sys.executable, str(RUNNER), str(mlx_tests()), str(out)]
    env = dict(os.environ)
    if built is not None:
        command += ["--module", MODULE]
        env["PYTHONPATH"] = os.pathsep.join([str(built), env.get("PYTHONPATH", "")])
    done = subprocess.run(command, capture_output=True, text=True, env=env)
    assert out.is_file(), f"test_ops.py did not run:\n{done.stdout}\n{done.stderr}"
    result: dict[str, object] = json.loads(out.read_text())
    return result


def test_the_module_generates_nearly_every_function_of_ops_cpp(core: ModuleType) -> None:
    names = functions(core)
    assert len(names) >= GENERATED_AT_LEAST
    not_mlx = [n for n in names if not hasattr(mx, n)]
    assert not_mlx == []


def test_mlx_test_ops_passes_with_the_generated_functions(
    built: Path, core: ModuleType, tmp_path: Path
) -> None:
    baseline = run_test_ops(tmp_path, None)
    generated = run_test_ops(tmp_path, built)
    assert generated["served"] == functions(core)
    before = baseline["outcomes"]
    after = generated["outcomes"]
    assert isinstance(before, dict) and isinstance(after, dict)
    passing = sorted(t for t, outcome in before.items() if outcome == "pass")
    assert len(passing) >= 150  # test_ops.py of MLX 0.32.2 has 157 tests
    broken = [t for t in passing if after.get(t) != "pass"]
    assert broken == []


def _parameters(text: str) -> list[tuple[str, str, object]]:
    """(name, kind, default) of each parameter of a `def` signature text."""
    text = re.sub(r"= \\0\)", "= None)", text)  # nanobind's mark of a default it cannot show
    tree = ast.parse(text.rstrip() + ": ...").body[0]
    assert isinstance(tree, ast.FunctionDef)
    a = tree.args

    def value(node: ast.expr | None) -> object:
        if node is None:
            return None
        return node.id if isinstance(node, ast.Name) else ast.literal_eval(node)

    named = [(p.arg, "positional-only") for p in a.posonlyargs]
    named += [(p.arg, "positional") for p in a.args]
    defaults: list[object] = [None] * (len(named) - len(a.defaults))
    defaults += [value(d) for d in a.defaults]
    if a.vararg is not None:
        named.append((a.vararg.arg, "variadic"))
        defaults.append(None)
    named += [(p.arg, "keyword-only") for p in a.kwonlyargs]
    defaults += [value(d) for d in a.kw_defaults]
    return [(name, kind, default) for (name, kind), default in zip(named, defaults, strict=True)]


def _signatures(function: object) -> list[list[tuple[str, str, object]]]:
    texts = function.__nb_signature__
    return [_parameters(t[0]) for t in texts]


def test_each_signature_is_mlx_cores_but_where_mlx_text_is_wrong(core: ModuleType) -> None:
    differing = sorted(
        n for n in functions(core) if _signatures(getattr(core, n)) != _signatures(getattr(mx, n))
    )
    assert differing == sorted(MLX_TEXT_DIFFERS)


def test_where_mlx_text_is_wrong_the_names_and_defaults_still_agree_but_four(
    core: ModuleType,
) -> None:
    def names_and_defaults(function: object) -> list[list[tuple[str, object]]]:
        return [[(n, d) for n, _, d in s] for s in _signatures(function)]

    differing = sorted(
        n
        for n in MLX_TEXT_DIFFERS
        if names_and_defaults(getattr(core, n)) != names_and_defaults(getattr(mx, n))
    )
    assert differing == ["sum", "tri", "tril", "triu"]


def test_behaviour_mlx_text_hides(core: ModuleType) -> None:
    """What MLX's text gets wrong, and the generated functions get right, at run time."""
    x = mx.ones((2, 2))
    for module in (mx, core):
        with pytest.raises(TypeError):
            module.add(a=x, b=x)
        with pytest.raises(TypeError):
            module.add(x, x, None)  # the stream is keyword-only
        assert module.sum(array=x).item() == 4.0
        assert module.tril(x).tolist() == [[1.0, 0.0], [1.0, 1.0]]
        assert module.tri(2).dtype == mx.float32


def test_the_stub_passes_mypy_strict(built: Path) -> None:
    stub = built.parent / "generated" / f"{MODULE}.pyi"  # beside the build
    done = subprocess.run(
        [sys.executable, "-m", "mypy", "--strict", "--no-incremental", str(stub)],
        capture_output=True,
        text=True,
    )
    assert done.returncode == 0, done.stdout


def test_weak_scalars_and_shapes_behave_as_mlx_core(core: ModuleType) -> None:
    half = mx.ones((2,), dtype=mx.float16)
    small = mx.ones((2,), dtype=mx.int8)
    for module in (mx, core):
        assert module.add(half, 1.0).dtype == mx.float16
        assert module.multiply(2, small).dtype == mx.int8
        assert module.add(1, 2.0).dtype == mx.float32
        with pytest.raises(ValueError, match="Converting 300 to int8 would result in overflow"):
            module.add(small, 300)
        with pytest.raises(OverflowError, match=str(2**31)):
            module.zeros(2**31)
        with pytest.raises(OverflowError, match=str(2**31)):
            module.reshape(half, [2**31])
        with pytest.raises(ValueError, match="Invalid type list"):
            module.add([1], 1)
        assert module.full(2, 2.5, mx.float16).dtype == mx.float16
    assert core.full(2, 2.5, mx.int32).dtype == mx.full(2, 2.5, mx.int32).dtype
    assert core.full(2, 7, mx.int8).tolist() == mx.full(2, 7, mx.int8).tolist()
    with pytest.raises(ValueError, match="would result in overflow"):
        mx.full(2, 300, mx.int8)
    with pytest.raises(ValueError, match="would result in overflow"):
        core.full(2, 300, mx.int8)
    assert core.add(mx.array(0.0, dtype=mx.float64), 0.1).item() == 0.1


SPEC_LANGUAGE = """\
- namespace: mlx::core
  module: spec_language_ops
- func: mlx::core::add(Scalar a, Scalar b) -> Tensor
  promote: [a, b]
  positional_only: [a, b]
- func: mlx::core::sum(Tensor a, bool keepdims=False) -> Tensor
  call: sum(a, keepdims)
  positional_only: [a]
- func: mlx::core::sum.axis(Tensor a, int axis, bool keepdims=False) -> Tensor
  call: sum(a, axis, keepdims)
  positional_only: [a]
- func: mlx::core::sum.axes(Tensor a, int[] axis, bool keepdims=False) -> Tensor
  call: sum(a, axis, keepdims)
  positional_only: [a]
- func: mlx::core::zeros(SymInt[] shape, ScalarType dtype=float32) -> Tensor
  call: zeros(shape, dtype)
- func: mlx::core::split(Tensor a, int sections, int axis=0) -> Tensor[]
  call: split(a, sections, axis)
- func: mlx::core::meshgrid(Tensor[] arrays, bool sparse=False, str indexing="xy") -> Tensor[]
  variadic: arrays
"""
CMAKE = """\
cmake_minimum_required(VERSION 3.18)
project(spec_language_ops LANGUAGES CXX)
include("${OPGEN_GENERATED}/spec_language_ops.cmake")
opgen_add_spec_language_ops_module(spec_language_ops)
"""


def test_the_spec_language_binds_existing_functions_too(tmp_path: Path) -> None:
    """Overload names are the unions of the spec language: sum, sum.axis and sum.axes are
    one Python `sum`, tried in that order."""
    (tmp_path / "spec.yaml").write_text(SPEC_LANGUAGE)
    (tmp_path / "CMakeLists.txt").write_text(CMAKE)
    build = generate_and_build(tmp_path / "spec.yaml", tmp_path, tmp_path)
    sys.path.insert(0, str(build))
    try:
        import spec_language_ops as ops
    finally:
        sys.path.remove(str(build))
    x = mx.ones((2, 3), dtype=mx.float16)
    assert ops.add(x, 1.0).dtype == mx.float16
    assert ops.sum(x).item() == 6.0
    assert ops.sum(x, 1).tolist() == [3.0, 3.0]
    assert ops.sum(x, [0, 1], True).tolist() == [[6.0]]
    assert ops.zeros([2]).dtype == mx.float32
    with pytest.raises(OverflowError, match=str(2**31)):
        ops.zeros([2**31])
    assert len(ops.split(mx.arange(6), 3)) == 3
    with pytest.raises(TypeError):
        ops.add(a=x, b=x)
    grids = ops.meshgrid(mx.arange(2), mx.arange(3), indexing="ij")
    assert [g.shape for g in grids] == [(2, 3), (2, 3)]
