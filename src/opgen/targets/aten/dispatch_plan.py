"""Which kernels a dispatch key gets: the decisions shared by registrations and headers.

For one dispatch key, every item of the grouped spec (a single function, or a
functional/out/inplace group) yields zero or more *planned kernels*, in the
order of the group's `functions()`. Each planned kernel gets, for that key:
an anonymous wrapper in `Register<Key>.cpp`, a `m.impl` registration (when
selected), a definition in `at::<key>::` and a declaration in
`<Key>Functions_inl.h` (or `ops/<op>_<key>_dispatch.h`).

The rules (torch 2.13):
- A structured group (its out= kernel is `structured: True`) is generated the
  structured way for `Meta` and `CompositeExplicitAutogradNonFunctional`
  always (those kernels are derived from the meta function), and for other
  keys when the group's out= kernel for the key is itself structured; for
  `CompositeExplicitAutogradNonFunctional` the out= member is skipped (a
  backend must implement out= itself). Otherwise every member is
  unstructured.
- An unstructured function is generated when the key has a kernel for it, or,
  for `Meta`, when it is an inplace function with a single return and no
  composite kernel (the wrapper then only checks that `self` is a meta
  tensor). Functions with `manual_kernel_registration` are never generated.
- In-tree indices always implement groups by their out= kernel, so the
  out=/inplace wrappers torchgen can derive from a functional kernel (for
  backends that implement the functional variant) never occur here.
- The index's own key decides everything kernel-related; a key without any
  kernel has an empty index whose key is `Undefined`, and only the file name,
  `TORCH_LIBRARY_IMPL` and the C++ namespace use the requested key.

Kernel namespaces: an item's kernels live in the namespace of its primary
kernel (`at::native` when it has none); the generated code goes to that
namespace with `::native` dropped (`at`), and the declarations to it with
`native` replaced by the key's lower-case name (`at::cpu`).
"""

from __future__ import annotations

from enum import Enum

from opgen.api.cpp import CppSignatureGroup
from opgen.api.signatures import SignatureSet
from opgen.diagnostics import Diagnostic, SpecError
from opgen.frozen import frozen
from opgen.output import OutputSet
from opgen.spec.backend import DEFAULT_KERNEL_NAMESPACE, BackendIndex, BackendMetadata
from opgen.spec.groups import NativeFunctionsGroup
from opgen.spec.keys import CUDA_DISPATCH_KEYS, XPU_DISPATCH_KEYS, DispatchKey, SchemaKind
from opgen.spec.native import NativeFunction
from opgen.targets.aten.run import AtenRun

K = DispatchKey
Item = NativeFunction | NativeFunctionsGroup
# Keys whose structured kernels are derived from the meta function, for every structured group.
DERIVED_STRUCTURED_KEYS = frozenset({K.Meta, K.CompositeExplicitAutogradNonFunctional})


class Mode(Enum):
    kernel = "kernel"  # calls the key's kernel
    inplace_meta = "inplace_meta"  # Meta's check-only wrapper of an inplace function
    structured = "structured"  # the meta()/impl() class of a structured group


@frozen(slots=True)
class Planned:
    f: NativeFunction
    mode: Mode
    group: NativeFunctionsGroup | None


