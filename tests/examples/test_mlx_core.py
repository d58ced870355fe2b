"""examples/mlx_core: mlx.core's operators from one spec, held to MLX's own tests.

opgen generates `mlx_core_ops` from examples/mlx_core/mlx_core.yaml (every function of
mlx.core that MLX's python/src/ops.cpp binds, but those listed as left hand-written) and
CMake builds it with the example's CMakeLists.txt, once per test session, into a
temporary directory or under OPGEN_EXAMPLE_BUILD_DIR (kept between test sessions). Then:

- MLX's test_ops.py, test_linalg.py, test_fft.py, test_random.py and test_fast.py (at
  MLX 0.32.2; OPGEN_MLX_TESTS, else ../shared/mlx/tests beside the checkout:
  `tests.reference_data`; skipped without them) each run twice, in processes of their
  own: with plain mlx.core, and with every function the module has served from it.
  Every test that passes with plain mlx.core must pass with the module.
- Each function's signature (`__nb_signature__`) is mlx.core's: the same parameter
  names, kinds (positional-only, keyword-only, variadic) and defaults, except where
  MLX's hand-written signature text is wrong about its own binding (`MLX_TEXT_DIFFERS`,
  each with what the binding does).
- Where MLX takes an array, the generated functions take what mlx.core takes (Python
  numbers and complex numbers, NumPy arrays of any layout, DLPack objects, objects with
  `__mlx_array__`) to the same dtype and values, and refuse what it refuses with the
  same error; the module keeps no state of its own and changes none of mlx.core's.
"""

from __future__ import annotations

import ast
import json
import os
import re
import shutil
import subprocess
import sys
from collections.abc import Callable, Iterator
from decimal import Decimal
from fractions import Fraction
from functools import partial
from pathlib import Path
from types import ModuleType
from typing import Any

import mlx.core as mx
import numpy as np
import pytest
from tests.examples.mlx_build import build_extension
from tests.examples.mlx_tests_runner import public
from tests.reference_data import MLX_TESTS_DEFAULT, MLX_TESTS_VARIABLE, missing, mlx_tests

ROOT = Path(__file__).parents[2]
EXAMPLE = ROOT / "examples" / "mlx_core"
RUNNER = Path(__file__).with_name("mlx_tests_runner.py")
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
    """The functions of a module that stand for mlx.core's (not `array_methods`)."""
    return public(module)


def served(module: ModuleType) -> list[str]:
    """What the runner serves of a generated module, as it lists it."""
    submodules = sorted(n for n, v in vars(module).items() if isinstance(v, ModuleType))
    return [
        *functions(module),
        *[f"{sub}.{name}" for sub in submodules for name in functions(getattr(module, sub))],
        *[f"array.{name}" for name in sorted(module.array_methods())],
    ]


def run_mlx_tests(tmp: Path, built: Path | None, test_file: str) -> dict[str, object]:
    out = tmp / f"{test_file}-{'generated' if built else 'baseline'}.json"
    command = [sys.executable, str(RUNNER), str(mlx_tests()), str(out), "--test-file", test_file]
    env = dict(os.environ)
    if built is not None:
        command += ["--module", MODULE]
        env["PYTHONPATH"] = os.pathsep.join([str(built), env.get("PYTHONPATH", "")])
    done = subprocess.run(command, capture_output=True, text=True, env=env)
    assert out.is_file(), f"{test_file}.py did not run:\n{done.stdout}\n{done.stderr}"
    result: dict[str, object] = json.loads(out.read_text())
    return result


def test_the_module_generates_nearly_every_function_of_ops_cpp(core: ModuleType) -> None:
    names = functions(core)
    assert len(names) >= GENERATED_AT_LEAST
    not_mlx = [n for n in names if not hasattr(mx, n)]
    assert not_mlx == []


