"""Docstrings for the stubs, read from torch's `_torch_docs.py` and `_tensor_docs.py`.

Those modules attach docstrings to the bindings when torch is imported:
`add_docstr(torch.abs, r"..." + "...".format(**common_args))` for functions,
`add_docstr_all("abs", ...)` for Tensor methods. opgen never imports them (or
torch); it reads them with `ast` and evaluates the small part of Python they
are written in, statement by statement:

- string literals, `+`, f-strings, items of dicts, `str.format` with positional,
  keyword and `**mapping` arguments, dict, tuple and list literals, names;
- module-level assignments, `for` loops over literal tuples (a loop over
  `dir(torch)` documents what torch holds at run time, which the stubs never
  carry: it is skipped), and `if
  hasattr(torch, name)` (taken as true: a docstring of a name the stubs do
  not declare is never used);
- the modules' helpers, by name, with the behaviour they have there:
  `parse_kwargs(text)` (a dict of the argument descriptions in `text`, by
  argument name; a description starts on a line indented by exactly four
  spaces), `merge_dicts(*dicts)`, `add_docstr(target, text)` and
  `add_docstr_all(method, text)`; `from torch._torch_docs import ...`.

Anything else is a located error, so a change in torch's docs modules fails
loudly instead of silently losing docstrings. Docstrings are keyed by the
object they document: `torch.abs`, `torch._C.TensorBase.abs`; a later one
replaces an earlier one, as at import. Each is cleaned as `inspect.cleandoc`
does and stripped, the form the stubs use.
"""

from __future__ import annotations

import ast
import os
import re
from collections.abc import Callable, Mapping
from typing import TypeAlias

from opgen.diagnostics import Location, SpecError
from opgen.frozen import frozen
from opgen.spec.yaml.load import read_text

FUNCTION_PREFIX = "torch."
TENSOR_PREFIX = "torch._C.TensorBase."
DOCS_MODULES = ("_torch_docs.py", "_tensor_docs.py")


@frozen
class _Target:
    """An object a docstring is attached to, by its qualified name."""

    name: str


class _Helper:
    """One of the docs modules' helper functions."""

    def __init__(self, name: str, call: Callable[..., Value]) -> None:
        self.name = name
        self.call = call


Value: TypeAlias = (
    "str | int | float | dict[str, str] | tuple[Value, ...] | _Target | _Helper | None"
)

# A new argument description: a line break, exactly four spaces, then text.
_ARGUMENT_START = re.compile(r"\n\s{4}(?!\s)")


def _parse_kwargs(text: Value) -> dict[str, str]:
    if not isinstance(text, str):
        raise TypeError("parse_kwargs takes a string")
    sections = [s.strip() for s in _ARGUMENT_START.split(text)]
    return {s.split(" ")[0]: s for s in sections if s}


def _merge_dicts(*dicts: Value) -> dict[str, str]:
    merged: dict[str, str] = {}
    for d in dicts:
        if not isinstance(d, dict):
            raise TypeError("merge_dicts takes dicts")
        merged.update(d)
    return merged


def load_docstrings(torch_dir: str) -> dict[str, str]:
    """{qualified name: docstring} from the docs modules in torch's package directory."""
    if not os.path.isdir(torch_dir):
        raise SpecError(
            "not a directory (expected torch's package directory)", Location(torch_dir, 1)
        )
    docstrings: dict[str, str] = {}
    torch_docs = _DocsModule(os.path.join(torch_dir, DOCS_MODULES[0]), docstrings, {})
    torch_docs.run()
    imports = {"torch._torch_docs": torch_docs.namespace}
    _DocsModule(os.path.join(torch_dir, DOCS_MODULES[1]), docstrings, imports).run()
    return {name: clean_docstring(text) for name, text in docstrings.items()}


def clean_docstring(text: str) -> str:
    """`text` with its indentation and surrounding blank lines removed, then stripped."""
    import inspect  # only --docs runs need it

    return inspect.cleandoc(text).strip()


def _is_call_on_torch(node: ast.expr, function: str, arity: int) -> bool:
    """`function(torch, ...)` with `arity` arguments, such as `dir(torch)`."""
    return (
        isinstance(node, ast.Call)
        and isinstance(node.func, ast.Name)
        and node.func.id == function
        and len(node.args) == arity
        and isinstance(node.args[0], ast.Name)
        and node.args[0].id == "torch"
    )


