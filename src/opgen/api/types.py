"""The C++ type model shared by every calling convention.

A `CType` is a C++ type built from a few constructors: a named base type
(`at::Tensor`, `int64_t`), references (`const T &`, `T &`), and the standard
and c10 containers. Types are values: equal types compare and hash equal, which
`translate` relies on to find an expression of a wanted type.

A `Binding` is one parameter of a generated C++ function: its name, its
`NamedCType`, the schema argument it comes from and its C++ default. A
`NamedCType` pairs a type with the name of the schema argument it stands for;
that pair, not the type alone, is what `translate` matches, since two `int64_t`
arguments are not interchangeable.

`ArgumentStyle` holds the two per-function choices torchgen keeps in
thread-local state: whether mutable tensors are passed as `const at::Tensor &`
(`use_const_ref_for_mutable_tensors: True` in the spec) and whether tensor
lists are passed as `const at::ITensorListRef &` (functions of a structured
group). Here they are an explicit argument.
"""

from __future__ import annotations

from collections.abc import Callable, Hashable, Iterable, Sequence
from enum import Enum
from typing import TYPE_CHECKING, Any, Concatenate, ParamSpec, TypeAlias, TypeVar

from opgen.cached import cached
from opgen.frozen import field, frozen

if TYPE_CHECKING:
    from opgen.spec.arguments import Argument, Return, SelfArgument, TensorOptionsArguments
    from opgen.spec.native import NativeFunction
    from opgen.spec.schema import FunctionSchema


class CType:
    """A C++ type. Subclasses are frozen dataclasses, so types are values."""

    __slots__ = ()

    def cpp_type(self, *, strip_ref: bool = False) -> str:
        raise NotImplementedError

    def remove_const_ref(self) -> CType:
        """The owning value type: references dropped, at every level."""
        raise NotImplementedError

    def __str__(self) -> str:
        return self.cpp_type()


@frozen(slots=True)
class BaseCType(CType):
    """A named type, spelled with its namespace: `at::Tensor`, `int64_t`."""

    name: str

    def cpp_type(self, *, strip_ref: bool = False) -> str:
        return self.name

    def remove_const_ref(self) -> CType:
        return self


@frozen(slots=True)
class ConstRefCType(CType):
    elem: CType

    def cpp_type(self, *, strip_ref: bool = False) -> str:
        if strip_ref:
            return self.elem.cpp_type(strip_ref=True)
        return f"const {self.elem.cpp_type()} &"

    def remove_const_ref(self) -> CType:
        return self.elem.remove_const_ref()


@frozen(slots=True)
class MutRefCType(CType):
    elem: CType

    def cpp_type(self, *, strip_ref: bool = False) -> str:
        if strip_ref:
            return self.elem.cpp_type(strip_ref=True)
        return f"{self.elem.cpp_type()} &"

    def remove_const_ref(self) -> CType:
        return self.elem.remove_const_ref()


@frozen(slots=True)
class OptionalCType(CType):
    elem: CType

    def cpp_type(self, *, strip_ref: bool = False) -> str:
        return f"::std::optional<{self.elem.cpp_type()}>"

    def remove_const_ref(self) -> CType:
        return OptionalCType(self.elem.remove_const_ref())


@frozen(slots=True)
class VectorCType(CType):
    elem: CType

    def cpp_type(self, *, strip_ref: bool = False) -> str:
        return f"::std::vector<{self.elem.cpp_type()}>"

    def remove_const_ref(self) -> CType:
        return VectorCType(self.elem.remove_const_ref())


@frozen(slots=True)
class ArrayCType(CType):
    """`::std::array<T,N>`: fixed-size lists of bool (`bool[3]`)."""

    elem: CType
    size: int

    def cpp_type(self, *, strip_ref: bool = False) -> str:
        return f"::std::array<{self.elem.cpp_type()},{self.size}>"

    def remove_const_ref(self) -> CType:
        return ArrayCType(self.elem.remove_const_ref(), self.size)


