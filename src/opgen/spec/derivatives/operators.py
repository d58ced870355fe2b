"""Which operator a derivatives entry names, in each dialect.

A library entry names an operator as `ns::name.overload(...)` (namespace
optional) and must repeat its schema, defaults included; an MLX extension's
entry may give the name alone. An entry of PyTorch's
file names it by its exact schema text, without namespace; its formulas are
then for the *canonical* function of that schema's signature: the first
function of the same signature (the inplace, out= and functional variants of
one operator share it) whose name is the entry's, or the inplace function if
the operator has no out-of-place one. A name that matches nothing is an error
with what was probably meant.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from typing import Generic

from opgen.diagnostics import Location, SpecError, did_you_mean
from opgen.spec.derivatives.entry import Dialect, F
from opgen.spec.native import NativeFunction
from opgen.spec.schema import FunctionSchema
from opgen.spec.syntax import IDENTIFIER, SchemaError

# What upstream accepts as an entry's name: `base[.overload](...)`.
_TORCH_NAME = re.compile(r"(\w+)(?:\.\w+)?\(")


def _parse(text: str, at: Location) -> FunctionSchema:
    try:
        return FunctionSchema.parse(text)
    except SchemaError as error:
        raise error.at(at) from None


def _unknown(name: str, at: Location, known: Iterable[str]) -> SpecError:
    hint = did_you_mean(name, known)
    return SpecError(f"derivatives entry for '{name}', which is not in the spec{hint}", at)


def _mismatch(written: FunctionSchema, expected: FunctionSchema, at: Location) -> SpecError:
    """The error for an entry whose schema is not its operator's, both dialects: it shows
    the spec's schema and points at the first difference in the entry's."""
    return SpecError(
        f"derivatives entry for '{written.name}' does not match its schema: expected '{expected}'",
        _first_difference(written, expected, at),
    )


def _first_difference(written: FunctionSchema, expected: FunctionSchema, at: Location) -> Location:
    """Where `written` first differs from `expected`: an argument, else the returns."""
    ours, theirs = written.arguments.flat_all, expected.arguments.flat_all
    positional = len(written.arguments.flat_positional), len(expected.arguments.flat_positional)
    for i, (a, b) in enumerate(zip(ours, theirs, strict=False)):
        if str(a) != str(b) or (i < positional[0]) != (i < positional[1]):  # or the `*`
            return at.shifted(*written.span(a))
    if len(ours) > len(theirs):
        return at.shifted(*written.span(ours[len(theirs)]))
    if str(written) == str(expected):  # the same but for the spelling of the text
        return at
    return at.shifted(*written.span(written.returns))


class LibraryOperators(Generic[F]):
    """The operators of a library, by qualified name; an MLX extension's may be named
    without their schema (`- name: add`)."""

    def __init__(self, functions: Iterable[F], dialect: Dialect) -> None:
        self._by_name = {f"{f.namespace}::{f.func.name}": f for f in functions}
        self._bare_names = dialect is Dialect.MLX

    def resolve(self, text: str, at: Location) -> F:
        head = text.partition("(")[0]
        namespace, sep, base = head.rpartition("::")
        skip = len(namespace) + len(sep)
        namespaces = {f.namespace for f in self._by_name.values()}
        if namespace and namespaces and namespace not in namespaces:
            listed = ", ".join(f"'{n}'" for n in sorted(namespaces))
            namespace_at = at.shifted(0, len(namespace))
            raise SpecError(
                f"the operators are in namespace {listed}, not '{namespace}'", namespace_at
            )
        if self._bare_names and "(" not in text and IDENTIFIER.fullmatch(base):
            schema = None
        else:
            schema = _parse(text[skip:], at.shifted(skip))
            base = str(schema.name)
        candidates = [f for key, f in self._by_name.items() if key.endswith(f"::{base}")]
        if namespace:
            candidates = [f for f in candidates if f.namespace == namespace]
        if not candidates:
            names = [str(f.func.name) for f in self._by_name.values()]
            raise _unknown(base, at, names)
        f = candidates[0]
        if schema is not None and str(schema) != str(f.func):  # the formulas see the defaults
            raise _mismatch(schema, f.func, at.shifted(skip))
        return f


class TorchOperators:
    """The functions of a spec by schema text and by signature, in upstream's order.

    `functions` must come in the order of the spec's view grouping (each view
    followed by its inplace and copy variants): where several functions of
    one signature qualify, the first is canonical.
    """

    def __init__(self, functions: Iterable[NativeFunction]) -> None:
        self._by_schema: dict[str, NativeFunction] = {}
        # By the signature's text: equal texts are equal signatures, and cheaper to compare.
        self._by_signature: dict[str, list[NativeFunction]] = {}
        for f in functions:
            self._by_schema[f.func.text] = f
            self._by_signature.setdefault(f.func.signature().text, []).append(f)

    def resolve(self, text: str, at: Location) -> tuple[NativeFunction, str]:
        """The canonical function of the entry named `text`, and the entry's base name."""
        named = self._by_schema.get(text)
        if named is None:
            raise self._not_found(text, at)
        match = _TORCH_NAME.match(text)
        assert match is not None, "a spec's schema always starts with its name"
        base = match.group(1)
        group = self._by_signature[named.func.signature().text]
        for f in group:
            func = f.func
            if not func.is_functional_fn() and not func.is_out_fn() and str(func.name.name) == base:
                return f, base
        first = group[0].func
        if not first.is_out_fn() and str(first.name.name) == f"{base}_":
            return group[0], base  # an operator with only an inplace variant
        raise SpecError(
            f"'{named.func.name}' has no out-of-place or inplace variant named '{base}' for "
            "its formulas; write the entry for one of them",
            at,
        )

    def _not_found(self, text: str, at: Location) -> SpecError:
        head = text.partition("(")[0]
        if "::" in head:
            namespace = head.rpartition("::")[0]
            return SpecError(
                "operators in PyTorch's derivatives.yaml are named without a namespace",
                at.shifted(0, len(namespace) + 2),
            )
        schema = _parse(text, at)
        name = str(schema.name)
        for f in self._by_schema.values():
            if str(f.func.name) == name:
                return _mismatch(schema, f.func, at)
        overloads = [
            f.func for f in self._by_schema.values() if f.func.name.name == schema.name.name
        ]
        if overloads:
            listed = ", ".join(f"'{func}'" for func in overloads[:4])
            return SpecError(
                f"derivatives entry for '{name}', which is not in the spec; the overloads of "
                f"'{schema.name.name}' are {listed}",
                at,
            )
        return _unknown(name, at, (str(f.func.name) for f in self._by_schema.values()))
