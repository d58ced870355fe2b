"""RegisterBackendSelect.cpp: BackendSelect kernels of the factory functions (sources part).

A factory function (one with a TensorOptions group: dtype, layout, device,
pin_memory) has no tensor argument that tells the dispatcher which backend to
use, so a BackendSelect kernel computes the key from the options and
redispatches. Rules (torchgen.gen's needs_backend_select and ComputeBackendSelect):
- only selected functions with TensorOptions, except `*_like` and `new_*`
  functions (their tensor argument decides);
- the kernel is named by the native API and has the dispatcher signature
  (SymInt-aware: BackendSelect can go to Meta);
- when the function also takes tensors (in native order: non-out, then out),
  they join the key set, masked to keys after BackendSelect; otherwise the key
  comes from the options alone;
- the file includes `<name>_ops.h` per kernel and registers each with `m.impl`.
"""

from __future__ import annotations

from opgen.api import native
from opgen.api.signatures import FunctionSignatures
from opgen.spec.native import NativeFunction
from opgen.spec.selection import OperatorSelection
from opgen.targets.aten.run import AtenRun
from opgen.targets.emitters import Emitted

_DISPATCH_KEY = "c10::computeDispatchKey(dtype, layout, device)"


def needs_backend_select(f: NativeFunction, selection: OperatorSelection) -> bool:
    name = str(f.func.name.name)
    if name.endswith("_like") or name.startswith("new_"):
        return False
    if f.func.arguments.tensor_options is None:
        return False
    return selection.is_native_function_selected(f)


def backend_select_definition(sigs: FunctionSignatures) -> str:
    """The C++ kernel for one function that needs backend select."""
    f = sigs.f
    tensors = [a.name for a in f.func.schema_order_arguments() if a.type.is_tensor_like()]
    if tensors:
        assert f.func.arguments.has_tensor_arg()
        compute = (
            f"DispatchKeySet _dk_set = c10::DispatchKeySet({_DISPATCH_KEY})"
            f" | c10::detail::multi_dispatch_key_set({', '.join(tensors)});\n"
            "DispatchKeySet _dk_mask = c10::DispatchKeySet(DispatchKeySet::FULL_AFTER,"
            " DispatchKey::BackendSelect);\n"
            "DispatchKeySet _dk = c10::impl::computeDispatchKeySet(_dk_set, _dk_mask);"
        )
    else:
        compute = f"DispatchKeySet _dk = c10::DispatchKeySet({_DISPATCH_KEY});"
    dispatcher = sigs.dispatcher
    exprs = ", ".join(b.name for b in dispatcher.bindings)
    return (
        f"// aten::{f.func}\n"
        "C10_ALWAYS_INLINE\n"
        f"{dispatcher.defn(native.name(f.func))} {{\n"
        f"  {compute}\n"
        f"  return at::_ops::{f.func.name.unambiguous_name()}::redispatch(\n"
        f"      _dk, {exprs});\n"
        "}\n"
    )


def emit_backend_select(run: AtenRun) -> Emitted:
    """RegisterBackendSelect.cpp (AtenPart.sources)."""

    def env() -> dict[str, object]:
        relevant = [f for f in run.spec.functions if needs_backend_select(f, run.selection)]
        return {
            "ops_headers": [f"#include <ATen/ops/{f.root_name}_ops.h>" for f in relevant],
            "backend_select_method_definitions": [
                backend_select_definition(run.signatures.of(f)) for f in relevant
            ],
            "backend_select_function_registrations": [
                f'm.impl("aten::{f.func.name}", TORCH_FN({native.name(f.func)}));' for f in relevant
            ],
        }

    outputs = run.outputs()
    outputs.cpu.add_template("RegisterBackendSelect.cpp", env)
    return outputs.emitted()
