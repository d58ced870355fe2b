"""The wrappers of structured kernels in `Register<Key>.cpp`.

A structured group is implemented once, by a `meta()` function (shapes and
dtypes) and an `impl()` function (the computation into given outputs). For
each member (functional, inplace, out=) and key, the registration file
defines a class deriving from the group's meta class (`at::meta::structured_<op>`
for `Meta` and `CompositeExplicitAutogradNonFunctional`, the kernel's
`<ns>::structured_<kernel>` otherwise) that decides where outputs live
(`set_output_strided` / `set_output_raw_strided`):
- functional: allocates fresh outputs with `create_out`;
- inplace: checks the given `self` with `check_inplace`;
- out=: resizes the given outputs with `resize_out`;
- inplace and out=, strided variant only: when the output's strides differ
  from the ones asked for, computes into a proxy (`maybe_create_proxy`) that
  the wrapper copies back at the end.
Keys with devices (CUDA, MPS, XPU, CompositeExplicitAutogradNonFunctional)
also keep a device guard set from the first output (before torch 2.11, ROCm
builds guard CUDA with HIP's guard masquerading as CUDA's: `ROCM_CUDA_GUARD`); a group with
`structured_inherits` calls the parent's `set_output_raw_strided` after.
Before torch 2.13 both functions also take the outputs' `DimnameList names`,
and give a named output its names (`OUTPUT_NAME_PROPAGATION`).

The wrapper (`wrapper_<Key>_<native name>`, in the native convention) builds
the class, calls `meta()` with the functional arguments (keeping a
`precompute` struct if the group has `precomputed:` values), then `impl()`
(or, for CompositeExplicitAutogradNonFunctional, the out= variant through the
C++ API; `Meta` stops after `meta()`), copies back proxies and returns the
outputs. From torch 2.15, a group with a native AOT declaration for the key calls
`impl()` only when the declaration's stub does not handle the call (`native_aot`).
"""

from __future__ import annotations

import textwrap

from opgen.api import structured
from opgen.api.cpp import CppSignature
from opgen.api.native import NativeSignature
from opgen.api.signatures import SignatureSet
from opgen.api.translate import translate
from opgen.api.types import (
    CONST_TENSOR_REF,
    MUT_TENSOR_REF,
    ArgumentStyle,
    Binding,
    Expr,
    NamedCType,
)
from opgen.cached import cached
from opgen.frozen import frozen
from opgen.releases import NEWEST, OUTPUT_NAME_PROPAGATION, ROCM_CUDA_GUARD, Release
from opgen.spec.backend import BackendIndex, BackendMetadata
from opgen.spec.groups import NativeFunctionsGroup
from opgen.spec.keys import DispatchKey, SchemaKind
from opgen.spec.native import NativeFunction
from opgen.targets.aten.dispatch_plan import Planned
from opgen.targets.aten.native_aot import NativeAotStubs, stub_call
from opgen.targets.dispatch_registration import device_check

K = DispatchKey
_INDENT = "    "

# The device guard member of each key's classes.
_GUARD_FIELDS = {
    K.CUDA: "c10::cuda::OptionalCUDAGuard guard_;",
    K.CompositeExplicitAutogradNonFunctional: "c10::OptionalDeviceGuard guard_;",
    K.MPS: "c10::OptionalDeviceGuard guard_;",
    K.XPU: "c10::OptionalDeviceGuard guard_;",
    K.MTIA: "c10::OptionalDeviceGuard guard_;",
}
_MASQUERADING_GUARD = "c10::hip::OptionalHIPGuardMasqueradingAsCUDA guard_;"
# Keys whose set_output functions set the guard to the outputs' device.
_GUARDED_OUTPUT_KEYS = frozenset({K.CUDA, K.MPS, K.XPU, K.CompositeExplicitAutogradNonFunctional})
# Keys that may allocate functional outputs (they have a `create_out`).
_FUNCTIONAL_KEYS = frozenset(
    {K.Meta, K.CPU, K.CUDA, K.MPS, K.XPU, K.MTIA, K.CompositeExplicitAutogradNonFunctional}
)

