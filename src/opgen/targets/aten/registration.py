"""`Register<Key>.cpp`: each dispatch key's kernel wrappers and their registration.

One file family per key of `options.dispatch_keys` (the `sources` part),
sharded by operator root name: 4 shards for CPU, 1 for every other key, each
family with its unlisted `Register<Key>Everything.cpp`. CUDA-family keys go to
the cuda output set, XPU-family keys to the xpu one (when `--xpu` made one),
the others to the CPU set. Template `RegisterDispatchKey.cpp`, whose
`dispatch_definitions` are, per grouped item with any planned kernel (see
`dispatch_plan`), `RegisterDispatchDefinitions.ini` filled with:
- the anonymous wrappers: `wrapper_<Key>_<overload>_<name>` in the dispatcher
  convention calling the kernel (with a device check and guard for CUDA/XPU
  keys), Meta's inplace checks, or the structured classes and wrappers
  (`structured_kernels`);
- `TORCH_LIBRARY_IMPL(<ns>, <Key>, m)` with one `m.impl` per selected
  function, unless `--skip-dispatcher-op-registration`;
- the `at::<key>::` functions: every C++ API overload calling the wrapper.
Empty lines of the filled-in .ini disappear (torchgen passes it to the
outer template as a list of lines). The file head holds the key's includes and the helpers
its structured classes use (`create_out`, `resize_out`, `check_inplace`,
`maybe_create_proxy`); CompositeImplicitAutogradNestedTensor has none.
"""

from __future__ import annotations

import functools
from collections.abc import Callable

from opgen.api.cpp import CppSignatureGroup
from opgen.api.signatures import SignatureSet
from opgen.api.translate import call_arguments
from opgen.api.types import Parameters
from opgen.frozen import frozen
from opgen.output import OutputSet
from opgen.releases import ROCM_CUDA_GUARD, Release
from opgen.spec.backend import BackendIndex
from opgen.spec.groups import NativeFunctionsGroup
from opgen.spec.keys import CUDA_DISPATCH_KEYS, DispatchKey
from opgen.spec.native import NativeFunction
from opgen.targets.aten.dispatch_plan import (
    DERIVED_STRUCTURED_KEYS,
    Item,
    ItemPlan,
    KeyKernels,
    KeyPlan,
    Mode,
    Planned,
)
from opgen.targets.aten.run import AtenRun
from opgen.targets.aten.structured_kernels import StructuredWrappers
from opgen.targets.dispatch_registration import (
    device_check,
    device_guard,
    dispatch_headers,
    dispatch_helpers,
    namespace_lines,
)
from opgen.targets.emitters import Emitted

K = DispatchKey

_CUDA_HEADERS = """\
#include <c10/cuda/CUDAGuard.h>
#include <ATen/cuda/ATenCUDAGeneral.h>
#include <ATen/cuda/CUDADevice.h>
#include <ATen/cuda/CUDAContext.h>"""
_HIP_HEADERS = """\
#include <ATen/hip/ATenHIPGeneral.h>
#include <ATen/hip/HIPDevice.h>
#include <ATen/hip/HIPContext.h>"""
# The guard header of ROCm builds: HIP's own, else (`ROCM_CUDA_GUARD`) the one
# that masquerades as CUDA.
_HIP_GUARD_HEADERS = {
    True: "#include <c10/hip/HIPGuard.h>",
    False: "#include <ATen/hip/impl/HIPGuardImplMasqueradingAsCUDA.h>",
}


def extra_cuda_headers(rocm: bool, release: Release) -> str:
    """The device headers of the CUDA family's registrations and AOTInductor shims."""
    if not rocm:
        return _CUDA_HEADERS
    return _HIP_GUARD_HEADERS[release.has(ROCM_CUDA_GUARD)] + "\n" + _HIP_HEADERS


def direct_cpp_signatures(signatures: SignatureSet, f: NativeFunction) -> CppSignatureGroup:
    """`at::<key>::` functions: the C++ API overloads, never as `__dispatch_` fallbacks."""
    if not f.manual_cpp_binding:
        return signatures.of(f).cpp
    return CppSignatureGroup.from_native_function(
        f, method=False, fallback_binding=False, memo=signatures.memo
    )


def item_namespace(item: Item) -> str:
    """The operator namespace (`aten`) an item registers in."""
    return item.namespace if isinstance(item, NativeFunction) else item.functional.namespace


def _is_registered(kernels: KeyKernels, key: DispatchKey, item: Item) -> bool:
    """Whether a per-operator build includes the item's headers in the key's file."""
    if kernels.kernel(item) is not None:
        return True
    if isinstance(item, NativeFunctionsGroup) and any(
        kernels.kernel(f) is not None for f in item.functions()
    ):
        return True
    return item.structured and key in DERIVED_STRUCTURED_KEYS


