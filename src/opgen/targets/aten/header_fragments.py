"""The per-function texts the operator headers share (`operator_headers`, `per_operator`).

Each fragment is computed once per run, on first use, whatever number of files
print it: the `at::_ops` struct of an operator, its C++ API functions, and the
kernel declarations of a grouped item.
"""

from __future__ import annotations

from collections.abc import Iterable

from opgen.api.signatures import SignatureSet
from opgen.spec.backend import BackendIndex
from opgen.spec.groups import NativeFunctionsGroup
from opgen.spec.native import NativeFunction
from opgen.targets.aten import functions, native_headers, operators
from opgen.targets.aten.run import AtenRun


class Fragments:
    """One run's per-function texts, each computed on first use."""

    def __init__(self, run: AtenRun) -> None:
        self.signatures: SignatureSet = run.signatures
        self.static_backends: list[BackendIndex] = operators.static_backends(run)
        self.calls = functions.ArgumentTranslations()
        self.release = run.release
        self.natives = native_headers.NativeDeclarations(run.spec, run.signatures, self.release)
        self._operator: dict[NativeFunction, str] = {}
        self._functions: dict[NativeFunction, str] = {}

    def operator_declaration(self, f: NativeFunction) -> str:
        found = self._operator.get(f)
        if found is None:
            found = self._operator[f] = operators.declaration(self.signatures.of(f))
        return found

    def function_definitions(self, f: NativeFunction) -> str:
        found = self._functions.get(f)
        if found is None:
            sigs = self.signatures.of(f)
            found = self._functions[f] = functions.function_definitions(sigs, self.calls)
        return found

    def native_declarations(
        self, grouped: Iterable[NativeFunction | NativeFunctionsGroup]
    ) -> list[str]:
        """The kernel declarations of `grouped`, merged by namespace, as template lines."""
        return native_headers.namespaced((self.natives.of(g) for g in grouped), self.release)