class KernelTable:
    """Each key's kernels by function, the items that may plan any, and their plans:
    built once per run (`AtenRun.kernel_table`), for every family that renders kernels.

    Looking kernels up by function (hashed by identity) rather than by
    operator name, and planning only the items that mention a key, keeps a
    key without kernels nearly free.
    """

    def __init__(self, run: AtenRun) -> None:
        self.run = run
        by_name = {f.func.name: f for f in run.spec.functions}
        self._kernels: dict[DispatchKey, dict[NativeFunction, BackendMetadata]] = {}
        for key, index in run.spec.backend_indices.items():
            self._kernels[key] = {by_name[n]: m for n, m in index.index.items() if n in by_name}
        self._item_keys: list[tuple[Item, frozenset[DispatchKey]]] = []
        for item in run.spec.grouped:
            functions = (item,) if isinstance(item, NativeFunction) else tuple(item.functions())
            keys = frozenset(k for f in functions for k in run.spec.kernels(f))
            self._item_keys.append((item, keys))
        # (key, id(item)) -> the item's plan; the spec keeps the items, so their ids, alive.
        self._plans: dict[tuple[DispatchKey, int], tuple[Planned, ...]] = {}
        self._check_generated_kernels()

    def _check_generated_kernels(self) -> None:
        """A structured operator's Meta and CompositeExplicitAutograd kernels are generated;
        a spec that names its own is wrong (checked now, as plans are made lazily)."""
        errors: list[Diagnostic] = []
        keys = [k for k in self.run.options.dispatch_keys if k in DERIVED_STRUCTURED_KEYS]
        for g in self.run.spec.groups:
            if not g.structured:
                continue
            for key in keys:
                if self.kernel(self.index(key), g.out) is not None:
                    errors.append(
                        Diagnostic(
                            g.out.location_of("dispatch"),
                            f"'{g.out.func.name}' is structured, so its {key} kernel is "
                            f"generated; remove '{key}' from its dispatch",
                        )
                    )
        if errors:
            raise SpecError.of(errors)

    def index(self, key: DispatchKey) -> BackendIndex:
        return self.run.backend_index(key)

    def kernel(
        self, index: BackendIndex, f: NativeFunction | NativeFunctionsGroup
    ) -> BackendMetadata | None:
        """`index.get_kernel(f)`, by identity."""
        kernels = self._kernels.get(index.dispatch_key)
        if kernels is None:
            return None
        if isinstance(f, NativeFunctionsGroup):
            f = index.primary(f)
        return kernels.get(f)

    def candidates(self, key: DispatchKey) -> list[Item]:
        """The items, in spec order, that may plan kernels for `key` (a superset)."""
        if self.index(key).dispatch_key in _EVERY_ITEM_KEYS:
            return [item for item, _ in self._item_keys]
        return [item for item, keys in self._item_keys if key in keys]

    def plan(self, index: BackendIndex, item: Item) -> tuple[Planned, ...]:
        """The kernels `index`'s key gets for one grouped item, in generation order."""
        cache_key = (index.dispatch_key, id(item))
        found = self._plans.get(cache_key)
        if found is None:
            found = self._plans[cache_key] = tuple(self._plan(index, item))
        return found

    def _plan(self, index: BackendIndex, item: Item) -> list[Planned]:
        if isinstance(item, NativeFunction):
            single = self._unstructured(index, item, None)
            return [] if single is None else [single]
        if item.structured and self._is_structured_for(index, item):
            skip_out = index.dispatch_key is K.CompositeExplicitAutogradNonFunctional
            return [
                Planned(f, Mode.structured, item)
                for f in item.functions()
                if not (skip_out and f.func.kind is SchemaKind.out)
            ]
        planned = (self._unstructured(index, f, item) for f in item.functions())
        return [p for p in planned if p is not None]

    def _is_structured_for(self, index: BackendIndex, g: NativeFunctionsGroup) -> bool:
        key = index.dispatch_key
        if key in DERIVED_STRUCTURED_KEYS:  # generated (`_check_generated_kernels`)
            return True
        metadata = self.kernel(index, g)
        return metadata is not None and metadata.structured

    def _unstructured(
        self, index: BackendIndex, f: NativeFunction, g: NativeFunctionsGroup | None
    ) -> Planned | None:
        if f.manual_kernel_registration:
            return None
        if self.kernel(index, f) is not None:
            return Planned(f, Mode.kernel, g)
        if (
            index.dispatch_key is K.Meta
            and f.func.kind is SchemaKind.inplace
            and not f.has_composite_kernel
            and len(f.func.returns) == 1
        ):
            return Planned(f, Mode.inplace_meta, g)
        return None


# Keys that plan kernels for items without a kernel of theirs (derived structured
# kernels, Meta's inplace checks).
_EVERY_ITEM_KEYS = DERIVED_STRUCTURED_KEYS


def kernel_namespace(table: KernelTable, index: BackendIndex, item: Item) -> str:
    """The C++ namespace of the item's primary kernel for the key (`at::native` by default)."""
    metadata = table.kernel(index, item)
    if metadata is None:
        return DEFAULT_KERNEL_NAMESPACE
    if "::native" not in metadata.cpp_namespace:
        raise ValueError(
            f"the {index.dispatch_key} kernel of {_item_name(item)} is in namespace "
            f"{metadata.cpp_namespace}, which does not end in '::native'"
        )
    return metadata.cpp_namespace


def _item_name(item: Item) -> str:
    f = item if isinstance(item, NativeFunction) else item.functional
    return str(f.func.name)


def item_namespace(item: Item) -> str:
    """The operator namespace (`aten`) an item registers in."""
    return item.namespace if isinstance(item, NativeFunction) else item.functional.namespace


def device_family(key: DispatchKey) -> str | None:
    """The device family whose output set gets the key's files (None: the CPU set)."""
    if key in CUDA_DISPATCH_KEYS:
        return "cuda"
    if key in XPU_DISPATCH_KEYS:
        return "xpu"
    return None


def output_set_for(run: AtenRun, key: DispatchKey) -> OutputSet:
    family = device_family(key)
    if family is None:
        return run.outputs.cpu
    return run.outputs.devices.get(family, run.outputs.cpu)


def direct_cpp_signatures(signatures: SignatureSet, f: NativeFunction) -> CppSignatureGroup:
    """`at::<key>::` functions: the C++ API overloads, never as `__dispatch_` fallbacks."""
    if not f.manual_cpp_binding:
        return signatures.of(f).cpp
    return CppSignatureGroup.from_native_function(
        f, method=False, fallback_binding=False, memo=signatures.memo
    )
