"""examples/mlx_core's submodules: mlx.core.linalg, fft, random and fast, from the spec.

The example's spec binds, besides mlx.core's functions, those of its submodules as
submodules of `mlx_core_ops` of the same names (`linalg.norm` in the spec is
`mlx_core_ops.linalg.norm`, calling mlx::core::linalg::norm). The module is the one
test_mlx_core.py builds (its `built` and `core` fixtures). Then:

- each submodule has every function of mlx.core's but those the spec lists as left
  hand-written, and nothing else;
- each function's signature (`__nb_signature__`) is mlx.core's: the same parameter
  names, kinds and defaults;
- the random functions draw from mlx.core.random's global key sequence, and seed it;
- their errors are mlx.core's.

MLX's own test_linalg.py, test_fft.py, test_random.py and test_fast.py run with the
submodules served in test_mlx_core.py.
"""

from __future__ import annotations

from collections.abc import Callable
from types import ModuleType
from typing import Any

import mlx.core as mx
import pytest
from tests.examples.test_mlx_core import built, core, functions, parameters  # noqa: F401

# Each submodule's functions MLX binds (MLX 0.32.2), and those the spec leaves
# hand-written (listed with the reason in its comments).
HAND_WRITTEN = {
    "linalg": [],
    "fft": [],
    "random": [],
    "fast": ["cuda_kernel", "metal_kernel", "precompiled_cuda_kernel"],
}


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


def test_random_draws_from_mlx_cores_global_key_sequence(core: ModuleType) -> None:  # noqa: F811
    random = core.random
    draws = ("uniform", "normal", "gumbel", "laplace", "bernoulli", "randint")
    arguments: dict[str, tuple[object, ...]] = {"randint": (0, 1000)}

    def drawn(modules: list[ModuleType]) -> list[object]:
        return [
            getattr(m, name)(*arguments.get(name, ())).item() for name in draws for m in modules
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


def test_seeds_are_mlx_cores_64_bit_unsigned_integers(core: ModuleType) -> None:  # noqa: F811
    for seed in (0, 2**31, 2**40 + 7, 2**64 - 1):
        assert core.random.key(seed).tolist() == mx.random.key(seed).tolist()
        core.random.seed(seed)
        ours = mx.random.uniform().item()
        mx.random.seed(seed)
        assert ours == mx.random.uniform().item()
    for seed in (-1, 2**64):
        for module in (core.random, mx.random):
            for function in (module.seed, module.key):
                with pytest.raises(TypeError):
                    function(seed)


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
