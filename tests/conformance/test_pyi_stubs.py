"""`opgen pyi` against the stubs in the installed torch wheel, and the stubs under mypy.

opgen generates the stubs from torch's packaged spec, `deprecated.yaml` and the
docs modules of the installed torch (`--docs`), and both sides are parsed with
`ast`. Every declaration must agree: the names in file order (so every overload
set, in order), each `def`'s parameters, defaults, annotations, return
annotation and decorators, each attribute, each docstring; for whole modules
(`_VariableFunctions`, `_VF`, `return_types`, `_nn`) the imports and `__all__`
too. The generated part of class `TensorBase` is compared with the members of
the wheel's class that it declares, which must be all of the class but a
hand-written block at its start. The wheel's files are read at test time,
never copied.

Then the generated stubs replace the wheel's in a copy of torch's stub tree
(links to the installed files) and mypy checks a typed program that uses them
with `--strict`: the program must pass, and the generated files must have no
errors (torch's own modules are checked as installed packages are: quietly).
"""

from __future__ import annotations

import ast
import copy
import importlib.util
import os
import subprocess
import sys
import textwrap
from dataclasses import dataclass
from pathlib import Path

import pytest

from opgen.cli import main

FILES = {  # opgen's file: the wheel's
    "torch/_C/_VariableFunctions.pyi": "_C/_VariableFunctions.pyi",
    "torch/_VF.pyi": "_VF.pyi",
    "torch/return_types.pyi": "return_types.pyi",
    "torch/_C/_nn.pyi": "_C/_nn.pyi",
}


@dataclass(frozen=True)
class Member:
    """A declaration, as `ast` sees it: its name, its form (for a `def`, everything
    but the body), and its docstring."""

    name: str
    form: str
    docstring: str | None


def members(body: list[ast.stmt]) -> list[Member]:
    """The `def`s and annotated attributes of a module or class body, in order."""
    found: list[Member] = []
    for index, node in enumerate(body):
        if isinstance(node, ast.FunctionDef):
            bare = copy.copy(node)
            bare.body = [ast.Expr(ast.Constant(...))]
            found.append(Member(node.name, ast.dump(bare), ast.get_docstring(node, clean=False)))
        elif isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name):
            following = body[index + 1] if index + 1 < len(body) else None
            docstring = None
            if isinstance(following, ast.Expr) and isinstance(following.value, ast.Constant):
                docstring = str(following.value.value)
            found.append(Member(node.target.id, ast.dump(node), docstring))
    return found


def module_statements(tree: ast.Module) -> list[str]:
    """The statements of a module other than `def`s: imports, `__all__`, classes."""
    return [ast.dump(n) for n in tree.body if not isinstance(n, ast.FunctionDef)]


def forms(found: list[Member]) -> list[tuple[str, str]]:
    return [(m.name, m.form) for m in found]


@pytest.fixture(scope="module")
def torch_dir() -> Path:
    spec = importlib.util.find_spec("torch")  # found, not imported
    if spec is None or spec.origin is None:
        pytest.skip("torch is not installed")
    return Path(spec.origin).parent


@pytest.fixture(scope="module")
def generated(
    torchgen_native_dir: Path, torch_dir: Path, tmp_path_factory: pytest.TempPathFactory
) -> Path:
    out = tmp_path_factory.mktemp("pyi")
    deprecated = torchgen_native_dir.parents[1] / "autograd" / "deprecated.yaml"
    status = main(
        [
            "pyi",
            str(torchgen_native_dir / "native_functions.yaml"),
            str(torchgen_native_dir / "tags.yaml"),
            str(out),
            "--deprecated",
            str(deprecated),
            "--docs",
            str(torch_dir),
        ]
    )
    assert status == 0
    return out


def parse(path: Path) -> ast.Module:
    return ast.parse(path.read_text(encoding="utf-8"), str(path))


def tensor_base(tree: ast.Module) -> ast.ClassDef:
    return next(n for n in tree.body if isinstance(n, ast.ClassDef) and n.name == "TensorBase")


def fragment_class(generated: Path) -> ast.ClassDef:
    text = (generated / "torch/_C/TensorBase.pyi.fragment").read_text(encoding="utf-8")
    return tensor_base(ast.parse("class TensorBase:\n" + text))


