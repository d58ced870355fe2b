"""`<module>.pyi`: the extension's type stub, written from the spec.

opgen writes the stub itself rather than running nanobind's stubgen on the
built module: generation needs no compiler and no MLX, and the stub is exact
by construction, since the same `NbSignature` gives the binding and the
stub. The types are MLX's own (`from mlx.core import array, Dtype,
StreamOrDevice`); the imports are the union of what the signatures use,
collected per signature and rendered last.

A submodule's functions (`linalg.norm`) have a stub of their own beside the
module's, `<module>/linalg.pyi`, and the module's stub imports it (`from
<module> import linalg as linalg`): type checkers take `<module>.pyi` for the
module and the directory for its submodules, as for `<module>.linalg` at run
time.
"""

from __future__ import annotations

import math
import re
from collections.abc import Sequence

from opgen.api import mlx_python
from opgen.spec.mlx.model import BoundAs, BoundOverload, MlxFunction
from opgen.spec.mlx.python_types import dtype_name
from opgen.spec.mlx.type_mapping import DTYPE_NAMES
from opgen.targets.mlx import bound
from opgen.targets.mlx.library import BoundOperator

# Where each name the stub can use comes from.
SOURCES = {"Sequence": "collections.abc", "array": "mlx.core", "Dtype": "mlx.core"}
SOURCES["StreamOrDevice"] = "mlx.core"
SOURCES["TypeAlias"] = SOURCES["overload"] = "typing"
SOURCES["inf"] = SOURCES["nan"] = "math"  # float defaults
SOURCES.update(dict.fromkeys(DTYPE_NAMES, "mlx.core"))  # dtype defaults
# The standard library, then MLX, each a block of its own (as isort groups them).
IMPORT_GROUPS = (("collections.abc", "math", "typing"), ("mlx.core",))
# What a bound function's `scalar` is: a Python number.
SCALAR_ALIAS = "scalar: TypeAlias = bool | int | float | complex"
_WORD = re.compile(r"[A-Za-z_]\w*")


def stub(
    ops: Sequence[BoundOperator],
    namespace: str,
    comment: str,
    functions: Sequence[MlxFunction] = (),
    module: str = "",
) -> str:
    """The module's stub; with functions in submodules, it imports each from `module`."""
    own = [
        f
        for f in functions
        if not f.submodule and f.bound_as is BoundAs.FUNCTION and f.operator is None
    ]
    submodules = sorted({f.submodule for f in functions if f.submodule})  # as isort sorts
    imports = [f"from {module} import {name} as {name}" for name in submodules]
    doc = f"MLX operators of {namespace}, bound by opgen."
    methods = any(f.bound_as is not BoundAs.FUNCTION for f in functions)
    updates = [f for f in functions if f.bound_as is BoundAs.AT]
    return _stub(list(ops), doc, comment, own, imports, methods, updates)


def submodule_stub(
    submodule: str, namespace: str, comment: str, functions: Sequence[MlxFunction]
) -> str:
    """The stub of a submodule, `<module>/<submodule>.pyi`: its functions."""
    own = [f for f in functions if f.submodule == submodule]
    doc = f"Functions of {namespace}::{submodule}, bound by opgen."
    return _stub([], doc, comment, own, [])


def _stub(
    ops: list[BoundOperator],
    doc: str,
    comment: str,
    functions: Sequence[MlxFunction],
    submodule_imports: list[str],
    array_methods: bool = False,
    updates: Sequence[MlxFunction] = (),
) -> str:
    names: set[str] = set()
    for op in ops:
        names |= op.signature.stub_imports()
    body: list[str] = []
    for op in ops:
        body += [*definition(op), ""]
    for function in functions:
        overloaded = len(function.overloads) > 1
        for overload in function.overloads:
            head = mlx_python.signature_text(function.python_name, overload)
            names |= overload_names(overload)
            if overloaded:
                body.append("@overload")
                names.add("overload")
            if function.doc:
                body += [f"{head}:", f"    {docstring(function.doc)}", ""]
            else:
                body += [f"{head}: ...", ""]
    if updates:  # `a.at`'s class
        body += ["class ArrayAt:", f"    {bound.AT_GETITEM}: ..."]
        for function in updates:
            for overload in function.overloads:
                head = mlx_python.signature_text(function.python_name, overload, receiver=True)
                names |= overload_names(overload)
                body.append(f"    {head}: ...")
        body.append("")
    if array_methods:
        doc_text = docstring(bound.ARRAY_METHODS_DOC)
        body += ["def array_methods() -> dict[str, object]:", f"    {doc_text}", ""]
    scalar = "scalar" in names
    names.discard("scalar")  # the stub's own alias
    if scalar:
        names.add("TypeAlias")
    lines = [f"# {comment}", f'"""{doc}"""', ""]
    for group in IMPORT_GROUPS:
        imports = []
        for module in group:
            imported = sorted((n for n in names if SOURCES[n] == module), key=_isort_key)
            if imported:
                imports.append(f"from {module} import {', '.join(imported)}")
        if imports:
            lines += [*imports, ""]
    if submodule_imports:  # the module's own, as isort places first-party imports
        lines += [*submodule_imports, ""]
    if scalar:
        lines += [SCALAR_ALIAS, ""]
    return "\n".join([*lines, *body]).rstrip("\n") + "\n"


def overload_names(overload: BoundOverload) -> set[str]:
    """The names an overload's stub line uses: those its types and its return are spelled
    with (`scalar` among them, the stub's alias), and its dtype defaults."""
    words = {*_WORD.findall(overload.returns)}
    for p in overload.parameters:
        words.update(_WORD.findall(p.type.text))
        if p.default is None:
            continue
        if (dtype := dtype_name(p.default.value)) is not None:
            words.add(dtype)
        if isinstance(p.default.value, float) and not math.isfinite(p.default.value):
            words.add(p.default.shown.lstrip("-"))  # math's `inf` or `nan`
    return {w for w in words if w in SOURCES or w == "scalar"}


def _isort_key(name: str) -> tuple[bool, str]:
    """Constants, then classes, then functions, as isort orders (`Dtype` before `array`)."""
    return (not name[:1].isupper(), name)


def definition(op: BoundOperator) -> list[str]:
    head = op.signature.stub(op.function.python_name)
    doc = op.function.doc
    if not doc:
        return [f"{head}: ..."]
    return [f"{head}:", f"    {docstring(doc)}"]


def docstring(doc: str) -> str:
    """`doc` as a triple-quoted literal, indented for a function body."""
    text = doc.replace("\\", "\\\\").replace('"""', '\\"\\"\\"')
    if text.endswith('"'):
        text = text[:-1] + '\\"'
    first, *rest = text.splitlines() or [""]
    if not rest:
        return f'"""{first}"""'
    body = "\n".join(f"    {line}" if line else "" for line in rest)
    return f'"""{first}\n{body}\n    """'
