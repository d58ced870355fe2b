"""The tree's structure, measured on src/opgen's source (every module parsed with `ast`).

- **No import circles.** A module imports another when one of its `import` statements
  names it, wherever the statement is (inside functions too), except under
  `if TYPE_CHECKING:`, which never runs. `import a.b` and `from a.b import name` import
  `a.b` (a package: its `__init__`); `from a import b` imports the module `a.b` when
  there is one, else `a`. Two modules that import each other, directly or through
  others, form a circle: the layers of `opgen` run one way.
- **One class per public name.** A class whose name does not start with `_` is
  defined once in `opgen`, so a name says which class it is.
- **Emitters return what they make.** An `emit_*` function under `opgen.targets` of one
  parameter (what it reads: a target's model or run, or a part of one) returns what it
  makes: its return annotation is there and is not `None`.
- **One emitter runner.** Only `opgen.targets.emitters` runs an emitter table: no other
  module has a `for` statement over a name like `EMITTERS`, or a loop (a comprehension
  too) that calls the functions it loops over when their name says they emit. Choosing
  a run's emitters from a table, in a comprehension that calls nothing, is not running it.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path

import pytest

import opgen

SOURCE = Path(opgen.__file__).resolve().parent

# Public class names defined in more than one module, each with the modules that define
# it and the reason it is allowed. The list only shrinks.
KNOWN_DUPLICATE_CLASSES: Mapping[str, tuple[frozenset[str], str]] = {}

EMITTER_RUNNER = "opgen.targets.emitters"
EMITTER_TABLE = re.compile(r"(?:^|_)emitters$", re.IGNORECASE)
EMITTER_NAME = re.compile(r"emit", re.IGNORECASE)


def module_name(path: Path) -> str:
    parts = path.relative_to(SOURCE.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


ParsedModules = dict[str, tuple[Path, ast.Module]]


def parsed_modules() -> ParsedModules:
    """Every module of opgen by its dotted name, with its path and syntax tree."""
    modules: dict[str, tuple[Path, ast.Module]] = {}
    for path in sorted(SOURCE.rglob("*.py")):
        modules[module_name(path)] = (path, ast.parse(path.read_text(), str(path)))
    return modules


def _is_type_checking(test: ast.expr) -> bool:
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING"
    )


def run_time_statements(node: ast.AST) -> Iterator[ast.AST]:
    """Every node under `node`, leaving out the bodies of `if TYPE_CHECKING:`."""
    for child in ast.iter_child_nodes(node):
        if isinstance(child, ast.If) and _is_type_checking(child.test):
            for other in child.orelse:
                yield other
                yield from run_time_statements(other)
            continue
        yield child
        yield from run_time_statements(child)


def _package_of(name: str, path: Path) -> str:
    return name if path.name == "__init__.py" else name.rpartition(".")[0]


def imported_modules(
    name: str, path: Path, tree: ast.Module, known: Mapping[str, object]
) -> dict[str, int]:
    """The opgen modules `name` imports at run time, each with the line of its first import."""
    found: dict[str, int] = {}

    def add(target: str, line: int) -> None:
        if target in known and target != name:
            found.setdefault(target, line)

    for node in run_time_statements(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                add(alias.name, node.lineno)
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                package = _package_of(name, path).split(".")
                anchor = ".".join(package[: len(package) - node.level + 1])
                base = f"{anchor}.{base}" if base else anchor
            for alias in node.names:
                submodule = f"{base}.{alias.name}"
                add(submodule if submodule in known else base, node.lineno)
    return found


def import_graph(modules: Mapping[str, tuple[Path, ast.Module]]) -> dict[str, dict[str, int]]:
    return {
        name: imported_modules(name, path, tree, modules) for name, (path, tree) in modules.items()
    }


def strongly_connected(graph: Mapping[str, Mapping[str, int]]) -> list[list[str]]:
    """The components of more than one module (Tarjan's algorithm), each sorted."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    components: list[list[str]] = []

    def visit(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        on_stack.add(node)
        for other in sorted(graph[node]):
            if other not in index:
                visit(other)
                low[node] = min(low[node], low[other])
            elif other in on_stack:
                low[node] = min(low[node], index[other])
        if low[node] == index[node]:
            component: list[str] = []
            while True:
                member = stack.pop()
                on_stack.discard(member)
                component.append(member)
                if member == node:
                    break
            if len(component) > 1:
                components.append(sorted(component))

    for node in sorted(graph):
        if node not in index:
            visit(node)
    return sorted(components)


def import_circles(modules: Mapping[str, tuple[Path, ast.Module]]) -> list[list[str]]:
    """Each circle as the imports between its modules: `a:LINE -> b`."""
    graph = import_graph(modules)
    return [
        [
            f"{a}:{line} -> {b}"
            for a in component
            for b, line in sorted(graph[a].items())
            if b in component
        ]
        for component in strongly_connected(graph)
    ]


def public_classes(modules: Mapping[str, tuple[Path, ast.Module]]) -> dict[str, set[str]]:
    """Every public class name in opgen, with the modules that define it."""
    defined: dict[str, set[str]] = {}
    for name, (_, tree) in modules.items():
        for node in ast.walk(tree):
            if isinstance(node, ast.ClassDef) and not node.name.startswith("_"):
                defined.setdefault(node.name, set()).add(name)
    return defined


def _functions(tree: ast.Module) -> Iterator[ast.FunctionDef | ast.AsyncFunctionDef]:
    """Every function and method of a module."""
    for node in ast.walk(tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            yield node


def _own_parameters(function: ast.FunctionDef | ast.AsyncFunctionDef) -> list[ast.arg]:
    arguments = function.args
    every = [*arguments.posonlyargs, *arguments.args, *arguments.kwonlyargs]
    if arguments.vararg is not None:
        every.append(arguments.vararg)
    if arguments.kwarg is not None:
        every.append(arguments.kwarg)
    return [a for a in every if a.arg not in ("self", "cls")]


def emitters_returning_nothing(modules: Mapping[str, ast.Module]) -> list[str]:
    """The `emit_*` functions under `opgen.targets` of one parameter that return nothing."""
    found: list[str] = []
    for name, tree in modules.items():
        if not name.startswith("opgen.targets."):
            continue
        for function in _functions(tree):
            if not function.name.startswith("emit_") or len(_own_parameters(function)) != 1:
                continue
            returns = function.returns
            if returns is None or (isinstance(returns, ast.Constant) and returns.value is None):
                parameter = _own_parameters(function)[0]
                written = ast.unparse(parameter)  # `run: AtenRun`, or `run` unannotated
                found.append(f"{name}:{function.lineno} {function.name}({written})")
    return found


def _names(node: ast.AST) -> Iterator[str]:
    for child in ast.walk(node):
        if isinstance(child, ast.Name):
            yield child.id
        elif isinstance(child, ast.Attribute):
            yield child.attr


def _bound_names(target: ast.AST) -> set[str]:
    return {n.id for n in ast.walk(target) if isinstance(n, ast.Name)}


def _calls_bound_emitter(bound: set[str], body: Sequence[ast.AST]) -> bool:
    emitters = {n for n in bound if EMITTER_NAME.search(n)}
    return any(
        isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id in emitters
        for statement in body
        for node in ast.walk(statement)
    )


def emitter_runners(modules: Mapping[str, ast.Module]) -> list[str]:
    """The loops outside `opgen.targets.emitters` that run emitter tables."""
    found: list[str] = []
    for name, tree in modules.items():
        if name == EMITTER_RUNNER:
            continue
        for node in ast.walk(tree):
            if isinstance(node, (ast.For, ast.AsyncFor)):
                table = next((n for n in _names(node.iter) if EMITTER_TABLE.search(n)), None)
                if table is not None:
                    found.append(f"{name}:{node.lineno} for over {table}")
                elif _calls_bound_emitter(_bound_names(node.target), [*node.body, *node.orelse]):
                    found.append(f"{name}:{node.lineno} calls the emitters it loops over")
            elif isinstance(node, (ast.ListComp, ast.SetComp, ast.GeneratorExp, ast.DictComp)):
                bound = set().union(*(_bound_names(g.target) for g in node.generators))
                parts = [node.key, node.value] if isinstance(node, ast.DictComp) else [node.elt]
                if _calls_bound_emitter(bound, parts):
                    found.append(f"{name}:{node.lineno} calls the emitters it loops over")
    return found


def _report(title: str, findings: list[str]) -> str:
    return "\n".join([title, *(f"  {finding}" for finding in findings)])


# -- the measure, on known text -------------------------------------------------------


def test_the_import_graph_reads_every_kind_of_import() -> None:
    source = (
        "from __future__ import annotations\n"
        "from typing import TYPE_CHECKING\n"
        "import opgen.spec.schema\n"
        "from opgen.spec import native\n"
        "from opgen.spec.keys import DispatchKey\n"
        "from . import groups\n"
        "from .backend import BackendIndex\n"
        "if TYPE_CHECKING:\n"
        "    from opgen.spec.model import Spec\n"
        "else:\n"
        "    import opgen.spec.tags\n"
        "def later() -> None:\n"
        "    from opgen.spec.autogen import PreGroup\n"
    )
    known = {
        m: None
        for m in (
            "opgen.spec",
            "opgen.spec.schema",
            "opgen.spec.native",
            "opgen.spec.keys",
            "opgen.spec.groups",
            "opgen.spec.backend",
            "opgen.spec.model",
            "opgen.spec.tags",
            "opgen.spec.autogen",
            "opgen.spec.probe",
        )
    }
    imported = imported_modules(
        "opgen.spec.probe", SOURCE / "spec" / "probe.py", ast.parse(source), known
    )
    assert imported == {
        "opgen.spec.schema": 3,
        "opgen.spec.native": 4,
        "opgen.spec.keys": 5,
        "opgen.spec.groups": 6,
        "opgen.spec.backend": 7,
        "opgen.spec.tags": 11,
        "opgen.spec.autogen": 13,
    }
    package = imported_modules(
        "opgen.spec", SOURCE / "spec" / "__init__.py", ast.parse("from .keys import X\n"), known
    )
    assert package == {"opgen.spec.keys": 1}


def test_components_are_the_circles() -> None:
    graph = {"a": {"b": 1}, "b": {"c": 1}, "c": {"a": 1, "d": 1}, "d": {}, "e": {"d": 1}}
    assert strongly_connected(graph) == [["a", "b", "c"]]
    assert strongly_connected({"a": {"b": 1}, "b": {}}) == []


def test_an_emitter_is_an_emit_function_of_one_parameter() -> None:
    source = (
        "def emit_a(run: ARun) -> None: ...\n"
        "def emit_b(model: BModel) -> Emitted: ...\n"
        "def emit_c(run: ARun, calls: Calls) -> None: ...\n"
        "def emit_d(run): ...\n"
        "def emit_e(kernel: Kernel) -> list[str]: ...\n"
        "class Family:\n"
        "    def emit_f(self, model: BModel) -> None: ...\n"
    )
    modules = {"opgen.targets.x.files": ast.parse(source), "opgen.tooling.y": ast.parse(source)}
    assert emitters_returning_nothing(modules) == [
        "opgen.targets.x.files:1 emit_a(run: ARun)",
        "opgen.targets.x.files:4 emit_d(run)",
        "opgen.targets.x.files:7 emit_f(model: BModel)",
    ]


def test_a_runner_is_a_loop_that_calls_a_table() -> None:
    source = (
        "for part, emit in EMITTERS:\n"  # 1: a for statement over a table
        "    emit(run)\n"
        "chosen = [emit for part, emit in EMITTERS if part in parts]\n"  # 3: a choice
        "for emit in chosen:\n"  # 4: calls what it loops over
        "    emit(run)\n"
        "made = [emit(run) for emit in chosen]\n"  # 6: the same in a comprehension
        "for check in CHECKS:\n"  # 7: not emitters
        "    check(run)\n"
        "for name, files in emitted.files.items():\n"  # 9: what emitters made
        "    sets[name].extend(files)\n"
    )
    modules = {"opgen.targets.x.generate": ast.parse(source), EMITTER_RUNNER: ast.parse(source)}
    assert emitter_runners(modules) == [
        "opgen.targets.x.generate:1 for over EMITTERS",
        "opgen.targets.x.generate:4 calls the emitters it loops over",
        "opgen.targets.x.generate:6 calls the emitters it loops over",
    ]


# -- the tree -------------------------------------------------------------------------


@pytest.fixture(scope="module")
def opgen_modules() -> ParsedModules:
    return parsed_modules()


def test_no_import_circles(opgen_modules: ParsedModules) -> None:
    circles = import_circles(opgen_modules)
    findings = [f"circle {i}: " + "; ".join(edges) for i, edges in enumerate(circles, 1)]
    assert not circles, _report(
        "modules that import each other (directly or through others):", findings
    )


def test_no_public_class_is_defined_twice(opgen_modules: ParsedModules) -> None:
    defined = public_classes(opgen_modules)
    twice = {name: modules for name, modules in defined.items() if len(modules) > 1}
    unexpected = [
        f"{name}: {', '.join(sorted(modules))}"
        for name, modules in sorted(twice.items())
        if KNOWN_DUPLICATE_CLASSES.get(name, (frozenset(),))[0] != modules
    ]
    assert not unexpected, _report("public classes defined in more than one module:", unexpected)
    settled = sorted(set(KNOWN_DUPLICATE_CLASSES) - set(twice))
    assert not settled, f"defined once now, remove from KNOWN_DUPLICATE_CLASSES: {settled}"


def test_emitters_return_what_they_make(opgen_modules: ParsedModules) -> None:
    found = emitters_returning_nothing({name: tree for name, (_, tree) in opgen_modules.items()})
    assert not found, _report("emitters that return None (a pure emitter returns Emitted):", found)


def test_only_the_runner_runs_emitter_tables(opgen_modules: ParsedModules) -> None:
    found = emitter_runners({name: tree for name, (_, tree) in opgen_modules.items()})
    assert not found, _report(f"emitter tables run outside {EMITTER_RUNNER}:", found)
