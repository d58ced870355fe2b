"""`opgen.api` keeps no global or thread-local mutable state (a static check of its source).

torchgen's API modules read per-function options from thread-locals; opgen's take
them as arguments. This test fails if a module of `opgen.api` uses thread-local
or context variables, a `global` statement, a module-level cache decorator, or
mutates a module-level container from inside a function.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

import opgen.api

API_MODULES = sorted(Path(opgen.api.__file__).parent.glob("*.py"))
MUTATING_METHODS = {
    "append", "extend", "insert", "update", "setdefault", "pop", "popitem", "clear",
    "add", "discard", "remove",
}  # fmt: skip


def _module_names(tree: ast.Module) -> set[str]:
    names = set()
    for node in tree.body:
        targets = node.targets if isinstance(node, ast.Assign) else []
        if isinstance(node, ast.AnnAssign):
            targets = [node.target]
        names.update(t.id for t in targets if isinstance(t, ast.Name))
    return names


def violations(source: str) -> list[str]:
    tree = ast.parse(source)
    module_names = _module_names(tree)
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Global):
            found.append(f"line {node.lineno}: global {', '.join(node.names)}")
        if isinstance(node, ast.Import | ast.ImportFrom):
            modules = [a.name for a in node.names] + [getattr(node, "module", None) or ""]
            if any(m.split(".")[0] in ("threading", "contextvars") for m in modules):
                found.append(f"line {node.lineno}: imports threading/contextvars")
            if any(a.name in ("lru_cache", "cache") for a in node.names):
                found.append(f"line {node.lineno}: imports a functools cache")
        if isinstance(node, ast.Name) and node.id in ("lru_cache", "cache"):
            found.append(f"line {node.lineno}: functools cache")
        if isinstance(node, ast.Attribute) and node.attr in ("lru_cache", "cache"):
            found.append(f"line {node.lineno}: functools cache")
    for function in ast.walk(tree):
        if not isinstance(function, ast.FunctionDef):
            continue
        for node in ast.walk(function):
            if (
                isinstance(node, ast.Subscript)
                and isinstance(node.ctx, ast.Store | ast.Del)
                and isinstance(node.value, ast.Name)
                and node.value.id in module_names
            ):
                found.append(f"line {node.lineno}: writes into module-level {node.value.id}")
            if (
                isinstance(node, ast.Call)
                and isinstance(node.func, ast.Attribute)
                and node.func.attr in MUTATING_METHODS
                and isinstance(node.func.value, ast.Name)
                and node.func.value.id in module_names
            ):
                found.append(f"line {node.lineno}: mutates module-level {node.func.value.id}")
    return found


@pytest.mark.parametrize("path", API_MODULES, ids=lambda p: p.name)
def test_no_global_or_thread_local_state(path: Path) -> None:
    assert violations(path.read_text()) == []


@pytest.mark.parametrize(
    "source",
    [
        "import threading\n",
        "from functools import lru_cache\n",
        "def f():\n    global X\n",
        "TABLE = {}\ndef f(k):\n    TABLE[k] = 1\n",
        "SEEN = []\ndef f(k):\n    SEEN.append(k)\n",
    ],
)
def test_the_check_catches(source: str) -> None:
    assert violations(source) != []
