"""Which kernels a dispatch key gets: the plan that registrations and headers render.

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

The run reads a `KernelTable` before anything renders: each key's kernels by
function and the items that may plan any, checked (`KernelTable.of`). A key's
`KeyPlan`, every kernel it gets with its mode, the kernel it calls, its item's primary
kernel and namespace, is made whole by `plan_key`, from the table alone, the first
time the key's files render (`KeyKernels.plan`), in the process that renders them:
planning every key before the rendering forks would add its time (about 18 ms) to
the serial part of a run. Renderers read the plan; they never plan.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from enum import Enum
from types import MappingProxyType

from opgen.cached import cached
from opgen.diagnostics import Diagnostic, SpecError
from opgen.frozen import frozen
from opgen.spec.backend import DEFAULT_KERNEL_NAMESPACE, BackendIndex, BackendMetadata
from opgen.spec.groups import NativeFunctionsGroup
from opgen.spec.keys import CUDA_DISPATCH_KEYS, XPU_DISPATCH_KEYS, DispatchKey, SchemaKind
from opgen.spec.model import Spec
from opgen.spec.native import NativeFunction

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
    """One kernel a key gets: its function, how it is generated, and the key's kernel of
    the function itself (the one `Mode.kernel` calls; a structured wrapper takes SymInts
    as SymInts when it does)."""

    f: NativeFunction
    mode: Mode
    group: NativeFunctionsGroup | None
    kernel: BackendMetadata | None


@frozen(slots=True)
class ItemPlan:
    """The kernels a key gets for one grouped item (at least one)."""

    item: Item
    kernels: tuple[Planned, ...]
    # The item's primary kernel for the key (a group's out= kernel), if any: the parent
    # of a structured kernel's classes.
    primary: BackendMetadata | None
    namespace: str  # the C++ namespace of the item's kernels (`at::native` by default)


@frozen(eq=False)
class KeyPlan:
    """Every kernel one key gets: the items that plan any, in spec order."""

    index: BackendIndex
    items: tuple[ItemPlan, ...]

    @cached
    def _by_item(self) -> dict[int, ItemPlan]:
        # By identity: the spec keeps the items, so their ids, alive.
        return {id(p.item): p for p in self.items}

    def of(self, item: Item) -> ItemPlan | None:
        """The item's plan; None when the key gets no kernel for it."""
        return self._by_item.get(id(item))


@frozen(eq=False)
class KeyKernels:
    """One key's kernels by function (hashed by identity), and the items that may plan any."""

    index: BackendIndex
    kernels: Mapping[NativeFunction, BackendMetadata]
    candidates: tuple[Item, ...]  # in spec order: a superset of the items that plan kernels

    def kernel(self, f: NativeFunction | NativeFunctionsGroup) -> BackendMetadata | None:
        """`index.get_kernel(f)`, by identity."""
        if isinstance(f, NativeFunctionsGroup):
            f = self.index.primary(f)
        return self.kernels.get(f)

    @cached
    def plan(self) -> KeyPlan:
        """The key planned whole (`plan_key`), on first use: in the process that renders
        the key's files, once for its registrations and its declarations."""
        return plan_key(self)


@frozen(eq=False)
class KernelTable:
    """Each of a run's dispatch keys' kernels, read once, before anything renders.

    Looking kernels up by function (hashed by identity) rather than by operator name,
    and planning only the items that mention a key, keeps a key without kernels
    nearly free.
    """

    keys: Mapping[DispatchKey, KeyKernels]

    @staticmethod
    def of(spec: Spec, keys: Sequence[DispatchKey]) -> KernelTable:
        """The table of `keys`; raises SpecError for a structured operator that names a
        kernel its structured declaration generates."""
        by_name = {f.func.name: f for f in spec.functions}
        # Each function's item, and the item's place in spec order.
        item_of: dict[NativeFunction, tuple[int, Item]] = {}
        for position, item in enumerate(spec.grouped):
            if isinstance(item, NativeFunction):
                item_of[item] = (position, item)
            else:
                for f in item.functions():
                    item_of[f] = (position, item)
        table: dict[DispatchKey, KeyKernels] = {}
        for key in keys:
            index = backend_index(spec, key)
            kernels = {
                function: m
                for n, m in index.index.items()
                if (function := by_name.get(n)) is not None
            }
            # Keys that plan kernels for items without a kernel of theirs (derived
            # structured kernels, Meta's inplace checks) may plan one for every item.
            if index.dispatch_key in DERIVED_STRUCTURED_KEYS:
                candidates = tuple(spec.grouped)
            else:
                owners = dict(found for f in kernels if (found := item_of.get(f)) is not None)
                candidates = tuple(owners[position] for position in sorted(owners))
            table[key] = KeyKernels(index, kernels, candidates)
        _check_generated_kernels(spec, table)
        return KernelTable(MappingProxyType(table))

    def plan(self, key: DispatchKey) -> KeyPlan:
        """`key`'s plan (made on first use)."""
        return self.keys[key].plan