_SET_GUARD = """
auto current_device = guard_.current_device();
if (C10_UNLIKELY(current_device.has_value())) {
  TORCH_INTERNAL_ASSERT(*current_device == options.device(),
    "structured kernels don't support multi-device outputs");
} else {
  guard_.reset_device(options.device());
}
"""
_CREATE_PROXY = """
auto maybe_proxy = maybe_create_proxy(out, sizes, strides, options);
if (C10_UNLIKELY(maybe_proxy.has_value())) {
    proxy_outputs_[output_idx] = std::move(maybe_proxy).value();
}
"""
# Emitted C++ as torchgen writes it (byte-identical output). Before torch 2.13: a named
# output gets its names (`OUTPUT_NAME_PROPAGATION`).
_PROPAGATE_NAMES = """\
    if (!names.empty()) {
      namedinference::propagate_names(outputs_[output_idx], names);
    }
"""
_MARKER = "\x00"  # stands for the parent class in cached text
_PROXY_OUTPUT = (
    "proxy_outputs_[output_idx].has_value() ? *proxy_outputs_[output_idx] : "
    "outputs_[output_idx].get()"
)


@frozen(eq=False)
class _Calls:
    """A member's meta() call and the calls after it: the same for every key."""

    g: NativeFunctionsGroup
    f: NativeFunction
    signatures: SignatureSet
    meta_lines: tuple[str, ...]
    context: tuple[Binding | Expr, ...]  # the wrapper's parameters, precomputed values, outputs

    @cached
    def impl_arguments(self) -> str:
        return ", ".join(e.expr for e in translate(self.context, structured.impl_arguments(self.g)))

    @cached
    def out_call(self) -> str:
        """`at::<out>_outf(...)`, for CompositeExplicitAutogradNonFunctional."""
        out_sig = _out_signature(self.g, self.f, self.signatures)
        out_args = ", ".join(e.expr for e in translate(self.context, out_sig.arguments()))
        return f"at::{out_sig.name()}({out_args});"


