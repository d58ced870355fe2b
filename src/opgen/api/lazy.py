"""The lazy-tensor IR convention: how an operator's arguments live in an IR node.

A lazy-tensor backend does not compute: each operator call builds an IR node,
and the node keeps its operands in one of two ways:
- *values* are the edges of the graph, objects of the backend's IR value class
  (`torch::lazy::Value` for TorchScript's backend, passed explicitly here as
  the value type: it differs between backends). Tensors are values; so are
  Scalars (wrapped into a constant node, unless the node treats them as
  constants) and, when the kernel is SymInt-aware, SymInts. A `Tensor[]` is one
  `torch::lazy::Value` whatever the backend's value class, so with another
  class a tensor list is stored as a constant;
- everything else is a *scalar*, a constant the node owns: C++ value types
  rather than the references of the dispatcher API (`::std::vector<int64_t>`
  for `int[]`, `c10::string_view` for `str`). A `SymInt[]` is always a vector
  of `int64_t`.

`Tensor?[]` becomes a list of optional values; `Generator` arguments are kept
as scalars (the IR cannot lower them, but shape functions and fallbacks see
them). Types with no lazy form (`Stream`, `QScheme`, `Storage`, `Dimname`, ...)
make the operator unsupported (`UnsupportedLazyOperator`).

A node also has *properties*, chosen per node class: how its shape is found
(precomputed by the kernel, computed in the constructor, or computed on demand
through the shape cache), whether its `Lower`, `CanBeReused` and `Create`
methods are generated, declared only, or left out, and whether Scalars are
constants. Each group of properties allows one choice (`PROPERTY_GROUPS`).

`LazyIrSchema` is an operator's schema in this convention: its arguments as
`LazyArgument`s, positional ones (self included) then keyword ones (the
TensorOptions spread out, the out arguments last), and the node's class name.
"""

from __future__ import annotations

from collections.abc import Iterable

from opgen.api.types import (
    BOOL,
    DEVICE,
    DOUBLE,
    GENERATOR,
    INT64,
    LAYOUT,
    MEMORY_FORMAT,
    SCALAR,
    SCALAR_TYPE,
    STRING_VIEW,
    BaseCType,
    CType,
    ListCType,
    OptionalCType,
    VectorCType,
)
from opgen.cached import cached
from opgen.frozen import frozen
from opgen.spec.arguments import Argument
from opgen.spec.schema import FunctionSchema, OperatorName
from opgen.spec.types import BaseTy, BaseType, ListType, OptionalType, Type


class UnsupportedLazyOperator(ValueError):
    """An operator the lazy-tensor code generator cannot express."""


# -- properties ----------------------------------------------------------------------

# Each group allows one choice: choosing a property drops the others of its group.
PROPERTY_GROUPS: tuple[tuple[str, ...], ...] = (
    # How the node's shape is known: given to the constructor, computed by it, or
    # computed on first use through the shape cache.
    ("ShapePrecompute", "ShapeCompute", "ShapeCache"),
    # The TorchScript `Lower` method: generated, or only declared.
    ("Lower", "LowerDeclOnly"),
    ("CanBeReused", "CanBeReusedDeclOnly"),
    # The static `Create` method.
    ("CreateFn", "CreateFnDeclOnly"),
    # Scalars are constants of the node rather than values.
    ("TreatScalarsAsConstants",),
)

# The property names a backend YAML may list.
LAZY_IR_PROPERTIES: frozenset[str] = frozenset(p for group in PROPERTY_GROUPS for p in group)


@frozen
class LazyIrProperties:
    """The properties chosen for a node class; `name in properties` asks for one."""

    chosen: frozenset[str] = frozenset()

    @staticmethod
    def of(*names: str) -> LazyIrProperties:
        """The properties `names`, chosen in order (a later one wins within its group)."""
        properties = LazyIrProperties()
        for name in names:
            properties = properties.with_property(name)
        return properties

    def with_property(self, name: str) -> LazyIrProperties:
        group = _group_of(name)
        return LazyIrProperties(self.chosen.difference(group) | {name})

    def __contains__(self, name: object) -> bool:
        return name in self.chosen


def _group_of(name: str) -> tuple[str, ...]:
    for group in PROPERTY_GROUPS:
        if name in group:
            return group
    known = ", ".join(sorted(LAZY_IR_PROPERTIES))
    raise ValueError(f"unknown lazy IR property '{name}' (known: {known})")