# -- declarations -------------------------------------------------------------------------


def test_torch_functions_match_the_wheel(generated: Path, torch_dir: Path) -> None:
    ours = members(parse(generated / "torch/_C/_VariableFunctions.pyi").body)
    theirs = members(parse(torch_dir / "_C/_VariableFunctions.pyi").body)
    assert forms(ours) == forms(theirs)
    assert len(ours) == 1284, "the number of defs in torch 2.13's _VariableFunctions.pyi"
    assert len({m.name for m in ours}) == 976


def test_tensor_base_methods_match_the_wheel(generated: Path, torch_dir: Path) -> None:
    ours = members(fragment_class(generated).body)
    theirs = members(tensor_base(parse(torch_dir / "_C/__init__.pyi")).body)
    declared = {m.name for m in ours}
    start = next(i for i, m in enumerate(theirs) if m.name in declared)
    # Before the generated part: the hand-written attributes and methods of the template.
    assert not declared & {m.name for m in theirs[:start]}
    assert forms(ours) == forms(theirs[start:])
    assert len(ours) == 819
    assert sum(m.form.startswith("AnnAssign") for m in ours) == 15  # is_cuda and the like


def test_docstrings_match_the_wheel(generated: Path, torch_dir: Path) -> None:
    functions = members(parse(generated / "torch/_C/_VariableFunctions.pyi").body)
    wheel_functions = members(parse(torch_dir / "_C/_VariableFunctions.pyi").body)
    assert [m.docstring for m in functions] == [m.docstring for m in wheel_functions]
    assert sum(m.docstring is not None for m in functions) == 647
    methods = members(fragment_class(generated).body)
    wheel_class = members(tensor_base(parse(torch_dir / "_C/__init__.pyi")).body)
    assert [m.docstring for m in methods] == [m.docstring for m in wheel_class[-len(methods) :]]
    assert sum(m.docstring is not None for m in methods) == 665


@pytest.mark.parametrize("path", sorted(FILES))
def test_whole_modules_match_the_wheel(generated: Path, torch_dir: Path, path: str) -> None:
    """Imports, `__all__`, classes (the structseqs) and every `def`."""
    ours, theirs = parse(generated / path), parse(torch_dir / FILES[path])
    assert module_statements(ours) == module_statements(theirs)
    assert forms(members(ours.body)) == forms(members(theirs.body))
    if path == "torch/return_types.pyi":
        assert sum(isinstance(n, ast.ClassDef) for n in ours.body) == 33
    if path == "torch/_C/_nn.pyi":
        assert len(members(ours.body)) == 72


def test_vf_is_the_same_module(generated: Path) -> None:
    vf = (generated / "torch/_VF.pyi").read_bytes()
    assert vf == (generated / "torch/_C/_VariableFunctions.pyi").read_bytes()


def without_comment_header(text: str) -> str:
    """The text from its first line that is not a comment on."""
    lines = text.splitlines(keepends=True)
    return "".join(lines[next(i for i, line in enumerate(lines) if not line.startswith("#")) :])


def test_texts_match_the_wheel_past_the_comments(generated: Path, torch_dir: Path) -> None:
    """Beyond `ast`: the derived files are the wheel's text but for their opening comments
    (the generator's name, opgen's own description); the TensorBase fragment is the text
    of the wheel's class from its first generated member on."""
    ours = (generated / "torch/_C/_VariableFunctions.pyi").read_text(encoding="utf-8")
    theirs = (torch_dir / "_C/_VariableFunctions.pyi").read_text(encoding="utf-8")
    assert without_comment_header(ours) == without_comment_header(theirs)
    fragment = (generated / "torch/_C/TensorBase.pyi.fragment").read_text(encoding="utf-8")
    body = "".join(line for line in fragment.splitlines(keepends=True) if line[4:5] != "#")
    init = (torch_dir / "_C/__init__.pyi").read_text(encoding="utf-8")
    start = init.index(body.splitlines(keepends=True)[0])
    assert init[start : start + len(body)] == body


# -- type checking ------------------------------------------------------------------------