# MLX's own test files (MLX 0.32.2), and how many of their tests pass with plain mlx.core
# at least. On a Linux CPU: 156 of 157, 18 of 18, 15 of 18, 14 of 14 and 18 of 28; the
# others are skipped there. Where the environment has CI set, as CI services do, one
# test of test_ops and one of test_fast (test_rope_large_input) skip themselves too.
MLX_TEST_FILES = {
    "test_ops": 150,
    "test_linalg": 18,
    "test_fft": 15,
    "test_random": 14,
    "test_fast": 17,
}


@pytest.mark.parametrize("test_file", list(MLX_TEST_FILES))
def test_mlx_tests_pass_with_the_generated_module(
    built: Path, core: ModuleType, tmp_path: Path, test_file: str
) -> None:
    """Functions, submodules and the methods of `array`, all served at once."""
    if not (mlx_tests() / f"{test_file}.py").is_file():
        missing(f"MLX 0.32.2's own {test_file}.py", MLX_TESTS_VARIABLE, MLX_TESTS_DEFAULT)
    baseline = run_mlx_tests(tmp_path, None, test_file)
    generated = run_mlx_tests(tmp_path, built, test_file)
    assert generated["served"] == served(core)
    before = baseline["outcomes"]
    after = generated["outcomes"]
    assert isinstance(before, dict) and isinstance(after, dict)
    passing = sorted(t for t, outcome in before.items() if outcome == "pass")
    assert len(passing) >= MLX_TEST_FILES[test_file]
    broken = [t for t in passing if after.get(t) != "pass"]
    assert broken == []


def parameters(
    text: str, defaults: tuple[object, ...] | None = None
) -> list[tuple[str, str, object]]:
    """(name, kind, default) of each parameter of a `def` signature text. nanobind marks a
    default by position (`\\0`) and gives its value in `defaults`, if it gives them; without,
    a marked default reads as None."""
    if defaults is not None:
        text = re.sub(r"\\(\d+)", lambda m: repr(defaults[int(m.group(1))]), text)
    else:
        text = re.sub(r"= \\0\)", "= None)", text)
    text = re.sub(r"\bmlx\.core\.|\bcollections\.abc\.", "", text)
    text = re.sub(r"\bndarray\[[^\]]*\]", "ndarray", text)  # nanobind's `ndarray[writable=False]`
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
    return [parameters(t[0]) for t in texts]


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


# -- array-likes: what the generated functions take where MLX takes an array --------------


class _Given:
    """An object that gives an mlx array through `__mlx_array__`."""

    def __init__(self, array: mx.array) -> None:
        self.array = array

    def __mlx_array__(self) -> mx.array:
        return self.array


class _DLPack:
    """An object that is only a DLPack producer (a torch tensor's, passed on)."""

    def __init__(self, tensor: Any) -> None:
        self.tensor = tensor

    def __dlpack__(self, **kwargs: Any) -> Any:
        return self.tensor.__dlpack__(**kwargs)

    def __dlpack_device__(self) -> Any:
        return self.tensor.__dlpack_device__()


def _torch() -> Any:
    return pytest.importorskip("torch")


FLOATS = [mx.float16, mx.bfloat16, mx.float32, mx.float64]
COMPLEX_SCALARS = [1e-3 + 0j, 0.1 + 0.2j, -1j, 1 + 2j, complex(1e300, 0)]


def _pair(dtype: mx.Dtype) -> mx.array:
    return mx.array([1.5, -2.0], dtype=dtype)


