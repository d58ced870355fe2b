"""The nanobind convention: how an MLX operator is declared in C++, bound, and typed.

An MLX extension operator is a C++ function in the library's namespace, and
nanobind binds that function as it is. The convention, per schema argument:
- the C++ parameter passes what is not a scalar by const reference
  (`const mlx::core::array& x`, `const std::vector<int>& axes`,
  `const std::optional<mlx::core::array>& bias`), scalars by value
  (`float eps`, `int axis`, `mlx::core::Dtype dtype`);
- the binding names every argument (`nb::arg("x")`), gives it the schema's
  default as a C++ value that nanobind converts to Python once, when the
  module is imported (`nb::arg("eps") = 1e-05`: a double, so Python sees
  exactly the spec's number; `nb::none()` for None), lets an optional array
  be None (`.none()`), and puts `nb::kw_only()` before the first
  keyword-only argument;
- C++ defaults (`float eps = 1e-05f`) are given only to the trailing run of
  arguments that all have one, since C++ has no keyword arguments;
- every operator ends with MLX's stream: `mlx::core::StreamOrDevice s = {}`
  in C++, the keyword-only `stream` (default None) in Python.
Returns are `mlx::core::array`, `std::vector<mlx::core::array>` (`Tensor[]`)
or `std::tuple<mlx::core::array, ...>` (several `Tensor`s).

The stub convention types arguments as nanobind accepts them: `array`,
`array | None`, `Sequence[array]` for a list of arrays, `Sequence[int]` for
shapes and axes, `Dtype`, `StreamOrDevice`; lists come back as `list[array]`.
Stub defaults are Python literals where the spec's default is one (numbers,
booleans, strings, None), else `...`.

Every function here is pure; a type or default without MLX meaning raises
`NanobindTypeError` (the spec reader rejects those earlier, with a location).
"""

from __future__ import annotations

import enum
import re
from fractions import Fraction
from struct import pack, unpack

from opgen.api.cpp_literals import cpp_string
from opgen.frozen import frozen
from opgen.spec.arguments import Argument, Return
from opgen.spec.mlx.operators import CPP_KEYWORDS
from opgen.spec.mlx.type_mapping import DTYPE_NAMES
from opgen.spec.schema import FunctionSchema
from opgen.spec.types import BaseTy, BaseType, ListType, OptionalType, Type

ARRAY = "mlx::core::array"
STREAM_PARAMETER = "mlx::core::StreamOrDevice s"
STREAM_BINDING = 'nb::arg("stream") = nb::none()'
STREAM_STUB = "stream: StreamOrDevice = None"
# Names a parameter may not take: the stream's, and C++ keywords.
RESERVED = frozenset({"s", "stream", *CPP_KEYWORDS})
_INTEGER = re.compile(r"-?\d+\Z")
_FLOAT = re.compile(r"-?(\d+\.?\d*|\.\d+)([eE][-+]?\d+)?\Z")


class NanobindTypeError(ValueError):
    """A schema type, default or name with no meaning in the MLX convention."""


class ArrayKind(enum.Enum):
    """How an argument holds arrays: one, one or None, or a list of them."""

    ONE = "one"
    OPTIONAL = "optional"
    LIST = "list"


@frozen
class NbType:
    parameter: str  # the C++ parameter type
    value: str  # the C++ type that holds the value (captures, members)
    stub: str  # the Python type in the stub
    array: ArrayKind | None  # None: not an array argument
    stub_imports: frozenset[str] = frozenset()  # names the stub type needs imported


@frozen
class NbArgument:
    name: str
    type: NbType
    kw_only: bool
    cpp_default: str | None  # the C++ default expression; None: none
    binding_default: str | None  # the value given to `nb::arg(...) =`
    stub_default: str | None  # the Python default in the stub

    @property
    def parameter(self) -> str:
        return f"{self.type.parameter} {self.name}"

    @property
    def binding(self) -> str:
        arg = f'nb::arg("{self.name}")'
        if self.type.array is ArrayKind.OPTIONAL:
            arg += ".none()"
        return arg if self.binding_default is None else f"{arg} = {self.binding_default}"

    @property
    def stub(self) -> str:
        text = f"{self.name}: {self.type.stub}"
        return text if self.stub_default is None else f"{text} = {self.stub_default}"