SAMPLE = """
import torch
import torch._VF
from torch import Tensor
from torch._C import _nn


def use(x: Tensor) -> float:
    y: Tensor = torch.add(x, x, alpha=2)
    top = torch.max(x, dim=0)
    values: Tensor = top.values
    kind: torch.return_types.max = top
    z: Tensor = x.view(3, 2).add_(1).mul(2).sum(dim=0, keepdim=True)
    rows: int = x.size(0)
    shape: torch.Size = x.size()
    first: Tensor = x[0, 1:] + 1
    same: Tensor = x == y
    flag: bool = x.is_cuda and x.dim() == 2
    parts: tuple[Tensor, ...] = torch.unbind(x, 1)
    linear: Tensor = _nn.linear(x, torch.ones(4, 3))
    vf: Tensor = torch._VF.abs(torch.full((2,), 1.0, dtype=torch.float64))
    torch.abs("text")  # type: ignore[arg-type]
    print(values, kind, z, rows, shape, first, same, flag, parts, linear, vf)
    return float(x.double().mean().item())
"""
MYPY_CONFIG = """
[mypy]
mypy_path = {tree}
[mypy-torch.*]
ignore_errors = True
implicit_reexport = True
warn_unused_ignores = False
disallow_untyped_defs = False
disallow_incomplete_defs = False
disallow_any_generics = False
[mypy-torch._C._VariableFunctions,torch._VF,torch.return_types,torch._C._nn,torch._C]
ignore_errors = False
"""


def stub_tree(generated: Path, torch_dir: Path, root: Path) -> tuple[Path, range]:
    """torch's package at `root/torch`, with the generated stubs in place of the wheel's;
    and the lines of `_C/__init__.pyi` that came from the fragment."""
    tree = root / "torch"
    for directory in (tree, tree / "_C"):
        directory.mkdir(parents=True)
        source = torch_dir / directory.relative_to(root).relative_to("torch")
        for entry in source.iterdir():
            if entry.name != "_C" or directory != tree:
                (directory / entry.name).symlink_to(entry)
    for path in FILES:
        (root / path).unlink()
        (root / path).write_bytes((generated / path).read_bytes())
    init = (torch_dir / "_C/__init__.pyi").read_text(encoding="utf-8").splitlines(keepends=True)
    wheel_class = tensor_base(ast.parse("".join(init)))
    declared = {m.name for m in members(fragment_class(generated).body)}
    # The generated members end the class (test_tensor_base_methods_match_the_wheel).
    first = min(
        min([n.lineno, *(d.lineno for d in n.decorator_list)])
        for n in wheel_class.body
        if isinstance(n, ast.FunctionDef) and n.name in declared
    )
    last = wheel_class.end_lineno or first
    fragment = (generated / "torch/_C/TensorBase.pyi.fragment").read_text(encoding="utf-8")
    lines = fragment.splitlines(keepends=True)
    spliced = [*init[: first - 1], *lines, *init[last:]]
    (tree / "_C/__init__.pyi").unlink()
    (tree / "_C/__init__.pyi").write_text("".join(spliced), encoding="utf-8")
    return tree, range(first, first + len(lines))


def test_stubs_type_check_with_torch(generated: Path, torch_dir: Path, tmp_path: Path) -> None:
    tree, fragment_lines = stub_tree(generated, torch_dir, tmp_path / "site")
    (tmp_path / "sample.py").write_text(textwrap.dedent(SAMPLE))
    (tmp_path / "mypy.ini").write_text(MYPY_CONFIG.format(tree=tree.parent))
    result = subprocess.run(
        [
            *(sys.executable, "-m", "mypy", "--strict", "--config-file", "mypy.ini"),
            *("--cache-dir", str(tmp_path / "cache"), "--no-error-summary", "sample.py"),
        ],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        env={**os.environ, "MYPYPATH": ""},
        check=False,
    )
    errors = [line for line in result.stdout.splitlines() if ": error:" in line]
    ours = []
    for line in errors:
        path, lineno = line.split(":")[:2]
        in_init = path.endswith("torch/_C/__init__.pyi")
        # torch's hand-written declarations in torch/_C/__init__.pyi are not ours to check.
        if not in_init or int(lineno) in fragment_lines:
            ours.append(line)
    assert ours == [], result.stdout
    assert result.returncode in (0, 1), result.stderr