class StructuredWrappers:
    """Renders structured wrappers; one per run, reusing what does not depend on the key.

    `native_aot`: torch 2.15 on, the stubs that wrappers call before impl(); `release`:
    the release whose set_output functions (`OUTPUT_NAME_PROPAGATION`) and guards
    (`ROCM_CUDA_GUARD`) are written; `rocm`: `--rocm`.
    """

    def __init__(
        self,
        signatures: SignatureSet,
        native_aot: NativeAotStubs | None = None,
        release: Release = NEWEST,
        rocm: bool = False,
    ) -> None:
        self.signatures = signatures
        self.native_aot = NativeAotStubs() if native_aot is None else native_aot
        self.release = release
        self.rocm = rocm
        self._calls: dict[tuple[NativeFunction, bool], _Calls] = {}
        self._set_outputs: dict[tuple[DispatchKey, SchemaKind, bool], tuple[str, ...]] = {}
        self._wrappers: dict[tuple[NativeFunction, bool, DispatchKey], NativeSignature] = {}

    def wrapper_signature(self, key: DispatchKey, p: Planned) -> NativeSignature:
        """`wrapper_<Key>_<native name>`: SymInt-aware when the key's kernel for `p.f` is."""
        f = p.f
        symint = p.kernel is not None and p.kernel.supports_symint()
        cache_key = (f, symint, key)
        found = self._wrappers.get(cache_key)
        if found is None:
            found = self._wrappers[cache_key] = NativeSignature(
                f.func,
                symint,
                ArgumentStyle.of(f),
                prefix=f"wrapper_{key}_",
                memo=self.signatures.memo,
            )
        return found

    def definition(self, index: BackendIndex, p: Planned, primary: BackendMetadata | None) -> str:
        """The class and the wrapper of structured kernel `p` for `index`'s key, whose
        kernel of `p`'s group is `primary` (None for the keys that derive it)."""
        g, f = p.group, p.f
        assert g is not None, "a structured kernel belongs to its group"
        key, k = index.dispatch_key, f.func.kind
        sig = self.wrapper_signature(key, p)
        class_name, parent = _class_names(key, g, k, primary)
        body: list[str] = []
        if index.device_guard:
            body.append(device_check(f, sig.name()))
        if k is SchemaKind.functional:
            body.append(f"{class_name} op;")
        elif k is SchemaKind.inplace:
            body.append(f"{class_name} op(self);")
        elif k is SchemaKind.out:
            body.append(f"{class_name} op({', '.join(a.name for a in f.func.arguments.out)});")
        calls = self._calls_of(g, f, sig)
        body.extend(calls.meta_lines)
        if key is K.CompositeExplicitAutogradNonFunctional:
            body.append(calls.out_call)
        elif key is not K.Meta:
            stub = self.native_aot.consulted(key, g)
            if stub is None:
                body.append(f"op.impl({calls.impl_arguments});")
            else:
                body.append(stub_call(stub, calls.impl_arguments))
        returns = len(f.func.returns)
        if k is not SchemaKind.functional:
            body.extend(
                f"if (op.proxy_outputs_[{i}].has_value()) "
                f"op.outputs_[{i}].get().copy_(*op.proxy_outputs_[{i}]);"
                for i in range(returns)
            )
        body.append(f"return {_returned(f, k, returns)};")
        cls = self._class(index, f, k, class_name, parent, g.out.structured_inherits is not None)
        return f"{cls}\n\n{sig.defn()} {{\n" + "\n".join(body) + "\n}\n"

    def _calls_of(self, g: NativeFunctionsGroup, f: NativeFunction, sig: NativeSignature) -> _Calls:
        cache_key = (f, sig.symint)
        found = self._calls.get(cache_key)
        if found is None:
            found = self._calls[cache_key] = _derive_calls(g, f, sig, self.signatures)
        return found

    def _class(
        self,
        index: BackendIndex,
        f: NativeFunction,
        k: SchemaKind,
        class_name: str,
        parent: str,
        generate_super: bool,
    ) -> str:
        returns = len(f.func.returns)
        if k is SchemaKind.functional:
            output_type, output_value, proxy_field = "Tensor", "outputs_[output_idx]", ""
        elif k in (SchemaKind.inplace, SchemaKind.out):
            output_type, output_value = "std::reference_wrapper<Tensor>", _PROXY_OUTPUT
            proxy_field = f"std::array<::std::optional<Tensor>, {returns}> proxy_outputs_;"
        else:
            raise ValueError(f"{f.func.name}: {k.name} operators cannot be structured")
        lines = (
            f"struct {class_name} final : public {parent} {{",
            _indented(_constructor(k, class_name, returns)),
            self._set_output_functions(index.dispatch_key, k, parent if generate_super else None),
            "    const Tensor& maybe_get_output(int64_t output_idx) override {",
            f"      return {output_value};\n",
            "    }",
            f"    std::array<{output_type}, {returns}> outputs_;",
            _indented(proxy_field),
            _indented(self._guard_field(index.dispatch_key)),
            "};",
        )
        return "\n".join(line for line in lines if line)

    def _guard_field(self, key: DispatchKey) -> str:
        """The device guard member of `key`'s classes ("" for none)."""
        if key is K.CUDA and self.rocm and not self.release.has(ROCM_CUDA_GUARD):
            return _MASQUERADING_GUARD
        return _GUARD_FIELDS.get(key, "")

    def _set_output_functions(self, key: DispatchKey, k: SchemaKind, parent: str | None) -> str:
        """`set_output_strided` and `set_output_raw_strided`, indented for the class body."""
        cache_key = (key, k, parent is not None)
        pieces = self._set_outputs.get(cache_key)
        if pieces is None:
            # With a parent, its call goes where the marker is (it varies by group).
            call = None if parent is None else _MARKER
            names = self.release.has(OUTPUT_NAME_PROPAGATION)
            functions = (
                _set_output_function(key, k, "strided", proxy=True, parent=call, names=names),
                _set_output_function(key, k, "raw_strided", proxy=False, parent=call, names=names),
            )
            text = textwrap.indent("\n{}\n{}\n".format(*functions), _INDENT)
            pieces = self._set_outputs[cache_key] = tuple(text.split(_MARKER))
        if parent is None:
            return pieces[0]
        return parent.join(pieces)


def _indented(line: str) -> str:
    """One line of the class body, indented (nothing for an empty one)."""
    return _INDENT + line if line else ""


def _class_names(
    key: DispatchKey, g: NativeFunctionsGroup, k: SchemaKind, primary: BackendMetadata | None
) -> tuple[str, str]:
    meta_name = str(g.functional.func.name).replace(".", "_")
    if key is K.Meta:
        return f"structured_{meta_name}_meta_{k.name}", f"at::meta::structured_{meta_name}"
    if key is K.CompositeExplicitAutogradNonFunctional:
        return (
            f"structured_{meta_name}_default_backend_{k.name}",
            f"at::meta::structured_{meta_name}",
        )
    assert primary is not None, "planned as structured only with a structured kernel"
    return (
        f"structured_{primary.kernel}_{k.name}",
        f"{primary.cpp_namespace}::structured_{primary.kernel}",
    )


