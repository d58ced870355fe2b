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
from dataclasses import dataclass
from enum import Enum
from typing import TYPE_CHECKING, TypeAlias

from opgen.cached import cached

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


@dataclass(frozen=True, slots=True)
class BaseCType(CType):
    """A named type, spelled with its namespace: `at::Tensor`, `int64_t`."""

    name: str

    def cpp_type(self, *, strip_ref: bool = False) -> str:
        return self.name

    def remove_const_ref(self) -> CType:
        return self


@dataclass(frozen=True, slots=True)
class ConstRefCType(CType):
    elem: CType

    def cpp_type(self, *, strip_ref: bool = False) -> str:
        if strip_ref:
            return self.elem.cpp_type(strip_ref=True)
        return f"const {self.elem.cpp_type()} &"

    def remove_const_ref(self) -> CType:
        return self.elem.remove_const_ref()


@dataclass(frozen=True, slots=True)
class MutRefCType(CType):
    elem: CType

    def cpp_type(self, *, strip_ref: bool = False) -> str:
        if strip_ref:
            return self.elem.cpp_type(strip_ref=True)
        return f"{self.elem.cpp_type()} &"

    def remove_const_ref(self) -> CType:
        return self.elem.remove_const_ref()


@dataclass(frozen=True, slots=True)
class OptionalCType(CType):
    elem: CType

    def cpp_type(self, *, strip_ref: bool = False) -> str:
        return f"::std::optional<{self.elem.cpp_type()}>"

    def remove_const_ref(self) -> CType:
        return OptionalCType(self.elem.remove_const_ref())


@dataclass(frozen=True, slots=True)
class VectorCType(CType):
    elem: CType

    def cpp_type(self, *, strip_ref: bool = False) -> str:
        return f"::std::vector<{self.elem.cpp_type()}>"

    def remove_const_ref(self) -> CType:
        return VectorCType(self.elem.remove_const_ref())


@dataclass(frozen=True, slots=True)
class ArrayCType(CType):
    """`::std::array<T,N>`: fixed-size lists of bool (`bool[3]`)."""

    elem: CType
    size: int

    def cpp_type(self, *, strip_ref: bool = False) -> str:
        return f"::std::array<{self.elem.cpp_type()},{self.size}>"

    def remove_const_ref(self) -> CType:
        return ArrayCType(self.elem.remove_const_ref(), self.size)


@dataclass(frozen=True, slots=True)
class ArrayRefCType(CType):
    elem: CType

    def cpp_type(self, *, strip_ref: bool = False) -> str:
        return f"at::ArrayRef<{self.elem.cpp_type()}>"

    def remove_const_ref(self) -> CType:
        return ArrayRefCType(self.elem.remove_const_ref())


@dataclass(frozen=True, slots=True)
class ListCType(CType):
    """`c10::List<T>`: the boxed list type, used for `Tensor?[]`."""

    elem: CType

    def cpp_type(self, *, strip_ref: bool = False) -> str:
        return f"c10::List<{self.elem.cpp_type()}>"

    def remove_const_ref(self) -> CType:
        return ListCType(self.elem.remove_const_ref())


@dataclass(frozen=True, slots=True)
class TupleCType(CType):
    elems: tuple[CType, ...]

    def cpp_type(self, *, strip_ref: bool = False) -> str:
        return f"::std::tuple<{','.join(e.cpp_type() for e in self.elems)}>"

    def remove_const_ref(self) -> CType:
        return TupleCType(tuple(e.remove_const_ref() for e in self.elems))


@dataclass(frozen=True, slots=True)
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


@dataclass(frozen=True, slots=True)
class NamedCType:
    name: ArgName
    type: CType

    def cpp_type(self, *, strip_ref: bool = False) -> str:
        return self.type.cpp_type(strip_ref=strip_ref)

    def remove_const_ref(self) -> NamedCType:
        return NamedCType(self.name, self.type.remove_const_ref())

    def with_name(self, name: str) -> NamedCType:
        return NamedCType(name, self.type)


