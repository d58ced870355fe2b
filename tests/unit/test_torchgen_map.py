"""`docs/torchgen-map.md` stays true, in both directions.

The map names torchgen's modules and functions beside opgen's, each written as a
reference in backticks: `torchgen.<module>` or `torchgen.<module>:<name>`, and
`opgen.<module>` or `opgen.<module>:<name>` (a dotted name for a method or a
field: `opgen.api.cpp:CppSignature.decl`). These tests hold it to three rules:

- every opgen reference resolves: its module imports, and each part of its name
  is an attribute (or a declared field) of the one before;
- every torchgen reference exists in the installed torchgen, read with `ast`
  (torchgen is never imported): a module file, and a name defined at its top
  level (`def`, `class`, assignment), a method or class attribute inside it;
- every module file of the installed torchgen is in the map, mapped or listed
  under "No counterpart" (package `__init__.py` files that define nothing aside).

Without torchgen installed, the last two are skipped.
"""

from __future__ import annotations

import ast
import dataclasses
import importlib
import importlib.util
import re
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from functools import cache
from pathlib import Path

import pytest

MAP = Path(__file__).resolve().parents[2] / "docs" / "torchgen-map.md"

_CODE_SPAN = re.compile(r"`([^`\n]+)`")
_IDENT = r"[A-Za-z_]\w*"
_REFERENCE = re.compile(
    rf"(?P<module>(?:torchgen|opgen)(?:\.{_IDENT})*)(?::(?P<name>{_IDENT}(?:\.{_IDENT})*))?\Z"
)


@dataclass(frozen=True)
class Reference:
    module: str  # `opgen.api.cpp`
    name: str | None  # `CppSignature.decl`, or None for the module itself
    line: int  # 1-based, in the map
    row: str  # the line's text, to show where a broken reference is

    @property
    def package(self) -> str:
        return self.module.split(".", 1)[0]

    def __str__(self) -> str:
        return self.module if self.name is None else f"{self.module}:{self.name}"


def references(markdown: str) -> list[Reference]:
    """Every code span of `markdown` that is a torchgen or opgen reference, in order."""
    found = []
    for number, line in enumerate(markdown.splitlines(), start=1):
        for span in _CODE_SPAN.findall(line):
            m = _REFERENCE.match(span)
            if m is not None:
                found.append(Reference(m["module"], m["name"], number, line.strip()))
    return found


@cache
def map_references() -> tuple[Reference, ...]:
    return tuple(references(MAP.read_text(encoding="utf-8")))


def _report(problems: Sequence[tuple[Reference, str]]) -> str:
    """One entry per broken reference: where it is, what is wrong, and its row."""
    return "\n".join(f"{MAP.name}:{r.line}: `{r}`: {why}\n    {r.row}" for r, why in problems)


# -- opgen references ------------------------------------------------------------------


def _declared_fields(cls: type) -> set[str]:
    """Fields without a class attribute: a dataclass's, or annotated ones along the MRO."""
    names = {f.name for f in dataclasses.fields(cls)} if dataclasses.is_dataclass(cls) else set()
    for klass in cls.__mro__:
        names.update(getattr(klass, "__annotations__", {}))
    return names


def opgen_problem(ref: Reference) -> str | None:
    """Why `ref` does not resolve in opgen, or None if it does."""
    try:
        obj: object = importlib.import_module(ref.module)
    except Exception as error:  # an ImportError, or anything the module raised
        return f"cannot import {ref.module}: {error!r}"
    parts = ref.name.split(".") if ref.name else []
    for i, part in enumerate(parts):
        if hasattr(obj, part):
            obj = getattr(obj, part)
        elif isinstance(obj, type) and part in _declared_fields(obj) and i == len(parts) - 1:
            return None
        else:
            return f"{'.'.join([ref.module, *parts[:i]])} has no attribute {part!r}"
    return None


# -- torchgen references, read without importing torchgen -------------------------------


def torchgen_root() -> Path | None:
    """The installed torchgen package's directory, found without importing it."""
    spec = importlib.util.find_spec("torchgen")
    if spec is None or not spec.submodule_search_locations:
        return None
    return Path(next(iter(spec.submodule_search_locations)))


@pytest.fixture(scope="module")
def torchgen() -> Path:
    root = torchgen_root()
    if root is None:
        pytest.skip("torchgen is not installed: its references cannot be checked")
    return root


