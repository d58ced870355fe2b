"""`<Key>Functions.h`, `<Key>Functions_inl.h` and `ops/<op>_<key>_dispatch.h`.

These declare the `at::<key>::` functions that `Register<Key>.cpp` defines:
every C++ API overload (convenience, faithful, and their SymInt forms;
never the `__dispatch_` fallbacks of `manual_cpp_binding` functions) of each
planned kernel (see `dispatch_plan`; operator selection does not apply), as
`TORCH_API <declaration>;` (from 2.15, with the export macro of the key's
device library: `native_headers.device_export_macro`).

Only keys both in `options.dispatch_keys` and in `options.functions_keys` get
them (the `headers` part), in the output set of the key's device family.
`<Key>Functions.h` (template `DispatchKeyFunctions.h`) includes
`<Key>Functions_inl.h` (template `DispatchKeyFunctions_inl.h`), which holds:
- aggregated build: the declarations, grouped by kernel namespace (`at::cpu`,
  i.e. the kernel's namespace with `native` replaced by the key's lower-case
  name), each namespace's in item order without repeated declarations;
- `--per-operator-headers`: one include per operator root name with any
  declarations, sorted; that operator's declarations (all of its grouped
  items, in order, not deduplicated) go to `ops/<root>_<key>_dispatch.h`
  (template `DispatchKeyFunction.h`), in the ops set.
"""

from __future__ import annotations

import functools
from collections import defaultdict
from collections.abc import Sequence

from opgen.spec.backend import BackendIndex
from opgen.spec.keys import DispatchKey
from opgen.spec.native import NativeFunction
from opgen.targets.aten.dispatch_plan import KeyKernels, Planned
from opgen.targets.aten.native_headers import device_export_macro
from opgen.targets.aten.registration import direct_cpp_signatures
from opgen.targets.aten.run import AtenOutputs, AtenRun
from opgen.targets.dispatch_registration import namespace_lines
from opgen.targets.emitters import Emitted


class _Declarations:
    """Each function's declarations, rendered once for all keys of one export macro."""

    def __init__(self, run: AtenRun) -> None:
        self.run = run
        self._signatures: dict[NativeFunction, list[str]] = {}
        self._text: dict[tuple[str, NativeFunction], str] = {}

    def macro(self, index: BackendIndex) -> str:
        # The index's own key, as torchgen asks: a key without kernels says Undefined.
        return device_export_macro(index.dispatch_key, self.run.release)

    def text(self, macro: str, p: Planned) -> str:
        """The planned kernel's overloads, each as `<macro> <declaration>;`."""
        found = self._text.get((macro, p.f))
        if found is None:
            decls = self._signatures.get(p.f)
            if decls is None:
                group = direct_cpp_signatures(self.run.signatures, p.f)
                decls = self._signatures[p.f] = [sig.decl() for sig in group.signatures()]
            found = "".join([f"{macro} {decl};\n" for decl in decls])
            self._text[(macro, p.f)] = found
        return found


def emit_dispatch_headers(run: AtenRun) -> Emitted:
    """`<Key>Functions.h`, `<Key>Functions_inl.h` and `ops/*_<key>_dispatch.h` (part: headers)."""
    table = run.kernel_table()
    declarations = _Declarations(run)
    options = run.options
    outputs = run.outputs()
    for key in options.dispatch_keys:
        if key not in options.functions_keys:
            continue
        out = outputs.for_key(key)
        out.add_template(
            f"{key}Functions.h",
            {"dispatch_key": str(key), "inline_headers": f"#include <ATen/{key}Functions_inl.h>"},
            template="DispatchKeyFunctions.h",
        )
        kernels = table.keys[key]
        if options.per_operator_headers:
            includes = _add_operator_headers(outputs, declarations, key, kernels)
            inl_env: dict[str, object] = {
                "dispatch_namespace": key.lower(),
                "DispatchKeyFunctions_inl_includes": includes,
                "dispatch_namespaced_declarations": [],
            }
            out.add_template(
                f"{key}Functions_inl.h", inl_env, template="DispatchKeyFunctions_inl.h"
            )
        else:
            out.add_template(
                f"{key}Functions_inl.h",
                functools.partial(_aggregated_env, declarations, key, kernels),
                template="DispatchKeyFunctions_inl.h",
                family=table,  # with the registrations, which render from the same plans
            )
    return outputs.emitted()


def _aggregated_env(
    declarations: _Declarations, key: DispatchKey, kernels: KeyKernels
) -> dict[str, object]:
    return {
        "DispatchKeyFunctions_inl_includes": [],
        "dispatch_namespace": key.lower(),
        "dispatch_namespaced_declarations": _aggregated(declarations, key, kernels),
    }


def _aggregated(declarations: _Declarations, key: DispatchKey, kernels: KeyKernels) -> list[str]:
    plan = kernels.plan
    macro = declarations.macro(plan.index)
    by_namespace: dict[str, dict[str, None]] = defaultdict(dict)
    for item in plan.items:
        namespace = item.namespace.replace("native", key.lower())
        texts = [declarations.text(macro, p) for p in item.kernels]
        by_namespace[namespace].update(dict.fromkeys(texts))
    lines: list[str] = []
    for namespace, unique in by_namespace.items():
        prologue, epilogue = namespace_lines(namespace, max_level=3)
        body = "\n".join(unique)
        lines.extend(f"\n{prologue}\n{body}\n{epilogue}\n        ".split("\n"))
    return lines


def _add_operator_headers(
    outputs: AtenOutputs, declarations: _Declarations, key: DispatchKey, kernels: KeyKernels
) -> list[str]:
    """Adds the key's `ops/<root>_<key>_dispatch.h` files; returns the includes of them."""
    plan = kernels.plan  # which files exist is needed now (they are listed)
    namespace = key.lower()
    macro = declarations.macro(plan.index)
    by_root: dict[str, list[Planned]] = {}
    for item in plan.items:
        by_root.setdefault(item.item.root_name, []).extend(item.kernels)
    for root, planned in by_root.items():
        outputs.ops.add_template(
            f"{root}_{namespace}_dispatch.h",
            functools.partial(_operator_env, declarations, namespace, macro, planned),
            template="DispatchKeyFunction.h",
        )
    return [f"#include <ATen/ops/{root}_{namespace}_dispatch.h>" for root in sorted(by_root)]


def _operator_env(
    declarations: _Declarations, namespace: str, macro: str, planned: Sequence[Planned]
) -> dict[str, object]:
    return {
        "dispatch_namespace": namespace,
        "dispatch_namespaced_declarations": [declarations.text(macro, p) for p in planned],
    }