def operator_headers(run: AtenRun, key: DispatchKey, kernels: KeyKernels) -> list[str]:
    functions_header = key in run.options.functions_keys
    if not run.options.per_operator_headers:
        headers = ["#include <ATen/NativeFunctions.h>"]
        if key is K.CompositeExplicitAutogradNonFunctional:
            headers.append("#include <ATen/Functions.h>")
        if functions_header:
            headers.append(f"#include <ATen/{key}Functions.h>")
        return headers
    # Only the derived keys register items without a kernel for the key.
    items = run.spec.grouped if key in DERIVED_STRUCTURED_KEYS else kernels.candidates
    found: set[str] = set()
    for item in items:
        if not _is_registered(kernels, key, item):
            continue
        root = item.root_name
        found.add(f"#include <ATen/ops/{root}_native.h>")
        if key is K.CompositeExplicitAutogradNonFunctional:
            found.add(f"#include <ATen/ops/{root}.h>")
        if functions_header:
            found.add(f"#include <ATen/ops/{root}_{key.lower()}_dispatch.h>")
    return sorted(found)


class KernelTexts:
    """The generated C++ of one run's planned kernels, reusing key-independent pieces."""

    def __init__(self, run: AtenRun, structured: StructuredWrappers) -> None:
        self.run = run
        self.structured = structured
        self._translated: dict[tuple[int, int], str] = {}
        self._keep: list[Parameters] = []
        self._suffixes: dict[NativeFunction, str] = {}
        self._prefixes: dict[DispatchKey, str] = {}
        self._namespaces: dict[str, tuple[str, str]] = {}
        self._overloads: dict[tuple[NativeFunction, int], list[tuple[str, str]]] = {}

    def arguments(self, source: Parameters, goal: Parameters) -> str:
        """The call arguments of `goal`'s function from `source`'s parameters."""
        cache_key = (id(source), id(goal))
        found = self._translated.get(cache_key)
        if found is None:
            self._keep.extend((source, goal))  # keeps the ids in the key valid
            found = self._translated[cache_key] = call_arguments(source.bindings, goal.bindings)
        return found

    def namespace_lines(self, kernel_namespace: str) -> tuple[str, str]:
        """The lines opening and closing the namespace of an item's code, whose kernels
        live in `kernel_namespace` (few distinct ones, so each is rendered once)."""
        found = self._namespaces.get(kernel_namespace)
        if found is None:
            namespace = kernel_namespace.replace("::native", "")
            found = self._namespaces[kernel_namespace] = namespace_lines(namespace, max_level=2)
        return found

    def wrapper(self, index: BackendIndex, p: Planned) -> tuple[str, Parameters]:
        """The wrapper's name and parameters."""
        if p.mode is Mode.structured:
            sig = self.structured.wrapper_signature(index.dispatch_key, p)
            return sig.name(), sig.parameters
        dispatcher = self.run.signatures.of(p.f).dispatcher
        suffix = self._suffixes.get(p.f)
        if suffix is None:
            suffix = self._suffixes[p.f] = f"{p.f.func.name.overload_name}_{dispatcher.name()}"
        # Formatted once per key: formatting an Enum runs Python code.
        prefix = self._prefixes.get(index.dispatch_key)
        if prefix is None:
            prefix = self._prefixes[index.dispatch_key] = f"wrapper_{index.dispatch_key}_"
        return prefix + suffix, dispatcher.parameters

    def anonymous(self, index: BackendIndex, item: ItemPlan, p: Planned, name: str) -> str:
        if p.mode is Mode.structured:
            return self.structured.definition(index, p, item.primary)
        dispatcher = self.run.signatures.of(p.f).dispatcher
        head = f"{dispatcher.returns_text} {name}({dispatcher.defined_parameters})"
        if p.mode is Mode.inplace_meta:
            self_arg = p.f.func.arguments.self_arg
            assert self_arg is not None, "an inplace function has self"
            this = self_arg.argument.name
            return (
                f"\n{head} {{\n"
                f"  TORCH_CHECK_NOT_IMPLEMENTED({this}.is_meta(),\n"
                '    "Cannot inplace into non-meta tensor with meta tensor argument");\n'
                f"  return {this};\n}}\n"
            )
        return self._kernel_call(index, p, name, head, dispatcher.parameters)

    def _kernel_call(
        self, index: BackendIndex, p: Planned, name: str, head: str, params: Parameters
    ) -> str:
        f, metadata = p.f, p.kernel
        assert metadata is not None, "planned as a kernel call only with a kernel"
        kernel = self.run.signatures.of(f).native(metadata)
        args = self.arguments(params, kernel.parameters)
        check = "  // No device check\n"
        guard = "// DeviceGuard omitted"
        if index.device_guard:
            check = device_check(f, name)
            if f.device_guard:
                guard = device_guard(index.dispatch_key, f)
        return (
            f"namespace {{\n\n{head} {{\n  {check}\n\n  {guard}\n"
            f"  return {metadata.cpp_namespace}::{metadata.kernel}({args});\n}}\n\n"
            "} // anonymous namespace\n"
        )

    def namespaced(self, p: Planned, name: str, params: Parameters) -> str:
        """The `at::<key>::` overloads, each calling the wrapper."""
        return "".join(
            f"\n{head} {{\nreturn {name}({args});\n}}\n" for head, args in self._heads(p.f, params)
        )

    def _heads(self, f: NativeFunction, params: Parameters) -> list[tuple[str, str]]:
        """Each overload's definition head, and its call of a wrapper taking `params`."""
        cache_key = (f, id(params))
        found = self._overloads.get(cache_key)
        if found is None:
            self._keep.append(params)
            group = direct_cpp_signatures(self.run.signatures, f)
            found = self._overloads[cache_key] = [
                (sig.defn(), self.arguments(sig.parameters, params))
                for sig in group.signatures(symint=True)
            ]
        return found