class _DocsModule:
    """One docs module, evaluated statement by statement into `docstrings`."""

    def __init__(
        self,
        path: str,
        docstrings: dict[str, str],
        modules: Mapping[str, Mapping[str, Value]],
    ) -> None:
        self.path = path
        self.docstrings = docstrings
        self.modules = modules
        self.namespace: dict[str, Value] = {}

    def run(self) -> None:
        text = read_text(self.path)
        try:
            tree = ast.parse(text, self.path)
        except SyntaxError as e:
            raise SpecError(
                f"invalid Python: {e.msg}", Location(self.path, e.lineno or 1, e.offset)
            ) from None
        for statement in tree.body:
            self._execute(statement)

    def _error(self, node: ast.AST, what: str) -> SpecError:
        line, col = getattr(node, "lineno", 1), getattr(node, "col_offset", 0) + 1
        return SpecError(
            f"cannot read docstrings from {what} without running it", Location(self.path, line, col)
        )

    # -- statements ---------------------------------------------------------------------

    def _execute(self, node: ast.stmt) -> None:
        if isinstance(node, ast.Expr):
            if not (isinstance(node.value, ast.Constant) and isinstance(node.value.value, str)):
                self._evaluate(node.value)  # a call: add_docstr(...)
        elif isinstance(node, ast.Assign | ast.AnnAssign):
            self._assign(node)
        elif isinstance(node, ast.Import):
            pass  # `import re`, `import torch._C`: names the helpers stand for
        elif isinstance(node, ast.ImportFrom):
            self._import_from(node)
        elif isinstance(node, ast.FunctionDef):
            self._define(node)
        elif isinstance(node, ast.For):
            self._loop(node)
        elif isinstance(node, ast.If):
            if not _is_call_on_torch(node.test, "hasattr", 2) or node.orelse:
                raise self._error(node, "this condition")
            for statement in node.body:
                self._execute(statement)
        else:
            raise self._error(node, "this statement")

    def _assign(self, node: ast.Assign | ast.AnnAssign) -> None:
        targets = node.targets if isinstance(node, ast.Assign) else [node.target]
        if node.value is None:
            return
        names = [t for t in targets if isinstance(t, ast.Name)]
        if len(names) != len(targets):
            if all(self._is_torch_attribute(t) for t in targets):
                return  # `torch.histogramdd.__module__ = "torch"`: nothing for the stubs
            raise self._error(node, "this assignment")
        value = self._evaluate(node.value)
        for name in names:
            self.namespace[name.id] = value

    def _import_from(self, node: ast.ImportFrom) -> None:
        if node.module == "torch._C":
            for alias in node.names:
                if alias.name == "_add_docstr":
                    self.namespace[alias.asname or alias.name] = _Helper(
                        "add_docstr", self._add_docstr
                    )
            return
        module = self.modules.get(node.module or "")
        if module is None:
            raise self._error(node, f"module '{node.module}'")
        for alias in node.names:
            if alias.name not in module:
                raise self._error(node, f"'{alias.name}'")
            self.namespace[alias.asname or alias.name] = module[alias.name]

    def _define(self, node: ast.FunctionDef) -> None:
        helpers: dict[str, Callable[..., Value]] = {
            "parse_kwargs": _parse_kwargs,
            "merge_dicts": _merge_dicts,
            "add_docstr_all": self._add_docstr_all,
        }
        if node.name in helpers:
            self.namespace[node.name] = _Helper(node.name, helpers[node.name])

    def _loop(self, node: ast.For) -> None:
        if not isinstance(node.target, ast.Name) or node.orelse:
            raise self._error(node, "this loop")
        # `dir(torch)`: what torch holds at run time, which the stubs never document.
        if _is_call_on_torch(node.iter, "dir", 1):
            return  # documents objects found at import (torch 2.15's _foreach_ aliases)
        items = self._evaluate(node.iter)
        if not isinstance(items, tuple):
            raise self._error(node.iter, "a loop over this")
        for item in items:
            self.namespace[node.target.id] = item
            for statement in node.body:
                self._execute(statement)

    def _is_torch_attribute(self, node: ast.expr) -> bool:
        while isinstance(node, ast.Attribute):
            node = node.value
        return isinstance(node, ast.Name) and node.id == "torch"

    # -- the helpers that record docstrings ---------------------------------------------

    def _add_docstr(self, target: Value, text: Value) -> None:
        if not isinstance(target, _Target) or not isinstance(text, str):
            raise TypeError("add_docstr takes an object of torch and a string")
        self.docstrings[target.name] = text

    def _add_docstr_all(self, method: Value, text: Value) -> None:
        if not isinstance(method, str):
            raise TypeError("add_docstr_all takes a method name")
        self._add_docstr(_Target(TENSOR_PREFIX + method), text)

    # -- expressions --------------------------------------------------------------------

    def _evaluate(self, node: ast.expr) -> Value:
        if isinstance(node, ast.Constant) and isinstance(node.value, str | int | float | None):
            return node.value
        if isinstance(node, ast.Name):
            if node.id == "torch":
                return _Target("torch")
            if node.id not in self.namespace:
                raise self._error(node, f"the unknown name '{node.id}'")
            return self.namespace[node.id]
        if isinstance(node, ast.Attribute):
            return self._attribute(node)
        if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add):
            left, right = self._evaluate(node.left), self._evaluate(node.right)
            if isinstance(left, str) and isinstance(right, str):
                return left + right
            raise self._error(node, "this '+'")
        if isinstance(node, ast.JoinedStr):
            return "".join(self._formatted(part) for part in node.values)
        if isinstance(node, ast.Tuple | ast.List):
            return tuple(self._evaluate(e) for e in node.elts)
        if isinstance(node, ast.Dict):
            return self._dict(node)
        if isinstance(node, ast.Subscript):
            return self._item(node)
        if isinstance(node, ast.Call):
            return self._call(node)
        raise self._error(node, "this expression")

    def _attribute(self, node: ast.Attribute) -> Value:
        base = self._evaluate(node.value)
        if isinstance(base, _Target):
            return _Target(f"{base.name}.{node.attr}")
        raise self._error(node, "this attribute")

    def _item(self, node: ast.Subscript) -> Value:
        container, key = self._evaluate(node.value), self._evaluate(node.slice)
        if isinstance(container, dict) and isinstance(key, str) and key in container:
            return container[key]
        raise self._error(node, "this subscript")

    def _formatted(self, part: ast.expr) -> str:
        if isinstance(part, ast.Constant) and isinstance(part.value, str):
            return part.value
        if (
            isinstance(part, ast.FormattedValue)
            and part.format_spec is None
            and part.conversion == -1
        ):
            value = self._evaluate(part.value)
            if isinstance(value, str):
                return value
        raise self._error(part, "this f-string part")

    def _dict(self, node: ast.Dict) -> dict[str, str]:
        result: dict[str, str] = {}
        for key, value in zip(node.keys, node.values, strict=True):
            k = None if key is None else self._evaluate(key)
            v = self._evaluate(value)
            if key is None and isinstance(v, dict):
                result.update(v)
            elif isinstance(k, str) and isinstance(v, str):
                result[k] = v
            else:
                raise self._error(node, "this dict")
        return result

    def _call(self, node: ast.Call) -> Value:
        func = node.func
        if isinstance(func, ast.Attribute) and func.attr == "format":
            return self._format(node, func.value)
        if isinstance(func, ast.Name) and func.id == "getattr" and len(node.args) == 2:
            base, attr = self._evaluate(node.args[0]), self._evaluate(node.args[1])
            if isinstance(base, _Target) and isinstance(attr, str):
                return _Target(f"{base.name}.{attr}")
        helper = self._evaluate(func) if isinstance(func, ast.Name) else None
        if isinstance(helper, _Helper) and not node.keywords:
            try:
                return helper.call(*(self._evaluate(a) for a in node.args))
            except TypeError as e:
                raise self._error(node, f"this call ({e})") from None
        raise self._error(node, "this call")

    def _format(self, node: ast.Call, template: ast.expr) -> str:
        text = self._evaluate(template)
        args = [self._evaluate(a) for a in node.args]
        kwargs: dict[str, Value] = {}
        for keyword in node.keywords:
            value = self._evaluate(keyword.value)
            if keyword.arg is not None:
                kwargs[keyword.arg] = value
            elif isinstance(value, dict):
                kwargs.update(value)
            else:
                raise self._error(keyword.value, "this '**' argument")
        if not isinstance(text, str):
            raise self._error(node, "format on something other than a string")
        try:
            return text.format(*args, **kwargs)
        except (KeyError, IndexError, ValueError) as e:
            raise self._error(node, f"this format call ({e!r})") from None