def _numpy_cases() -> dict[str, Callable[[], tuple[object, ...]]]:
    """NumPy arrays, complex, float64 and not contiguous (MLX refuses negative strides),
    alone and with mlx arrays; buffers."""
    grid = np.arange(12.0).reshape(3, 4) - 5.5
    cases: dict[str, Callable[[], tuple[object, ...]]] = {
        "complex64": lambda: (np.array([1 + 2j, -0.5j], np.complex64), 1),
        "complex128": lambda: (np.array([1e-3 + 2j, -0.5j]), 1),
        "complex128-float16": lambda: (np.array([1.5 + 2j, 3j]), _pair(mx.float16)),
        "complex128-int32": lambda: (mx.array([1, 2]), np.array([1.5 + 2j, 3j])),
        "complex-slice": lambda: (np.array([1j, 2, 3j, 4], np.complex64)[::2], 1.5),
        "float64": lambda: (np.array([0.1, 1e-3]), 2.0),
        "float64-float16": lambda: (_pair(mx.float16), np.array([0.1, 1e-3])),
        "float64-int32": lambda: (np.array([1.5, 3.0]), mx.array([1, 2])),
        "slice": lambda: (grid[:, ::2], 1),
        "negative-stride": lambda: (grid[::-1], mx.array(1, mx.float16)),
        "transpose": lambda: (grid.T, grid.T),
        "transpose-bfloat16": lambda: (mx.array(1, mx.bfloat16), grid.T),
        "int64-transpose": lambda: (np.arange(6).reshape(2, 3).T, 1),
        "bool-slice": lambda: (np.array([True, False, True, True])[::2], True),
        "empty-slice": lambda: (grid[:, :0], 1),
        "scalar-float32": lambda: (np.float32(1.5), _pair(mx.float16)),
        "scalar-complex128": lambda: (np.complex128(1j), _pair(mx.float16)),
        "scalar-int64": lambda: (np.int64(3), mx.array([1], mx.int8)),
        "bytes": lambda: (b"ab", 1),
        "memoryview-slice": lambda: (memoryview(bytearray(b"abcdef"))[::2], 1),
        "broadcast": lambda: (np.broadcast_to(np.arange(3.0), (2, 3)), 0.5),
    }
    return cases


def _torch_cases() -> dict[str, Callable[[], tuple[object, ...]]]:
    """Objects MLX takes through DLPack: torch tensors, and an object that is only
    `__dlpack__`; those it refuses (not on the CPU)."""

    def tensor(*shape: int, dtype: str = "float32") -> Any:
        torch = _torch()
        return torch.arange(float(np.prod(shape))).reshape(shape).to(getattr(torch, dtype))

    return {
        "torch": lambda: (tensor(2, 3), 1),
        "torch-float64": lambda: (tensor(3, dtype="float64"), 0.5),
        "torch-complex64": lambda: (tensor(3, dtype="complex64"), 1j),
        "torch-complex128": lambda: (tensor(3, dtype="complex128"), _pair(mx.float32)[:1]),
        "torch-bfloat16": lambda: (tensor(2, dtype="bfloat16"), 1.5),
        "torch-transpose": lambda: (tensor(2, 3).T, mx.array(1, mx.float16)),
        "torch-slice": lambda: (tensor(6)[::2], 1),
        "torch-requires-grad": lambda: (tensor(2).requires_grad_(), 1),
        "torch-meta": lambda: (_torch().ones(2, device="meta"), 1),
        "dlpack": lambda: (_DLPack(tensor(3)), 1),
        "dlpack-transpose": lambda: (_DLPack(tensor(2, 3).T), 1),
    }


def _scalar_cases() -> dict[str, Callable[[], tuple[object, ...]]]:
    """Python complex numbers alone and with arrays of each float dtype (a complex is
    complex64 whatever it meets), numbers MLX takes as complex, what MLX refuses."""
    cases: dict[str, Callable[[], tuple[object, ...]]] = {}
    for i, c in enumerate(COMPLEX_SCALARS):
        cases[f"complex{i}"] = partial(tuple, (c, 0))
        cases[f"complex{i}-complex"] = partial(tuple, (c, 2 - 1j))
    for dtype in [*FLOATS, mx.int32, mx.bool_, mx.complex64]:
        name = str(dtype).removeprefix("mlx.core.")
        cases[f"{name}-complex"] = partial(_with_array, dtype, 1e-3 + 0j, first=True)
        cases[f"complex-{name}"] = partial(_with_array, dtype, 0.5 + 1j, first=False)
    cases["fraction"] = lambda: (Fraction(1, 2), 1)
    cases["decimal"] = lambda: (Decimal("0.25"), _pair(mx.float16))
    refused: dict[str, Callable[[], object]] = {
        "list": lambda: [1, 2],
        "tuple": lambda: (1, 2),
        "str": lambda: "12",
        "none": lambda: None,
        "dict": lambda: {},
        "object": object,
        "numpy-object": lambda: np.array([1, None], dtype=object),
        "numpy-str": lambda: np.array(["a"]),
        "int-2**63": lambda: 2**63,
        "overflow": lambda: 300,
    }
    for name, value in refused.items():
        cases[f"refused-{name}"] = partial(_beside_int8, value)
    return cases


