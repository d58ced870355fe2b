"""The operator and function headers (part `headers`, emitter `emit_headers`).

Without `--per-operator-headers`, the declarations of every operator go to
the aggregate headers in the install dir: `Operators.h` and
`MethodOperators.h` (the `at::_ops` structs of function-only and of method
operators), `Functions.h` (the C++ API), `NativeFunctions.h` and
`NativeMetaFunctions.h` (kernel and meta-class declarations). With it, they go
to `ops/<root>{_ops,,_native,_meta}.h` instead (see `per_operator`), and the
aggregate headers only include those. `core/TensorBody.h` and
`RedispatchFunctions.h` are written whole in both modes.

Each per-function fragment is computed once per run (`Fragments`), whatever
number of files print it.
"""

from __future__ import annotations

from collections.abc import Iterable

from opgen.api.signatures import SignatureSet
from opgen.spec.backend import BackendIndex
from opgen.spec.groups import NativeFunctionsGroup
from opgen.spec.keys import Variant
from opgen.spec.native import NativeFunction
from opgen.targets.aten import functions, native_headers, operators, per_operator
from opgen.targets.aten.run import AtenRun


class Fragments:
    """One run's per-function texts, each computed on first use."""

    def __init__(self, run: AtenRun) -> None:
        self.signatures: SignatureSet = run.signatures
        self.static_backends: list[BackendIndex] = operators.static_backends(run)
        self.calls = functions.ArgumentTranslations()
        self.release = run.options.run.release
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


def emit_headers(run: AtenRun) -> None:
    """Every header of the family, aggregate or per operator (part: headers)."""
    fragments = Fragments(run)
    if run.options.per_operator_headers:
        per_operator.emit_per_operator_headers(run, fragments)
    else:
        _emit_aggregate_headers(run, fragments)
    functions.emit_tensor_body(run, fragments.calls)
    functions.emit_redispatch_functions(run, fragments.calls)


def _emit_aggregate_headers(run: AtenRun, fragments: Fragments) -> None:
    cpu = run.outputs.cpu
    spec = run.spec
    structured = [g for g in spec.grouped if isinstance(g, NativeFunctionsGroup) and g.structured]
    methods = [f for f in spec.functions if Variant.method in f.variants]
    others = [f for f in spec.functions if Variant.method not in f.variants]
    cpu.add_template(
        "NativeMetaFunctions.h",
        lambda: {
            "NativeMetaFunctions_includes": [],
            "NativeMetaFunctions_declarations": [
                native_headers.meta_declaration(g) for g in structured
            ],
        },
    )
    cpu.add_template(
        "MethodOperators.h",
        lambda: {
            "MethodOperators_includes": [],
            "MethodOperators_declarations": [fragments.operator_declaration(f) for f in methods],
        },
    )
    cpu.add_template(
        "Operators.h",
        lambda: {
            "Operators_includes": ["#include <ATen/MethodOperators.h>"],
            "Operators_declarations": [fragments.operator_declaration(f) for f in others],
        },
    )
    cpu.add_template(
        "Functions.h",
        lambda: {
            "Functions_includes": ["#include <ATen/Operators.h>"],
            "Functions_declarations": [fragments.function_definitions(f) for f in spec.functions],
        },
    )
    cpu.add_template(
        "NativeFunctions.h",
        lambda: {
            "NativeFunctions_includes": ["#include <ATen/NativeMetaFunctions.h>"],
            "NativeFunctions_declarations": fragments.native_declarations(spec.grouped),
        },
    )