@frozen(slots=True)
class ArrayRefCType(CType):
    elem: CType

    def cpp_type(self, *, strip_ref: bool = False) -> str:
        return f"at::ArrayRef<{self.elem.cpp_type()}>"

    def remove_const_ref(self) -> CType:
        return ArrayRefCType(self.elem.remove_const_ref())


@frozen(slots=True)
class ListCType(CType):
    """`c10::List<T>`: the boxed list type, used for `Tensor?[]`."""

    elem: CType

    def cpp_type(self, *, strip_ref: bool = False) -> str:
        return f"c10::List<{self.elem.cpp_type()}>"

    def remove_const_ref(self) -> CType:
        return ListCType(self.elem.remove_const_ref())


@frozen(slots=True)
class TupleCType(CType):
    elems: tuple[CType, ...]

    def cpp_type(self, *, strip_ref: bool = False) -> str:
        return f"::std::tuple<{','.join(e.cpp_type() for e in self.elems)}>"

    def remove_const_ref(self) -> CType:
        return TupleCType(tuple(e.remove_const_ref() for e in self.elems))


@frozen(slots=True)
class VectorizedCType(CType):
    """`at::vec::Vectorized<T>`: the SIMD type of ufunc inner loops."""

    elem: BaseCType

    def cpp_type(self, *, strip_ref: bool = False) -> str:
        return f"at::vec::Vectorized<{self.elem.cpp_type()}>"

    def remove_const_ref(self) -> CType:
        return self


# -- named base types ----------------------------------------------------------------
# C10's integer and floating types, then ATen's. Each constant is the C++ spelling.

UINT8 = BaseCType("uint8_t")
INT8 = BaseCType("int8_t")
INT16 = BaseCType("int16_t")
INT32 = BaseCType("int32_t")
INT64 = BaseCType("int64_t")
DOUBLE = BaseCType("double")
FLOAT = BaseCType("float")
BOOL = BaseCType("bool")
VOID = BaseCType("void")

HALF = BaseCType("at::Half")
BFLOAT16 = BaseCType("at::BFloat16")
COMPLEX_HALF = BaseCType("c10::complex<c10::Half>")
COMPLEX_FLOAT = BaseCType("c10::complex<float>")
COMPLEX_DOUBLE = BaseCType("c10::complex<double>")
STRING_VIEW = BaseCType("c10::string_view")
GENERATOR = BaseCType("at::Generator")
SCALAR_TYPE = BaseCType("at::ScalarType")
TENSOR = BaseCType("at::Tensor")
OPTIONAL_TENSOR_REF = BaseCType("at::OptionalTensorRef")
TENSOR_LIST = BaseCType("at::TensorList")
I_TENSOR_LIST_REF = BaseCType("at::ITensorListRef")
I_OPT_TENSOR_LIST_REF = BaseCType("at::IOptTensorListRef")
DIM_VECTOR = BaseCType("at::DimVector")
DIMNAME = BaseCType("at::Dimname")
DIMNAME_LIST = BaseCType("at::DimnameList")
LAYOUT = BaseCType("at::Layout")
DEVICE = BaseCType("at::Device")
DEVICE_INDEX = BaseCType("at::DeviceIndex")
SCALAR = BaseCType("at::Scalar")
OPTIONAL_SCALAR_REF = BaseCType("at::OptionalScalarRef")
MEMORY_FORMAT = BaseCType("at::MemoryFormat")
QSCHEME = BaseCType("at::QScheme")
STORAGE = BaseCType("at::Storage")
STREAM = BaseCType("at::Stream")
INT_ARRAY_REF = BaseCType("at::IntArrayRef")
OPTIONAL_INT_ARRAY_REF = BaseCType("at::OptionalIntArrayRef")
OPTIONAL_SYM_INT_ARRAY_REF = BaseCType("at::OptionalSymIntArrayRef")
TENSOR_OPTIONS = BaseCType("at::TensorOptions")
TYPE_AND_SIZE = BaseCType("torch::autograd::generated::TypeAndSize")
TENSOR_GEOMETRY = BaseCType("at::TensorGeometry")
SYM_INT = BaseCType("c10::SymInt")
SYM_BOOL = BaseCType("c10::SymBool")
SYM_INT_ARRAY_REF = BaseCType("c10::SymIntArrayRef")
# The element types of ufunc inner loops.
SCALAR_T = BaseCType("scalar_t")
OPMATH_T = BaseCType("opmath_t")

