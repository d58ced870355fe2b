"""Static dispatch: `at::_ops::<op>::call` bodies that call a backend's kernel directly.

With `--static-dispatch-backend KEY...`, the operator entry points in
`Operators_<N>.cpp` skip the dispatcher. Each calls the C++ API function of
the one backend that has a kernel for the operator (`at::cpu::add(...)`);
with several backends, the body switches on the highest-priority backend of
the tensor arguments (and TensorOptions). Where no listed backend has a
kernel, it falls back to the first composite kernel the operator has
(CompositeExplicitAutograd, its NonFunctional variant,
CompositeImplicitAutograd, its NestedTensor variant), and otherwise to a
runtime `TORCH_CHECK(false, ...)`.

The per-operator header `ops/<op>.h` includes the `<op>_<key>_dispatch.h`
headers those calls need, and the shards of `Operators.cpp` include
`<Key>Functions.h` for each static key and the four composite keys.

Rules followed (torchgen/gen.py, 2.13):
- A structured operator (one with `structured_delegate`) counts as having a
  kernel for CPU, CUDA, MPS, XPU and MTIA even when only its out= overload does.
- Calls use the C++ API signature (its SymInt form where the schema has
  SymInts), never the `__dispatch_` name of a `manual_cpp_binding` function;
  arguments are translated from the dispatcher signature, with `memory_format`
  matched to the C++ API's possibly-redundant one.
- `manual_kernel_registration` operators are never statically dispatched: the
  body is empty.
"""

from __future__ import annotations

from collections.abc import Sequence

from opgen.api import cpp
from opgen.api.cpp import CppSignature
from opgen.api.dispatcher import DispatcherSignature
from opgen.api.signatures import FunctionSignatures
from opgen.api.translate import translate
from opgen.api.types import Binding, NamedCType, SpecialArgName
from opgen.spec.arguments import Argument, SelfArgument
from opgen.spec.backend import DEFAULT_KERNEL_NAMESPACE, BackendIndex
from opgen.spec.keys import STRUCTURED_DISPATCH_KEYS, DispatchKey
from opgen.spec.native import NativeFunction
from opgen.targets.aten.functions import ArgumentTranslations

_COMPOSITE_KEYS = (
    DispatchKey.CompositeImplicitAutograd,
    DispatchKey.CompositeImplicitAutogradNestedTensor,
    DispatchKey.CompositeExplicitAutograd,
    DispatchKey.CompositeExplicitAutogradNonFunctional,
)
_DEFAULT_NS = DEFAULT_KERNEL_NAMESPACE.replace("::native", "")
_MEMORY_FORMAT = SpecialArgName.possibly_redundant_memory_format


def extra_headers(backends: Sequence[BackendIndex]) -> list[str]:
    """The `<Key>Functions.h` includes of a statically dispatching `Operators.cpp`."""
    if not backends:
        return []
    keys = [b.dispatch_key for b in backends]
    return [f"#include <ATen/{key.value}Functions.h>" for key in (*keys, *_COMPOSITE_KEYS)]


def backend_of(f: NativeFunction, index: BackendIndex) -> DispatchKey | None:
    """The key whose dispatch header `ops/<op>.h` includes for `index`'s backend, if any."""
    if f.structured_delegate is not None or index.has_kernel(f):
        return index.dispatch_key
    if f.has_composite_explicit_autograd_kernel:
        return DispatchKey.CompositeExplicitAutograd
    if f.has_composite_explicit_autograd_non_functional_kernel:
        return DispatchKey.CompositeExplicitAutogradNonFunctional
    if f.has_composite_implicit_autograd_kernel:
        return DispatchKey.CompositeImplicitAutograd
    if f.has_composite_implicit_autograd_nested_tensor_kernel:
        return DispatchKey.CompositeImplicitAutogradNestedTensor
    return None


def ops_header_includes(f: NativeFunction, backends: Sequence[BackendIndex]) -> str | None:
    """`ops/<op>.h`'s dispatch-header includes for `f` (None: the function adds no line)."""
    if f.manual_kernel_registration:
        return None
    lines = []
    for index in backends:
        key = backend_of(f, index)
        if key is not None:
            lines.append(f"#include <ATen/ops/{f.root_name}_{key.lower()}_dispatch.h>")
    return "\n".join(lines)


