"""Which functions a C++ gradient formula calls, and whether the generated code sees them.

The Autograd kernels compile formulas in the global namespace with `using
namespace at;`, after `<ns>/kernels.h`, `<ns>/ops.h` and the derivatives file's
`include:` headers. Whether a call resolves is the compiler's business, and
opgen cannot know ATen's functions (torch's spec is not an input), so only two
kinds of call are checked, and only when the file lists no header of its own
(a header may declare anything, anywhere):

- `ns::...::name(...)`, qualified with the library's namespace: only ops.h
  (the operators' C++ API) and kernels.h (the kernels) declare names there,
  so any other name is an error.
- `name(...)`, unqualified, where `name` is one of the library's operators or
  kernels: unqualified, it does not reach the library's function (which lives
  in `ns`, and no argument type brings `ns` into lookup); it names ATen's
  function of that name or nothing. This rejects a formula that means ATen's
  function by the library's name unqualified; `at::name` says so.

Every other call (ATen functions and methods, `at::`, `torch::`, `std::`,
helpers from `include:` headers) is left to the compiler, whose errors point
at derivatives.yaml.
"""

from __future__ import annotations

import difflib
import re
from collections.abc import Iterable, Iterator, Mapping, Sequence

from opgen.api.signatures import FunctionSignatures
from opgen.diagnostics import Diagnostic
from opgen.frozen import frozen
from opgen.spec.derivatives import DerivativesEntry, FormulaHeader
from opgen.spec.model import Spec
from opgen.spec.native import NativeFunction

# A call: a name, maybe qualified, then `(`; not a member (`.f(`, `->f(`).
_CALL = re.compile(
    r"(?<![\w.:>])(?P<qualifier>(?:::)?(?:[A-Za-z_]\w*::)*)(?P<name>[A-Za-z_]\w*)\s*\("
)
# String and character literals and comments, blanked out before looking for calls.
_NOT_CODE = re.compile(r'"(?:\\.|[^"\\])*"|\'(?:\\.|[^\'\\])*\'|//[^\n]*|/\*.*?\*/', re.DOTALL)
# Namespaces torch's own headers fill: a library named so is not checked.
_TORCH_NAMESPACES = frozenset({"at", "aten", "c10", "caffe2", "std", "torch"})


@frozen
class _Declared:
    """The names the generated headers declare, by C++ namespace."""

    namespace: str  # the library's
    names: Mapping[str, frozenset[str]]

    @staticmethod
    def of(spec: Spec, namespace: str) -> _Declared:
        names: dict[str, set[str]] = {namespace: set()}
        for f in spec.functions:
            names[namespace].update(s.name() for s in FunctionSignatures(f).cpp.signatures())
            for metadata in spec.kernels(f).values():
                names.setdefault(metadata.cpp_namespace, set()).add(metadata.kernel)
        return _Declared(namespace, {ns: frozenset(n) for ns, n in names.items()})

    def qualified(self, name: str) -> list[str]:
        """Each `ns::name` the headers declare in the library's namespaces."""
        found = [ns for ns, names in self.names.items() if name in names]
        return [f"{ns}::{name}" for ns in sorted(found, key=lambda ns: (ns != self.namespace, ns))]


def formula_errors(
    spec: Spec,
    namespace: str,
    derivatives: Iterable[DerivativesEntry[NativeFunction]],
    headers: Sequence[FormulaHeader],
    compiled: bool,
) -> Iterator[Diagnostic]:
    """Headers in a library without C++, and calls C++ formulas cannot make."""
    if not compiled:
        for header in headers:
            yield Diagnostic(
                header.location,
                "'include' names a header for C++ formulas, and this library has no C++ "
                "(its formulas are Python)",
            )
    elif not headers and namespace not in _TORCH_NAMESPACES:
        yield from _call_errors(spec, namespace, derivatives)


def _call_errors(
    spec: Spec, namespace: str, derivatives: Iterable[DerivativesEntry[NativeFunction]]
) -> Iterator[Diagnostic]:
    """A diagnostic per call of a C++ formula that cannot reach the function it names."""
    declared = _Declared.of(spec, namespace)
    for d in derivatives:
        for formula in d.formulas:
            code = _NOT_CODE.sub(lambda m: " " * len(m.group()), formula.text)
            for call in _CALL.finditer(code):
                problem = _problem(call.group("qualifier"), call.group("name"), declared)
                if problem is not None:
                    span = call.end("name") - call.start()
                    yield Diagnostic(formula.span(call.start(), span), problem)


def _problem(qualifier: str, name: str, declared: _Declared) -> str | None:
    scope = qualifier.removeprefix("::").removesuffix("::")
    ns = declared.namespace
    if not scope:
        found = declared.qualified(name)
        if not found:
            return None
        return (
            f"'{name}' is not visible unqualified in a formula: write '{found[0]}' (or "
            f"'at::{name}' for ATen's function of that name)"
        )
    if scope != ns and not scope.startswith(f"{ns}::"):
        return None
    if name in declared.names.get(scope, ()):
        return None
    elsewhere = declared.qualified(name)
    close = difflib.get_close_matches(name, sorted(declared.names.get(scope, ())), n=1)
    meant = elsewhere[0] if elsewhere else f"{scope}::{close[0]}" if close else None
    hint = f"; did you mean '{meant}'?" if meant else ""
    return (
        f"'{scope}::{name}' is not declared for formulas: {ns}/ops.h declares the operators "
        f"and {ns}/kernels.h the kernels; declare a helper in a header and list it in the "
        f"derivatives file ('- include: <header>'){hint}"
    )
