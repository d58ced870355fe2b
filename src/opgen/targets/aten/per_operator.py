"""Per-operator headers: `ops/<root>.h`, `<root>_ops.h`, `<root>_native.h`, `<root>_meta.h`.

With `--per-operator-headers`, the operators sharing a root name (`add`,
`add_`, `add.out`...) get their own headers under `ops/`, so that a source
file can include only the operators it uses:
- `<root>_ops.h`: their `at::_ops` structs;
- `<root>.h`: their C++ API functions, after the static-dispatch headers
  they call (one entry per function, empty without static dispatch);
- `<root>_meta.h`: the meta classes of its structured groups, if any;
- `<root>_native.h`: its kernel declarations (including `<root>_meta.h` when
  there is one).
The aggregate headers (`Functions.h`, `Operators.h`, `NativeFunctions.h`,
`NativeMetaFunctions.h`) then include every root's header, sorted by root
name, and `MethodOperators.h` the `_ops.h` of every root with a method.
Roots are visited in the order they first appear in the spec.
"""

from __future__ import annotations

from opgen.output import OutputSet
from opgen.spec.groups import NativeFunctionsGroup
from opgen.spec.keys import Variant
from opgen.spec.native import NativeFunction
from opgen.targets.aten import native_headers, static_dispatch
from opgen.targets.aten.header_fragments import Fragments
from opgen.targets.aten.run import AtenRun
from opgen.targets.emitters import Emitted

_AGGREGATES = (
    ("Functions", ""),
    ("Operators", "_ops"),
    ("NativeMetaFunctions", "_meta"),
    ("NativeFunctions", "_native"),
)


def emit_per_operator_headers(run: AtenRun, fragments: Fragments) -> Emitted:
    """Every operator's headers (in the ops set), and the aggregate headers that include
    them (in the CPU set)."""
    outputs = run.outputs()
    by_root: dict[str, list[NativeFunction]] = {}
    for f in run.spec.functions:
        by_root.setdefault(f.root_name, []).append(f)
    grouped_by_root: dict[str, list[NativeFunction | NativeFunctionsGroup]] = {}
    for g in run.spec.grouped:
        grouped_by_root.setdefault(g.root_name, []).append(g)
    for root, members in by_root.items():
        _add_root(outputs.ops, fragments, root, members, grouped_by_root.get(root, []))
    roots = sorted(by_root)
    cpu = outputs.cpu
    for category, suffix in _AGGREGATES:
        cpu.add_template(
            f"{category}.h",
            {
                f"{category}_includes": [f"#include <ATen/ops/{r}{suffix}.h>" for r in roots],
                f"{category}_declarations": [],
            },
        )
    with_methods = [
        root for root, fs in by_root.items() if any(Variant.method in f.variants for f in fs)
    ]
    cpu.add_template(
        "MethodOperators.h",
        {
            "MethodOperators_includes": sorted(
                [f"#include <ATen/ops/{r}_ops.h>" for r in with_methods]
            ),
            "MethodOperators_declarations": [],
        },
    )
    return outputs.emitted()


def _add_root(
    ops: OutputSet,
    fragments: Fragments,
    root: str,
    members: list[NativeFunction],
    grouped: list[NativeFunction | NativeFunctionsGroup],
) -> None:
    backends = fragments.static_backends
    ops.add_template(
        f"{root}_ops.h",
        lambda: {"declarations": [fragments.operator_declaration(f) for f in members]},
        template="Operator.h",
    )

    def function_env() -> dict[str, object]:
        includes = [static_dispatch.ops_header_includes(f, backends) for f in members]
        return {
            "static_dispatch_ops_headers": [i for i in includes if i is not None],
            "operator_includes": f"#include <ATen/ops/{root}_ops.h>",
            "function_definitions": [fragments.function_definitions(f) for f in members],
        }

    ops.add_template(f"{root}.h", function_env, template="Function.h")
    structured = [g for g in grouped if isinstance(g, NativeFunctionsGroup) and g.structured]
    if structured:
        ops.add_template(
            f"{root}_meta.h",
            lambda: {
                "meta_function_declarations": [
                    native_headers.meta_declaration(g) for g in structured
                ]
            },
            template="NativeMetaFunction.h",
        )
    extra_includes: str | list[str] = f"#include <ATen/ops/{root}_meta.h>" if structured else []
    ops.add_template(
        f"{root}_native.h",
        lambda: {
            "extra_includes": extra_includes,
            "native_function_declarations": fragments.native_declarations(grouped),
        },
        template="NativeFunction.h",
    )