CONST_TENSOR_REF = ConstRefCType(TENSOR)
MUT_TENSOR_REF = MutRefCType(TENSOR)
OPTIONAL_TENSOR = OptionalCType(TENSOR)
CONST_OPTIONAL_TENSOR_REF = ConstRefCType(OPTIONAL_TENSOR)
CONST_SCALAR_REF = ConstRefCType(SCALAR)
CONST_OPTIONAL_SCALAR_REF = ConstRefCType(OptionalCType(SCALAR))
CONST_OPTIONAL_TENSOR_LIST_REF = ConstRefCType(ListCType(OPTIONAL_TENSOR))


class SpecialArgName(Enum):
    """A name no schema argument can have, for values that are not plain arguments.

    `possibly_redundant_memory_format` is the `memory_format` of a function with
    TensorOptions: the C++ API may also carry one inside `options`, and
    `translate` must check the two agree.
    """

    possibly_redundant_memory_format = "possibly_redundant_memory_format"


ArgName = str | SpecialArgName


@frozen(slots=True)
class NamedCType:
    """A C++ type and the argument it stands for; `translate` matches the pair."""

    name: ArgName
    type: CType

    def with_name(self, name: str) -> NamedCType:
        return NamedCType(name, self.type)

    def remove_const_ref(self) -> NamedCType:
        """The same argument held by value: `const at::Tensor &` becomes `at::Tensor`."""
        return NamedCType(self.name, self.type.remove_const_ref())

    def cpp_type(self, *, strip_ref: bool = False) -> str:
        """The type's C++ text (the name is not part of it)."""
        return self.type.cpp_type(strip_ref=strip_ref)


@frozen
class Binding:
    """One C++ parameter: `const at::Tensor & self`, `int64_t dim=-1`."""

    name: str
    nctype: NamedCType
    argument: Argument | TensorOptionsArguments | SelfArgument
    default: str | None = None

    # Rendered in __post_init__, not on first use: a binding exists to be rendered,
    # and a run builds each distinct one once (`BindingMemo`). Fields rather than
    # `cached` attributes, because CPython 3.11 reads those slowly even once set.
    type: str = field(init=False, repr=False, compare=False)
    definition: str = field(init=False, repr=False, compare=False)  # `int64_t dim`
    declaration: str = field(init=False, repr=False, compare=False)  # `int64_t dim=-1`

    def __post_init__(self) -> None:
        values = self.__dict__
        values["type"] = type_text = self.nctype.type.cpp_type()
        values["definition"] = definition = f"{type_text} {self.name}"
        default = self.default
        values["declaration"] = definition if default is None else f"{definition}={default}"

    def decl(self, *, func_ptr_cast: bool = False) -> str:
        """The parameter in a declaration: with its default; only its type for a cast."""
        return self.type if func_ptr_cast else self.declaration

    def defn(self) -> str:
        """The parameter in a definition: never a default."""
        return self.definition

    def no_default(self) -> Binding:
        return Binding(self.name, self.nctype, self.argument, None)

    def with_name(self, name: str) -> Binding:
        return Binding(name, self.nctype, self.argument, self.default)


@frozen(slots=True)
class Expr:
    """A C++ expression and the named type it has: what `translate` produces."""

    expr: str
    type: NamedCType


