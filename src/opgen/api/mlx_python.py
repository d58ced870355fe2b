"""MLX's Python convention for bound functions: how a Python parameter reaches C++.

A bound function (`spec.mlx.mlx_dialect`, `spec.mlx.spec_language`) is one
nanobind lambda per overload. Each Python parameter becomes a lambda parameter
that nanobind converts, and, for the types MLX converts itself, a value the
call uses:

    type               lambda parameter                                  value
    array              const mlx::core::array& x                          x
    scalar | array     const opgen_mlx::ScalarOrArray& x_py               const mlx::core::array& x
                       (the mlx array given, or the array x_array holds, converted)
    scalar             opgen_mlx::Scalar x (a number, and whether it was an int or a bool;
                       it converts to double)                             x
    int, float, bool   int x, double x, bool x                            x
    uint64             std::uint64_t x (0 to 2**64 - 1, as MLX's seeds)     x
    str, Dtype         const std::string& x, mlx::core::Dtype x           x
    Shape              const std::vector<std::int64_t>& x_py              mlx::core::Shape x
    int | Shape        const std::variant<std::int64_t, std::vector<std::int64_t>>& x_py
                                                                          mlx::core::Shape x
    Sequence[int]      const std::vector<int>& x                          x
    Sequence[array]    const std::vector<mlx::core::array>& x             x
    Index              const opgen_mlx::Index& x (any object, None too)    x
    tuple[int, int]    const std::pair<int, int>& x                       x
    *x                 const nb::args& x_py                               std::vector<array> x
    *x: int            const nb::args& x_py (ints, or one sequence of them) std::vector<int> x
    A | B              const std::variant<A, B>& x (tried in that order)  x
    T | None           std::optional<T> (by value for scalars, else by const reference)
    stream             mlx::core::StreamOrDevice s                        s
                       (`stream` where a parameter is named `s`)

A `scalar | array` converts as MLX's bindings convert one (`opgen_mlx::to_array`);
those listed in `promote:` take the dtype of the first of them that is an mlx
array (MLX's weak scalars: `add(a_f16, 1.0)` stays float16). Shapes are
checked into MLX's 32-bit dimensions (OverflowError naming the value).
Nothing else is converted: a parameter nanobind can pass as the C++ function
takes it is passed so.

Defaults are given to nanobind as Python objects, once, when the module is
imported; `nb::sig` shows the signature as the spec writes it.
"""

from __future__ import annotations

import math

from opgen.api.cpp_literals import cpp_string
from opgen.frozen import frozen
from opgen.spec.mlx.model import (
    BoundAs,
    BoundOverload,
    MlxFunction,
    ParameterKind,
    PyParameter,
)
from opgen.spec.mlx.python_types import Leaf, PyDefault, PyType, dtype_name

ARRAY = "mlx::core::array"
SUFFIX = "_py"  # the lambda parameter of a value the binding converts
_VALUE_TYPES = {
    Leaf.ARRAY: ARRAY,
    Leaf.ARRAY_LIKE: "opgen_mlx::ScalarOrArray",
    Leaf.SCALAR: "opgen_mlx::Scalar",
    Leaf.INT: "int",
    Leaf.UINT64: "std::uint64_t",
    Leaf.FLOAT: "double",
    Leaf.BOOL: "bool",
    Leaf.STR: "std::string",
    Leaf.DTYPE: "mlx::core::Dtype",
    Leaf.SHAPE: "std::vector<std::int64_t>",
    Leaf.INT_OR_SHAPE: "std::variant<std::int64_t, std::vector<std::int64_t>>",
    Leaf.INT_LIST: "std::vector<int>",
    Leaf.ARRAY_LIST: f"std::vector<{ARRAY}>",
    Leaf.INT_PAIR: "std::pair<int, int>",
    Leaf.INT_TRIPLE: "std::tuple<int, int, int>",
    Leaf.INT_PAIR_LIST: "std::vector<std::pair<int, int>>",
    Leaf.INT_LIST_LIST: "std::vector<std::vector<int>>",
    Leaf.STREAM: "mlx::core::StreamOrDevice",
    Leaf.INDEX: "opgen_mlx::Index",
}
# The types the binding converts, and what they become.
_CONVERTED = {
    Leaf.ARRAY_LIKE: ARRAY,
    Leaf.SHAPE: "mlx::core::Shape",
    Leaf.INT_OR_SHAPE: "mlx::core::Shape",
}
_BY_VALUE = frozenset(
    {
        "double",
        "int",
        "std::uint64_t",
        "bool",
        "mlx::core::Dtype",
        "mlx::core::StreamOrDevice",
        "opgen_mlx::Scalar",
    }
)


