"""The names a gradient formula reads, checked when the derivatives are read.

A formula sees the operator's arguments, `grad`, `grads`, the outputs (`result`,
`result0`, ..., and their schema names) and `grad_input_mask`
(`opgen.targets.torch_library.autograd` binds them); anything else it reads by a
bare name is a mistake the compiler (C++) or the first backward call (Python)
would find much later. So each formula's free names are checked here:

- A Python formula (a library without C++) is parsed with `ast`; its free names
  are its `Name` loads that it does not bind itself (a lambda's parameters, a
  comprehension's targets), checked against the scope, `torch` and Python's
  builtins.
- A C++ formula cannot be parsed without ATen's declarations, so only the names
  that can only be variables are checked: a bare name that is not called (`f(`),
  qualified (`ns::`), a member (`.x`, `->x`), a template (`f<`), a C++ word, a type
  (capitalised, as ATen's are) or a constant (`kFloat`, `M_PI`). A formula with a
  lambda or a block declares names of its own, and a file with `include:` headers
  may declare any name: those are left to the compiler.
"""

from __future__ import annotations

import ast
import builtins
import re
from collections.abc import Iterable, Iterator, Sequence

from opgen.diagnostics import Diagnostic, did_you_mean
from opgen.spec.derivatives import DerivativesEntry, Formula, FormulaHeader, output_names
from opgen.spec.mlx.formulas import CPP_WORDS
from opgen.spec.native import NativeFunction

# A bare name: not a member (`.x`, `->x`) nor qualified (`ns::x`), nor part of a number.
_NAME = re.compile(r"(?<![\w.:>$])(?<!\d)([A-Za-z_]\w*)(?!\w)(?!\s*(?:\(|::|<\w))")
_NOT_CODE = re.compile(r'"(?:\\.|[^"\\])*"|\'(?:\\.|[^\'\\])*\'|//[^\n]*|/\*.*?\*/', re.DOTALL)
# A lambda (`[&](`, `[=](`, `[](`, `[x](`) or a statement block declares names of its own.
_DECLARES = re.compile(r"\[[&=\w\s,]*\]\s*\(|\{")
# Constants: ATen's scalar types (`kFloat`), macros (`M_PI`, `INFINITY`).
_CONSTANT = re.compile(r"k[A-Z]\w*|[A-Z][A-Z0-9_]*")
_CPP_MORE = frozenset({"int64_t", "int32_t", "int16_t", "int8_t", "uint8_t", "uint64_t", "this"})


def formula_name_errors(
    derivatives: Iterable[DerivativesEntry[NativeFunction]],
    headers: Sequence[FormulaHeader],
    compiled: bool,
) -> Iterator[Diagnostic]:
    """A diagnostic per name a formula reads that nothing defines."""
    if compiled and headers:
        return
    for d in derivatives:
        scope = _scope(d)
        for formula in d.formulas:
            if compiled:
                yield from _cpp_problems(formula, scope, str(d.function.func.name))
            else:
                yield from _python_problems(formula, scope, str(d.function.func.name))


def _scope(d: DerivativesEntry[NativeFunction]) -> frozenset[str]:
    f = d.function
    outputs = list(output_names(f))
    outputs.extend(r.name for r in f.func.returns if r.name)
    arguments = (a.name for a in f.func.arguments.flat_all)
    return frozenset(("grad", "grads", "grad_input_mask", *outputs, *arguments))


def _cpp_problems(formula: Formula, scope: frozenset[str], operator: str) -> Iterator[Diagnostic]:
    code = _NOT_CODE.sub(lambda m: " " * len(m.group()), formula.text)
    if _DECLARES.search(code):
        return
    for m in _NAME.finditer(code):
        name = m.group(1)
        if name in scope or name in CPP_WORDS or name in _CPP_MORE:
            continue
        if (name[0].isupper() and not name.isupper()) or _CONSTANT.fullmatch(name):
            continue  # a type (`Tensor`, `IntArrayRef`) or a constant
        yield Diagnostic(formula.span(m.start(1), len(name)), _unknown(name, scope, operator))


def _python_problems(
    formula: Formula, scope: frozenset[str], operator: str
) -> Iterator[Diagnostic]:
    text = formula.text
    try:
        tree = ast.parse(text.strip(), mode="eval")
    except SyntaxError as e:
        yield Diagnostic(
            formula.location, f"the gradient formula is not a Python expression: {e.msg}"
        )
        return
    lead = len(text) - len(text.lstrip())
    bound = {n.arg for n in ast.walk(tree) if isinstance(n, ast.arg)}
    bound.update(
        n.id for n in ast.walk(tree) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store)
    )
    known = scope | bound | {"torch"} | frozenset(dir(builtins))
    starts = _line_starts(text.strip())
    for node in ast.walk(tree):
        if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Load) and node.id not in known:
            line = text.strip().splitlines()[node.lineno - 1]
            column = len(line.encode()[: node.col_offset].decode(errors="replace"))
            offset = lead + starts[node.lineno - 1] + column
            yield Diagnostic(formula.span(offset, len(node.id)), _unknown(node.id, scope, operator))


def _line_starts(text: str) -> list[int]:
    starts = [0]
    for line in text.splitlines(keepends=True):
        starts.append(starts[-1] + len(line))
    return starts


def _unknown(name: str, scope: frozenset[str], operator: str) -> str:
    return (
        f"'{name}' is not an input of '{operator}', nor grad, grads, an output or "
        f"grad_input_mask{did_you_mean(name, scope)}"
    )
