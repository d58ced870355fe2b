"""The Python package around the extension: `__init__.py`, `_operators.py` (OPERATORS),
the runtime (`_runtime.py`, a template as it is), and the stubs.

The extension `_ops` (built by CMake from the C++ files) holds the functions; OPERATORS
maps each operator's name (`aten::add.Tensor`) to its function; `call` and `load` are the
runtime's.
"""

from __future__ import annotations

from opgen.api.aten_mlx import python_name, return_type, stub_signature
from opgen.spec.lowering.model import LoweringSpec
from opgen.targets.aten_mlx.functions import function_parameters


def init_source(spec: LoweringSpec, generated: str) -> str:
    count = len(spec.lowerings)
    return f'''# {generated}
"""PyTorch's ATen operators on MLX: {count} overloads, each a function taking mx.arrays.

OPERATORS maps an operator's name (`aten::add.Tensor`) to its function; `call(name, ...)`
calls one with PyTorch's values; `load(exported_program)` runs a torch.export program.
"""

import mlx.core  # registers MLX's types, which the extension's functions take

from . import _ops
from ._operators import OPERATORS
from ._runtime import MlxProgram, call, load, to_mlx

__all__ = ["OPERATORS", "MlxProgram", "call", "load", "to_mlx"]
'''


def operators_source(spec: LoweringSpec, generated: str) -> str:
    lines = [
        f"# {generated}",
        '"""OPERATORS: each lowered operator\'s name, and its function."""',
        "",
        "from . import _ops",
        "",
        "OPERATORS = {",
        *(
            f'    "{lowering.name}": _ops.{python_name(lowering.function.func.name)},'
            for lowering in spec.lowerings
        ),
        "}",
        "",
    ]
    return "\n".join(lines)


def ops_stub(spec: LoweringSpec, generated: str) -> str:
    lines = [
        f"# {generated}",
        "from collections.abc import Sequence",
        "",
        "import mlx.core",
        "from mlx.core import Dtype, array",
        "",
    ]
    for lowering in spec.lowerings:
        func = lowering.function.func
        _, returns = return_type(func.returns)
        signature = stub_signature(python_name(func.name), function_parameters(lowering), returns)
        lines.append(f"{signature}: ...")
    lines.append("")
    return "\n".join(lines)


def init_stub(generated: str) -> str:
    return f"""# {generated}
from collections.abc import Callable, Mapping
from typing import Any

from . import _ops as _ops
from ._runtime import MlxProgram as MlxProgram
from ._runtime import call as call
from ._runtime import load as load
from ._runtime import to_mlx as to_mlx

OPERATORS: Mapping[str, Callable[..., Any]]
"""
