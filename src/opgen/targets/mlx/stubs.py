"""`<module>.pyi`: the extension's type stub, written from the spec.

opgen writes the stub itself rather than running nanobind's stubgen on the
built module: generation needs no compiler and no MLX, and the stub is exact
by construction, since the same `NbSignature` gives the binding and the
stub. The types are MLX's own (`from mlx.core import array, Dtype,
StreamOrDevice`); the imports are the union of what the signatures use,
collected per signature and rendered last.
"""

from __future__ import annotations

from collections.abc import Iterable

from opgen.targets.mlx.library import BoundOperator

# Where each name the stub can use comes from.
SOURCES = {"Sequence": "collections.abc", "array": "mlx.core", "Dtype": "mlx.core"}
SOURCES["StreamOrDevice"] = "mlx.core"
# The standard library, then MLX, each a block of its own (as isort groups them).
IMPORT_GROUPS = (("collections.abc",), ("mlx.core",))


def stub(ops: Iterable[BoundOperator], namespace: str, comment: str) -> str:
    ops = list(ops)
    names: set[str] = set()
    for op in ops:
        names |= op.signature.stub_imports()
    body: list[str] = []
    for op in ops:
        body += [*definition(op), ""]
    lines = [f"# {comment}", f'"""MLX operators of {namespace}, bound by opgen."""', ""]
    for group in IMPORT_GROUPS:
        imports = []
        for module in group:
            imported = sorted((n for n in names if SOURCES[n] == module), key=_isort_key)
            if imported:
                imports.append(f"from {module} import {', '.join(imported)}")
        if imports:
            lines += [*imports, ""]
    return "\n".join([*lines, *body]).rstrip("\n") + "\n"


def _isort_key(name: str) -> tuple[bool, str]:
    """Constants, then classes, then functions, as isort orders (`Dtype` before `array`)."""
    return (not name[:1].isupper(), name)


def definition(op: BoundOperator) -> list[str]:
    head = op.signature.stub(op.operator.python_name)
    doc = op.operator.doc
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
