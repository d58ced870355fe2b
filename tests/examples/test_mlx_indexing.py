"""examples/mlx_core's indexing: `a[index]`, `a[index] = values` and `a.at[index]`.

The spec declares them with the `Index` type and the `ArrayAt` property, and the
generated module re-implements MLX's indexing by Python objects. Each is compared with
MLX's own on the same array and index: every index of up to three items drawn from ints,
slices, None, the Ellipsis, arrays and lists (the result's dtype, shape and values, or
the error's type and message), the updates and their gradients on a sample of them, and
random indices of arrays of one to four dimensions.

Where MLX 0.32.2 fails, NumPy is the oracle: values NumPy broadcasts and MLX refuses,
indices MLX crashes on or updates the wrong positions at. An int past an axis, where MLX
reads memory it does not own, is an IndexError, as in NumPy.
"""

from __future__ import annotations

import functools
import itertools
import math
import random
from collections.abc import Callable
from types import ModuleType
from typing import Any

import mlx.core as mx
import numpy as np
import pytest
from tests.examples.test_mlx_core import built, core  # noqa: F401 (fixtures)
from tests.examples.test_mlx_methods import comparable, outcome

# Index items in range for every axis of a (2, 3, 4) array: MLX reads memory it does not
# own for a slice past an axis's end among arrays, so none is here.
ITEMS: list[object] = [
    0,
    -1,
    1,
    slice(None),
    slice(1, None),
    slice(None, None, -1),
    slice(0, None, 2),
    None,
    Ellipsis,
    mx.array([0, 1, 1]),
    [1, 0, 1],
    mx.array([[0], [1]]),
]


def indices() -> list[object]:
    single = list(ITEMS)
    tuples = [t for n in (1, 2, 3) for t in itertools.product(ITEMS, repeat=n)]
    return [*single, *tuples]


def cube() -> mx.array:
    return mx.arange(24).reshape(2, 3, 4)


def test_reading_at_any_index_gives_mlx_cores_result(core: ModuleType) -> None:  # noqa: F811
    get = core.array_methods()["__getitem__"]
    differing = []
    for index in indices():
        ours, theirs = outcome(get, cube(), index), outcome(mx.array.__getitem__, cube(), index)
        if ours != theirs:
            differing.append((index, ours, theirs))
    assert len(indices()) == 12 + 12 + 12**2 + 12**3
    assert differing[:20] == [] and len(differing) == 0


@pytest.mark.parametrize(
    "index",
    [(), 1.5, "x", True, (0, 0, 0, 0), (0, ..., ...), mx.array([True, False]), (slice(0.5),)],
    ids=repr,
)
def test_an_index_mlx_refuses_is_refused_alike(core: ModuleType, index: object) -> None:  # noqa: F811
    get = core.array_methods()["__getitem__"]
    assert outcome(get, cube(), index) == outcome(mx.array.__getitem__, cube(), index)


def test_a_zero_dimensional_array_is_indexed_as_mlx_core_does(core: ModuleType) -> None:  # noqa: F811
    get = core.array_methods()["__getitem__"]
    for index in [(), ..., None, (None, ...), 0, (0,), slice(None)]:
        a = mx.array(7.0)
        assert outcome(get, a, index) == outcome(mx.array.__getitem__, a, index), index


def test_an_int_past_an_axis_is_an_index_error(core: ModuleType) -> None:  # noqa: F811
    get = core.array_methods()["__getitem__"]
    with pytest.raises(IndexError, match="index 2 is out of bounds for axis 0 with size 2"):
        get(cube(), 2)
    with pytest.raises(IndexError, match="index -4 is out of bounds for axis 1 with size 3"):
        get(cube(), (0, -4))


# Indices whose positions are each named once: assigning to a repeated position keeps
# any one of its values, in MLX as here.
UPDATED: list[object] = [
    0,
    -1,
    (1, 2),
    slice(None),
    (slice(None), 1),
    (Ellipsis, slice(None, None, -2)),
    (None, 0, slice(1, None)),
    mx.array([1, 0]),
    (slice(None), [2, 0]),
    (mx.array([1, 0]), slice(None), mx.array([[3], [0]])),
    (0, None, mx.array([0, 2])),
    (),
    Ellipsis,
]