@frozen(slots=True)
class ArgumentStyle:
    """How a function passes mutable tensors and tensor lists (see the module doc)."""

    const_ref_for_mutable_tensors: bool = False
    ilistref_for_tensor_lists: bool = False
    # A small int equal styles share: the memo keys use it, since hashing the
    # dataclass runs Python code on every lookup.
    key: int = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        key = 2 * self.const_ref_for_mutable_tensors + self.ilistref_for_tensor_lists
        object.__setattr__(self, "key", key)

    @staticmethod
    def of(f: NativeFunction) -> ArgumentStyle:
        return _STYLES[f.use_const_ref_for_mutable_tensors, f.part_of_structured_group]


_STYLES = {
    (const_ref, ilistref): ArgumentStyle(const_ref, ilistref)
    for const_ref in (False, True)
    for ilistref in (False, True)
}


SchemaArgument: TypeAlias = "Argument | TensorOptionsArguments | SelfArgument"


class Parameters:
    """A parameter list, rendered once however many signatures share it."""

    __slots__ = ("bindings", "declared", "defined")

    def __init__(self, bindings: tuple[Binding, ...]) -> None:
        # Rendered now: a run builds each distinct list once (`BindingMemo`), and
        # signatures render it (see `Binding.__post_init__`).
        self.bindings = bindings
        # With defaults: `const at::Tensor & self, int64_t dim=-1`.
        self.declared: str = ", ".join([b.declaration for b in bindings])
        # Without defaults, as in a definition.
        self.defined: str = ", ".join([b.definition for b in bindings])

    @property
    def types(self) -> str:
        """The types alone, as in a function type (rarely needed, so not kept)."""
        return ", ".join([b.type for b in self.bindings])


class Result:
    """What a signature returns, with its text rendered once."""

    __slots__ = ("ctype", "text")

    def __init__(self, ctype: CType) -> None:
        self.ctype = ctype
        self.text = ctype.cpp_type()


R = TypeVar("R", bound="RenderedParameters")


class RenderedParameters:
    """The text every convention's signature renders, each piece rendered once.

    Subclasses provide `func`, `style`, `memo`, `parameters` and
    `convert_returns` (the convention's returns-to-C++-type rule).
    """

    func: FunctionSchema
    style: ArgumentStyle
    memo: BindingMemo | None
    parameters: Parameters

    @staticmethod
    def convert_returns(rs: Sequence[Return], *, style: ArgumentStyle) -> CType:
        raise NotImplementedError

    @cached
    def result(self) -> Result:
        returns, style = self.func.returns, self.style
        if self.memo is None:
            return Result(self.convert_returns(returns, style=style))
        return self.memo.result(style, returns, self.convert_returns)

    def with_result(self: R, result: Result) -> R:
        """This signature, given the `result` it would compute (for the same returns,
        style and conversion), as a caller holding one for several signatures does."""
        self.__dict__["result"] = result
        return self

    @property
    def returns_ctype(self) -> CType:
        return self.result.ctype

    @property
    def returns_text(self) -> str:
        return self.result.text

    @property
    def bindings(self) -> tuple[Binding, ...]:
        return self.parameters.bindings

    def arguments(self) -> tuple[Binding, ...]:
        return self.parameters.bindings

    def returns_type(self) -> CType:
        return self.result.ctype

    @property
    def declared_parameters(self) -> str:
        """The parameters with their defaults: `const at::Tensor & self, int64_t dim=-1`."""
        return self.parameters.declared

    @property
    def defined_parameters(self) -> str:
        """The parameters without defaults, as in a definition."""
        return self.parameters.defined

    @property
    def parameter_types(self) -> str:
        return self.parameters.types

    def ptr_type(self) -> str:
        """The function pointer type: `at::Tensor (*)(const at::Tensor &, ...)`."""
        return f"{self.returns_text} (*)({self.parameter_types})"

    def type(self) -> str:
        """The function type: `at::Tensor (const at::Tensor &, ...)`."""
        return f"{self.returns_text} ({self.parameter_types})"


