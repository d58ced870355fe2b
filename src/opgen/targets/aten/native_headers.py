"""The declarations of in-tree kernels: `NativeFunctions.h` and `NativeMetaFunctions.h`.

`NativeMetaFunctions.h` (or `ops/<root>_meta.h`) declares, for every
structured group, `at::meta::structured_<functional name>`: a class deriving
from `at::impl::MetaBase` (or the group's `structured_inherits`) whose
`meta()` takes the functional overload's inputs in the structured convention.
With `precomputed:`, `meta()` returns a `precompute_out<...>` whose template
flags record, at compile time, which precomputed values have been set; each
`set_<name>` may be called once.

`NativeFunctions.h` (or `ops/<root>_native.h`) declares the kernels named in
the spec's `dispatch:` tables, for every key of the spec in the order the keys
first appear: a structured kernel as `structured_<kernel>` deriving from its
meta class, with `impl()`; any other kernel as a function in the native
convention under its kernel name (`legacy::` kernels are not declared).
Declarations are grouped by C++ namespace (namespace of first appearance
first), each repeated declaration kept once.

Each declaration carries the DLL export macro of its key (`export_macro`):
`TORCH_API`, except, before 2.14, `TORCH_XPU_API` for XPU's structs, and from
2.15 (`DEVICE_EXPORT_MACROS`) `TORCH_CUDA_CPP_API` for the CUDA family and
`TORCH_XPU_API` for the XPU family, save for the CUDA kernels that torch builds
into torch_cpu (`CPU_DLL_CUDA_KERNELS`). From 2.15 a declaration repeated under
another macro (`CPU, CUDA: foo`) is kept once, where it first appears, with
`TORCH_API` if any of its copies has it.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import NamedTuple

from opgen.api import structured
from opgen.api.signatures import SignatureSet
from opgen.releases import DEVICE_EXPORT_MACROS, XPU_STRUCTURED_EXPORT, Release
from opgen.spec.arguments import Argument
from opgen.spec.backend import DEFAULT_KERNEL_NAMESPACE, BackendMetadata
from opgen.spec.groups import NativeFunctionsGroup
from opgen.spec.keys import CUDA_DISPATCH_KEYS, XPU_DISPATCH_KEYS, DispatchKey
from opgen.spec.model import Spec
from opgen.spec.native import NativeFunction

CPU_EXPORT = "TORCH_API"
CUDA_EXPORT = "TORCH_CUDA_CPP_API"
XPU_EXPORT = "TORCH_XPU_API"

# Kernels of CUDA-family keys whose definitions torch 2.15 compiles into torch_cpu,
# so their declarations must match that library's export (`CPU_EXPORT`). A kernel
# that a CPU key shares needs no entry: the merge of repeats keeps `TORCH_API`.
CPU_DLL_CUDA_KERNELS = frozenset(
    {
        "count_nonzero_cuda",
        "log_sigmoid_backward_cuda",
        "log_sigmoid_backward_cuda_out",
        "triton_multi_head_attention",
        "NestedTensor_softmax_dropout_cuda",
        "masked_fill__quantized_cuda",
        "_index_put_impl_quantized_cuda_",
    }
)


def device_export_macro(key: DispatchKey, release: Release) -> str:
    """The macro of `key`'s device library: what its `at::<key>::` functions are exported with."""
    if release.has(DEVICE_EXPORT_MACROS):
        if key in CUDA_DISPATCH_KEYS:
            return CUDA_EXPORT
        if key in XPU_DISPATCH_KEYS:
            return XPU_EXPORT
    return CPU_EXPORT


def export_macro(key: DispatchKey, release: Release, *, structured: bool) -> str:
    """The macro the in-tree kernels of `key` are declared with (see `kernel_export_macro`)."""
    if structured and key is DispatchKey.XPU and release.has(XPU_STRUCTURED_EXPORT):
        return XPU_EXPORT
    return device_export_macro(key, release)


def kernel_export_macro(key_macro: str, kernel: str) -> str:
    """The macro of one kernel's declaration, given its key's `export_macro`."""
    if key_macro == CUDA_EXPORT and kernel in CPU_DLL_CUDA_KERNELS:
        return CPU_EXPORT
    return key_macro


class KernelDeclaration(NamedTuple):
    """One kernel's declaration, and the same text without its export macro."""

    text: str
    unexported: str  # what 2.15 tells repeats apart by
    macro: str


def meta_name(g: NativeFunctionsGroup) -> str:
    """The meta class's name: the functional overload's name, `.` as `_`."""
    return str(g.functional.func.name).replace(".", "_")


def meta_declaration(g: NativeFunctionsGroup) -> str:
    """`struct TORCH_API structured_<name> : public <parent> { ... meta(...); };`."""
    out = g.out
    arguments = ", ".join([b.decl() for b in structured.meta_arguments(g)])
    parent = out.structured_inherits or "at::impl::MetaBase"
    precomputed = out.precomputed
    if precomputed is None:
        result, typedef, members = "void", "", ""
    else:
        elements = [a for values in precomputed.replace.values() for a in values]
        elements.extend(precomputed.add)
        result = "meta_return_ty"
        flags = ", ".join(["true"] * len(elements))
        typedef = f"using meta_return_ty = precompute_out <{flags}>;"
        members = _precompute_out(elements)
    return f"""\
struct TORCH_API structured_{meta_name(g)} : public {parent} {{
    {members}
    {typedef}
    {result} meta({arguments});
}};
"""


