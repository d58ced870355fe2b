"""examples/mlx_core's submodules: mlx.core.linalg, fft, random and fast, from the spec.

The example's spec binds, besides mlx.core's functions, those of its submodules as
submodules of `mlx_core_ops` of the same names (`linalg.norm` in the spec is
`mlx_core_ops.linalg.norm`, calling mlx::core::linalg::norm). The module is the one
test_mlx_core.py builds (its `built` and `core` fixtures). Then:

- each submodule has every function of mlx.core's but those the spec lists as left
  hand-written, and nothing else;
- each function's signature (`__nb_signature__`) is mlx.core's: the same parameter
  names, kinds and defaults;
- MLX's own test_linalg.py, test_fft.py, test_random.py and test_fast.py (at MLX 0.32.2)
  run twice, in processes of their own, with plain mlx.core and with every function of
  the module and of its submodules served from it (`mlx_submodules_runner.py`): every
  test that passes with plain mlx.core passes with the module;
- the random functions draw from MLX's global key sequence, seeded by the module's `seed`.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from types import ModuleType
from typing import Any

import mlx.core as mx
import pytest
from tests.examples.test_mlx_core import (  # noqa: F401 (fixtures)
    MLX_TEST_FILES,
    MODULE,
    built,
    core,
    parameters,
)
from tests.reference_data import MLX_TESTS_DEFAULT, MLX_TESTS_VARIABLE, missing, mlx_tests

RUNNER = Path(__file__).with_name("mlx_submodules_runner.py")
# Each submodule's functions MLX binds (MLX 0.32.2), and those the spec leaves
# hand-written (listed with the reason in its comments).
HAND_WRITTEN = {
    "linalg": [],
    "fft": [],
    "random": [],
    "fast": ["cuda_kernel", "metal_kernel", "precompiled_cuda_kernel"],
}
# MLX's own test files of the submodules.
SUBMODULE_TEST_FILES = [f for f in MLX_TEST_FILES if f != "test_ops"]


def functions(module: ModuleType) -> list[str]:
    return sorted(n for n in vars(module) if not n.startswith("_") and callable(getattr(module, n)))


@pytest.mark.parametrize("submodule", list(HAND_WRITTEN))
def test_each_submodule_has_mlx_cores_functions_but_the_hand_written(
    core: ModuleType,  # noqa: F811
    submodule: str,
) -> None:
    generated = functions(getattr(core, submodule))
    theirs = functions(getattr(mx, submodule))
    assert sorted([*generated, *HAND_WRITTEN[submodule]]) == theirs


def signatures(function: object) -> list[list[tuple[str, str, object]]]:
    texts = function.__nb_signature__  # type: ignore[attr-defined]
    return [parameters(text, defaults) for text, _, defaults in texts]


def _comparable(value: object) -> object:
    """A default as both sides show it: a list as a list, a dtype by its name."""
    return list(value) if isinstance(value, tuple) else value


@pytest.mark.parametrize("submodule", list(HAND_WRITTEN))
def test_each_signature_is_mlx_cores(core: ModuleType, submodule: str) -> None:  # noqa: F811
    ours, theirs = getattr(core, submodule), getattr(mx, submodule)
    differing = {}
    for name in functions(ours):
        mine = [[(n, k, _comparable(d)) for n, k, d in s] for s in signatures(getattr(ours, name))]
        mlx = [[(n, k, _comparable(d)) for n, k, d in s] for s in signatures(getattr(theirs, name))]
        if mine != mlx:
            differing[name] = (mine, mlx)
    assert differing == {}


def _run(tmp: Path, built: Path | None, test_file: str) -> dict[str, object]:  # noqa: F811
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


@pytest.mark.parametrize("test_file", SUBMODULE_TEST_FILES)
def test_mlx_tests_pass_with_the_generated_submodules(
    built: Path,  # noqa: F811
    core: ModuleType,  # noqa: F811
    tmp_path: Path,
    test_file: str,
) -> None:
    if not (mlx_tests() / f"{test_file}.py").is_file():
        missing(f"MLX 0.32.2's own {test_file}.py", MLX_TESTS_VARIABLE, MLX_TESTS_DEFAULT)
    baseline = _run(tmp_path, None, test_file)
    generated = _run(tmp_path, built, test_file)
    served = generated["served"]
    assert isinstance(served, list)
    for submodule in HAND_WRITTEN:
        module = getattr(core, submodule)
        assert [f"{submodule}.{n}" for n in functions(module)] == [
            s for s in served if s.startswith(f"{submodule}.")
        ]
    before, after = baseline["outcomes"], generated["outcomes"]
    assert isinstance(before, dict) and isinstance(after, dict)
    passing = sorted(t for t, outcome in before.items() if outcome == "pass")
    assert len(passing) >= MLX_TEST_FILES[test_file]
    broken = [t for t in passing if after.get(t) != "pass"]
    assert broken == []


def test_random_draws_from_mlx_cores_global_key_sequence(core: ModuleType) -> None:  # noqa: F811
    random = core.random
    draws = ("uniform", "normal", "gumbel", "laplace", "bernoulli", "randint")
    arguments: dict[str, tuple[object, ...]] = {"randint": (0, 1000)}

    def drawn(modules: list[ModuleType]) -> list[object]:
        return [
            getattr(m, name)(*arguments.get(name, ())).item()
            for name in draws
            for m in modules
        ]

    mx.random.seed(3)
    alone = drawn([mx.random, mx.random])
    mx.random.seed(3)  # one sequence, whichever module draws next
    assert drawn([random, mx.random]) == alone
    random.seed(3)  # which either module seeds
    assert drawn([mx.random, random]) == alone
    key = mx.random.key(1)
    for name in draws:
        ours = getattr(random, name)(*arguments.get(name, ()), key=key)
        theirs = getattr(mx.random, name)(*arguments.get(name, ()), key=key)
        assert mx.array_equal(ours, theirs).item(), name
    assert random.split(key).tolist() == mx.random.split(key).tolist()


def test_errors_are_mlx_cores(core: ModuleType) -> None:  # noqa: F811
    x = mx.ones((1, 1, 2, 4))
    calls: list[Callable[[Any], object]] = [
        lambda m: m.fft.fft(mx.array([1.0]), norm="invalid"),
        lambda m: m.fft.fftn(mx.ones((2, 2)), s=[2]),
        lambda m: m.fft.fft2(mx.ones((2, 2)), s=(2, 2), axes=None),
        lambda m: m.random.categorical(mx.zeros((3,)), shape=[2], num_samples=2),
        lambda m: m.fast.scaled_dot_product_attention(x, x, x, scale=1.0, mask="bad"),
        lambda m: m.fast.rope(x, 4, traditional=False, base=1.0, scale=1.0, offset=1.5),
        lambda m: m.fast.rope(x, 4, traditional=False, base=None, scale=1.0, offset=1),
    ]
    for call in calls:
        with pytest.raises(ValueError) as theirs:
            call(mx)
        with pytest.raises(ValueError) as ours:
            call(core)
        assert str(ours.value) == str(theirs.value)