S = TypeVar("S")
T = TypeVar("T")
P = ParamSpec("P")


class BindingMemo:
    """What one run has already derived from its schema objects, by object and convention.

    A spec repeats a few arguments thousands of times (`Tensor self`,
    `Scalar alpha=1`): torch's has 11,909 arguments but 1,129 distinct ones,
    and parsing shares one object among equal ones. Whole argument lists
    repeat too: its 3,101 functions have 1,798 `Arguments` objects. Converting
    arguments is a pure function of the arguments and the convention, so a run
    converts each distinct argument once per convention (`parameters`) and
    builds, and renders, the parameters of each `Arguments` object once per
    convention (`derived`, which the Python layer also uses for its argument
    tuples); returns are converted once per returns and style (`result`).

    The memo belongs to whoever drives the run (see `signatures.SignatureSet`)
    and is passed explicitly; nothing here is global. Entries are found by
    object identity (`id`, the cheapest key) and keep their objects alive,
    so an id can never be reused for another object while its entry exists.
    """

    __slots__ = ("_by_elements", "_derived", "_results", "_tables")

    def __init__(self) -> None:
        # convention -> id(argument) -> (argument, its bindings)
        self._tables: dict[Hashable, dict[int, tuple[SchemaArgument, tuple[Binding, ...]]]] = {}
        # (id(source), convention) -> (source, value); the source keeps its id valid.
        self._derived: dict[tuple[int, Hashable], tuple[object, Any]] = {}
        # (id(returns), convert, style) -> (returns, result); and by the ids of the returns.
        self._results: dict[tuple[int, object, int], tuple[object, Result]] = {}
        self._by_elements: dict[tuple[tuple[int, ...], object, int], tuple[object, Result]] = {}

    def derived(
        self,
        source: S,
        convention: Hashable,
        derive: Callable[Concatenate[S, P], T],
        *args: P.args,
        **kwargs: P.kwargs,
    ) -> T:
        """`derive(source, *args, **kwargs)`, once per `source` object and `convention`.

        The value must depend only on the immutable `source` and on what
        `convention` identifies (so the other arguments must follow from those);
        different callers' conventions must differ. The extra arguments, rather
        than a closure, keep the usual case, a value found, cheap.
        """
        key = (id(source), convention)
        found = self._derived.get(key)
        if found is None:
            found = self._derived[key] = (source, derive(source, *args, **kwargs))
        value: T = found[1]
        return value

    def result(
        self,
        style: ArgumentStyle,
        returns: tuple[Return, ...],
        convert: Callable[..., CType],
    ) -> Result:
        """`convert(returns, style=style)`, rendered, once per distinct returns and style.

        Parsing shares returns tuples; derived schemas make new tuples of the same
        returns, so a new tuple is looked up by its elements before converting.
        """
        key = (id(returns), convert, style.key)
        found = self._results.get(key)
        if found is None:
            elements = (tuple([id(r) for r in returns]), convert, style.key)
            found = self._by_elements.get(elements)
            if found is None:
                found = self._by_elements[elements] = (
                    returns,
                    Result(convert(returns, style=style)),
                )
            self._results[key] = (returns, found[1])
        return found[1]

    def parameters(
        self,
        convention: Hashable,
        arguments: Iterable[SchemaArgument],
        convert: Callable[[SchemaArgument], Sequence[Binding]],
    ) -> Parameters:
        """`convert` applied to each argument and concatenated, reusing earlier results.

        `convention` must identify everything `convert` depends on besides the argument.
        """
        converted = self._tables.get(convention)
        if converted is None:
            converted = self._tables[convention] = {}
        result: list[Binding] = []
        for a in arguments:
            entry = converted.get(id(a))
            if entry is None:  # the entry keeps the argument, and so its id, alive
                entry = converted[id(a)] = (a, tuple(convert(a)))
            result += entry[1]
        return Parameters(tuple(result))
