"""opgen keeps no global or thread-local mutable state (a static check of its source).

torchgen's API modules read per-function options from thread-locals and cache parsed
files in module globals; opgen passes options as arguments and keeps what a run
builds in the run. This test fails if a module of opgen's library (the API layers,
the autograd model, the Python-binding policy, the spec readers, the targets and the
tools) uses thread-local or context variables, a `global` statement, a module-level
cache decorator, or mutates a module-level container from inside a function.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

import opgen

PACKAGE = Path(opgen.__file__).parent
CHECKED = ("api", "autograd", "python_bindings", "spec", "targets", "tooling")
MODULES = sorted(m for package in CHECKED for m in (PACKAGE / package).rglob("*.py"))
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


def _is_cache(node: ast.expr) -> bool:
    """`lru_cache`, `functools.cache`, `functools.lru_cache(maxsize=8)`, ..."""
    if isinstance(node, ast.Call):
        node = node.func
    name = node.attr if isinstance(node, ast.Attribute) else getattr(node, "id", None)
    return name in ("lru_cache", "cache")


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
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef) and any(
            _is_cache(decorator) for decorator in node.decorator_list
        ):
            found.append(f"line {node.lineno}: {node.name} is cached across calls")
    # A cache made at module level outlives every run; one made inside a function
    # (`functools.lru_cache()(self.method)`) lives as long as what holds it.
    for statement in tree.body:
        if not isinstance(statement, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            for node in ast.walk(statement):
                if isinstance(node, ast.Call) and _is_cache(node.func):
                    found.append(f"line {node.lineno}: a module-level cache")
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


# The one shared cache, and why it is safe (docs/DESIGN.md, decision 9): a bounded memo
# of a pure function of the text, whose results are immutable, so nothing depends on
# what it holds.
ALLOWED = {"spec/syntax.py": ["line 36: _memo is cached across calls"]}


@pytest.mark.parametrize("path", MODULES, ids=lambda p: p.relative_to(PACKAGE).as_posix())
def test_no_global_or_thread_local_state(path: Path) -> None:
    assert violations(path.read_text()) == ALLOWED.get(path.relative_to(PACKAGE).as_posix(), [])


@pytest.mark.parametrize(
    "source",
    [
        "import threading\n",
        "from functools import lru_cache\n",
        "import functools\n@functools.lru_cache(maxsize=8)\ndef f(k):\n    return k\n",
        "import functools\nclass C:\n    @functools.cache\n    def f(self):\n        return 1\n",
        "import functools\nparse = functools.lru_cache()(int)\n",
        "def f():\n    global X\n",
        "TABLE = {}\ndef f(k):\n    TABLE[k] = 1\n",
        "SEEN = []\ndef f(k):\n    SEEN.append(k)\n",
    ],
)
def test_the_check_catches(source: str) -> None:
    assert violations(source) != []


def test_a_cache_owned_by_an_object_is_not_global() -> None:
    source = "import functools\nclass L:\n    def __init__(self):\n"
    source += "        self.resolve = functools.lru_cache(maxsize=None)(self.resolve)\n"
    assert violations(source) == []