def _check_generated_kernels(spec: Spec, table: Mapping[DispatchKey, KeyKernels]) -> None:
    """A structured operator's Meta and CompositeExplicitAutograd kernels are generated;
    a spec that names its own is wrong."""
    errors: list[Diagnostic] = []
    derived = [(key, kernels) for key, kernels in table.items() if key in DERIVED_STRUCTURED_KEYS]
    for g in spec.groups:
        if not g.structured:
            continue
        for key, kernels in derived:
            if kernels.kernel(g.out) is not None:
                errors.append(
                    Diagnostic(
                        g.out.location_of("dispatch"),
                        f"'{g.out.func.name}' is structured, so its {key} kernel is "
                        f"generated; remove '{key}' from its dispatch",
                    )
                )
    if errors:
        raise SpecError.of(errors)


def backend_index(spec: Spec, key: DispatchKey) -> BackendIndex:
    """The kernels for `key`; keys without any get an empty index, as torchgen's do.

    torchgen's empty index says `Undefined` for its key (it is a defaultdict's
    default), and some outputs show it, so this one does too.
    """
    found = spec.backend_indices.get(key)
    if found is not None:
        return found
    return BackendIndex(DispatchKey.Undefined, True, False, False, {})


def plan_key(kernels: KeyKernels) -> KeyPlan:
    """Every kernel the key gets, item by item, in spec order."""
    planned = (plan_item(kernels, item) for item in kernels.candidates)
    return KeyPlan(kernels.index, tuple(p for p in planned if p is not None))


def plan_item(kernels: KeyKernels, item: Item) -> ItemPlan | None:
    """The kernels the key gets for one grouped item, in generation order; None for none."""
    index, own = kernels.index, kernels.kernels
    key = index.dispatch_key
    if isinstance(item, NativeFunction):
        single = _unstructured(own, key, item, None)
        if single is None:
            return None
        return ItemPlan(
            item, (single,), single.kernel, kernel_namespace(index, item, single.kernel)
        )
    primary = own.get(item.out if index.use_out_as_primary else item.functional)
    planned: tuple[Planned, ...]
    # Structured for the keys that derive structured kernels (`_check_generated_kernels`),
    # and for the others where the group's own kernel is structured.
    if item.out.structured and (
        key in DERIVED_STRUCTURED_KEYS or (primary is not None and primary.structured)
    ):
        skip_out = key is K.CompositeExplicitAutogradNonFunctional
        planned = tuple(
            Planned(f, Mode.structured, item, own.get(f))
            for f in item.functions()
            if not (skip_out and f.func.kind is SchemaKind.out)
        )
    else:
        members = [_unstructured(own, key, f, item) for f in item.functions()]
        planned = tuple(p for p in members if p is not None)
        if not planned:
            return None
    return ItemPlan(item, planned, primary, kernel_namespace(index, item, primary))


def _unstructured(
    own: Mapping[NativeFunction, BackendMetadata],
    key: DispatchKey,
    f: NativeFunction,
    g: NativeFunctionsGroup | None,
) -> Planned | None:
    metadata = own.get(f)
    if (metadata is None and key is not K.Meta) or f.manual_kernel_registration:
        return None
    if metadata is not None:
        return Planned(f, Mode.kernel, g, metadata)
    if (
        key is K.Meta
        and f.func.kind is SchemaKind.inplace
        and not f.has_composite_kernel
        and len(f.func.returns) == 1
    ):
        return Planned(f, Mode.inplace_meta, g, None)
    return None


def kernel_namespace(index: BackendIndex, item: Item, primary: BackendMetadata | None) -> str:
    """The C++ namespace of the item's primary kernel for the key (`at::native` by default)."""
    if primary is None:
        return DEFAULT_KERNEL_NAMESPACE
    if "::native" not in primary.cpp_namespace:
        raise ValueError(
            f"the {index.dispatch_key} kernel of {_item_name(item)} is in namespace "
            f"{primary.cpp_namespace}, which does not end in '::native'"
        )
    return primary.cpp_namespace


def _item_name(item: Item) -> str:
    f = item if isinstance(item, NativeFunction) else item.functional
    return str(f.func.name)


def device_family(key: DispatchKey) -> str | None:
    """The device family whose output set gets the key's files (None: the CPU set)."""
    if key in CUDA_DISPATCH_KEYS:
        return "cuda"
    if key in XPU_DISPATCH_KEYS:
        return "xpu"
    return None