# The nodes of native operators: the kernel computes their shapes.
NATIVE_PROPERTIES = LazyIrProperties.of("ShapePrecompute", "Lower", "CanBeReused")
# The nodes of a backend's `non_native:` entries, before the properties they list.
NON_NATIVE_PROPERTIES = LazyIrProperties.of("ShapeCache", "CanBeReused", "LowerDeclOnly")


# -- types ---------------------------------------------------------------------------

# What a `Tensor[]` becomes, whatever the backend's value class.
TENSOR_LIST_VALUE = BaseCType("torch::lazy::Value")

# Types that are scalars of the node, stored as they are.
_SCALAR_TYPES: dict[BaseTy, CType] = {
    BaseTy.ScalarType: SCALAR_TYPE,
    BaseTy.int: INT64,
    BaseTy.bool: BOOL,
    BaseTy.float: DOUBLE,
    BaseTy.str: STRING_VIEW,
    BaseTy.Device: DEVICE,
    BaseTy.Generator: GENERATOR,
    BaseTy.Layout: LAYOUT,
    BaseTy.MemoryFormat: MEMORY_FORMAT,
}


def value_type(value_class: str) -> BaseCType:
    """The C++ type of a value class written `ns::Class` (a leading `::` is dropped)."""
    namespace, _, name = value_class.rpartition("::")
    return BaseCType(f"{namespace}::{name}" if namespace else name)


def lazy_type(
    t: Type, value: BaseCType, *, scalars_as_constants: bool, symint: bool
) -> CType | None:
    """The C++ type an IR node stores for an argument of type `t`; None if it has none."""
    if isinstance(t, BaseType):
        name = t.name
        if name is BaseTy.Tensor:
            return value
        if name is BaseTy.Scalar:
            return SCALAR if scalars_as_constants else value
        if name is BaseTy.SymInt:
            return value if symint else INT64
        return _SCALAR_TYPES.get(name)
    if not isinstance(t, OptionalType | ListType):
        return None  # a custom class
    if isinstance(t, ListType):
        elem_text = str(t.elem)
        if elem_text == "Tensor?":
            return ListCType(OptionalCType(value))
        if elem_text == "Tensor":
            return TENSOR_LIST_VALUE
        if elem_text == "SymInt":  # no list of values: the sizes are constants
            return VectorCType(INT64)
    elem = lazy_type(t.elem, value, scalars_as_constants=scalars_as_constants, symint=symint)
    if elem is None:
        return None
    return OptionalCType(elem) if isinstance(t, OptionalType) else VectorCType(elem)


def holds_value(ctype: CType, value: BaseCType) -> bool:
    """Whether a lazy type is, or contains, the value type.

    (A Scalar that is not a value is a constant of the node: `at::Scalar` is never
    an operand.)
    """
    if isinstance(ctype, BaseCType):
        return ctype == value
    if isinstance(ctype, OptionalCType | ListCType | VectorCType):
        return holds_value(ctype.elem, value)
    return False


def _is_base(t: Type, base: BaseTy, *, through_lists: bool) -> bool:
    """Whether `t` is `base`, looking through `?` (and `[]` if `through_lists`)."""
    while isinstance(t, OptionalType) or (through_lists and isinstance(t, ListType)):
        t = t.elem
    return isinstance(t, BaseType) and t.name is base


# -- arguments and schemas -----------------------------------------------------------


@frozen
class LazyArgument:
    name: str
    type: Type  # the schema type
    lazy_type: CType
    symint: bool  # the node's SymInts are values
    is_lazy_value: bool  # the type is, or holds, an IR value
    is_wrapped_scalar: bool  # a Scalar (or list or optional of them), made a value
    is_generator: bool  # Generator or Generator?
    is_symint_or_list: bool  # a SymInt (or SymInt?) that is a value; never a list
    is_tensor_list: bool  # a `Tensor[]`: one `torch::lazy::Value`

    @staticmethod
    def of(
        a: Argument, value: BaseCType, properties: LazyIrProperties, *, symint: bool
    ) -> LazyArgument:
        t = a.type
        ctype = lazy_type(
            t,
            value,
            scalars_as_constants="TreatScalarsAsConstants" in properties,
            symint=symint,
        )
        if ctype is None:
            raise UnsupportedLazyOperator(
                f"argument '{a.name}' has type '{t}', which the lazy IR cannot hold"
            )
        return LazyArgument(
            name=a.name,
            type=t,
            lazy_type=ctype,
            symint=symint,
            is_lazy_value=holds_value(ctype, value),
            is_wrapped_scalar=_is_base(t, BaseTy.Scalar, through_lists=True),
            is_generator=_is_base(t, BaseTy.Generator, through_lists=False),
            is_symint_or_list=symint and _is_base(t, BaseTy.SymInt, through_lists=False),
            is_tensor_list=isinstance(t, ListType) and str(t.elem) == "Tensor",
        )

    @property
    def is_optional(self) -> bool:
        return isinstance(self.type, OptionalType)


