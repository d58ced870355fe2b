"""NativeFunctions.h and CustomOpsNativeFunctions.h: the declarations of the kernels.

`NativeFunctions.h` declares every kernel of every operator in ExecuTorch's convention
under its name, in the kernel's C++ namespace (`torch::executor::add_out` is
`add_out` in `torch::executor::native`), twice: without the runtime context, then
with it (a kernel library defines one of the two). Declarations are grouped by
namespace, namespaces in order of first appearance, each declaration once; an
operator's kernels must share one namespace. (Upstream adds an operator's
declarations once per kernel it has; kept once, that is the same text.)

With `--use-aten-lib`, and for `CustomOpsNativeFunctions.h` (the custom ops' kernels as
PyTorch sees them, written whenever a custom-ops YAML is given), the kernels are
declared as ATen's in-tree kernels are (`TORCH_API`, the native convention), one per
operator (`ExecutorchRun.single_kernels`); an operator without a kernel puts its
namespace, `at::native`, in the order without declaring anything.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from opgen.diagnostics import SpecError
from opgen.spec.backend import DEFAULT_KERNEL_NAMESPACE, BackendMetadata
from opgen.spec.native import NativeFunction
from opgen.spec.schema import OperatorName
from opgen.targets.dispatch_registration import namespace_lines
from opgen.targets.emitters import Emitted
from opgen.targets.executorch.run import ExecutorchRun, emitted, unsupported

# Emitted C++ as ExecuTorch's codegen writes it (byte-identical output). The includes.
HEADERS = [
    "#include <executorch/runtime/core/exec_aten/exec_aten.h> // at::Tensor etc.",
    "#include <executorch/runtime/kernel/kernel_runtime_context.h>",
    "#include <executorch/runtime/core/error.h>",
]
ATEN_HEADERS = [*HEADERS, "#include <executorch/codegen/macros.h> // TORCH_API"]
CUSTOM_OPS_HEADERS = ["#include <ATen/ATen.h>", "#include <torch/torch.h>"]


def emit_native_headers(run: ExecutorchRun) -> Emitted:
    """NativeFunctions.h, and CustomOpsNativeFunctions.h for a custom-ops YAML (headers part)."""
    out = run.output_set()
    if run.options.custom_ops_yaml_path is not None:
        kernels = run.single_kernels()
        out.add_template(
            "CustomOpsNativeFunctions.h",
            lambda: {
                "nativeFunctions_declarations": aten_declarations(run, run.custom_ops, kernels),
                "headers": CUSTOM_OPS_HEADERS,
            },
            template="NativeFunctions.h",
        )
    if run.options.use_aten_lib:
        kernels = run.single_kernels()
        out.add_template(
            "NativeFunctions.h",
            lambda: {
                "nativeFunctions_declarations": aten_declarations(run, run.functions, kernels),
                "headers": ATEN_HEADERS,
            },
        )
        return emitted(out)
    by_namespace = executorch_declarations(run)  # checked now, as upstream does
    out.add_template(
        "NativeFunctions.h",
        lambda: {"nativeFunctions_declarations": namespaced(by_namespace), "headers": HEADERS},
    )
    return emitted(out)


def executorch_declarations(run: ExecutorchRun) -> dict[str, list[str]]:
    """Every kernel's two declarations, by C++ namespace."""
    by_namespace: dict[str, list[str]] = {}
    for f in run.functions:
        kernels = run.kernel_index.get_kernels(f)
        namespaces = {kernel.cpp_namespace for kernel in kernels.values()}
        if len(namespaces) > 1:
            raise SpecError(
                f"the kernels of '{f.func.name}' are in several C++ namespaces "
                f"({', '.join(sorted(namespaces))}); NativeFunctions.h declares an "
                "operator's kernels in one",
                f.loc,
            )
        if not kernels:
            continue
        with unsupported(f):
            sig = run.executorch_signature(f)
            declared = [
                f"{sig.decl(kernel.kernel, include_context=context)};"
                for context in (False, True)
                for kernel in kernels.values()
            ]
        by_namespace.setdefault(next(iter(namespaces)), []).extend(declared)
    return by_namespace


def aten_declarations(
    run: ExecutorchRun,
    functions: Sequence[NativeFunction],
    kernels: Mapping[OperatorName, BackendMetadata],
) -> list[str]:
    """Each function's kernel as an ATen in-tree kernel is declared, by C++ namespace."""
    by_namespace: dict[str, list[str]] = {}
    for f in functions:
        kernel = kernels.get(f.func.name)
        namespace = DEFAULT_KERNEL_NAMESPACE if kernel is None else kernel.cpp_namespace
        found = by_namespace.setdefault(namespace, [])
        if kernel is None or "legacy::" in kernel.kernel:
            continue
        with unsupported(f):
            sig = run.signatures.of(f).native(kernel)
            found.append(
                f"TORCH_API {sig.returns_text} {kernel.kernel}({sig.declared_parameters});"
            )
    return namespaced(by_namespace)


def namespaced(by_namespace: Mapping[str, Sequence[str]]) -> list[str]:
    """The declarations as template lines, each namespace's once each, in its namespace."""
    lines: list[str] = []
    for namespace, declared in by_namespace.items():
        opening, closing = namespace_lines(namespace, max_level=4)
        body = "\n".join(dict.fromkeys(declared))
        lines.extend(f"\n{opening}\n{body}\n{closing}\n        ".split("\n"))
    return lines