def values_for(a: mx.array, index: object) -> list[object]:
    shape = a[index].shape
    return [
        5,
        -2.5,
        mx.full(shape, 7, dtype=mx.int32),
        mx.ones((1, *shape), dtype=mx.float32) * 3,
        mx.arange(shape[-1]) if shape else mx.array(4),
        mx.ones((2, 5)),  # broadcasts to none of them: an error
    ]


def _set(a: mx.array, index: object, value: object, setitem: Callable[..., object]) -> object:
    try:
        setitem(a, index, value)
    except Exception as error:
        return type(error).__name__, str(error)
    return comparable(a)


def _numpy(value: object) -> object:
    if isinstance(value, tuple):
        return tuple(_numpy(v) for v in value)
    return np.array(value) if isinstance(value, mx.array) else value


def as_mlx_reads(index: object, ndim: int) -> object:
    """The index for NumPy to read as MLX does: an Ellipsis that stands for no axis does
    not separate the arrays around it (for NumPy it does)."""
    if not isinstance(index, tuple) or Ellipsis not in index:
        return index
    axes = sum(i is not None and i is not Ellipsis for i in index)
    return tuple(i for i in index if i is not Ellipsis) if axes == ndim else index


def numpys(a: mx.array, index: object, value: object, update: str) -> object:
    """NumPy's result of `a[index] = value` ("set") or of `a.at[index].<update>(value)`:
    `value` in the array's dtype, its leading axes of one element dropped, broadcast to
    what the index names."""
    n, where, v = np.array(a), _numpy(as_mlx_reads(index, a.ndim)), np.array(_numpy(value))
    if update == "divide":
        v = 1 / v
    v = v.astype(n.dtype)
    v = v.reshape(v.shape[next((i for i, d in enumerate(v.shape) if d != 1), v.ndim) :])
    try:
        v = np.broadcast_to(v, n[where].shape)
    except (ValueError, IndexError):
        return "ValueError"
    if update == "set":
        n[where] = v
    else:
        ufunc = {"divide": np.multiply, "maximum": np.maximum, "minimum": np.minimum}
        ufunc.get(update, getattr(np, update)).at(n, where, v)
    return comparable(mx.array(n))


def agree(ours: object, theirs: object | None, numpy: Callable[[], object]) -> bool:
    """Ours is MLX's outcome, or MLX fails and ours is NumPy's: MLX refuses values NumPy
    broadcasts, with messages naming the shapes it made, and fails on some indices with
    None (`IndexError: SmallVector out of range.`)."""
    if ours == theirs:
        return True
    failed = isinstance(theirs, tuple) and theirs[0] in ("ValueError", "IndexError")
    if theirs is not None and not failed:  # None: NumPy alone is the oracle
        return False
    expected = numpy()
    return ours == expected or (expected == "ValueError" and ours[0] == "ValueError")  # type: ignore[index]


def test_assigning_at_an_index_changes_the_array_as_mlx_core_does(core: ModuleType) -> None:  # noqa: F811
    setitem = core.array_methods()["__setitem__"]
    differing, refused_by_mlx = [], 0
    for dtype in (mx.int32, mx.float16):
        for index in UPDATED:
            for value in values_for(cube(), index):
                ours = _set(cube().astype(dtype), index, value, setitem)
                theirs = _set(cube().astype(dtype), index, value, mx.array.__setitem__)
                numpy = functools.partial(numpys, cube().astype(dtype), index, value, "set")
                refused_by_mlx += ours != theirs
                if not agree(ours, theirs, numpy):
                    differing.append((dtype, index, value, ours, theirs))
    assert differing == []
    assert refused_by_mlx == 18


def test_assigning_keeps_the_array_object(core: ModuleType) -> None:  # noqa: F811
    setitem = core.array_methods()["__setitem__"]
    a = cube()
    before = id(a)
    setitem(a, (0, 0), 100)
    assert id(a) == before and a[0, 0].tolist() == [100] * 4


UPDATES = ("add", "subtract", "multiply", "divide", "maximum", "minimum")


def _update(at: Any, index: object, name: str, value: object) -> object:
    return getattr(at[index], name)(value)


