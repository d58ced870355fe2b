"""Functions.h: the C++ API of the runtime's operators, each an inline call of its kernel.

For every root operator of the selection, grouped by operator namespace (in order of
first appearance, `namespace aten { ... }` inside `torch::executor`): the schema as a
comment and an inline function taking the runtime context first. It calls the
operator's one kernel with the context and the arguments
(`return ::torch::executor::native::add_out(context, self, other, alpha, out);`), or,
for an operator with no kernel, stops at run time (`ET_ASSERT_UNREACHABLE_MSG`); an
operator with `manual_kernel_registration` gets an empty line.

With `--use-aten-lib` the functions have ATen's faithful C++ API signature (defaults
kept) after the context, and call ATen (`at::add_outf(...)`, or the method of the first
argument for a method-only operator); custom ops still call their kernel, without the
context. The file includes `NativeFunctions.h`, or ATen's `Functions.h` (and
`CustomOpsNativeFunctions.h` when a custom-ops YAML is given).
"""

from __future__ import annotations

from collections.abc import Mapping

from opgen.api.cpp import CppSignature
from opgen.api.executorch import CONTEXT_PARAMETER
from opgen.diagnostics import SpecError
from opgen.spec.backend import BackendMetadata
from opgen.spec.keys import Variant
from opgen.spec.native import NativeFunction
from opgen.spec.schema import OperatorName
from opgen.targets.dispatch_registration import namespace_lines
from opgen.targets.emitters import Emitted
from opgen.targets.executorch.run import (
    ExecutorchRun,
    emitted,
    group_by_namespace,
    operator_name,
    unsupported,
)


def emit_functions_header(run: ExecutorchRun) -> Emitted:
    """Functions.h (headers part)."""
    kernels = run.single_kernels()
    if run.options.use_aten_lib:
        headers = ["#include <ATen/Functions.h>"]
        if run.options.custom_ops_yaml_path is not None:
            headers.append('#include "CustomOpsNativeFunctions.h"')
    else:
        headers = ['#include "NativeFunctions.h"']

    def env() -> dict[str, object]:
        return {
            "static_dispatch_extra_headers": headers,
            "Functions_declarations": declarations(run, kernels),
        }

    out = run.output_set()
    out.add_template("Functions.h", env)
    return emitted(out)


def declarations(run: ExecutorchRun, kernels: Mapping[OperatorName, BackendMetadata]) -> str:
    """The functions of every namespace, each namespace's in its C++ namespace."""
    text = ""
    for namespace, functions in group_by_namespace(run.functions).items():
        opening, closing = namespace_lines(namespace, max_level=3)
        defined = [d for d in (_function(run, f, kernels) for f in functions) if d is not None]
        body = "\n".join(defined)
        text += f"\n{opening}\n{body}\n{closing}\n        "
    return text


def _function(
    run: ExecutorchRun, f: NativeFunction, kernels: Mapping[OperatorName, BackendMetadata]
) -> str | None:
    """The inline function of `f`; None if it is not a root operator."""
    if not run.selection.is_root_operator(operator_name(f)):
        return None
    if Variant.function not in f.variants and Variant.method not in f.variants:
        raise SpecError(f"'{f.func.name}' is neither a function nor a method", f.loc)
    with unsupported(f):
        if run.options.use_aten_lib:
            sig = run.signatures.of(f).cpp.most_faithful_signature()
            head = _aten_head(sig)
            if not run.is_custom_op(f):
                names = [b.name for b in sig.bindings]
                if Variant.function not in f.variants:  # a method only: called on its self
                    call = f"{names[0]}.{sig.name()}({', '.join(names[1:])})"
                else:
                    call = f"at::{sig.name()}({', '.join(names)})"
                return _inline(f, head, f"return {call};")
            arguments = [b.name for b in sig.bindings]
        else:
            et = run.executorch_signature(f)
            head = et.decl()
            arguments = ["context", *(b.name for b in et.bindings)]
    if f.manual_kernel_registration:
        return ""
    kernel = kernels.get(f.func.name)
    if kernel is None:
        # Emitted C++ as ExecuTorch's codegen writes it (byte-identical output).
        body = (
            '\nET_ASSERT_UNREACHABLE_MSG("The number of native function(s) binding to '
            f'{f.func.name} is 0.");\n    '
        )
    else:
        body = f"return ::{kernel.cpp_namespace}::{kernel.kernel}({', '.join(arguments)});"
    return _inline(f, head, body)


def _aten_head(sig: CppSignature) -> str:
    """ATen's faithful signature with the context first, defaults kept."""
    parameters = ", ".join([CONTEXT_PARAMETER, *(b.decl() for b in sig.bindings)])
    return f"{sig.returns_text} {sig.name()}({parameters})"


def _inline(f: NativeFunction, head: str, body: str) -> str:
    # Emitted C++ as ExecuTorch's codegen writes it (byte-identical output).
    return f"\n// {f.namespace}::{f.func}\nTORCH_API inline {head} {{\n    {body}\n}}\n"