@frozen
class LazyIrSchema:
    """An operator's schema in the lazy IR convention (see the module doc)."""

    func: FunctionSchema
    properties: LazyIrProperties
    symint: bool  # SymInts are values (the kernel is SymInt-aware)
    value: BaseCType  # the backend's IR value type
    positional_args: tuple[LazyArgument, ...]
    keyword_args: tuple[LazyArgument, ...]  # TensorOptions spread out, out arguments last
    opkind: str | None = None  # the node's OpKind, when not `at::aten::<name>`

    @staticmethod
    def of(
        func: FunctionSchema,
        value: BaseCType,
        properties: LazyIrProperties = NATIVE_PROPERTIES,
        *,
        symint: bool,
        opkind: str | None = None,
    ) -> LazyIrSchema:
        args = func.arguments
        keyword = (*args.flat_kwarg_only, *args.out)
        generators = [
            a.name for a in keyword if _is_base(a.type, BaseTy.Generator, through_lists=False)
        ]
        if len(generators) > 1:
            raise UnsupportedLazyOperator(
                f"'{func.name}' has more than one keyword Generator argument "
                f"({', '.join(generators)}); the lazy IR supports one"
            )

        def convert(arguments: Iterable[Argument]) -> tuple[LazyArgument, ...]:
            return tuple(LazyArgument.of(a, value, properties, symint=symint) for a in arguments)

        return LazyIrSchema(
            func,
            properties,
            symint,
            value,
            convert(args.flat_positional),
            convert(keyword),
            opkind,
        )

    @property
    def name(self) -> OperatorName:
        return self.func.name

    @property
    def returns_count(self) -> int:
        return len(self.func.returns)

    @cached
    def node_name(self) -> str:
        """The node's class: the name and overload in camel case (`add.Tensor`: `AddTensor`)."""
        name = self.func.name
        words = f"{name.name}_{name.overload_name}".lower().split("_")
        return "".join(word.capitalize() for word in words)

    @property
    def aten_name(self) -> str:
        """The operator's name without overload: `add_` for `add_.Tensor`."""
        return str(self.func.name.name)

    @property
    def base_name(self) -> str:
        return self.func.name.name.base

    def filtered_args(
        self,
        *,
        values: bool = True,
        scalars: bool = True,
        generator: bool = True,
        positional: bool = True,
        keyword: bool = True,
    ) -> list[LazyArgument]:
        """The arguments, in order, of the kinds asked for.

        `values` and `scalars` select IR values and the node's constants;
        `generator` (only meaningful with `values` and `scalars` both, or with
        `scalars` alone) keeps Generator arguments, which the IR cannot lower.
        """
        args: list[LazyArgument] = []
        if positional:
            args += self.positional_args
        if keyword:
            args += self.keyword_args
        if values and scalars:
            return args if generator else [a for a in args if not a.is_generator]
        if values:
            return [a for a in args if a.is_lazy_value]
        if scalars:
            return [a for a in args if not a.is_lazy_value and (generator or not a.is_generator)]
        return []

    @property
    def positional_values(self) -> list[LazyArgument]:
        return self.filtered_args(keyword=False, scalars=False)

    @property
    def positional_scalars(self) -> list[LazyArgument]:
        return self.filtered_args(keyword=False, values=False)

    @property
    def keyword_values(self) -> list[LazyArgument]:
        return self.filtered_args(positional=False, scalars=False)

    @property
    def keyword_scalars(self) -> list[LazyArgument]:
        return self.filtered_args(positional=False, values=False)

    @property
    def values(self) -> list[LazyArgument]:
        return self.filtered_args(scalars=False)

    @property
    def scalars(self) -> list[LazyArgument]:
        """The node's constants, Generators included."""
        return self.filtered_args(values=False)