def test_each_update_at_an_index_gives_mlx_cores_result(core: ModuleType) -> None:  # noqa: F811
    at = core.array_methods()["at"]
    differing, refused_by_mlx = [], 0
    repeated = [*UPDATED, mx.array([0, 0, 1]), (slice(None), [1, 1, 1])]
    for dtype in (mx.int32, mx.float32, mx.uint8):
        for index in repeated:
            for value in values_for(cube(), index):
                for name in UPDATES:
                    a = cube().astype(dtype)
                    ours = outcome(_update, at.fget(a), index, name, value)
                    theirs = outcome(_update, a.at, index, name, value)
                    numpy = functools.partial(numpys, a, index, value, name)
                    refused_by_mlx += ours != theirs
                    if not agree(ours, theirs, numpy):
                        differing.append((dtype, index, value, name, ours, theirs))
    assert differing == []
    assert refused_by_mlx == 162


def test_at_without_an_index_is_mlx_cores_error(core: ModuleType) -> None:  # noqa: F811
    at = core.array_methods()["at"]
    assert outcome(lambda: at.fget(cube()).add(1)) == outcome(lambda: cube().at.add(1))


def test_the_update_methods_have_mlx_cores_signatures(core: ModuleType) -> None:  # noqa: F811
    from tests.examples.test_mlx_methods import signatures

    ours = type(core.array_methods()["at"].fget(cube()))
    theirs = type(cube().at)
    for name in (*UPDATES, "__getitem__"):
        assert signatures(getattr(ours, name)) == signatures(getattr(theirs, name)), name


def test_gradients_through_indexing_are_mlx_cores(core: ModuleType) -> None:  # noqa: F811
    methods = core.array_methods()
    src = mx.array([[1.0, 5.0, 3.0], [2.0, 2.0, 0.5]])

    def get(s: mx.array, index: object) -> mx.array:
        return methods["__getitem__"](s, index)  # type: ignore[no-any-return]

    updates = mx.array([[2.0], [3.0]])
    cotangent = mx.array([[4.0, 5.0, 6.0], [7.0, 8.0, 9.0]])
    for index in [1, (slice(None), 1), (Ellipsis, [1, 1]), mx.array([1, 0])]:
        for name in UPDATES:

            def ours(s: mx.array, u: mx.array, index: object = index, name: str = name) -> mx.array:
                return getattr(methods["at"].fget(s)[index], name)(u)  # type: ignore[no-any-return]

            def theirs(
                s: mx.array, u: mx.array, index: object = index, name: str = name
            ) -> mx.array:
                return getattr(s.at[index], name)(u)  # type: ignore[no-any-return]

            up = updates if src[index].ndim == 2 else updates[0]
            assert gradients(ours, [src, up], cotangent) == gradients(
                theirs, [src, up], cotangent
            ), (index, name)
        assert gradients(functools.partial(get, index=index), [src], src[index]) == gradients(
            lambda s, i=index: s[i], [src], src[index]
        )


def gradients(
    function: Callable[..., mx.array], inputs: list[mx.array], cotangent: mx.array
) -> object:
    """The vector-Jacobian products of `function` at `inputs`, comparably, or its error."""
    try:
        _, products = mx.vjp(function, inputs, [cotangent])
    except Exception as error:
        return type(error).__name__, str(error)
    return [comparable(p) for p in products]


def random_index(rng: random.Random, shape: tuple[int, ...]) -> object:
    """An index of up to four items for an array of `shape`, in range for every axis: ints
    and positions from -n to n - 1, a slice's bounds from -n to n (a backward slice's start
    below n), n the shortest axis's length. (MLX writes past the array at a position past
    an axis, and reads past it at a slice past an axis among arrays.)"""
    items: list[object] = []
    n = min(shape)
    for _ in range(rng.randint(1, 4)):
        kind = rng.choice(["int", "slice", "slice", "None", "...", "array", "list"])
        if kind == "None":
            items.append(None)
            continue
        if kind == "...":
            items.append(Ellipsis)
            continue
        if kind == "int":
            items.append(rng.randint(-n, n - 1))
        elif kind == "slice":
            step = rng.choice([None, 1, 2, -1, -2, 3])
            high = n - 1 if step is not None and step < 0 else n
            start = rng.choice([None, rng.randint(-n, high)])
            items.append(slice(start, rng.choice([None, rng.randint(-n, n)]), step))
        else:
            size = rng.choice([(1,), (3,), (2, 1), (2, 3)])
            values = [rng.randint(-n, n - 1) for _ in range(math.prod(size))]
            array = mx.array(values).reshape(size)
            items.append(array if kind == "array" else array.tolist())
    return tuple(items) if len(items) > 1 or rng.random() < 0.3 else items[0]


