"""One operator of the spec: `NativeFunction`, and its construction from a YAML entry.

`NativeFunction` holds one `native_functions.yaml` entry after parsing and
canonicalisation (defaults filled in, implicit tags added). Its `dispatch:`
table is not stored on it: `read_entry` returns it separately, keyed by
dispatch key, for the `BackendIndex` of each key.

Everything that can be checked from the entry alone is checked in
`opgen.spec.entry.read_entry` and `NativeFunction.__post_init__`; checks that need several
entries live in `opgen.spec.model`.
"""

from __future__ import annotations

from collections.abc import Mapping
from types import MappingProxyType

from opgen.cached import cached
from opgen.diagnostics import Location, SpecError
from opgen.frozen import field, frozen
from opgen.spec.keys import DeviceCheckType, SchemaKind, UfuncKey, Variant, ViewSchemaKind
from opgen.spec.library import NO_EXTENSIONS, OperatorExtensions
from opgen.spec.precompute import Precompute, UfuncInnerLoop
from opgen.spec.schema import FunctionSchema, OperatorName
from opgen.spec.yaml.load import YamlMap
from opgen.spec.yaml.located import written


@frozen(eq=False)
class NativeFunction:
    """One operator overload. Compared and hashed by identity."""

    namespace: str  # the operator's namespace: the `ns::` written before the schema, else aten
    func: FunctionSchema  # the schema of `func:`, without the namespace
    # Mutable tensor arguments are `const Tensor&` in C++ signatures, not `Tensor&`.
    use_const_ref_for_mutable_tensors: bool
    device_guard: bool  # kernels run with the current device set to the arguments' device
    device_check: DeviceCheckType  # whether registrations check that tensors share a device
    python_module: str | None  # the Python submodule binding it (nn, fft, ...); None: torch
    category_override: str | None  # a category given by hand (`factory`), else derived
    variants: frozenset[Variant]  # its C++ forms: a function `at::op`, a `Tensor` method
    manual_kernel_registration: bool  # its kernels are registered by hand, never generated
    manual_cpp_binding: bool  # its C++ function and method are written by hand, not declared
    loc: Location  # where its entry starts (a derived operator: its source entry's)
    autogen: tuple[OperatorName, ...]  # the derived variants `autogen:` asks for
    # Per ufunc key, the element loop the kernels of a `ufunc_inner_loop:` entry call.
    ufunc_inner_loop: Mapping[UfuncKey, UfuncInnerLoop]
    structured: bool  # an out= operator whose kernel is a meta function and an impl
    # The structured out= operator whose kernels this functional or inplace one uses.
    structured_delegate: OperatorName | None
    structured_inherits: str | None  # the base class of its meta class, when not the default
    precomputed: Precompute | None  # the values its meta function computes for its impl
    cpp_no_default_args: frozenset[str]  # arguments whose defaults the C++ API leaves out
    # Implemented per backend (a key beyond the implicit composite ones, or a delegate).
    is_abstract: bool
    # A CompositeImplicitAutograd kernel: decomposes everywhere; autograd sees what it calls.
    has_composite_implicit_autograd_kernel: bool
    # The same decomposition for nested tensors (CompositeImplicitAutogradNestedTensor).
    has_composite_implicit_autograd_nested_tensor_kernel: bool
    # One kernel for every backend (CompositeExplicitAutograd); autograd needs a formula.
    has_composite_explicit_autograd_kernel: bool
    # A kernel for every backend that mutates or aliases inside: not for functional graphs.
    has_composite_explicit_autograd_non_functional_kernel: bool
    # The entry's tags and those implied (pt2_compliant_tag in aten; out, inplace by release).
    tags: frozenset[str]
    # The entry as read, for diagnostics: where each field was written. None for a
    # derived operator, which has no text of its own.
    source: YamlMap | None = field(default=None, repr=False)
    # Characters before the schema in the `func:` value: `ns::`, if written.
    namespace_prefix: int = 0
    # Python kernels, fake kernel and docstring (library specs only).
    extensions: OperatorExtensions = NO_EXTENSIONS

    @property
    def field_locations(self) -> Mapping[object, Location]:
        """Where each field was written (a lazy mapping: each location is found when asked for)."""
        return _NO_LOCATIONS if self.source is None else self.source.value_locations

    def location_of(self, key: str) -> Location:
        """Where `key` was written; else the operator's name in `func:`."""
        if self.source is not None and key in self.source:
            return self.source.value_location(key)
        return self.schema_location(0, len(str(self.func.name)))

    def schema_location(self, offset: int, length: int) -> Location:
        """A span of the schema text, e.g. from `FunctionSchema._span`; on its own line
        when the schema is written over several (`opgen.spec.yaml.located`)."""
        if self.source is None or "func" not in self.source:  # a derived operator
            return self.loc
        return written(self.source, "func").at(self.namespace_prefix + offset, length)

    def __post_init__(self) -> None:
        func, kind = self.func, self.func.kind
        if func.arguments.out and self.variants != {Variant.function}:
            raise SpecError(
                "an operator with out arguments must have only the function variant "
                "('variants: function')",
                self.location_of("variants"),
            )
        if self.structured and kind is not SchemaKind.out:
            raise SpecError(
                "'structured' belongs on the out= variant of an operator; "
                "did you mean 'structured_delegate'?",
                self.location_of("structured"),
            )
        if self.structured_delegate is not None and kind is SchemaKind.out:
            raise SpecError(
                "'structured_delegate' is not allowed on an out= operator; "
                "did you mean 'structured'?",
                self.location_of("structured_delegate"),
            )
        if (self.structured or self.structured_delegate) and not self.device_guard:
            raise SpecError(
                "structured kernels always use a device guard; remove 'device_guard: False'",
                self.location_of("device_guard"),
            )
        if self.structured_inherits is not None and not self.structured:
            raise SpecError(
                "'structured_inherits' requires 'structured: True'",
                self.location_of("structured_inherits"),
            )
        name = str(func.name)
        if name.startswith("_foreach") and self.device_check is not DeviceCheckType.NoCheck:
            raise SpecError(
                "_foreach operators must have 'device_check: NoCheck' (they fall back to a "
                "slow path for tensors on different devices)",
                self.location_of("device_check"),
            )

    def looks_random(self, *, philox_exempt: bool = False) -> bool:
        """A name with 'rand', a Generator argument, or a forward dropout (`read_entry`
        then requires the tag nondeterministic_seeded). With `philox_exempt` (torch 2.15's
        rule, `releases.PHILOX_NOT_RANDOM`), a name with '_philox_' in it does not count:
        the stateless philox operators are determined by their key argument."""
        name = str(self.func.name)
        arguments = self.func.arguments
        if arguments.has_generator_arg():
            return True
        if "rand" in name and not (philox_exempt and "_philox_" in name):
            return True
        dropout = "dropout" in name
        if not dropout:
            for a in arguments.flat_all:
                if "dropout" in a.name:
                    dropout = True
                    break
        return (
            dropout
            and "backward" not in name
            and self.func.name.name.base != "_cudnn_init_dropout_state"
        )

    @property
    def has_composite_kernel(self) -> bool:
        return (
            self.has_composite_implicit_autograd_kernel
            or self.has_composite_explicit_autograd_kernel
            or self.has_composite_explicit_autograd_non_functional_kernel
        )

    @cached
    def is_view_op(self) -> bool:
        """Returns an alias of an input, mutates only metadata, or has a wildcard alias."""
        func = self.func
        for r in func.returns:  # returns an alias
            if r.annotation is not None and not r.annotation.is_write:
                return True
        # resize_ and resize_as_ are tagged inplace_view but are treated as ordinary mutations.
        if "inplace_view" in self.tags and str(func.name) not in ("resize_", "resize_as_"):
            return True
        for a in func.arguments.flat_all:  # a wildcard alias, in schema order
            if a.annotation is not None and "*" in a.annotation.alias_set_after:
                return True
        return False

    @cached
    def view_schema_kind(self) -> ViewSchemaKind:
        if not self.is_view_op:
            return ViewSchemaKind.non_aliasing
        if self.func.name.name.inplace:
            assert "inplace_view" in self.tags, "checked by read_entry"
            return ViewSchemaKind.aliasing_inplace
        return ViewSchemaKind.aliasing

    @property
    def root_name(self) -> str:
        return self.func.name.name.base

    @property
    def part_of_structured_group(self) -> bool:
        return self.structured or self.structured_delegate is not None


_NO_LOCATIONS: Mapping[object, Location] = MappingProxyType({})