@frozen
class NbSignature:
    """An operator's C++ function, binding and stub, derived from its schema."""

    arguments: tuple[NbArgument, ...]
    returns: str  # the C++ return type
    returns_stub: str
    outputs: int | None  # the number of arrays returned; None: a list

    @property
    def arrays(self) -> tuple[NbArgument, ...]:
        return tuple(a for a in self.arguments if a.type.array is not None)

    @property
    def values(self) -> tuple[NbArgument, ...]:
        """The arguments that are not arrays: captured, or stored in a Primitive."""
        return tuple(a for a in self.arguments if a.type.array is None)

    def parameters(self, *, defaults: bool, stream: bool = True) -> list[str]:
        """The C++ parameters, with C++ defaults or without, and the stream last."""
        params = [
            f"{a.parameter} = {a.cpp_default}" if defaults and a.cpp_default else a.parameter
            for a in self.arguments
        ]
        if stream:
            params.append(STREAM_PARAMETER + (" = {}" if defaults else ""))
        return params

    def bindings(self) -> list[str]:
        """The `nb::arg` annotations of `m.def`, `stream` last."""
        out: list[str] = []
        for a in self.arguments:
            if a.kw_only and not out.count("nb::kw_only()"):
                out.append("nb::kw_only()")
            out.append(a.binding)
        if not out.count("nb::kw_only()"):
            out.append("nb::kw_only()")
        out.append(STREAM_BINDING)
        return out

    def stub(self, name: str) -> str:
        """The stub's `def` line, without the colon and body."""
        params: list[str] = []
        for a in self.arguments:
            if a.kw_only and "*" not in params:
                params.append("*")
            params.append(a.stub)
        if "*" not in params:
            params.append("*")
        params.append(STREAM_STUB)
        return f"def {name}({', '.join(params)}) -> {self.returns_stub}"

    def names(self) -> list[str]:
        return [a.name for a in self.arguments]

    def stub_imports(self) -> frozenset[str]:
        """The names the stub's `def` uses, to import."""
        names = {"array", "StreamOrDevice"}  # every operator returns arrays, takes a stream
        for a in self.arguments:
            names |= a.type.stub_imports
        return frozenset(names)


def signature(func: FunctionSchema) -> NbSignature:
    """The nanobind convention of an operator's schema."""
    args = func.arguments
    if args.out:
        raise NanobindTypeError(f"{func.name}: MLX operators have no out= arguments")
    positional = [(a, False) for a in args.flat_positional]
    keyword = [(a, True) for a in args.flat_kwarg_only]
    converted = [_argument(a, kw_only) for a, kw_only in positional + keyword]
    # C++ defaults: only the trailing arguments that all have one.
    trailing = len(converted)
    while trailing > 0 and converted[trailing - 1].cpp_default is not None:
        trailing -= 1
    arguments = tuple(
        a if i >= trailing else _without_cpp_default(a) for i, a in enumerate(converted)
    )
    returns, returns_stub, outputs = _returns(func.returns)
    return NbSignature(arguments, returns, returns_stub, outputs)


def _without_cpp_default(a: NbArgument) -> NbArgument:
    if a.cpp_default is None:
        return a
    return NbArgument(a.name, a.type, a.kw_only, None, a.binding_default, a.stub_default)


def _argument(a: Argument, kw_only: bool) -> NbArgument:
    if a.name in RESERVED:
        raise NanobindTypeError(f"argument '{a.name}': the name is reserved in the MLX convention")
    if a.annotation is not None:
        raise NanobindTypeError(f"argument '{a}': MLX arrays are values; no alias annotations")
    t = nb_type(a.type)
    if a.default is None:
        return NbArgument(a.name, t, kw_only, None, None, None)
    cpp, binding, stub = default_values(a.default, a.type)
    return NbArgument(a.name, t, kw_only, cpp, binding, stub)


# -- types -------------------------------------------------------------------------