def _precompute_out(elements: list[Argument]) -> str:
    """The `precompute_out` class template holding the precomputed values."""
    params = [a.name.upper() for a in elements]
    types = [structured.argument_type(a, binds=a.name).cpp_type(strip_ref=True) for a in elements]
    setters = []
    for i, a in enumerate(elements):
        returned = f"precompute_out<{', '.join([*params[:i], 'true', *params[i + 1 :]])}>"
        construction = [f"{returned} ret;"]
        for j, other in enumerate(elements):
            source = "value" if i == j else f"this->{other.name}"
            construction.append(f"ret.{other.name} = {source};")
        construction.append("return ret;")
        block = "\n".join(construction)
        setters.append(
            f"""
                    {returned} set_{a.name}({types[i]} value) {{
                        static_assert({params[i]} == false, "{a.name} already set");
                        {block}
                    }}
                """
        )
    template = ", ".join([f"bool {p} = false" for p in params])
    fields = ";\n".join([f"{t} {a.name}" for t, a in zip(types, elements, strict=True)])
    setters_text = "\n".join(setters)
    return f"""
                template <{template}>
                struct TORCH_API precompute_out {{
                    {setters_text}
                    {fields};
            }};"""


class NativeDeclarations:
    """The kernel declarations of each function or group, for every key of the spec.

    Equivalent to visiting every key's index for every function (a key without
    a kernel contributes the default namespace and nothing else), but visits
    only the keys that have one.
    """

    def __init__(self, spec: Spec, signatures: SignatureSet, release: Release) -> None:
        self.spec = spec
        self.keys = tuple(spec.backend_indices)
        self.position = {key: i for i, key in enumerate(self.keys)}
        self.signatures = signatures
        self.macros = {key: export_macro(key, release, structured=False) for key in self.keys}
        self.structured_macros = {
            key: export_macro(key, release, structured=True) for key in self.keys
        }

    def of(self, g: NativeFunction | NativeFunctionsGroup) -> dict[str, list[KernelDeclaration]]:
        """The declarations by C++ namespace, in order, before removing repeats."""
        kernels = self.spec.kernels
        if isinstance(g, NativeFunctionsGroup):
            primary = kernels(g.out)
            members = [(f, kernels(f)) for f in g.functions()]
            keys = {key for _, found in members for key in found}
        else:
            primary = kernels(g)
            members = [(g, primary)]
            keys = set(primary)
        position = self.position
        first_default = next(
            (i for i, key in enumerate(self.keys) if key not in primary), len(self.keys)
        )
        by_namespace: dict[str, list[KernelDeclaration]] = {}
        for key in sorted(keys, key=position.__getitem__):
            if first_default < position[key]:
                by_namespace.setdefault(DEFAULT_KERNEL_NAMESPACE, [])
            metadata = primary.get(key)
            namespace = DEFAULT_KERNEL_NAMESPACE if metadata is None else metadata.cpp_namespace
            found = by_namespace.setdefault(namespace, [])
            if isinstance(g, NativeFunctionsGroup) and metadata is not None and metadata.structured:
                macro = kernel_export_macro(self.structured_macros[key], metadata.kernel)
                found.append(_structured(g, macro, metadata.kernel))
                continue
            macro = self.macros[key]
            for f, kernels_of_f in members:
                declared = self._unstructured(f, kernels_of_f.get(key), macro)
                if declared is not None:
                    found.append(declared)
        if first_default < len(self.keys):
            by_namespace.setdefault(DEFAULT_KERNEL_NAMESPACE, [])
        return by_namespace

    def _unstructured(
        self, f: NativeFunction, metadata: BackendMetadata | None, key_macro: str
    ) -> KernelDeclaration | None:
        if metadata is None or "legacy::" in metadata.kernel:
            return None
        sig = self.signatures.of(f).native(metadata)
        unexported = f"{sig.decl(name=metadata.kernel)};"
        macro = kernel_export_macro(key_macro, metadata.kernel)
        return KernelDeclaration(f"{macro} {unexported}", unexported, macro)


def _structured(g: NativeFunctionsGroup, macro: str, kernel: str) -> KernelDeclaration:
    """`struct <macro> structured_<kernel>`, the impl class of a structured kernel."""
    arguments = ", ".join([b.decl() for b in structured.impl_arguments(g)])
    body = f"""\
structured_{kernel} : public at::meta::structured_{meta_name(g)} {{
void impl({arguments});
}};
"""
    prefix = f"{macro} " if macro else ""
    return KernelDeclaration(f"struct {prefix}{body}", f"struct {body}", macro)


def namespaced(groups: Iterable[dict[str, list[KernelDeclaration]]], release: Release) -> list[str]:
    """The declarations of several functions, merged by namespace, as template lines."""
    merged: dict[str, dict[str, KernelDeclaration]] = {}
    ignore_macros = release.has(DEVICE_EXPORT_MACROS)
    for by_namespace in groups:
        for namespace, declared in by_namespace.items():
            kept = merged.setdefault(namespace, {})
            for d in declared:
                repeat = d.unexported if ignore_macros else d.text
                first = kept.get(repeat)
                # The copy exported from torch_cpu wins, at the place of the first.
                if first is None or (first.macro != CPU_EXPORT and d.macro == CPU_EXPORT):
                    kept[repeat] = d
    lines: list[str] = []
    for namespace, kept in merged.items():
        names = namespace.split("::")
        opening = "\n".join([f"namespace {n} {{" for n in names])
        closing = "\n".join([f"}} // namespace {n}" for n in reversed(names)])
        body = "\n".join([d.text for d in kept.values()])
        lines.extend(f"\n{opening}\n{body}\n{closing}\n        ".split("\n"))
    return lines