@dataclass(frozen=True)
class Binding:
    """One C++ parameter: `const at::Tensor & self`, `int64_t dim=-1`."""

    name: str
    nctype: NamedCType
    argument: Argument | TensorOptionsArguments | SelfArgument
    default: str | None = None

    @cached
    def type(self) -> str:
        return self.nctype.cpp_type()

    def decl(self, *, func_ptr_cast: bool = False) -> str:
        """The parameter in a declaration: with its default; only its type for a cast."""
        return self.type if func_ptr_cast else self.declaration

    def defn(self) -> str:
        """The parameter in a definition: never a default."""
        return self.definition

    @cached
    def declaration(self) -> str:
        if self.default is None:
            return self.definition
        return f"{self.definition}={self.default}"

    @cached
    def definition(self) -> str:
        return f"{self.type} {self.name}"

    def no_default(self) -> Binding:
        return Binding(self.name, self.nctype, self.argument, None)

    def with_name(self, name: str) -> Binding:
        return Binding(name, self.nctype, self.argument, self.default)


@dataclass(frozen=True, slots=True)
class Expr:
    """A C++ expression and the named type it has: what `translate` produces."""

    expr: str
    type: NamedCType


@dataclass(frozen=True, slots=True)
class ArgumentStyle:
    """How a function passes mutable tensors and tensor lists (see the module doc)."""

    const_ref_for_mutable_tensors: bool = False
    ilistref_for_tensor_lists: bool = False

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

    def __init__(self, bindings: tuple[Binding, ...]) -> None:
        self.bindings = bindings

    @cached
    def declared(self) -> str:
        """With defaults: `const at::Tensor & self, int64_t dim=-1`."""
        return ", ".join([b.declaration for b in self.bindings])

    @cached
    def defined(self) -> str:
        """Without defaults, as in a definition."""
        return ", ".join([b.definition for b in self.bindings])

    @cached
    def types(self) -> str:
        return ", ".join([b.type for b in self.bindings])


class Result:
    """What a signature returns, with its text rendered once."""

    __slots__ = ("ctype", "text")

    def __init__(self, ctype: CType) -> None:
        self.ctype = ctype
        self.text = ctype.cpp_type()


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


class BindingMemo:
    """The parameter lists one run has already derived, by convention and schema arguments.

    A spec repeats a few arguments thousands of times (`Tensor self`,
    `Scalar alpha=1`): torch's has 11,909 arguments but 1,129 distinct ones,
    and parsing shares one object among equal ones. Whole argument lists
    repeat too (3,101 functions, 1,612 distinct lists). Converting arguments is
    a pure function of the arguments and the convention, so a run converts
    each distinct argument once, and builds (and renders) each distinct list
    once.

    The memo belongs to whoever drives the run (see `signatures.SignatureSet`)
    and is passed explicitly; nothing here is global. Entries are found by
    object identity (`id`, the cheapest key) and keep their arguments alive,
    so an id can never be reused for another object while its entry exists.
    """

    __slots__ = ("_results", "_tables")

    def __init__(self) -> None:
        self._tables: dict[Hashable, _ConventionMemo] = {}
        self._results: dict[ArgumentStyle, dict[tuple[int, ...], tuple[object, Result]]] = {}

    def result(
        self,
        style: ArgumentStyle,
        returns: tuple[Return, ...],
        convert: Callable[..., CType],
    ) -> Result:
        """`convert(returns, style=style)`, rendered, once per distinct returns and style."""
        table = self._results.get(style)
        if table is None:
            table = self._results[style] = {}
        key = tuple([id(r) for r in returns])
        found = table.get(key)
        if found is None:  # the entry keeps the returns, and so their ids, alive
            found = table[key] = (returns, Result(convert(returns, style=style)))
        return found[1]

    def parameters(
        self,
        convention: Hashable,
        arguments: Iterable[SchemaArgument],
        convert: Callable[[SchemaArgument], list[Binding]],
    ) -> Parameters:
        """`convert` applied to each argument and concatenated, reusing earlier results.

        `convention` must identify everything `convert` depends on besides the argument.
        """
        table = self._tables.get(convention)
        if table is None:
            table = self._tables[convention] = _ConventionMemo()
        arguments = tuple(arguments)
        key = tuple([id(a) for a in arguments])
        found = table.lists.get(key)
        if found is not None:
            return found
        converted = table.arguments
        result: list[Binding] = []
        for a in arguments:
            entry = converted.get(id(a))
            if entry is None:
                entry = converted[id(a)] = (a, tuple(convert(a)))
            result.extend(entry[1])
        found = table.lists[key] = Parameters(tuple(result))
        return found


class _ConventionMemo:
    __slots__ = ("arguments", "lists")

    def __init__(self) -> None:
        self.arguments: dict[int, tuple[SchemaArgument, tuple[Binding, ...]]] = {}
        # Every id in a key is an argument kept alive by `arguments`.
        self.lists: dict[tuple[int, ...], Parameters] = {}