def _with_array(dtype: mx.Dtype, value: object, *, first: bool) -> tuple[object, ...]:
    return (_pair(dtype), value) if first else (value, _pair(dtype))


def _beside_int8(value: Callable[[], object]) -> tuple[object, ...]:
    return (mx.array([1], mx.int8), value())


ARRAY_LIKES = {**_scalar_cases(), **_numpy_cases(), **_torch_cases()}


def _outcome(function: Callable[..., Any], *args: object) -> tuple[object, ...]:
    """What a call gives: the array's dtype, shape and values, or the error's type and
    message (of a TypeError, its first and last lines: the signature between them is the
    binding's own text, which differs where MLX's is wrong, MLX_TEXT_DIFFERS)."""
    try:
        result = function(*args)
    except Exception as error:
        lines = str(error).splitlines()
        shown = [lines[0], lines[-1]] if isinstance(error, TypeError) else lines
        return (type(error).__name__, *shown)
    assert isinstance(result, mx.array)
    return (result.dtype, result.shape, repr(result.tolist()))  # repr: NaN equals NaN


def _calls(args: tuple[object, ...]) -> dict[str, Callable[[ModuleType], tuple[object, ...]]]:
    """Each function on the same inputs: `add` and `array_equal` on both, `where` with a
    condition, `matmul` on both, `sum` on the first (these two take mlx arrays only)."""
    a, b = args
    condition = mx.array(True)
    return {
        "add": lambda m: _outcome(m.add, a, b),
        "add-swapped": lambda m: _outcome(m.add, b, a),
        "where": lambda m: _outcome(m.where, condition, a, b),
        "where-condition": lambda m: _outcome(m.where, a, 1.5, b),
        "array_equal": lambda m: _outcome(m.array_equal, a, b),
        "matmul": lambda m: _outcome(m.matmul, a, b),
        "sum": lambda m: _outcome(m.sum, a),
    }


@pytest.mark.parametrize("case", sorted(ARRAY_LIKES))
def test_array_likes_are_taken_as_mlx_core_takes_them(core: ModuleType, case: str) -> None:
    """The same dtype, shape and values, or the same error, for each function."""
    differing = {}
    for name, call in _calls(ARRAY_LIKES[case]()).items():
        expected = call(mx)
        got = call(core)
        if got != expected:
            differing[name] = (expected, got)
    assert differing == {}


def _operands(core: ModuleType, count: int) -> list[str]:
    """The functions whose parameters are `count` array-likes, positional-only, and the
    stream."""
    operands = ", ".join(f"{p}: scalar | array" for p in "abc"[:count])
    tail = f"({operands}, /, *, stream: StreamOrDevice = None) -> array"
    return [
        n
        for n in functions(core)
        if [s[0] for s in getattr(core, n).__nb_signature__] == [f"def {n}{tail}"]
    ]


