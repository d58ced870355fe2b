"""The C++ half of a library: kernel declarations, the C++ API and the registrations.

- `include/<ns>/kernels.h` declares every kernel the spec names, in the
  native convention (what ATen's own kernels take), in its C++ namespace.
- `include/<ns>/ops.h` is the C++ API: `ns::op(...)` in every calling form
  `at::` offers (defaults, TensorOptions, out= first or last, SymInt),
  calling through the dispatcher.
- `src/<ns>_library.cpp` defines the schemas (`TORCH_LIBRARY`, with tags) and
  registers, per dispatch key (`TORCH_LIBRARY_IMPL`), a wrapper in the
  dispatcher convention that translates its arguments for the kernel (and
  takes a device guard for CUDA), plus the generated Autograd kernels.
"""

from __future__ import annotations

from collections.abc import Iterator

from opgen.api.signatures import FunctionSignatures
from opgen.api.translate import translate
from opgen.spec.backend import BackendMetadata
from opgen.spec.keys import DispatchKey
from opgen.spec.native import NativeFunction
from opgen.targets.torch_library.autograd import LibraryAutogradKernel
from opgen.targets.torch_library.library import Library

K = DispatchKey


def kernel_declarations(library: Library) -> str:
    """`namespace ns { decl; ... }` blocks, one per kernel namespace, sorted; each kernel once."""
    by_namespace: dict[str, dict[str, None]] = {}
    for f in library.operators:
        sigs = FunctionSignatures(f)
        for metadata in library.kernels(f).values():
            decl = sigs.native(metadata).decl(name=metadata.kernel)
            by_namespace.setdefault(metadata.cpp_namespace, {})[f"{decl};"] = None
    return "\n".join(
        f"namespace {namespace} {{\n" + "\n".join(decls) + f"\n}} // namespace {namespace}\n"
        for namespace, decls in sorted(by_namespace.items())
    )


def api_functions(library: Library) -> list[str]:
    """The inline `ns::op` functions of every operator, in spec order."""
    return [text for f in library.operators for text in _api_functions(f)]


def _api_functions(f: NativeFunction) -> Iterator[str]:
    sigs = FunctionSignatures(f)
    dispatcher = sigs.dispatcher
    handle = op_handle(f, dispatcher.type())
    for sig in sigs.cpp.signatures():
        exprs = ", ".join(e.expr for e in translate(sig.arguments(), dispatcher.arguments()))
        yield (f"// {f.func}\ninline {sig.decl()} {{\n  {handle}\n  return op.call({exprs});\n}}\n")


def op_handle(f: NativeFunction, function_type: str) -> str:
    """A function-local static handle on the operator, typed with its dispatcher signature."""
    name = f.func.name
    return (
        "static auto op = c10::Dispatcher::singleton()\n"
        f'      .findSchemaOrThrow("{f.namespace}::{name.name}", "{name.overload_name}")\n'
        f"      .typed<{function_type}>();"
    )


def wrapper_name(key: DispatchKey, f: NativeFunction) -> str:
    name = f.func.name
    overload = f"_{name.overload_name}" if name.overload_name else ""
    return f"wrapper_{key}_{name.name}{overload}"


def kernel_wrapper(library: Library, key: DispatchKey, f: NativeFunction) -> str:
    """A dispatcher-convention function that calls the kernel for `key`."""
    metadata: BackendMetadata = library.kernels(f)[key]
    sigs = FunctionSignatures(f)
    dispatcher, native = sigs.dispatcher, sigs.native(metadata)
    exprs = ", ".join(e.expr for e in translate(dispatcher.arguments(), native.arguments()))
    guard = _device_guard(f) if key is K.CUDA and f.device_guard else ""
    return (
        f"{dispatcher.defn(name=wrapper_name(key, f))} {{\n"
        f"{guard}"
        f"  return {metadata.cpp_namespace}::{metadata.kernel}({exprs});\n"
        "}\n"
    )


def _device_guard(f: NativeFunction) -> str:
    """Make the device of the first tensor argument current (out= arguments first, as ATen)."""
    arguments = f.func.arguments
    for a in (*arguments.out, *arguments.flat_non_out):
        if a.type.is_tensor_like():
            return f"  const c10::OptionalDeviceGuard device_guard(at::device_of({a.name}));\n"
    for a in arguments.flat_non_out:
        if str(a.type) == "Device?":
            return f"  const c10::OptionalDeviceGuard device_guard({a.name});\n"
    return ""


def definition(f: NativeFunction) -> str:
    """The `m.def(...)` of one operator, with its tags."""
    tags = ", ".join(f"at::Tag::{t}" for t in sorted(f.tags))
    suffix = f", {{{tags}}}" if tags else ""
    return f'm.def("{f.func}"{suffix});'


def registrations(library: Library, autograd: list[LibraryAutogradKernel]) -> list[str]:
    """One `TORCH_LIBRARY_IMPL` block per dispatch key with C++ kernels, in key order."""
    by_key: dict[DispatchKey, list[str]] = {}
    for f in library.operators:
        for key in library.kernels(f):
            impl = f'm.impl("{f.func.name}", TORCH_FN({wrapper_name(key, f)}));'
            by_key.setdefault(key, []).append(impl)
    for kernel in autograd:
        by_key.setdefault(K.Autograd, []).append(kernel.registration)
    order = list(DispatchKey)
    return [
        f"TORCH_LIBRARY_IMPL({library.namespace}, {key}, m) {{\n"
        + "".join(f"  {line}\n" for line in lines)
        + "}\n"
        for key, lines in sorted(by_key.items(), key=lambda item: order.index(item[0]))
    ]


def wrappers(library: Library) -> list[str]:
    return [
        kernel_wrapper(library, key, f) for f in library.operators for key in library.kernels(f)
    ]
