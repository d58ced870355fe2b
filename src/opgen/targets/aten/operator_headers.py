"""The operator and function headers (part `headers`, emitter `emit_headers`).

Without `--per-operator-headers`, the declarations of every operator go to
the aggregate headers in the install dir: `Operators.h` and
`MethodOperators.h` (the `at::_ops` structs of function-only and of method
operators), `Functions.h` (the C++ API), `NativeFunctions.h` and
`NativeMetaFunctions.h` (kernel and meta-class declarations). With it, they go
to `ops/<root>{_ops,,_native,_meta}.h` instead (see `per_operator`), and the
aggregate headers only include those. `core/TensorBody.h` and
`RedispatchFunctions.h` are written whole in both modes.

Each per-function fragment is computed once per run (`header_fragments.Fragments`),
whatever number of files print it.
"""

from __future__ import annotations

import functools

from opgen.spec.groups import NativeFunctionsGroup
from opgen.spec.keys import Variant
from opgen.targets.aten import functions, native_headers, per_operator
from opgen.targets.aten.header_fragments import Fragments
from opgen.targets.aten.run import AtenRun
from opgen.targets.emitters import Emitted, Emitter, run_emitters


def emit_headers(run: AtenRun) -> Emitted:
    """Every header of the family, aggregate or per operator (part: headers)."""
    fragments = Fragments(run)
    headers = (
        per_operator.emit_per_operator_headers
        if run.options.per_operator_headers
        else _emit_aggregate_headers
    )
    parts: tuple[Emitter[AtenRun], ...] = (
        functools.partial(headers, fragments=fragments),
        functools.partial(functions.emit_tensor_body, calls=fragments.calls),
        functools.partial(functions.emit_redispatch_functions, calls=fragments.calls),
    )
    return run_emitters(run, parts, run.outputs().by_name())


def _emit_aggregate_headers(run: AtenRun, fragments: Fragments) -> Emitted:
    outputs = run.outputs()
    cpu = outputs.cpu
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
    return outputs.emitted()