# No value truncates to integer 0 (int32 beside an int32 array): MLX's integer division
# by 0 is SIGFPE.
ELEMENTWISE_INPUTS: dict[str, Callable[[], object]] = {
    "complex": lambda: 1e-3 + 0.5j,
    "complex128-slice": lambda: np.array([1.5 + 1j, 2, -3.25 + 0.5j, 3])[::2],
    "float64-transpose": lambda: (np.arange(6.0).reshape(2, 3) / 7 + 1.5).T,
    "int64-slice": lambda: np.arange(1, 9)[::3],
    "torch-slice": lambda: _torch().arange(6.0)[::2] / 5 + 1,
    "dlpack": lambda: _DLPack(_torch().ones(2, dtype=_torch().float64) * 4 / 3),
    "fraction": lambda: Fraction(4, 3),
    "list": lambda: [1.0],
}


@pytest.mark.parametrize("given", sorted(ELEMENTWISE_INPUTS))
def test_every_elementwise_function_takes_array_likes_as_mlx_core(
    core: ModuleType, given: str
) -> None:
    """Each function of one or two array-likes, on the input alone, and beside a float16
    and an int32 array (MLX's weak scalars), as mlx.core gives it or refuses it."""
    unary, binary = _operands(core, 1), _operands(core, 2)
    assert len(unary) >= 40 and len(binary) >= 25
    half = mx.array([1.5, -2.0], dtype=mx.float16)
    whole = mx.array([3, 1])
    value = ELEMENTWISE_INPUTS[given]
    calls: dict[str, tuple[str, Callable[[], tuple[object, ...]]]] = {}
    calls |= {f"{n}(x)": (n, lambda: (value(),)) for n in unary}
    calls |= {f"{n}(x, half)": (n, lambda: (value(), half)) for n in binary}
    calls |= {f"{n}(whole, x)": (n, lambda: (whole, value())) for n in binary}
    differing = {}
    for label, (name, args) in calls.items():
        expected = _outcome(getattr(mx, name), *args())
        got = _outcome(getattr(core, name), *args())
        if got != expected:
            differing[label] = (expected, got)
    assert differing == {}


def test_the_complex_mlx_developers_passed(core: ModuleType) -> None:
    z = mx.array([1.0, 2.0], dtype=mx.float16)
    for module in (mx, core):
        result = module.where(mx.array([True, False]), 1e-3 + 0j, z)
        assert result.dtype == mx.complex64
        assert result.tolist() == [(0.0010000000474974513 + 0j), (2 + 0j)]
        assert module.array_equal(np.array([1j, 2]), np.array([1j, 2])).item() is True
        assert module.array_equal(np.arange(4.0)[::2], mx.array([0.0, 2.0])).item() is True


def test_an_object_giving_an_mlx_array_is_taken_where_mlx_raises_bad_cast(
    core: ModuleType,
) -> None:
    """MLX takes an `__mlx_array__` object alone, but where it meets another operand
    (to_arrays) it casts the method instead of its result: RuntimeError std::bad_cast.
    The generated functions take it there too, as the array it gives."""
    x = mx.array([1.0, 2.0], dtype=mx.float16)
    for module in (mx, core):
        assert module.abs(_Given(-x)).tolist() == [1.0, 2.0]
        assert module.where(_Given(mx.array([True, False])), x, 1.5).tolist() == [1.0, 1.5]
        with pytest.raises(TypeError, match="incompatible function arguments"):
            module.sum(_Given(x))
    given: Any = _Given(x)  # MLX's stub says scalar | array
    with pytest.raises(RuntimeError, match="std::bad_cast"):
        mx.add(given, 1.5)
    with pytest.raises(RuntimeError, match="std::bad_cast"):
        mx.array_equal(given, x)
    assert core.add(_Given(x), 1.5).dtype == mx.float16
    assert core.add(_Given(x), 1.5).tolist() == [2.5, 3.5]
    assert core.array_equal(_Given(x), x).item() is True


