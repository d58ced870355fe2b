"""Every package says what it holds, and no module outgrows a reading.

A reader opening a package's `__init__.py` finds the list of its modules and
subpackages there, a sentence each; this test keeps the lists complete as modules are
added, moved or renamed. A module over 600 lines is a sign to split it (the style
guide's limit), so none may be.
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

import opgen

ROOT = Path(opgen.__file__).parent
PACKAGES = sorted(init.parent for init in ROOT.rglob("__init__.py"))


def members(package: Path) -> list[str]:
    """The modules and subpackages of a package, by name."""
    modules = [p.stem for p in package.glob("*.py") if p.stem not in ("__init__", "__main__")]
    subpackages = [p.name for p in package.iterdir() if (p / "__init__.py").is_file()]
    return sorted(modules + subpackages)


def unnamed(docstring: str, names: list[str]) -> list[str]:
    """The names the docstring does not mention as words."""
    return [name for name in names if not re.search(rf"(?<![\w.]){name}\b", docstring)]


@pytest.mark.parametrize("package", PACKAGES, ids=lambda p: p.relative_to(ROOT.parent).as_posix())
def test_the_docstring_names_every_module(package: Path) -> None:
    docstring = ast.get_docstring(ast.parse((package / "__init__.py").read_text())) or ""
    assert unnamed(docstring, members(package)) == []


def test_a_name_inside_another_word_does_not_count() -> None:
    assert unnamed("load.py  reads; preloaded; yaml.load", ["load"]) == []
    assert unnamed("preloaded files, spec.load", ["load"]) == ["load"]


MAX_LINES = 600


def test_no_module_is_over_600_lines() -> None:
    lengths = {
        p.relative_to(ROOT).as_posix(): len(p.read_text().splitlines()) for p in ROOT.rglob("*.py")
    }
    assert {path: n for path, n in lengths.items() if n > MAX_LINES} == {}