_SCALARS = {
    BaseTy.int: ("int", "int"),
    BaseTy.SymInt: ("int", "int"),
    BaseTy.float: ("float", "float"),
    BaseTy.bool: ("bool", "bool"),
    BaseTy.str: ("std::string", "str"),
    BaseTy.ScalarType: ("mlx::core::Dtype", "Dtype"),
}
# Shapes and axes, both `std::vector<int>` (MLX's `Shape` is built from its iterators).
_LIST_ELEMENTS = {
    BaseTy.int: ("int", "int"),
    BaseTy.SymInt: ("int", "int"),
}
_BY_VALUE = frozenset({"int", "float", "bool", "mlx::core::Dtype"})
_ARRAY_IMPORT = frozenset({"array"})
_SEQUENCE_IMPORT = frozenset({"Sequence"})


def nb_type(t: Type) -> NbType:
    """The C++ and Python types of a schema type; NanobindTypeError if it has none."""
    if isinstance(t, OptionalType):
        inner = nb_type(t.elem)
        if inner.array is ArrayKind.LIST or isinstance(t.elem, OptionalType):
            raise NanobindTypeError(f"type '{t}' has no MLX meaning")
        if inner.array is ArrayKind.ONE:
            value = f"std::optional<{ARRAY}>"
            return NbType(
                f"const {value}&", value, "array | None", ArrayKind.OPTIONAL, _ARRAY_IMPORT
            )
        value = f"std::optional<{inner.value}>"
        parameter = value if inner.value in _BY_VALUE else f"const {value}&"
        return NbType(parameter, value, f"{inner.stub} | None", None, inner.stub_imports)
    if isinstance(t, ListType):
        elem = t.elem
        if isinstance(elem, BaseType) and elem.name is BaseTy.Tensor:
            value = f"std::vector<{ARRAY}>"
            imports = frozenset({"array", "Sequence"})
            return NbType(f"const {value}&", value, "Sequence[array]", ArrayKind.LIST, imports)
        if isinstance(elem, BaseType) and elem.name in _LIST_ELEMENTS:
            cpp, py = _LIST_ELEMENTS[elem.name]
            value = f"std::vector<{cpp}>"
            return NbType(f"const {value}&", value, f"Sequence[{py}]", None, _SEQUENCE_IMPORT)
        raise NanobindTypeError(f"type '{t}' has no MLX meaning")
    if isinstance(t, BaseType):
        if t.name is BaseTy.Tensor:
            return NbType(f"const {ARRAY}&", ARRAY, "array", ArrayKind.ONE, _ARRAY_IMPORT)
        if t.name in _SCALARS:
            cpp, py = _SCALARS[t.name]
            parameter = cpp if cpp in _BY_VALUE else f"const {cpp}&"
            imports = frozenset({py}) if py == "Dtype" else frozenset()
            return NbType(parameter, cpp, py, None, imports)
    raise NanobindTypeError(f"type '{t}' has no MLX meaning")


def _returns(returns: tuple[Return, ...]) -> tuple[str, str, int | None]:
    """The C++ and stub return types, and how many arrays (None: a list)."""
    types = [str(r.type) for r in returns]
    if types == ["Tensor[]"]:
        return f"std::vector<{ARRAY}>", "list[array]", None
    if not types or any(t != "Tensor" for t in types) or any(r.annotation for r in returns):
        shown = ", ".join(types) or "()"
        raise NanobindTypeError(
            f"returns '{shown}': an MLX operator returns one array, several, or 'Tensor[]'"
        )
    if len(types) == 1:
        return ARRAY, "array", 1
    cpp = ", ".join([ARRAY] * len(types))
    stub = ", ".join(["array"] * len(types))
    return f"std::tuple<{cpp}>", f"tuple[{stub}]", len(types)


# -- defaults ------------------------------------------------------------------------


def default_values(d: str, t: Type) -> tuple[str, str, str]:
    """Schema default `d` of type `t`: its C++ default, nanobind default and stub default."""
    if d == "None":
        if not isinstance(t, OptionalType):
            raise NanobindTypeError(f"default None for type '{t}', which is not optional")
        return "std::nullopt", "nb::none()", "None"
    base = t.elem if isinstance(t, OptionalType) else t
    if isinstance(base, ListType):
        return _list_default(d, base)
    if isinstance(base, BaseType):
        return _scalar_default(d, base.name)
    raise NanobindTypeError(f"default '{d}' for type '{t}' has no MLX meaning")