STATE_CHECK = """\
import mlx.core as mx
import numpy as np


def state():
    device = mx.default_device()
    return (
        str(device),
        str(mx.default_stream(device)),
        mx.get_printoptions().precision,
        mx.random.state[0].tolist(),
        [str(mx.array(v, dtype=t)) for v in ([1 / 3, -2.0], 1.5) for t in PRINTED],
    )


PRINTED = [mx.float16, mx.bfloat16, mx.float32, mx.int32, mx.complex64]
before = state()
import mlx_core_ops as core

failing = [
    lambda: core.add([1], 1),
    lambda: core.add(mx.ones(2, mx.int8), 300),
    lambda: core.where(None, 1, 2),
    lambda: core.array_equal("x", 1),
    lambda: core.matmul(np.ones((2, 2)), mx.ones((2, 2))),
    lambda: core.zeros(2**31),
    lambda: core.reshape(mx.ones(2), [3]),
    lambda: core.add(mx.ones(2), mx.ones(3), stream=mx.cpu).item(),
]
for call in failing:
    try:
        call()
    except Exception:
        pass
    else:
        raise AssertionError("expected an error")
used = core.add(np.arange(4.0)[::2], 1e-3 + 0j, stream=mx.cpu)
mx.eval(used, core.divide(1, 3))
assert state() == before, (state(), before)

# The printing checks of MLX's test_array, on what the generated functions return.
assert str(core.add(1, 0.5)) == "array(1.5, dtype=float32)"
assert str(core.add(1, 1j)) == "array(1+1j, dtype=complex64)"
assert str(core.add(mx.array([1, 2]), 1)) == "array([2, 3], dtype=int32)"
assert str(core.equal(1, 1)) == "array(True, dtype=bool)"  # mlx.core's formatter
assert str(core.divide(1, 3)) == str(mx.divide(1, 3))
with mx.printoptions(precision=2):
    assert str(core.divide(1, 3)) == "array(0.33, dtype=float32)"
assert str(core.divide(1, 3)) == str(mx.divide(1, 3))

# What mlx.core's state says, the generated functions follow: it is the only state.
mx.set_printoptions(precision=3)
assert str(core.divide(1, 3)) == "array(0.333, dtype=float32)"
mx.set_printoptions(precision=-1)
stream = mx.new_stream(mx.cpu)
mx.set_default_stream(stream)
assert core.add(mx.ones(2), 1).tolist() == [2.0, 2.0]
with mx.stream(mx.cpu):
    assert core.multiply(mx.ones(2), 3).tolist() == [3.0, 3.0]
assert mx.default_stream(mx.default_device()) == stream
mx.random.seed(7)
drawn = mx.random.normal((2,)).tolist()
mx.random.seed(7)
mx.eval(core.exp(mx.ones(2)), core.add(1e-3 + 0j, np.ones(2)[::2]))
assert mx.random.normal((2,)).tolist() == drawn
print("ok")
"""


def test_the_module_keeps_no_state_and_changes_none_of_mlx_cores(built: Path) -> None:
    """In a fresh interpreter: importing the module and calling it, failing calls
    included, leaves mlx.core's default device and stream, print options, random key and
    printing as they were, and what they are set to afterwards holds for the module too."""
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join([str(built), env.get("PYTHONPATH", "")])
    done = subprocess.run(
        [sys.executable, "-c", STATE_CHECK], capture_output=True, text=True, env=env
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout == "ok\n"


def test_the_module_holds_no_global_of_mlx_its_own(built: Path) -> None:
    """MLX's globals (default streams, print options, the random key) live in libmlx,
    which the module links; the module defines no thread-local or unique data of its own."""
    module = next(built.glob(f"{MODULE}*.so"), None)
    if module is None or not shutil.which("readelf") or not shutil.which("ldd"):
        pytest.skip("an ELF module, readelf and ldd")
    symbols = subprocess.run(
        ["readelf", "--dyn-syms", "--wide", str(module)], capture_output=True, text=True
    ).stdout
    libraries = subprocess.run(["ldd", str(module)], capture_output=True, text=True).stdout
    assert "libmlx" in libraries
    own = [
        line
        for line in symbols.splitlines()
        if (" TLS " in line or " UNIQUE " in line) and " UND " not in line
    ]
    assert [line for line in own if "_Sp_make_shared_tag" not in line] == []