def _registration(p: Planned, name: str) -> str:
    if p.mode is Mode.structured:
        return f'm.impl("{p.f.func.name}", TORCH_FN({name}));'
    return f'm.impl("{p.f.func.name}",\nTORCH_FN({name}));\n'


@frozen
class _KeyFile:
    """The file family of one key, with the key's names its code uses (formatted once)."""

    out: OutputSet
    name: str  # str(key)
    namespace: str  # key.lower()


def _definitions(texts: KernelTexts, file: _KeyFile, index: BackendIndex, item: ItemPlan) -> str:
    """The item's part of `dispatch_definitions`: the filled-in .ini, its empty lines dropped."""
    run = texts.run
    anonymous, namespaced, registrations = [], [], []
    for p in item.kernels:
        name, params = texts.wrapper(index, p)
        anonymous.append(texts.anonymous(index, item, p, name))
        namespaced.append(texts.namespaced(p, name, params))
        if run.selection.is_native_function_selected(p.f):
            registrations.append(_registration(p, name))
    registered = ""
    if registrations and not run.options.skip_dispatcher_op_registration:
        registered = (
            f"\nTORCH_LIBRARY_IMPL({item_namespace(item.item)}, {file.name}, m) {{\n    "
            + "\n".join(registrations)
            + "\n}"
        )
    prologue, epilogue = texts.namespace_lines(item.namespace)
    env = {
        "ns_prologue": prologue,
        "ns_epilogue": epilogue,
        "dispatch_anonymous_definitions": anonymous,
        "static_init_dispatch_registrations": registered,
        "deferred_dispatch_registrations": "",
        "dispatch_namespace": file.namespace,
        "dispatch_namespaced_definitions": namespaced,
    }
    # torchgen passes the lines, and the outer block drops the empty ones (each is an
    # empty element); one element holding the other lines renders the same.
    return file.out.render_lines("RegisterDispatchDefinitions.ini", env)


def emit_registrations(run: AtenRun) -> Emitted:
    """`Register<Key>_<n>.cpp` and `Register<Key>Everything.cpp` (part: sources).

    All keys' files are one family, sharing the kernel table's plans (with the
    dispatch headers) and the key-independent texts: each key is planned whole when
    its files first render, in the process that renders them, and its items' texts
    are rendered from that plan.
    """
    table = run.kernel_table()
    stubs = run.native_aot
    wrappers = StructuredWrappers(
        run.signatures, native_aot=stubs, release=run.release, rocm=run.options.rocm
    )
    texts = KernelTexts(run, wrappers)
    outputs = run.outputs()
    for key in run.options.dispatch_keys:
        out = outputs.for_key(key)
        kernels = table.keys[key]
        out.add_sharded(
            f"Register{key}.cpp",
            kernels.candidates,
            key=_root_name,
            env=_item_env(texts, _KeyFile(out, str(key), key.lower()), kernels),
            num_shards=4 if key is K.CPU else 1,
            sharded_keys={"dispatch_definitions"},
            base_env=functools.partial(_base_env, run, key, kernels, stubs.declares(key)),
            template="RegisterDispatchKey.cpp",
            family=table,
        )
    return outputs.emitted()


def _root_name(item: Item) -> str:
    return item.root_name


def _item_env(
    texts: KernelTexts, file: _KeyFile, kernels: KeyKernels
) -> Callable[[Item], dict[str, list[str]]]:
    plan: KeyPlan | None = None

    def env(item: Item) -> dict[str, list[str]]:
        nonlocal plan
        if plan is None:  # the first item of the key's files to render
            plan = kernels.plan
        planned = plan.of(item)
        if planned is None:  # nothing for this key
            return {}
        return {"dispatch_definitions": [_definitions(texts, file, plan.index, planned)]}

    return env


def _base_env(
    run: AtenRun, key: DispatchKey, kernels: KeyKernels, native_aot_stubs: bool
) -> dict[str, object]:
    options = run.options
    index = kernels.index
    cuda_headers = extra_cuda_headers(options.rocm, run.release)
    return {
        "extra_cuda_headers": cuda_headers if key in CUDA_DISPATCH_KEYS else "",
        "external_backend_headers": "",
        "dispatch_headers": dispatch_headers(
            index,
            per_operator_headers=options.per_operator_headers,
            rocm=options.rocm,
            native_aot_stubs=native_aot_stubs,
        ),
        "ops_headers": operator_headers(run, key, kernels),
        "dispatch_helpers": (
            [] if key is K.CompositeImplicitAutogradNestedTensor else dispatch_helpers(index)
        ),
    }
