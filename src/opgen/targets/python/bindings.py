"""The bindings files: one per Python namespace, each a template filled with its bindings.

`torch.Tensor`'s methods go to python_variable_methods.cpp, `torch.`'s
functions to python_torch_functions_<0..2>.cpp (sharded by base name, plus
the unlisted python_torch_functionsEverything.cpp), and each `python_module:`
namespace to its file (`torch.nn` to python_nn_functions.cpp, ...). Every
bound function (`should_generate_py_binding`) is paired with its Python
signature, as a method for the Tensor methods (self bound) and as a function
for the rest, and the deprecated signatures of `deprecated.yaml` are added,
when the run is read (`PythonRun.of`); the pairs are grouped by base name. A
file lists, for each name (sorted by name; in order of first appearance within
a shard), the ATen operator header of its base name, its forward declaration,
its binding function and its method table entry (`method_impl.py`). Facts from
torchgen/packaged/autograd/gen_python_functions.py (`gen`).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from functools import partial

from opgen.frozen import frozen
from opgen.output import OutputSet
from opgen.python_bindings.bound import (
    is_py_fft_function,
    is_py_linalg_function,
    is_py_nested_function,
    is_py_nn_function,
    is_py_sparse_function,
    is_py_special_function,
    is_py_torch_function,
    is_py_variable_method,
)
from opgen.python_bindings.overloads import Pair, group_by_name
from opgen.spec.native import NativeFunction
from opgen.spec.schema import BaseOperatorName
from opgen.targets.emitters import Emitted
from opgen.targets.python.method_impl import forward_decls, method_def, method_impl
from opgen.targets.python.run import PythonRun, emitted


@frozen
class Namespace:
    """One bindings file and the functions it binds."""

    file: str
    module: str | None  # the Python module; None for the Tensor methods
    binds: Callable[[NativeFunction], bool]
    num_shards: int = 0  # 0: one file


# In the order upstream writes them.
METHODS = Namespace("python_variable_methods.cpp", None, is_py_variable_method)
FUNCTIONS = (
    # The shard count must match gatherTorchFunctions in PyTorch's
    # torch/csrc/autograd/python_torch_functions_manual.cpp.
    Namespace("python_torch_functions.cpp", "torch", is_py_torch_function, 3),
    Namespace("python_nn_functions.cpp", "torch.nn", is_py_nn_function),
    Namespace("python_fft_functions.cpp", "torch.fft", is_py_fft_function),
    Namespace("python_linalg_functions.cpp", "torch.linalg", is_py_linalg_function),
    Namespace("python_nested_functions.cpp", "torch.nested", is_py_nested_function),
    Namespace("python_sparse_functions.cpp", "torch.sparse", is_py_sparse_function),
    Namespace("python_special_functions.cpp", "torch.special", is_py_special_function),
)

_SHARDED_KEYS = ("ops_headers", "py_forwards", "py_methods", "py_method_defs")


def emit_bindings(run: PythonRun) -> Emitted:
    """Every bindings file, from the run's signatures; what else is wrong (an argument
    the parser cannot read, say) fails as the files render, which is still before any
    is written."""
    out = run.output_set()
    _add_namespace(run, out, METHODS, run.method_pairs, method=True)
    for namespace in FUNCTIONS:
        _add_namespace(run, out, namespace, run.pairs, method=False)
    return emitted(out)


def _add_namespace(
    run: PythonRun, out: OutputSet, namespace: Namespace, pairs: Sequence[Pair], *, method: bool
) -> None:
    comment = f"@generated from {run.template_comment_dir}/{namespace.file}"
    if namespace.num_shards:
        entry = partial(_entry, run, namespace, method=method)
        out.add_sharded(
            namespace.file,
            list(group_by_name(pairs, namespace.binds).items()),
            key=_shard_key,
            env=lambda item: entry(*item),
            num_shards=namespace.num_shards,
            sharded_keys=_SHARDED_KEYS,
            base_env={"generated_comment": comment},
        )
        return

    def render() -> str:
        grouped = group_by_name(pairs, namespace.binds)
        entries = [
            _entry(run, namespace, name, grouped[name], method=method)
            for name in sorted(grouped, key=str)
        ]
        lists = {key: [value for e in entries for value in e[key]] for key in _SHARDED_KEYS}
        return out.render(namespace.file, {"generated_comment": comment, **lists})

    out.add(namespace.file, render)


def _shard_key(item: tuple[BaseOperatorName, list[Pair]]) -> str:
    return item[0].base


def _entry(
    run: PythonRun,
    namespace: Namespace,
    name: BaseOperatorName,
    overloads: Sequence[Pair],
    *,
    method: bool,
) -> dict[str, list[str]]:
    """What one name adds to each of the template's lists."""
    module = namespace.module
    release = run.release
    return {
        "ops_headers": [f"#include <ATen/ops/{name.base}.h>"],
        "py_forwards": forward_decls(name, overloads, method=method),
        "py_methods": [
            method_impl(name, module, overloads, run.signatures, method=method, release=release)
        ],
        "py_method_defs": [method_def(name, module, overloads, method=method)],
    }
