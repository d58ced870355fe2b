"""The pieces of a stub file: definitions, attributes, imports, and how they are written.

Stubs are written as text, one declaration at a time, in the forms the `.pyi`
signatures of `opgen.api.pyi` have: a `def` on one line when it fits in 80
columns, else one parameter per line. A hand-written declaration is a
`Definition` (name, parameters, return annotation, decorators, a trailing
comment) or an `Attribute`; both render through the same formatter as the
definitions derived from the spec, so the two kinds cannot drift apart.

A name with several declarations is an overload set (`@overload` on each),
and a docstring, when there is one for the name, is attached to each of them:
it replaces a definition's `...` body, and follows an attribute.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence

from opgen.api import pyi
from opgen.frozen import frozen


@frozen
class Stub:
    """One declaration as written in a stub file."""

    text: str
    callable: bool  # a `def` (whose body is `...`), not an attribute


@frozen
class Definition:
    """A `def` that upstream writes by hand: facts, not text."""

    name: str
    parameters: tuple[str, ...] = ()
    returns: str | None = None  # None: no return annotation
    decorators: tuple[str, ...] = ()
    comment: str = ""  # a trailing comment, such as `type: ignore[has-type]`

    def stub(self) -> Stub:
        text = pyi.format_function_signature(self.name, self.parameters, self.returns)
        if self.comment:
            text = f"{text}  # {self.comment}"
        decorators = "".join(f"@{d}\n" for d in self.decorators)
        return Stub(decorators + text, callable=True)


@frozen
class Attribute:
    """An annotated attribute (`is_cuda: _bool`), with a value if it has one."""

    name: str
    annotation: str
    value: str | None = None

    def stub(self) -> Stub:
        text = f"{self.name}: {self.annotation}"
        return Stub(text if self.value is None else f"{text} = {self.value}", callable=False)


@frozen
class Import:
    """`from module import names` (or `import module` without names)."""

    module: str
    names: tuple[str, ...] = ()

    def render(self) -> str:
        if not self.names:
            return f"import {self.module}"
        line = f"from {self.module} import {', '.join(self.names)}"
        if len(line) <= pyi.MAX_LINE:
            return line
        return "\n".join((f"from {self.module} import (", *(f"    {n}," for n in self.names), ")"))


def render_imports(groups: Sequence[Sequence[Import]]) -> str:
    """Import blocks (standard library, third party, ...) separated by blank lines."""
    return "\n\n".join("\n".join(i.render() for i in group) for group in groups if group)


def overload_set(stubs: Sequence[Stub], docstring: str | None) -> list[str]:
    """The texts of one name's declarations: `@overload` when several, and the docstring."""
    texts = [s.text for s in stubs]
    if len(stubs) > 1:
        texts = [f"@overload\n{t}" for t in texts]
    if docstring is None:
        return texts
    return [with_docstring(t, s.callable, docstring) for t, s in zip(texts, stubs, strict=True)]


def with_docstring(text: str, callable: bool, docstring: str) -> str:
    """`text` documented: the docstring is a definition's body, or follows an attribute.

    A definition's lines are indented one level, the docstring's own lines
    starting on the line after the opening quotes.
    """
    if not callable:
        return f"{text}\n{_string_literal(docstring)}\n"
    head = text.removesuffix("...").rstrip()
    body = _string_literal("\n" + docstring + "\n").split("\n")
    return "\n".join((head, *(f"    {line}" if line else "" for line in body)))


def _string_literal(value: str) -> str:
    """A triple-quoted literal of `value`: raw when it can be, else with escapes."""
    if '"""' not in value and not value.endswith("\\"):
        return f'r"""{value}"""'
    escaped = value.replace("\\", "\\\\").replace('"""', '\\"""')
    return f'"""{escaped}"""'


def sorted_stubs(
    by_name: Mapping[str, list[Stub]], docstrings: Mapping[str, str], doc_prefix: str
) -> list[str]:
    """Every name's overload set, names in sorted order; docstrings under `doc_prefix + name`."""
    texts: list[str] = []
    for name in sorted(by_name):
        stubs = by_name[name]
        if stubs:
            texts += overload_set(stubs, docstrings.get(doc_prefix + name))
    return texts


def add_all(by_name: dict[str, list[Stub]], entries: Iterable[tuple[str, Stub]]) -> None:
    """Append each (name, stub) to `by_name`, in order."""
    for name, stub in entries:
        by_name.setdefault(name, []).append(stub)