@frozen
class PyArgument:
    """One parameter of a bound overload, in the binding's terms."""

    parameter: PyParameter
    lambda_parameter: str  # `const mlx::core::array& x`
    conversion: str | None  # the statement declaring the converted value; None: none needed

    @property
    def name(self) -> str:
        return self.parameter.name

    @property
    def binding(self) -> str:
        """The `nb::arg` annotation."""
        p = self.parameter
        if p.name == "stream":
            return 'nb::arg("stream") = nb::none()'
        arg = "nb::arg()" if p.kind is ParameterKind.POSITIONAL_ONLY else f'nb::arg("{p.name}")'
        if p.type.optional or p.type.alternatives == (Leaf.INDEX,):
            arg += ".none()"
        return arg if p.default is None else f"{arg} = {default_object(p.default)}"


def value_type(t: PyType) -> str:
    """The C++ type nanobind converts a Python value of type `t` to."""
    alternatives = [_VALUE_TYPES[leaf] for leaf in t.alternatives]
    inner = (
        alternatives[0] if len(alternatives) == 1 else f"std::variant<{', '.join(alternatives)}>"
    )
    return f"std::optional<{inner}>" if t.optional else inner


def parameter_type(t: PyType) -> str:
    value = value_type(t)
    return value if value in _BY_VALUE or _scalar_optional(t) else f"const {value}&"


def _scalar_optional(t: PyType) -> bool:
    return t.optional and len(t.alternatives) == 1 and _VALUE_TYPES[t.alternatives[0]] in _BY_VALUE


def converted_type(t: PyType) -> str | None:
    """The C++ type of the value the binding converts `t` to; None if it passes it as is."""
    if len(t.alternatives) != 1 or t.alternatives[0] not in _CONVERTED:
        return None
    inner = _CONVERTED[t.alternatives[0]]
    return f"std::optional<{inner}>" if t.optional else inner


def stream_name(overload: BoundOverload) -> str:
    """The stream's C++ name: `s`, or `stream` beside a parameter named `s` (MLX's fft2)."""
    return "stream" if any(p.name == "s" for p in overload.parameters) else "s"


def arguments(overload: BoundOverload) -> tuple[PyArgument, ...]:
    """The binding's view of every parameter, promoted groups converted together."""
    out: list[PyArgument] = []
    dtype_of_group = "promoted_dtype"
    for p in overload.parameters:
        if p.name == "stream":
            out.append(PyArgument(p, f"mlx::core::StreamOrDevice {stream_name(overload)}", None))
            continue
        if p.kind is ParameterKind.VARIADIC:
            element, of = (
                ("int", "ints_of") if p.type.alternatives == (Leaf.INT,) else (ARRAY, "arrays_of")
            )
            converted = (
                f"const std::vector<{element}> {p.name} = opgen_mlx::{of}({p.name}{SUFFIX});"
            )
            out.append(PyArgument(p, f"const nb::args& {p.name}{SUFFIX}", converted))
            continue
        target = converted_type(p.type)
        if target is None:
            out.append(PyArgument(p, f"{parameter_type(p.type)} {p.name}", None))
            continue
        source = f"{p.name}{SUFFIX}"
        if p.type.alternatives[0] is Leaf.ARRAY_LIKE and not p.type.optional:
            dtype = f", {dtype_of_group}" if p.name in overload.promote else ""
            conversion = (
                f"const opgen_mlx::ArrayArgument {p.name}_array({source}{dtype});\n"
                f"const {ARRAY}& {p.name} = {p.name}_array;"
            )
            out.append(PyArgument(p, f"{parameter_type(p.type)} {source}", conversion))
            continue
        if p.type.alternatives[0] is Leaf.ARRAY_LIKE:
            dtype = f", {dtype_of_group}" if p.name in overload.promote else ""
            expression = f"opgen_mlx::to_array({source}{dtype})"
        else:
            expression = f"opgen_mlx::to_shape({source})"
        conversion = f"const {target} {p.name} = {expression};"
        out.append(PyArgument(p, f"{parameter_type(p.type)} {source}", conversion))
    return tuple(out)