def _constructor(k: SchemaKind, class_name: str, returns: int) -> str:
    if k is SchemaKind.functional:
        return ""
    if k is SchemaKind.inplace:
        return f"{class_name}(Tensor& self) : outputs_{{std::ref(self)}} {{}}"
    params = ", ".join(f"Tensor& out{i}" for i in range(returns))
    refs = ", ".join(f"std::ref(out{i})" for i in range(returns))
    return f"{class_name}({params}) : outputs_{{ {refs} }} {{}}"


def _set_output_function(
    key: DispatchKey, k: SchemaKind, name: str, *, proxy: bool, parent: str | None, names: bool
) -> str:
    """`names`: the function also takes the outputs' names, and propagates them."""
    body = _set_output_body(key, k, proxy=proxy)
    taken, passed = ("options, DimnameList names", "options, names") if names else ("options",) * 2
    super_call = (
        ""
        if parent is None
        else f"{parent}::set_output_raw_strided(output_idx, sizes, strides, {passed});"
    )
    return (
        f"\nvoid set_output_{name}(\n"
        "    int64_t output_idx, IntArrayRef sizes, IntArrayRef strides,\n"
        f"    TensorOptions {taken}\n"
        ") override {\n"
        f"{textwrap.indent(body, _INDENT)}\n"
        f"{_PROPAGATE_NAMES if names else ''}"
        "    // super must happen after, so that downstream can use maybe_get_output\n"
        "    // to retrieve the output\n"
        f"{textwrap.indent(super_call, _INDENT)}\n"
        "}\n"
    )


def _set_output_body(key: DispatchKey, k: SchemaKind, *, proxy: bool) -> str:
    guard = _SET_GUARD + "\n" if key in _GUARDED_OUTPUT_KEYS else ""
    create_proxy = _CREATE_PROXY if proxy else ""
    if k is SchemaKind.functional:
        if key not in _FUNCTIONAL_KEYS:
            raise ValueError(f"{key} cannot allocate the outputs of a structured kernel")
        return f"{guard}\noutputs_[output_idx] = create_out(sizes, strides, options);"
    check = (
        "check_inplace(out, sizes, options);"
        if k is SchemaKind.inplace
        else "resize_out(out, sizes, strides, options);"
    )
    return f"{guard}\nconst auto& out = outputs_[output_idx].get();\n{check}\n{create_proxy}"


def _returned(f: NativeFunction, k: SchemaKind, returns: int) -> str:
    if k is SchemaKind.functional:
        if returns == 1:
            return "std::move(op.outputs_[0])"
        moved = ", ".join(f"std::move(op.outputs_[{i}])" for i in range(returns))
        return f"std::make_tuple({moved})"
    if k is SchemaKind.inplace:
        return "self"
    outs = f.func.arguments.out
    if returns == 1:
        return outs[0].name
    return f"std::forward_as_tuple({', '.join(a.name for a in outs)})"


def _derive_calls(
    g: NativeFunctionsGroup, f: NativeFunction, sig: NativeSignature, signatures: SignatureSet
) -> _Calls:
    context: list[Binding | Expr] = list(sig.arguments())
    meta_args = ", ".join(e.expr for e in translate(context, structured.meta_arguments(g)))
    precomputed = g.out.precomputed
    if precomputed is None:
        meta_lines: tuple[str, ...] = (f"op.meta({meta_args});",)
    else:
        meta_lines = (f"auto precompute = op.meta({meta_args});", "(void)precompute;")
        for values in (*precomputed.replace.values(), precomputed.add):
            context.extend(
                Expr(f"precompute.{a.name}", structured.argument_type(a, binds=a.name))
                for a in values
            )
    output = "op.maybe_get_output({})" if f.func.kind is SchemaKind.out else "op.outputs_[{}]"
    for i, out in enumerate(structured.out_arguments(g)):
        assert out.nctype.type == CONST_TENSOR_REF, "structured outputs are tensors"
        context.append(Expr(output.format(i), NamedCType(out.nctype.name, MUT_TENSOR_REF)))
    return _Calls(g, f, signatures, meta_lines, tuple(context))


def _out_signature(
    g: NativeFunctionsGroup, f: NativeFunction, signatures: SignatureSet
) -> CppSignature:
    """The faithful C++ API form of the out= member, in `f`'s argument style."""
    out = g.out
    return CppSignature(
        out.func,
        method=False,
        faithful=True,
        symint=False,
        cpp_no_default_args=out.cpp_no_default_args,
        style=ArgumentStyle.of(f),
        fallback_binding=f.manual_cpp_binding,
        memo=signatures.memo,
    )
