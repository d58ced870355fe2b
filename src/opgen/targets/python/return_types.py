"""python_return_types.h and python_return_types.cpp: the structseq classes of named returns.

A function whose returns are all named (`max.dim(...) -> (Tensor values,
Tensor indices)`) returns a structseq in Python, `torch.return_types.max`:
a named-tuple-like type built on first use by `get_<name>_structseq()`
(declared in the header, defined in the .cpp) and registered in
`torch._C._return_types` by `initReturnTypes`.

The functions are those with Python bindings (`should_generate_py_binding`),
grouped by operator name (`max`, `max_`), the groups sorted by name and each
in spec order. The C++ name (`max`, `max_out` for an out= overload) and the
field names identify a structseq: a group defines each once, the first
time it appears, its static type object named `<name>NamedTuple` for the
group's first and `<name>NamedTuple<k>` for its k-th (from 1). Only the functions'
schemas matter: deprecated signatures call functions already listed.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from functools import partial

from opgen.api import cpp
from opgen.api.pyi import structseq_fieldnames, structseq_key
from opgen.cached import cached
from opgen.frozen import frozen
from opgen.output import OutputSet
from opgen.python_bindings.bound import should_generate_py_binding
from opgen.releases import NEWEST, Release
from opgen.spec.native import NativeFunction
from opgen.targets.emitters import Emitted
from opgen.targets.python.run import PythonRun, emitted


@frozen
class Structseq:
    """One structseq a group of overloads defines."""

    name: str  # the C++ name of the function that first returns it
    fields: tuple[str, ...]
    type_object: str  # the static PyTypeObject: `maxNamedTuple`, `max_outNamedTuple1`

    @property
    def getter(self) -> str:
        return f"get_{self.name}_structseq"


def emit_return_types(run: PythonRun) -> Emitted:
    out = run.output_set()
    structseqs = _Structseqs(run, out)
    for name in _FILES:
        out.add(name, partial(structseqs.render, name), family=structseqs)
    return emitted(out)


class _Structseqs:
    """The run's structseqs, found when the first of the two files renders."""

    def __init__(self, run: PythonRun, out: OutputSet) -> None:
        self._run = run
        self._out = out

    @cached
    def groups(self) -> list[list[Structseq]]:
        return structseq_groups(self._run.spec.functions, self._run.release)

    def render(self, name: str) -> str:
        comment = f"@generated from {self._run.template_comment_dir}/{name}"
        env = {"generated_comment": comment, **_FILES[name](self.groups)}
        return self._out.render(name, env)


def structseq_groups(
    functions: Iterable[NativeFunction], release: Release = NEWEST
) -> list[list[Structseq]]:
    """The structseqs of each group of bound overloads, the groups sorted by operator name.

    A group without structseqs is an empty list: it leaves no trace in the files.
    """
    groups: dict[str, list[NativeFunction]] = {}
    for f in functions:
        if should_generate_py_binding(f, release):
            groups.setdefault(str(f.func.name.name), []).append(f)
    return [_group_structseqs(groups[name]) for name in sorted(groups)]


def _group_structseqs(overloads: Sequence[NativeFunction]) -> list[Structseq]:
    found: dict[str, Structseq] = {}
    for f in overloads:
        fields = structseq_fieldnames(f.func.returns)
        if not fields:
            continue
        name = cpp.name(f.func)
        key = structseq_key(f.func, fields)
        if key not in found:
            number = str(len(found)) if found else ""
            found[key] = Structseq(name, tuple(fields), f"{name}NamedTuple{number}")
    return list(found.values())


def _definition(s: Structseq) -> str:
    fields = ", ".join(f'{{"{field}", ""}}' for field in s.fields)
    t = s.type_object
    return f"""\
PyTypeObject* {s.getter}() {{
    static PyStructSequence_Field NamedTuple_fields[] = {{ {fields},  {{nullptr}} }};
    static PyTypeObject {t};
    static bool is_initialized = false;
    static PyStructSequence_Desc desc = {{ "torch.return_types.{s.name}", nullptr, NamedTuple_fields, {len(s.fields)} }};
    if (!is_initialized) {{
        PyStructSequence_InitType(&{t}, &desc);
        {t}.tp_repr = (reprfunc)torch::utils::returned_structseq_repr;
        is_initialized = true;
    }}
    return &{t};
}}
"""  # noqa: E501


def _registration(s: Structseq) -> str:
    return f'addReturnType(return_types_module, "{s.name}", generated::{s.getter}());'


def _source_env(groups: list[list[Structseq]]) -> dict[str, list[str]]:
    return {
        "py_return_types": ["\n".join(map(_definition, group)) for group in groups],
        "py_return_types_registrations": ["\n".join(map(_registration, group)) for group in groups],
    }


def _header_env(groups: list[list[Structseq]]) -> dict[str, list[str]]:
    return {
        "py_return_types_declarations": [
            "\n".join(f"PyTypeObject* {s.getter}();" for s in group) for group in groups
        ]
    }


# Each file (in the order upstream writes them) and its template's lists.
_FILES: dict[str, Callable[[list[list[Structseq]]], dict[str, list[str]]]] = {
    "python_return_types.cpp": _source_env,
    "python_return_types.h": _header_env,
}