def promotion(overload: BoundOverload) -> str | None:
    """The statement finding the dtype a promoted group's weak scalars take."""
    if not overload.promote:
        return None
    names = []
    for p in overload.parameters:
        if p.name in overload.promote:
            names.append(p.name if converted_type(p.type) is None else f"{p.name}{SUFFIX}")
    order = {name: i for i, name in enumerate(overload.promote)}
    names.sort(key=lambda n: order[n.removesuffix(SUFFIX)])
    return (
        "const std::optional<mlx::core::Dtype> promoted_dtype = "
        f"opgen_mlx::promoted_dtype({', '.join(names)});"
    )


# -- defaults and the signature ----------------------------------------------------------


def default_object(d: PyDefault) -> str:
    """A default as the C++ expression nanobind converts to the Python default, once."""
    dtype = dtype_name(d.value)
    if dtype is not None:  # MLX's own Python object
        return f'nb::module_::import_("mlx.core").attr("{dtype}")'
    return _object(d.value)


def _object(value: object) -> str:
    if value is None:
        return "nb::none()"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return f"nb::int_({value})" if -(2**31) <= value < 2**31 else f"nb::int_({value}LL)"
    if isinstance(value, float):
        if math.isnan(value):
            return "nb::float_(std::numeric_limits<double>::quiet_NaN())"
        if math.isinf(value):
            return f"nb::float_({'-' if value < 0 else ''}std::numeric_limits<double>::infinity())"
        return f"nb::float_({value!r})"
    if isinstance(value, str):
        return f"nb::str({cpp_string(value)})"
    if isinstance(value, (tuple, list)):
        return f"nb::make_tuple({', '.join(_object(v) for v in value)})"
    raise ValueError(f"no C++ for the default {value!r}")


def parameter_text(p: PyParameter) -> str:
    """The parameter as the signature and the stub show it."""
    star = "*" if p.kind is ParameterKind.VARIADIC else ""
    text = f"{star}{p.name}: {p.type.text}"
    return text if p.default is None else f"{text} = {p.default.shown}"


def signature_text(name: str, overload: BoundOverload, receiver: bool = False) -> str:
    """`def name(a: array, /, *, stream: StreamOrDevice = None) -> array`; with `receiver`
    (a method), the first parameter is shown as `self`."""
    pieces: list[str] = []
    parameters = overload.parameters
    for i, p in enumerate(parameters):
        previous = parameters[i - 1].kind if i else None
        if p.kind is ParameterKind.KEYWORD_ONLY and previous not in (
            ParameterKind.KEYWORD_ONLY,
            ParameterKind.VARIADIC,
        ):
            if previous is ParameterKind.POSITIONAL_ONLY:
                pieces.append("/")
            pieces.append("*")
        elif previous is ParameterKind.POSITIONAL_ONLY and p.kind is not previous:
            pieces.append("/")
        pieces.append("self" if receiver and i == 0 else parameter_text(p))
    if parameters and parameters[-1].kind is ParameterKind.POSITIONAL_ONLY:
        pieces.append("/")
    return f"def {name}({', '.join(pieces)}) -> {overload.returns}"


def signature_texts(function: MlxFunction) -> list[str]:
    """The signature of each overload of a bound function, a method's with `self`."""
    receiver = function.bound_as is not BoundAs.FUNCTION
    return [signature_text(function.python_name, o, receiver) for o in function.overloads]


def kw_only_index(overload: BoundOverload) -> int | None:
    """Where `nb::kw_only()` goes among the parameters: before the first keyword-only one,
    unless a variadic parameter already makes the rest keyword-only."""
    for i, p in enumerate(overload.parameters):
        if p.kind is ParameterKind.VARIADIC:
            return None
        if p.kind is ParameterKind.KEYWORD_ONLY:
            return i
    return None
