"""The custom ops' PyTorch side: RegisterCPUCustomOps.cpp, RegisterCPUStub.cpp and
RegisterSchema.cpp (sources part, when a custom-ops YAML has selected operators).

A model that uses ExecuTorch's own operators is exported from PyTorch, so the
operators must exist there too. `RegisterSchema.cpp` defines their schemas
(`TORCH_LIBRARY(my_ops, m) { m.def(...); }`, as ATen's file of that name does).
`RegisterCPUCustomOps.cpp` registers each operator's kernel for the CPU key through a
wrapper in the dispatcher's convention (SymInts as `int64_t`) that calls the kernel in
the native convention, as an in-tree `Register<Key>.cpp` does for a key without device
guards; `RegisterCPUStub.cpp` registers, under the same names, stubs that return their
out argument, an argument of the returned type or empty tensors, for authoring models
without the kernels. Kernels are each operator's one kernel
(`ExecutorchRun.single_kernels`); an operator without one gets no wrapper.
"""

from __future__ import annotations

from collections.abc import Mapping

from opgen.api.dispatcher import DispatcherSignature
from opgen.api.translate import call_arguments
from opgen.diagnostics import SpecError
from opgen.spec.backend import BackendMetadata
from opgen.spec.keys import Variant
from opgen.spec.native import NativeFunction
from opgen.spec.schema import OperatorName
from opgen.spec.types import BaseTy, BaseType
from opgen.targets.emitters import Emitted
from opgen.targets.executorch.run import ExecutorchRun, emitted, group_by_namespace, unsupported

KEY = "CPU"  # the only key custom ops are registered for

_TENSOR = BaseType(BaseTy.Tensor)


def emit_custom_ops(run: ExecutorchRun) -> Emitted:
    """The three files, for the selected custom ops (if any)."""
    functions = run.custom_ops
    out = run.output_set()
    if not functions:
        return emitted(out)
    kernels = run.single_kernels()
    wrappers = {id(f): _wrapper(run, f) for f in functions}
    definitions = "\n".join(
        _definition(run, f, wrappers[id(f)], kernels[f.func.name])
        for f in functions
        if f.func.name in kernels and not f.manual_kernel_registration
    )
    registrations = ""
    for namespace, members in group_by_namespace(functions).items():
        body = "\n".join(
            f'm.impl("{f.func.name}",\nTORCH_FN({wrappers[id(f)].name()}));\n'
            for f in members
            if _registered(run, f, kernels)
        )
        registrations += f"\nTORCH_LIBRARY_IMPL({namespace}, {KEY}, m) {{\n{body}\n}}"
    common = {
        "DispatchKey": KEY,
        "dispatch_namespace": KEY.lower(),
        "dispatch_namespaced_definitions": "",
        "static_init_dispatch_registrations": registrations,
    }
    out.add_template(
        f"Register{KEY}CustomOps.cpp",
        {
            **common,
            "ops_headers": '#include "CustomOpsNativeFunctions.h"',
            "dispatch_anonymous_definitions": definitions,
        },
        template="RegisterDispatchKeyCustomOps.cpp",
    )
    out.add_template(
        f"Register{KEY}Stub.cpp",
        lambda: {
            **common,
            "ops_headers": "",
            "dispatch_anonymous_definitions": [
                _stub(f, wrappers[id(f)]) for f in functions if Variant.function in f.variants
            ],
        },
        template="RegisterDispatchKeyCustomOps.cpp",
    )
    # ATen's RegisterSchema.cpp, whose rules these are (imported only when needed).
    from opgen.targets.aten.schema_registration import schema_registrations

    aten, others = schema_registrations(functions, run.selection)
    out.add_template(
        "RegisterSchema.cpp",
        {"schema_registrations": others, "aten_schema_registrations": aten},
    )
    return emitted(out)


def _registered(
    run: ExecutorchRun, f: NativeFunction, kernels: Mapping[OperatorName, BackendMetadata]
) -> bool:
    return (
        f.func.name in kernels
        and not f.manual_kernel_registration
        and run.selection.is_native_function_selected(f)
    )


def _wrapper(run: ExecutorchRun, f: NativeFunction) -> DispatcherSignature:
    """The wrapper's signature: the dispatcher's, with plain ints, named for the key."""
    style = run.signatures.of(f).style
    prefix = f"wrapper_{KEY}_{f.func.name.overload_name}_"
    return DispatcherSignature.from_schema(f.func, style=style, prefix=prefix, symint=False)


def _definition(
    run: ExecutorchRun, f: NativeFunction, wrapper: DispatcherSignature, kernel: BackendMetadata
) -> str:
    """The wrapper calling the kernel, in an anonymous namespace."""
    with unsupported(f):
        native = run.signatures.of(f).native(kernel)
        arguments = call_arguments(wrapper.bindings, native.bindings)
        head = f"{wrapper.returns_text} {wrapper.name()}({wrapper.defined_parameters})"
    # Emitted C++ as ExecuTorch's codegen writes it (byte-identical output).
    return (
        f"namespace {{\n\n{head} {{\n    // No device check\n\n\n  // DeviceGuard omitted\n"
        f"  return {kernel.cpp_namespace}::{kernel.kernel}({arguments});\n}}\n\n"
        "} // anonymous namespace\n"
    )


def _stub(f: NativeFunction, wrapper: DispatcherSignature) -> str:
    """A function of the wrapper's signature returning something of the right type."""
    with unsupported(f):
        head = wrapper.defn()
    returned = _stub_result(f)
    statement = f"return {returned};" if f.func.returns else ""
    return f"\n{head} {{\n    {statement}\n}}\n    "


def _stub_result(f: NativeFunction) -> str:
    """What a stub returns: an out argument, an argument of the returned type, or empty
    tensors."""
    func = f.func
    returns, outs = func.returns, func.arguments.out
    if not returns:
        return ""
    if len(returns) == 1:
        if outs:
            return outs[0].name
        same = next((a.name for a in func.arguments.flat_non_out if a.type == returns[0].type), "")
        if same:
            return same
        if returns[0].type == _TENSOR:
            return "at::Tensor()"
        raise SpecError(
            f"a stub of '{func.name}' cannot make a '{returns[0].type}' to return", f.loc
        )
    if len(outs) == len(returns):
        types, values = ["at::Tensor &"] * len(returns), [a.name for a in outs]
    elif all(r.type == _TENSOR for r in returns):
        types, values = ["at::Tensor"] * len(returns), ["at::Tensor()"] * len(returns)
    else:
        raise SpecError(
            f"a stub of '{func.name}' can return several values only if they are its out "
            "arguments or tensors",
            f.loc,
        )
    # Emitted C++ as ExecuTorch's codegen writes it (byte-identical output).
    return f"::std::tuple<{', '.join(types)}>(\n                {', '.join(values)}\n            )"