def module_file(root: Path, module: str) -> Path | None:
    """The file of a dotted torchgen module: `<module>.py`, else the package's `__init__.py`."""
    base = root.joinpath(*module.split(".")[1:])
    for candidate in (base.with_suffix(".py") if base != root else None, base / "__init__.py"):
        if candidate is not None and candidate.is_file():
            return candidate
    return None


def defined_names(body: Sequence[ast.stmt]) -> dict[str, ast.stmt]:
    """The names a module or class body defines: functions, classes, assignments
    (also inside top-level `if` and `try` blocks, as for optional imports)."""
    names: dict[str, ast.stmt] = {}
    for node in body:
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            names[node.name] = node
        elif isinstance(node, ast.Assign | ast.AnnAssign):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            for target in targets:
                for leaf in ast.walk(target):
                    if isinstance(leaf, ast.Name):
                        names[leaf.id] = node
        elif isinstance(node, ast.If | ast.Try):
            blocks = [node.body, node.orelse]
            if isinstance(node, ast.Try):
                blocks += [node.finalbody, *(h.body for h in node.handlers)]
            for block in blocks:
                names.update(defined_names(block))
    return names


@cache
def module_names(path: Path) -> dict[str, ast.stmt]:
    return defined_names(ast.parse(path.read_text(encoding="utf-8"), str(path)).body)


def torchgen_problem(root: Path, ref: Reference) -> str | None:
    """Why `ref` names nothing in the installed torchgen, or None if it does."""
    path = module_file(root, ref.module)
    if path is None:
        return f"no module file for {ref.module} under {root}"
    names = module_names(path)
    parts = ref.name.split(".") if ref.name else []
    for i, part in enumerate(parts):
        node = names.get(part)
        if node is None:
            return f"{'.'.join([ref.module, *parts[:i]])} defines no {part!r}"
        names = defined_names(node.body) if isinstance(node, ast.ClassDef) else {}
    return None


def torchgen_modules(root: Path) -> Iterator[str]:
    """Every module of torchgen that has code: each `.py` file but empty `__init__.py`s."""
    for path in sorted(root.rglob("*.py")):
        if "__pycache__" in path.parts:
            continue
        parts = path.relative_to(root).with_suffix("").parts
        if parts[-1] == "__init__":
            if not any(not n.startswith("__") for n in module_names(path)):
                continue
            parts = parts[:-1]
        yield ".".join(("torchgen", *parts))


# -- the tests ---------------------------------------------------------------------------


def test_references_are_the_code_spans_that_name_a_module() -> None:
    snippet = (
        "| torchgen | opgen | note |\n"
        "|---|---|---|\n"
        "| `torchgen.api.cpp:argument_type` | `opgen.api.cpp:CppSignature.decl` | `opgen aten` |\n"
        "See `torchgen.gen`, `Register<Key>.cpp`, torchgen.model and `opgen`.\n"
    )
    assert [(str(r), r.package, r.line) for r in references(snippet)] == [
        ("torchgen.api.cpp:argument_type", "torchgen", 3),
        ("opgen.api.cpp:CppSignature.decl", "opgen", 3),
        ("torchgen.gen", "torchgen", 4),
        ("opgen", "opgen", 4),
    ]
    assert references(snippet)[1].row.startswith("| `torchgen.api.cpp:argument_type`")


def test_the_map_has_both_sides() -> None:
    packages = {r.package for r in map_references()}
    assert packages == {"torchgen", "opgen"}
    assert "## No counterpart" in MAP.read_text(encoding="utf-8")


def test_every_opgen_reference_resolves() -> None:
    problems = []
    for ref in map_references():
        if ref.package == "opgen" and (why := opgen_problem(ref)) is not None:
            problems.append((ref, why))
    assert not problems, "broken opgen references in the map:\n" + _report(problems)


def test_every_torchgen_reference_exists(torchgen: Path) -> None:
    problems = []
    for ref in map_references():
        if ref.package == "torchgen" and (why := torchgen_problem(torchgen, ref)) is not None:
            problems.append((ref, why))
    assert not problems, "torchgen references the installed torchgen lacks:\n" + _report(problems)


def test_every_torchgen_module_is_in_the_map(torchgen: Path) -> None:
    mentioned = {r.module for r in map_references() if r.package == "torchgen"}
    missing = [m for m in torchgen_modules(torchgen) if m not in mentioned]
    assert not missing, (
        f"torchgen modules {MAP.name} does not mention (map them, or list them under "
        "'No counterpart' with a reason):\n" + "\n".join(f"    `{m}`" for m in missing)
    )
