"""BackendSelect kernels: how a factory without tensor arguments reaches its backend kernel.

The dispatcher picks a backend (CPU, CUDA, Meta) by the devices of an
operator's tensor arguments. A factory has none, so a call would find no
kernel; ATen's factories get a kernel for the `BackendSelect` key, which every
call passes through, that computes the dispatch key from the tensor options
(`c10::computeDispatchKey(dtype, layout, device)`) and redispatches to it. A
library factory with backend kernels and a device argument gets the same
(`Library.backend_selected`), in C++ for a compiled library, else in Python
(`torch.library.Library.impl(..., with_keyset=True)` and
`OpOverload.redispatch`). A factory without a device argument is an error in
`library.py`.
"""

from __future__ import annotations

from opgen.api.signatures import FunctionSignatures
from opgen.spec.keys import DispatchKey
from opgen.spec.native import NativeFunction
from opgen.targets.torch_library.cpp_files import op_handle, wrapper_name
from opgen.targets.torch_library.library import Library, device_argument, python_name
from opgen.targets.torch_library.python_types import python_signature, returns_annotation


def _device(f: NativeFunction) -> str:
    device = device_argument(f)
    assert device is not None, "only factories with a device argument are backend-selected"
    return device.name


def cpp_wrapper(f: NativeFunction) -> str:
    """The BackendSelect kernel, in the dispatcher convention."""
    dispatcher = FunctionSignatures(f).dispatcher
    options = f.func.arguments.tensor_options
    dtype, layout = (
        (options.dtype.name, options.layout.name) if options else ("std::nullopt", "std::nullopt")
    )
    names = ", ".join(b.name for b in dispatcher.arguments())
    handle = op_handle(f, dispatcher.type())
    return (
        "// No tensor argument to dispatch on: the backend follows the tensor options.\n"
        f"{dispatcher.defn(name=wrapper_name(DispatchKey.BackendSelect, f))} {{\n"
        f"  const c10::DispatchKeySet key_set(c10::computeDispatchKey({dtype}, {layout}, "
        f"{_device(f)}));\n"
        f"  {handle}\n"
        f"  return op.redispatch(key_set, {names});\n"
        "}\n"
    )


def cpp_registrations(library: Library) -> list[str]:
    """The `TORCH_LIBRARY_IMPL` block of the BackendSelect kernels, if any."""
    impls = [
        f'  m.impl("{f.func.name}", TORCH_FN({wrapper_name(DispatchKey.BackendSelect, f)}));\n'
        for f in library.operators
        if library.backend_selected(f)
    ]
    if not impls:
        return []
    return [f"TORCH_LIBRARY_IMPL({library.namespace}, BackendSelect, m) {{\n{''.join(impls)}}}\n"]


def python_kernel(f: NativeFunction) -> str:
    """The BackendSelect kernel of a library without C++, and its registration."""
    sig = python_signature(f)
    name = python_name(f)
    device = _device(f)
    return (
        f"def _backend_select_{name}(key_set: torch._C.DispatchKeySet, "
        f"{sig.parameter_list()}) -> {returns_annotation(f, named=False)}:\n"
        f'    """No tensor argument to dispatch on: the backend follows `{device}`."""\n'
        f'    device_type = torch.device("cpu" if {device} is None else {device}).type\n'
        "    backend = torch._C.DispatchKeySet(torch._C._dispatch_key_for_device(device_type))\n"
        f"    return _{name}.redispatch(backend, {sig.call_arguments()})\n\n\n"
        f'_lib.impl("{f.func.name}", _backend_select_{name}, "BackendSelect", '
        "with_keyset=True)\n"
    )
