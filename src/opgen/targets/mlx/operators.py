"""`<ns>_ops.h` and `<ns>_ops.cpp`: the operators' C++ API and definitions.

The header declares, in the library's namespace, the generated operators
(C++ defaults included, the stream last) and then what the author writes:
`<name>_impl` for each composite operator, with the operator's parameters,
and the kernels `dispatch:` names (a qualified name is declared in its own
namespace). It includes `mlx/mlx.h`, so an author's source needs only this
header.

The source holds, in an anonymous namespace, what the primitives need
(`dispatch_cpu` once, `shape:` helpers, the Primitive classes), then the
operator definitions. Which MLX headers it includes follows from what the
library has (a table of facts, not a search of the text).
"""

from __future__ import annotations

from collections.abc import Iterable

from opgen.targets.mlx import composite, primitives
from opgen.targets.mlx.cpp import function_head
from opgen.targets.mlx.layout import SUM_TO_INPUT
from opgen.targets.mlx.library import BoundOperator

HEADER_INCLUDES = ("<limits>", "<optional>", "<string>", "<tuple>", "<vector>", "", '"mlx/mlx.h"')


def _comment(line: str) -> str:
    """A line of a doc as a `//` comment; one ending in a backslash, which would continue
    the comment onto the next line of code, is closed with a second `//`."""
    text = f"// {line}".rstrip()
    return f"{text} //" if text.endswith("\\") else text


def header(ops: Iterable[BoundOperator], namespace: str, comment: str) -> str:
    ops = list(ops)
    lines = [f"// {comment}", "#pragma once", ""]
    lines += [f"#include {i}" if i else "" for i in HEADER_INCLUDES]
    lines += ["", f"namespace {namespace} {{", ""]
    for op in ops:
        sig = op.signature
        lines += [_comment(line) for line in op.function.doc.splitlines()]
        lines.append(function_head(f"{sig.returns} {op.name}", sig.parameters(defaults=True), ";"))
        lines.append("")
    composites = [op for op in ops if not op.operator.is_primitive]
    if composites:
        lines += ["// Written by the library's author: each composite operator, from mlx::core"]
        lines += ["// operations on the stream `s` (MLX differentiates them, or the formulas do)."]
        for op in composites:
            sig = op.signature
            params = sig.parameters(defaults=False)
            lines.append(function_head(f"{sig.returns} {op.impl_name}", params, ";"))
        lines.append("")
    lines += [f"}} // namespace {namespace}", ""]
    kernels = _kernels_by_namespace(ops, namespace)
    if kernels:
        lines += [
            "// Written by the library's author: the kernels of the primitives. A CPU kernel",
            "// runs on the stream's CPU worker; its inputs are row-contiguous and its",
            "// outputs allocated (row-contiguous) before it runs. A GPU kernel is called",
            "// from eval_gpu with the stream, and allocates its outputs itself.",
        ]
    for ns, declarations in kernels.items():
        lines += [f"namespace {ns} {{", "", *declarations, "", f"}} // namespace {ns}", ""]
    return "\n".join(lines)


def _kernels_by_namespace(ops: list[BoundOperator], namespace: str) -> dict[str, list[str]]:
    out: dict[str, list[str]] = {}
    seen: set[str] = set()
    for op in ops:
        for key, kernel in sorted(op.operator.dispatch.items()):
            if kernel in seen:
                continue
            seen.add(kernel)
            ns, _, name = kernel.rpartition("::")
            ns = ns.removeprefix("::") or namespace
            declaration = primitives.kernel_declaration(op, key, name)
            out.setdefault(ns, []).append(declaration)
    return out


def source(ops: Iterable[BoundOperator], namespace: str, header_name: str, comment: str) -> str:
    ops = list(ops)
    prims = [op for op in ops if op.operator.is_primitive]
    has_cpu = any("cpu" in op.operator.dispatch for op in prims)
    mlx_includes = ['"mlx/allocator.h"', '"mlx/backend/cpu/encoder.h"'] if has_cpu else []
    mlx_includes += ['"mlx/primitives.h"'] if prims else []
    includes = ["<memory>", "<stdexcept>", "<utility>", *([""] if prims else []), *mlx_includes]
    lines = [f"// {comment}", f'#include "{header_name}"', ""]
    lines += [f"#include {i}" if i else "" for i in includes]
    lines += ["", f"namespace {namespace} {{", ""]
    if any(op.operator.grads for op in ops):
        lines += [SUM_TO_INPUT]
    if prims:
        lines += ["namespace {", ""]
        if has_cpu:
            lines += [primitives.DISPATCH_CPU]
        if any(op.operator.shape is not None for op in prims):
            lines += [primitives.AS_SHAPES]
        for op in prims:
            helper = primitives.helpers(op)
            if helper:
                lines += [helper]
            lines += [primitives.class_definition(op)]
        lines += ["} // namespace", ""]
    for op in ops:
        if op.operator.is_primitive:
            lines.append(primitives.operator_definition(op))
        else:
            lines.append(composite.definition(op))
    lines += [f"}} // namespace {namespace}", ""]
    return "\n".join(lines)
