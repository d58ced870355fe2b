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
meta class, with `impl()`; any other kernel as a `TORCH_API` function in the
native convention under its kernel name (`legacy::` kernels are not
declared). Declarations are grouped by C++ namespace (namespace of first
appearance first), each repeated declaration kept once.
"""

from __future__ import annotations

from collections.abc import Iterable

from opgen.api import structured
from opgen.api.signatures import SignatureSet
from opgen.spec.arguments import Argument
from opgen.spec.backend import DEFAULT_KERNEL_NAMESPACE, BackendMetadata
from opgen.spec.groups import NativeFunctionsGroup
from opgen.spec.keys import DispatchKey
from opgen.spec.model import Spec
from opgen.spec.native import NativeFunction

# Structured kernels of these keys are exported with a backend-specific macro.
_API_MACROS = {DispatchKey.XPU: "TORCH_XPU_API"}


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

    def __init__(self, spec: Spec, signatures: SignatureSet) -> None:
        self.spec = spec
        self.keys = tuple(spec.backend_indices)
        self.position = {key: i for i, key in enumerate(self.keys)}
        self.signatures = signatures

    def of(self, g: NativeFunction | NativeFunctionsGroup) -> dict[str, list[str]]:
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
        by_namespace: dict[str, list[str]] = {}
        for key in sorted(keys, key=position.__getitem__):
            if first_default < position[key]:
                by_namespace.setdefault(DEFAULT_KERNEL_NAMESPACE, [])
            metadata = primary.get(key)
            namespace = DEFAULT_KERNEL_NAMESPACE if metadata is None else metadata.cpp_namespace
            found = by_namespace.setdefault(namespace, [])
            if isinstance(g, NativeFunctionsGroup) and metadata is not None and metadata.structured:
                found.append(_structured(g, key, metadata.kernel))
                continue
            for f, kernels_of_f in members:
                declared = self._unstructured(f, kernels_of_f.get(key))
                if declared:
                    found.append(declared)
        if first_default < len(self.keys):
            by_namespace.setdefault(DEFAULT_KERNEL_NAMESPACE, [])
        return by_namespace

    def _unstructured(self, f: NativeFunction, metadata: BackendMetadata | None) -> str:
        if metadata is None or "legacy::" in metadata.kernel:
            return ""
        sig = self.signatures.of(f).native(metadata)
        return f"TORCH_API {sig.decl(name=metadata.kernel)};"


def _structured(g: NativeFunctionsGroup, key: DispatchKey, kernel: str) -> str:
    macro = _API_MACROS.get(key, "TORCH_API")
    arguments = ", ".join([b.decl() for b in structured.impl_arguments(g)])
    return f"""\
struct {macro} structured_{kernel} : public at::meta::structured_{meta_name(g)} {{
void impl({arguments});
}};
"""


def namespaced(groups: Iterable[dict[str, list[str]]]) -> list[str]:
    """The declarations of several functions, merged by namespace, as template lines."""
    merged: dict[str, list[str]] = {}
    for by_namespace in groups:
        for namespace, declared in by_namespace.items():
            merged.setdefault(namespace, []).extend(declared)
    lines: list[str] = []
    for namespace, declared in merged.items():
        names = namespace.split("::")
        opening = "\n".join([f"namespace {n} {{" for n in names])
        closing = "\n".join([f"}} // namespace {n}" for n in reversed(names)])
        body = "\n".join(dict.fromkeys(declared))
        lines.extend(f"\n{opening}\n{body}\n{closing}\n        ".split("\n"))
    return lines