def crashes_mlx(index: object, shape: tuple[int, ...]) -> bool:
    """Whether MLX 0.32.2 may crash (SIGSEGV) on the index: more items than axes beside an
    Ellipsis, or an empty slice among arrays. (Of the random indices below, each that
    crashed MLX, tried one process each, is one of these; not each of these crashes.)"""
    items = index if isinstance(index, tuple) else (index,)
    if sum(i is Ellipsis for i in items) > 1:
        return False  # MLX's error
    count = sum(i is not None and i is not Ellipsis for i in items)
    if count > len(shape):
        return Ellipsis in items
    positions = any(isinstance(i, (list, mx.array)) for i in items)
    axis = 0
    for item in items:
        if item is Ellipsis:
            axis += len(shape) - count
        elif item is not None:
            if isinstance(item, slice) and positions and not range(*item.indices(shape[axis])):
                return True
            axis += 1
    return False


def misplaced_by_mlx(index: object) -> bool:
    """Whether MLX 0.32.2 updates other positions than the index names, silently: a
    negative int after a None (`a.at[None, -1]` updates `a[1]` of four, or nothing)."""
    items = index if isinstance(index, tuple) else (index,)
    after_none = False
    for item in items:
        after_none = after_none or item is None
        if after_none and isinstance(item, int) and item < 0:
            return True
    return False


def numpy_reads(a: mx.array, index: object) -> object:
    try:
        return comparable(mx.array(np.array(a)[_numpy(as_mlx_reads(index, a.ndim))]))
    except IndexError:
        return "IndexError"


@pytest.mark.parametrize("shape", [(5,), (2, 3, 4), (3, 2, 2, 4)], ids=str)
def test_random_indices_of_other_shapes_give_mlx_cores_results(
    core: ModuleType,  # noqa: F811
    shape: tuple[int, ...],
) -> None:
    """Where MLX crashes or updates other positions, the oracle is NumPy (too many
    indices: MLX's error)."""
    methods = core.array_methods()
    rng = random.Random(0)
    differing, crashing, misplacing = [], 0, 0
    for _ in range(400):
        index = random_index(rng, shape)
        a = mx.arange(math.prod(shape)).reshape(shape)
        ours = outcome(methods["__getitem__"], a, index)
        crashes = crashes_mlx(index, shape)
        crashing += crashes
        if crashes:
            expected = numpy_reads(a, index)
            if expected == "IndexError":
                expected = (
                    "ValueError",
                    f"Too many indices for array with {len(shape)} dimensions.",
                )
        else:
            expected = outcome(mx.array.__getitem__, a, index)
        if ours != expected:
            differing.append(("get", index, ours, expected))
        numpy_only = crashes or misplaced_by_mlx(index)
        misplacing += not crashes and numpy_only
        for name in ("add", "maximum"):
            mine = outcome(_update, methods["at"].fget(a), index, name, 3)
            numpy = functools.partial(numpys, a, index, 3, name)
            theirs = None if numpy_only else outcome(_update, a.at, index, name, 3)
            if not agree(mine, theirs, numpy):
                differing.append((name, index, mine, theirs))
        ours = _set(mx.array(a), index, -1, methods["__setitem__"])
        numpy = functools.partial(numpys, a, index, -1, "set")
        theirs = None if numpy_only else _set(mx.array(a), index, -1, mx.array.__setitem__)
        if not agree(ours, theirs, numpy):
            differing.append(("set", index, ours, theirs))
    assert differing == []
    assert (crashing, misplacing) == {(5,): (57, 16), (2, 3, 4): (22, 7), (3, 2, 2, 4): (33, 7)}[
        shape
    ]