def _scalar_default(d: str, ty: BaseTy) -> tuple[str, str, str]:
    if ty is BaseTy.bool and d in ("True", "False"):
        return d.lower(), d.lower(), d
    if ty in (BaseTy.int, BaseTy.SymInt) and _INTEGER.match(d):
        return d, d, d
    if ty is BaseTy.float and (_FLOAT.match(d) or d in ("inf", "-inf", "nan")):
        return float32_literal(d), float64_literal(d), _stub_float(d)
    if ty is BaseTy.str and len(d) >= 2 and d[0] == d[-1] and d[0] in "'\"":
        text = d[1:-1].replace("\\'", "'").replace('\\"', '"').replace("\\\\", "\\")
        literal = cpp_string(text)
        return literal, literal, repr(text)
    if ty is BaseTy.ScalarType and d in DTYPE_NAMES:
        return f"mlx::core::{d}", f"mlx::core::{d}", "..."
    raise NanobindTypeError(f"default '{d}' has no MLX meaning for type '{ty.value}'")


def _list_default(d: str, t: ListType) -> tuple[str, str, str]:
    elem = t.elem
    if not isinstance(elem, BaseType) or elem.name not in _LIST_ELEMENTS:
        raise NanobindTypeError(f"default '{d}' for type '{t}' has no MLX meaning")
    if d.startswith("[") and d.endswith("]"):
        items = [i.strip() for i in d[1:-1].split(",")] if d[1:-1].strip() else []
    else:
        raise NanobindTypeError(f"a list default is written '[...]', not '{d}'")
    cpp_values = [_scalar_default(i, elem.name) for i in items]
    value = f"std::vector<{_LIST_ELEMENTS[elem.name][0]}>"
    cpp = f"{value}{{{', '.join(c for c, _, _ in cpp_values)}}}"
    binding = f"{value}{{{', '.join(b for _, b, _ in cpp_values)}}}"
    return cpp, binding, "..."


def float64_literal(d: str) -> str:
    """A spec number as a C++ double: the value Python reads from the same text."""
    if d in ("inf", "-inf"):
        return f"{d[:-3]}std::numeric_limits<double>::infinity()"
    if d == "nan":
        return "std::numeric_limits<double>::quiet_NaN()"
    return f"{d}.0" if _INTEGER.match(d) else d


def float32_literal(d: str) -> str:
    """A spec number as a C++ float equal to what a Python call passes.

    Python passes a double that nanobind rounds to float. The float literal
    (`1e-05f`) rounds the decimal once; where double rounding gives another
    float, the double literal is converted instead, so both agree exactly.
    """
    if d in ("inf", "-inf"):
        return f"{d[:-3]}std::numeric_limits<float>::infinity()"
    if d == "nan":
        return "std::numeric_limits<float>::quiet_NaN()"
    literal = f"{d}.0f" if _INTEGER.match(d) else f"{d}f"
    try:
        double_rounded = _to_float32(float(d))
    except OverflowError:
        raise NanobindTypeError(f"default '{d}' is out of the range of float") from None
    if _nearest_float32(Fraction(d)) != double_rounded:
        return f"static_cast<float>({float64_literal(d)})"
    return literal


def _to_float32(x: float) -> float:
    value: float = unpack("<f", pack("<f", x))[0]
    return value


def _nearest_float32(exact: Fraction) -> float:
    """The float32 nearest to `exact`, ties to even (what a C++ `f` literal means)."""
    guess = _to_float32(float(exact))
    bits: int = unpack("<I", pack("<f", guess))[0]
    candidates = [guess]
    for step in (-1, 1):
        neighbour = bits + step
        if 0 <= neighbour < 1 << 32:
            candidates.append(unpack("<f", pack("<I", neighbour))[0])
    finite = [c for c in candidates if c == c and abs(c) != float("inf")]
    return min(finite, key=lambda c: (abs(Fraction(c) - exact), _odd(c)))


def _odd(x: float) -> int:
    bits: int = unpack("<I", pack("<f", x))[0]
    return bits & 1


def _stub_float(d: str) -> str:
    if d in ("inf", "-inf", "nan"):
        return "..."
    return repr(float(d))