def _call_target(sigs: FunctionSignatures) -> tuple[str, CppSignature]:
    """The C++ API function a static call names, and its signature."""
    group = sigs.cpp
    symint = sigs.f.func.has_symint()
    target = group.symint_signature if symint else group.signature
    assert target is not None
    return cpp.name(sigs.f.func, symint_overload=symint), target


def _arguments(sig: DispatcherSignature, target: CppSignature, calls: ArgumentTranslations) -> str:
    goals = target.arguments()
    if not any(b.nctype.name is _MEMORY_FORMAT for b in goals):
        return calls.translated(sig.parameters, target.parameters)
    source = [
        Binding(b.name, NamedCType(_MEMORY_FORMAT, b.nctype.type), b.argument, b.default)
        if b.name == "memory_format"
        else b
        for b in sig.arguments()
    ]
    return ", ".join([e.expr for e in translate(source, goals)])


def _backend_call(sigs: FunctionSignatures, index: BackendIndex, exprs: str) -> str:
    name, _ = _call_target(sigs)
    metadata = index.get_kernel(sigs.f)
    namespace = (
        metadata.cpp_namespace
        if metadata is not None and metadata.cpp_namespace
        else DEFAULT_KERNEL_NAMESPACE
    )
    ns = namespace.replace("::native", "")
    return f"return {ns}::{index.dispatch_key.lower()}::{name}({exprs});"


def _fallback_call(sigs: FunctionSignatures, backends: Sequence[BackendIndex], exprs: str) -> str:
    f = sigs.f
    name, _ = _call_target(sigs)
    if f.has_composite_explicit_autograd_kernel:
        key = DispatchKey.CompositeExplicitAutograd
    elif f.has_composite_explicit_autograd_non_functional_kernel:
        key = DispatchKey.CompositeExplicitAutogradNonFunctional
    elif f.has_composite_implicit_autograd_kernel:
        key = DispatchKey.CompositeImplicitAutograd
    elif f.has_composite_implicit_autograd_nested_tensor_kernel:
        key = DispatchKey.CompositeImplicitAutogradNestedTensor
    else:
        keys = ", ".join([b.dispatch_key.value for b in backends])
        return f'TORCH_CHECK(false, "Static dispatch does not support {name} for{keys} ");'
    return f"return {_DEFAULT_NS}::{key.lower()}::{name}({exprs});"


def body(
    sigs: FunctionSignatures, backends: Sequence[BackendIndex], calls: ArgumentTranslations
) -> str:
    """The body of `at::_ops::<op>::call` when it dispatches statically to `backends`."""
    f = sigs.f
    if not backends or f.manual_kernel_registration:
        return ""
    sig = sigs.dispatcher
    _, target = _call_target(sigs)
    exprs = _arguments(sig, target, calls)
    structured = f.structured_delegate is not None
    keys = [
        b
        for b in backends
        if b.has_kernel(f) or (structured and b.dispatch_key in STRUCTURED_DISPATCH_KEYS)
    ]
    if len(keys) == 1:
        return _backend_call(sigs, keys[0], exprs)
    if not keys:
        return _fallback_call(sigs, backends, exprs)
    return _switch(sigs, keys, backends, exprs)


def _switch(
    sigs: FunctionSignatures,
    keys: Sequence[BackendIndex],
    backends: Sequence[BackendIndex],
    exprs: str,
) -> str:
    """A switch over the backend the arguments select, for several candidate backends."""
    tensors = ", ".join(
        [
            b.name
            for b in sigs.dispatcher.arguments()
            if isinstance(b.argument, SelfArgument)
            or (isinstance(b.argument, Argument) and b.argument.type.is_tensor_like())
        ]
    )
    parts = []
    if sigs.f.func.arguments.tensor_options is not None:
        parts.append("DispatchKeySet(c10::computeDispatchKey(dtype, layout, device))")
    if tensors:
        parts.append(f"c10::detail::multi_dispatch_key_set({tensors})")
    statements = [
        f"DispatchKeySet _dk_set = {' | '.join(parts)};",
        "DispatchKey _dk = c10::highestPriorityBackendTypeId(_dk_set);",
    ]
    cases = []
    for index in keys:
        cases.append(f"case DispatchKey::{index.dispatch_key.value}:")
        cases.append(f"\t{_backend_call(sigs, index, exprs)};")
    connector = "\n\t\t"
    return f"""
    {connector.join(statements)}
    switch (_dk) {{
        {connector.join(cases)}
        default:
            {_fallback_call(sigs, backends, exprs)}
    }}
    """
