"""examples/mlx_core's methods of `array`: what `mlx_core_ops.array_methods()` gives.

The module is the one test_mlx_core.py builds (its `built` and `core` fixtures), and
nothing here sets the methods on `mlx.core.array`: each is called from the dict and
compared with MLX's own of the same name. Then:

- the dict holds every method, operator and property MLX binds on its `array`
  (python/src/array.cpp, MLX 0.32.2) but those the spec lists as left hand-written;
- each method's signature is MLX's: the same parameter names, kinds and defaults;
- each property is a property and reads what MLX's reads;
- each operator gives MLX's result (values and dtype) or MLX's error (type and
  message) for operands of every kind, on each side; an in-place operator returns the
  array itself, changed as MLX's changes it;
- each named method gives MLX's result for the calls below.

MLX's own test files run with the methods set on `mlx.core.array`: test_mlx_core.py.
And a small mlx.nn model (`mlx_nn_training.py`) trains to the same losses with mlx.core
served by the module as with plain mlx.core.
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
import numpy as np
import pytest
from tests.examples.test_mlx_core import MODULE, built, core, parameters  # noqa: F401 (fixtures)

# What MLX binds on `array` and the spec leaves hand-written (with the reasons in it).
HAND_WRITTEN = {
    "__repr__",
    "__format__",
    "__iter__",
    "__getstate__",
    "__setstate__",
    "__deepcopy__",
    "__array__",
    "__array_namespace__",
    "__dlpack__",
    "__dlpack_device__",
    "__init__",
}


class Wrapped:
    """An object MLX takes as an array through `__mlx_array__`."""

    def __mlx_array__(self) -> mx.array:
        return mx.array([2.0, 3.0])


def arrays() -> dict[str, mx.array]:
    return {
        "float32": mx.array([[1.5, -2.0], [3.0, 4.0]]),
        "int32": mx.array([[1, -2], [3, 4]]),
        "int16": mx.array([1, 2], dtype=mx.int16),
        "uint8": mx.array([1, 2], dtype=mx.uint8),
        "bool": mx.array([True, True]),  # no zero: an integer division by it is a SIGFPE
        "complex64": mx.array([1 + 2j, 3j]),
        "float16": mx.array([0.5, 2.0], dtype=mx.float16),
    }


OTHERS: dict[str, object] = {
    "int": 2,
    "negative int": -3,
    "large int": 2**40,
    "float": -1.5,
    "bool": True,
    "complex": 1 + 1j,
    "float32 ndarray": np.array([1.0, 2.0], dtype=np.float32),
    "int64 ndarray": np.array([[1, 2], [3, 4]]),
    "list": [1, 2],
    "str": "x",
    "None": None,
    "0-d array": mx.array(2.0),
    "uint8 array": mx.array([1, 2], dtype=mx.uint8),
    "__mlx_array__": Wrapped(),
}


# Indexing, compared with MLX's in test_mlx_indexing.py: MLX reads out of bounds (and
# may crash) for an index past an axis.
INDEXING = ("__getitem__", "__setitem__")
INTEGER_DIVISIONS = {f"__{form}{op}__" for form in ("", "r", "i") for op in ("floordiv", "mod")}


def mlx_attributes() -> set[str]:
    """What MLX binds on `array`: its nanobind functions and its properties."""
    return {
        n
        for n, v in vars(mx.array).items()
        if hasattr(v, "__nb_signature__") or isinstance(v, property)
    }


def outcome(function: Callable[..., object], *args: object, **kwargs: object) -> object:
    """What a call gives, comparably: an array's dtype and values, another value, or the
    error's type and message (a TypeError's type alone: nanobind lists the signature)."""
    try:
        value = function(*args, **kwargs)
    except TypeError:
        return "TypeError"
    except Exception as error:
        return type(error).__name__, str(error)
    return comparable(value)


def comparable(value: object) -> object:
    if isinstance(value, mx.array):  # (the values by their text: NaN is NaN)
        return "array", value.dtype, value.shape, repr(np.array(value).tolist())
    if isinstance(value, list):
        return [comparable(v) for v in value]
    return value


def test_the_methods_are_mlx_cores_but_the_hand_written(core: ModuleType) -> None:  # noqa: F811
    ours = set(core.array_methods())
    assert ours & HAND_WRITTEN == set()
    assert sorted(ours | HAND_WRITTEN) == sorted(mlx_attributes())


def signatures(function: object) -> list[list[tuple[str, str, object]]]:
    texts = function.__nb_signature__  # type: ignore[attr-defined]
    comparable = []
    for text, _, defaults in texts:
        found = parameters(text, defaults)
        comparable.append([(n, k, list(d) if isinstance(d, tuple) else d) for n, k, d in found])
    return comparable


def test_each_signature_is_mlx_cores(core: ModuleType) -> None:  # noqa: F811
    methods = core.array_methods()
    differing = {
        name: (signatures(method), signatures(vars(mx.array)[name]))
        for name, method in methods.items()
        if not isinstance(method, property)
        and signatures(method) != signatures(vars(mx.array)[name])
    }
    assert differing == {}


def test_each_property_is_mlx_cores(core: ModuleType) -> None:  # noqa: F811
    properties = {n: v for n, v in core.array_methods().items() if isinstance(v, property)}
    assert sorted(properties) == sorted(
        n for n, v in vars(mx.array).items() if isinstance(v, property)
    )
    for a in arrays().values():
        for name, value in properties.items():
            if name == "at":  # an `ArrayAt` of each: their updates are test_mlx_indexing.py's
                assert type(value.fget(a)).__name__ == type(a.at).__name__
                continue
            assert outcome(value.fget, a) == outcome(getattr, a, name), name


def _operators(module: ModuleType) -> dict[str, Any]:
    return {
        n: v
        for n, v in module.array_methods().items()
        if n.startswith("__") and n not in ("__len__", "__copy__", *INDEXING)
    }


def test_each_operator_gives_mlx_cores_result_or_error(core: ModuleType) -> None:  # noqa: F811
    differing = []
    for name, ours in _operators(core).items():
        theirs = vars(mx.array)[name]
        binary = len(signatures(theirs)[0]) == 2
        for kind in arrays():
            for other_kind, other in OTHERS.items() if binary else [("", None)]:
                if (kind, other_kind) == ("bool", "large int") and name in INTEGER_DIVISIONS:
                    continue  # MLX wraps the int to a bool's zero and divides: a SIGFPE
                arguments = (other,) if binary else ()
                # in-place operators change their array: each side has a fresh one
                mine = outcome(ours, arrays()[kind], *arguments)
                mlx = outcome(theirs, arrays()[kind], *arguments)
                if mine != mlx:
                    differing.append((name, kind, other_kind, mine, mlx))
    assert differing == []


def test_an_inplace_operator_returns_the_array_itself_changed(core: ModuleType) -> None:  # noqa: F811
    methods = core.array_methods()
    inplace = sorted(
        n for n in methods if n.startswith("__i") and n not in ("__invert__", "__int__")
    )
    assert len(inplace) == 13
    for name in inplace:
        operand = mx.array([[2, 3], [1, 2]]) if name == "__imatmul__" else 2
        ours, theirs = mx.array([[4, 6], [8, 10]]), mx.array([[4, 6], [8, 10]])
        if name in ("__itruediv__", "__imatmul__"):  # floating point only
            ours, theirs = ours.astype(mx.float32), theirs.astype(mx.float32)
        assert methods[name](ours, operand) is ours
        assert vars(mx.array)[name](theirs, operand) is theirs
        assert comparable(ours) == comparable(theirs), name


CALLS: list[tuple[str, tuple[object, ...], dict[str, object]]] = [
    ("sum", (), {}),
    ("sum", (0,), {"keepdims": True}),
    ("sum", (), {"axis": [0, 1]}),
    ("reshape", (4,), {}),
    ("reshape", ((1, 4),), {}),
    ("reshape", (2, -1), {}),
    ("transpose", (), {}),
    ("transpose", (1, 0), {}),
    ("transpose", ((1, 0),), {}),
    ("astype", (mx.int32,), {}),
    ("astype", (mx.float16, mx.cpu), {}),
    ("cumsum", (), {}),
    ("cumsum", (0,), {"reverse": True, "inclusive": False}),
    ("cumprod", (1,), {}),
    ("cummax", (), {}),
    ("cummin", (0,), {}),
    ("logcumsumexp", (), {}),
    ("round", (1,), {}),
    ("view", (mx.int32,), {}),
    ("split", (2,), {}),
    ("split", ([1],), {"axis": 1}),
    ("moveaxis", (0, 1), {}),
    ("swapaxes", (0, 1), {}),
    ("flatten", (), {}),
    ("squeeze", (), {}),
    ("var", (), {"ddof": 1}),
    ("std", (0,), {}),
    ("diag", (), {"k": 1}),
    ("diagonal", (), {}),
    ("argmax", (), {}),
    ("argmin", (1,), {"keepdims": True}),
    ("logsumexp", (), {}),
    ("max", (), {}),
    ("min", (0,), {}),
    ("mean", (), {}),
    ("prod", (), {}),
    ("all", (), {}),
    ("any", (0,), {}),
    ("abs", (), {}),
    ("exp", (), {}),
    ("log", (), {}),
    ("log2", (), {}),
    ("log10", (), {}),
    ("log1p", (), {}),
    ("sqrt", (), {}),
    ("rsqrt", (), {}),
    ("square", (), {}),
    ("reciprocal", (), {}),
    ("sin", (), {}),
    ("cos", (), {}),
    ("conj", (), {}),
    ("__len__", (), {}),
    ("__copy__", (), {}),
    ("item", (), {}),  # an error: 4 elements
    ("tolist", (), {}),
    ("reshape", (3,), {}),  # an error: 4 elements
    ("transpose", (0,), {}),  # an error: two axes
]


@pytest.mark.parametrize(("name", "args", "kwargs"), CALLS, ids=lambda v: str(v))
def test_each_method_gives_mlx_cores_result(
    core: ModuleType,  # noqa: F811
    name: str,
    args: tuple[object, ...],
    kwargs: dict[str, object],
) -> None:
    ours = core.array_methods()[name]
    for a in (mx.array([[1.5, 2.0], [3.0, 4.0]]), mx.array([[1, 2], [3, 4]])):
        assert outcome(ours, a, *args, **kwargs) == outcome(getattr(a, name), *args, **kwargs)


def test_every_named_method_is_called_above(core: ModuleType) -> None:  # noqa: F811
    named = {
        n
        for n, v in core.array_methods().items()
        if not isinstance(v, property) and not n.startswith("__")
    }
    assert named - {name for name, _, _ in CALLS} == set()


def test_mlx_nn_trains_alike_on_the_module(built: Path) -> None:  # noqa: F811
    script = Path(__file__).with_name("mlx_nn_training.py")

    def run(*module: str) -> dict[str, list[Any]]:
        env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(built), str(script.parent)]))
        done = subprocess.run(
            [sys.executable, str(script), *module], capture_output=True, text=True, env=env
        )
        assert done.returncode == 0, done.stderr
        found: dict[str, list[Any]] = json.loads(done.stdout)
        return found

    plain, served = run(), run("--module", MODULE)
    assert plain["losses"][-1] < plain["losses"][0]  # it trains
    assert {"matmul", "fast.layer_norm", "array.__matmul__"} <= set(served["served"])
    assert served["losses"] == plain["losses"]


ONE_ELEMENT = {
    "bool": mx.array([False]),
    "uint64": mx.array([7], dtype=mx.uint64),
    "int8": mx.array([[-3]], dtype=mx.int8),
    "int64": mx.array(-(2**40)),
    "float16": mx.array(2.5, dtype=mx.float16),
    "bfloat16": mx.array(-0.75, dtype=mx.bfloat16),
    "float32": mx.array([1e-3]),
    "float64": mx.array(0.1, dtype=mx.float64),
    "complex64": mx.array(1 - 2j),
    "nan": mx.array(float("nan")),
}


@pytest.mark.parametrize("name", ["item", "__bool__", "__int__", "__float__", "__complex__"])
def test_an_array_of_one_element_converts_to_python_as_mlx_cores(
    core: ModuleType,  # noqa: F811
    name: str,
) -> None:
    ours = core.array_methods()[name]
    for kind, a in ONE_ELEMENT.items():
        mine, theirs = outcome(ours, a), outcome(vars(mx.array)[name], a)
        assert (repr(mine), type(mine)) == (repr(theirs), type(theirs)), kind  # NaN: by text


def test_tolist_gives_mlx_cores_lists_for_every_dtype_and_layout(core: ModuleType) -> None:  # noqa: F811
    tolist = core.array_methods()["tolist"]
    base = mx.arange(24).reshape(2, 3, 4)
    layouts = {
        "transposed": base.transpose(2, 0, 1),
        "sliced": base[:, ::-2, 1:],
        "broadcast": mx.broadcast_to(mx.array([1, 2]), (3, 2)),
        "0-d": mx.array(7),
        "empty": mx.zeros((2, 0, 3)),
    }
    arrays = {**layouts, **{kind: a for kind, a in ONE_ELEMENT.items() if kind != "nan"}}
    arrays.update({str(t): base.astype(t) for t in (mx.bool_, mx.uint8, mx.float16, mx.complex64)})
    for kind, a in arrays.items():
        mine, theirs = tolist(a), a.tolist()
        assert (mine, repr(mine)) == (theirs, repr(theirs)), kind
