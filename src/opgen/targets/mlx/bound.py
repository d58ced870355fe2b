"""Bound functions in `<module>_bindings.cpp`: one nanobind lambda per overload.

The lambda takes the parameters as `api.mlx_python` says, converts what MLX
converts (array-likes, shapes, variadic arrays), and runs the overload: its
`code:`, or its `call:` with the stream appended, where a parameter left out
when None (`x?`) branches on it and a union branches on its alternative
(`std::visit`, so each alternative calls the C++ overload that takes it).

`SUPPORT` is the code those conversions use, written once into the file
when a function needs it: what MLX's own bindings do with a Python value
where an array is expected (its weak scalars, integer overflow and dtype
rules) and with a shape, re-implemented here from their observable
behaviour.
"""

from __future__ import annotations

import re

from opgen.api import mlx_python
from opgen.api.mlx_python import PyArgument
from opgen.spec.mlx.model import BoundAs, BoundOverload, MlxFunction
from opgen.spec.mlx.python_types import Leaf
from opgen.targets.mlx.cpp import string_literal
from opgen.targets.mlx.layout import indent

_RETURN = re.compile(r"\breturn\b")  # `code:` with it is statements, else an expression
INCLUDES = (
    "<complex>",
    "<cstdint>",
    "<limits>",
    "<optional>",
    "<sstream>",
    "<stdexcept>",
    "<string>",
    "<type_traits>",
    "<utility>",
    "<variant>",
    "<vector>",
)
NANOBIND_INCLUDES = (
    "<nanobind/ndarray.h>",
    "<nanobind/stl/complex.h>",
    "<nanobind/stl/pair.h>",
)

# The docstring of a module's `array_methods()`, in the binding and in the stub.
ARRAY_METHODS_DOC = (
    "The methods, operators and properties this module binds on `mlx.core.array`, by "
    "attribute name, to be set on the class: `for name, value in "
    "array_methods().items(): setattr(mlx.core.array, name, value)`."
)

# The conversions of MLX's Python bindings, re-implemented: a value where an array is
# expected, and a shape.
SUPPORT = """\
namespace opgen_mlx {

// Any other Python object where MLX takes an array. MLX's bindings take it as their
// `ArrayLike`, a conversion nanobind applies only in its converting pass, after every
// alternative of a ScalarOrArray was tried as it is: so a complex whose parts float32
// rounds (1e-3 + 0j), or a number with __complex__ or __float__ (a Fraction), reaches
// the alternative that converts it before this one takes it. None is no array-like.
struct ArrayLike {
  nb::object object;
};

// A Python number (bool, int or float), remembering which it was: MLX picks dtypes by it.
// It converts to the double the C++ functions take.
struct Scalar {
  double value = 0;
  bool integral = false; // an int or a bool
  bool boolean = false;
  std::int64_t integer = 0; // its value, when integral

  operator double() const {
    return value;
  }
};

} // namespace opgen_mlx

namespace nanobind::detail {

template <>
struct type_caster<opgen_mlx::ArrayLike> {
  NB_TYPE_CASTER(opgen_mlx::ArrayLike, const_name("object"))

  bool from_python(handle source, uint8_t flags, cleanup_list*) noexcept {
    if ((flags & static_cast<uint8_t>(cast_flags::convert)) == 0 || source.is_none()) {
      return false;
    }
    value.object = borrow(source);
    return true;
  }

  static handle from_cpp(const opgen_mlx::ArrayLike& value, rv_policy, cleanup_list*) noexcept {
    return value.object.inc_ref();
  }
};

template <>
struct type_caster<opgen_mlx::Scalar> {
  NB_TYPE_CASTER(opgen_mlx::Scalar, const_name("scalar"))

  bool from_python(handle source, uint8_t, cleanup_list*) noexcept {
    PyObject* object = source.ptr();
    if (PyFloat_Check(object)) {
      value = opgen_mlx::Scalar{PyFloat_AS_DOUBLE(object), false, false, 0};
      return true;
    }
    if (!PyLong_Check(object)) {
      return false;
    }
    int overflow = 0;
    const long long integer = PyLong_AsLongLongAndOverflow(object, &overflow);
    if (overflow != 0 || (integer == -1 && PyErr_Occurred())) {
      PyErr_Clear();
      return false;
    }
    const bool boolean = PyBool_Check(object);
    value = opgen_mlx::Scalar{static_cast<double>(integer), true, boolean, integer};
    return true;
  }

  static handle from_cpp(const opgen_mlx::Scalar& scalar, rv_policy, cleanup_list*) noexcept {
    return scalar.integral ? PyLong_FromLongLong(scalar.integer) : PyFloat_FromDouble(scalar.value);
  }
};

} // namespace nanobind::detail

namespace opgen_mlx {

// A Python value where MLX takes an array, as MLX's bindings accept it. nanobind tries
// the alternatives in this order, first each as it is, then each converted: Python's
// bool before its int, an mlx array before an ndarray (a NumPy array, a buffer, a DLPack
// object, of any layout and device: which would take an mlx array too), an ndarray before
// a complex (which would take a one-element array), any other object last.
using ScalarOrArray = std::variant<
    nb::bool_,
    nb::int_,
    nb::float_,
    mlx::core::array,
    nb::ndarray<nb::ro>,
    std::complex<float>,
    ArrayLike>;

// The dtype MLX gives a Python number of its own: bool_, int32 (int64 if it does not fit),
// float32.
inline mlx::core::Dtype scalar_dtype(const Scalar& number) {
  if (number.boolean) {
    return mlx::core::bool_;
  }
  if (!number.integral) {
    return mlx::core::float32;
  }
  const bool fits = number.integer >= std::numeric_limits<std::int32_t>::min() &&
      number.integer <= std::numeric_limits<std::int32_t>::max();
  return fits ? mlx::core::int32 : mlx::core::int64;
}

// The array an object gives through __mlx_array__; any other object is MLX's ValueError.
inline mlx::core::array from_object(const ArrayLike& value) {
  if (nb::hasattr(value.object, "__mlx_array__")) {
    return nb::cast<mlx::core::array>(value.object.attr("__mlx_array__")());
  }
  std::ostringstream message;
  message << "Invalid type " << nb::type_name(value.object.type()).c_str()
          << " received in array initialization.";
  throw std::invalid_argument(message.str());
}

inline bool is_mlx_array(const ScalarOrArray& value) {
  if (std::holds_alternative<mlx::core::array>(value)) {
    return true;
  }
  const ArrayLike* object = std::get_if<ArrayLike>(&value);
  return object != nullptr && nb::hasattr(object->object, "__mlx_array__");
}

// The dtype a group's weak scalars take: that of its first member that has one (a dtype
// given, or an mlx array).
inline std::optional<mlx::core::Dtype> dtype_of(const mlx::core::array& value) {
  return value.dtype();
}

inline std::optional<mlx::core::Dtype> dtype_of(mlx::core::Dtype value) {
  return value;
}

inline std::optional<mlx::core::Dtype> dtype_of(std::optional<mlx::core::Dtype> value) {
  return value;
}

inline std::optional<mlx::core::Dtype> dtype_of(const ScalarOrArray& value) {
  if (const auto* array = std::get_if<mlx::core::array>(&value)) {
    return array->dtype();
  }
  if (is_mlx_array(value)) {
    return from_object(std::get<ArrayLike>(value)).dtype();
  }
  return std::nullopt;
}

inline std::optional<mlx::core::Dtype> dtype_of(const std::optional<ScalarOrArray>& value) {
  return value ? dtype_of(*value) : std::nullopt;
}

template <typename... Values>
std::optional<mlx::core::Dtype> promoted_dtype(const Values&... values) {
  std::optional<mlx::core::Dtype> dtype;
  ((dtype = dtype ? dtype : dtype_of(values)), ...);
  return dtype;
}

// A Python value as an array: a bool is bool_, an int int32 (int64 if it does not fit),
// a float float32, a complex complex64, unless `dtype` says otherwise (the dtype of the
// arrays a weak scalar meets); an array stays as it is.
inline mlx::core::array to_array(
    const ScalarOrArray& value,
    std::optional<mlx::core::Dtype> dtype = std::nullopt) {
  if (const auto* array = std::get_if<mlx::core::array>(&value)) {
    return *array;
  }
  if (const auto* flag = std::get_if<nb::bool_>(&value)) {
    return mlx::core::array(flag->ptr() == Py_True, dtype.value_or(mlx::core::bool_));
  }
  if (const auto* integer = std::get_if<nb::int_>(&value)) {
    const auto number = nb::cast<std::int64_t>(*integer);
    const bool fits = number >= std::numeric_limits<std::int32_t>::min() &&
        number <= std::numeric_limits<std::int32_t>::max();
    const mlx::core::Dtype type =
        dtype.value_or(fits ? mlx::core::int32 : mlx::core::int64);
    if (mlx::core::issubdtype(type, mlx::core::integer) && type.size() < 8) {
      const mlx::core::iinfo limits(type);
      if (number < limits.min || number > static_cast<std::int64_t>(limits.max)) {
        std::ostringstream message;
        message << "Converting " << number << " to " << type << " would result in overflow.";
        throw std::invalid_argument(message.str());
      }
    }
    return mlx::core::array(number, type == mlx::core::bool_ ? mlx::core::int32 : type);
  }
  if (const auto* real = std::get_if<nb::float_>(&value)) {
    const mlx::core::Dtype type = dtype.value_or(mlx::core::float32);
    return mlx::core::array(
        PyFloat_AS_DOUBLE(real->ptr()),
        mlx::core::issubdtype(type, mlx::core::floating) ? type : mlx::core::float32);
  }
  if (const auto* buffer = std::get_if<nb::ndarray<nb::ro>>(&value)) {
    // MLX's own conversion, which copies any strides but negative ones (a ValueError).
    nb::object constructor = nb::module_::import_("mlx.core").attr("array");
    nb::object converted = dtype ? constructor(nb::cast(*buffer), *dtype)
                                 : constructor(nb::cast(*buffer));
    return nb::cast<mlx::core::array>(converted);
  }
  if (const auto* complex = std::get_if<std::complex<float>>(&value)) {
    return mlx::core::array(
        static_cast<mlx::core::complex64_t>(*complex), mlx::core::complex64);
  }
  return from_object(std::get<ArrayLike>(value));
}

// An argument where MLX takes an array: the mlx array given, by reference, or the array
// another Python value converts to, held here.
class ArrayArgument {
 public:
  explicit ArrayArgument(
      const ScalarOrArray& value,
      std::optional<mlx::core::Dtype> dtype = std::nullopt)
      : given_(std::get_if<mlx::core::array>(&value)) {
    if (given_ == nullptr) {
      converted_.emplace(to_array(value, dtype));
    }
  }

  operator const mlx::core::array&() const {
    return given_ != nullptr ? *given_ : *converted_;
  }

 private:
  const mlx::core::array* given_;
  std::optional<mlx::core::array> converted_;
};

inline std::optional<mlx::core::array> to_array(
    const std::optional<ScalarOrArray>& value,
    std::optional<mlx::core::Dtype> dtype = std::nullopt) {
  if (!value) {
    return std::nullopt;
  }
  return to_array(*value, dtype);
}

// A shape dimension, which MLX keeps in 32 bits.
inline mlx::core::ShapeElem dimension(std::int64_t value) {
  constexpr std::int64_t low = std::numeric_limits<mlx::core::ShapeElem>::min();
  constexpr std::int64_t high = std::numeric_limits<mlx::core::ShapeElem>::max();
  if (value < low || value > high) {
    std::ostringstream message;
    message << "Shape dimension " << value << " does not fit in MLX's 32-bit shape dimensions ["
            << low << ", " << high << "].";
    throw std::overflow_error(message.str());
  }
  return static_cast<mlx::core::ShapeElem>(value);
}

inline mlx::core::Shape to_shape(const std::vector<std::int64_t>& values) {
  mlx::core::Shape shape;
  shape.reserve(values.size());
  for (std::int64_t value : values) {
    shape.push_back(dimension(value));
  }
  return shape;
}

inline mlx::core::Shape to_shape(
    const std::variant<std::int64_t, std::vector<std::int64_t>>& value) {
  if (const auto* single = std::get_if<std::int64_t>(&value)) {
    return mlx::core::Shape{dimension(*single)};
  }
  return to_shape(std::get<std::vector<std::int64_t>>(value));
}

template <typename T>
std::optional<mlx::core::Shape> to_shape(const std::optional<T>& value) {
  if (!value) {
    return std::nullopt;
  }
  return to_shape(*value);
}

// A function declared to return a tuple returns one, whatever sequence of arrays the C++
// function gives.
template <typename T>
auto as_tuple(T&& value) {
  if constexpr (std::is_same_v<std::decay_t<T>, std::vector<mlx::core::array>>) {
    return nb::steal<nb::tuple>(PySequence_Tuple(nb::cast(std::forward<T>(value)).ptr()));
  } else {
    return std::forward<T>(value);
  }
}

inline std::vector<mlx::core::array> arrays_of(const nb::args& values) {
  return nb::cast<std::vector<mlx::core::array>>(values);
}

// Integers given one by one (`a.reshape(2, 3)`) or as one sequence (`a.reshape((2, 3))`).
inline std::vector<int> ints_of(const nb::args& values) {
  if (values.size() == 1 && !nb::isinstance<nb::int_>(values[0])) {
    return nb::cast<std::vector<int>>(values[0]);
  }
  return nb::cast<std::vector<int>>(values);
}

// Whether an array's operator takes `value` as its other operand, as MLX's do: a number,
// an array or an array-like, but no other object (a list, a string).
inline bool is_operand(const ScalarOrArray& value) {
  const ArrayLike* object = std::get_if<ArrayLike>(&value);
  return object == nullptr || nb::hasattr(object->object, "__mlx_array__");
}

// MLX's error for an operand that is none (`operation`: "addition").
inline void check_operand(const ScalarOrArray& value, const char* operation) {
  if (!is_operand(value)) {
    std::ostringstream message;
    message << "Cannot perform " << operation << " on an mlx.core.array and "
            << nb::type_name(std::get<ArrayLike>(value).object.type()).c_str();
    throw std::invalid_argument(message.str());
  }
}

// The key a random function of mlx::core::random draws with: `key`, or else the next key
// of mlx.core.random's global sequence, the one `mlx.core.random.seed` seeds and
// `mlx.core.random.state` shows, so that a module and mlx.core draw from one sequence.
// That state is read-only outside mlx.core: one draw of mlx.core's own (an empty uniform,
// which computes nothing) moves it on, and the key that draw took is the second half of
// the key before it, split.
inline std::optional<mlx::core::array> drawn_key(const std::optional<mlx::core::array>& key) {
  if (key) {
    return key;
  }
  nb::module_ random = nb::module_::import_("mlx.core.random");
  const auto current = nb::cast<mlx::core::array>(random.attr("state")[0]);
  random.attr("uniform")(nb::arg("shape") = nb::make_tuple(0));
  return mlx::core::random::split(current).second;
}

} // namespace opgen_mlx
"""


def definitions(function: MlxFunction, namespace: str) -> list[str]:
    """The `m.def(...)` statements of a function, one per overload, in order."""
    out: list[str] = []
    for overload in function.overloads:
        out += [*([""] if out else []), *definition(function, overload, namespace)]
    return out


def definition(function: MlxFunction, overload: BoundOverload, namespace: str) -> list[str]:
    items = [string_literal(function.python_name), *_items(function, overload, namespace)]
    receiver = submodule_variable(function.submodule)
    return [f"  {receiver}.def(", *_arguments_lines(items), "  );"]


def method_definition(function: MlxFunction, namespace: str) -> list[str]:
    """The statements of `array_methods()` that put a method or property into `methods`: one
    per overload, each chained to the ones before."""
    name = string_literal(function.python_name)
    if function.bound_as is BoundAs.METHOD:
        return [
            line
            for overload in function.overloads
            for line in (
                f"methods[{name}] = nb::cpp_function(",
                *_arguments_lines(_items(function, overload, namespace), "    "),
                ");",
            )
        ]
    assert function.bound_as is BoundAs.PROPERTY, function.bound_as
    getter = _items(function, function.overloads[0], namespace)
    return [
        f'methods[{name}] = nb::module_::import_("builtins").attr("property")(',
        "    nb::cpp_function(",
        *_arguments_lines(getter, "        "),
        "    ),",
        "    nb::none(),",
        "    nb::none(),",
        f"    {string_literal(function.doc)});",
    ]


def _arguments_lines(items: list[str], by: str = "      ") -> list[str]:
    lines = ",\n".join(items).split("\n")
    return [f"{by}{line}" if line else "" for line in lines]


def _items(function: MlxFunction, overload: BoundOverload, namespace: str) -> list[str]:
    """The lambda and the annotations of a `def` (a method's without the array's)."""
    args = mlx_python.arguments(overload)
    method = function.bound_as is not BoundAs.FUNCTION
    parameters = [a.lambda_parameter for a in args]
    body = _body(overload, args, namespace, function.submodule)
    checks = _operand_checks(function, args)
    returns = ""
    if function.inplace:
        receiver = args[0].name
        parameters[0] = f"mlx::core::array& {receiver}"
        returns = " -> mlx::core::array&"
        computed = ["[&]() -> mlx::core::array {", *indent(body, "  "), "}()"]
        body = [
            f"{receiver}.overwrite_descriptor({computed[0]}",
            *indent(computed[1:-1]),
            f"{computed[-1]});",
            f"return {receiver};",
        ]
    elif function.incomparable is not None:
        returns = " -> std::variant<mlx::core::array, bool>"
    lambda_text = "\n".join(
        [f"[]({', '.join(parameters)}){returns} {{", *indent([*checks, *body], "  "), "}"]
    )
    items = [lambda_text]
    if function.bound_as is BoundAs.METHOD:  # its overloads chain in the holder class
        name = string_literal(function.python_name)
        items += ["nb::is_method()", "nb::scope(holder)", f"nb::name({name})"]
    kw_only = mlx_python.kw_only_index(overload)
    for i, a in enumerate(args):
        if i == kw_only:
            items.append("nb::kw_only()")
        if not (method and i == 0):
            items.append(a.binding)
    if function.inplace:
        items.append("nb::rv_policy::none")
    signature = mlx_python.signature_text(function.python_name, overload, receiver=method)
    items.append(f"nb::sig({string_literal(signature)})")
    if function.doc and function.bound_as is not BoundAs.PROPERTY:
        items.append(string_literal(function.doc))
    return items


def _operand_checks(function: MlxFunction, args: tuple[PyArgument, ...]) -> list[str]:
    """A method's checks of its other operands, before they are converted."""
    if not function.operation and function.incomparable is None:
        return []
    lines: list[str] = []
    for a in args[1:]:
        if a.parameter.type.alternatives != (Leaf.ARRAY_LIKE,) or a.parameter.type.optional:
            continue
        value = f"{a.name}{mlx_python.SUFFIX}"
        if function.incomparable is not None:
            result = "true" if function.incomparable else "false"
            lines += [f"if (!opgen_mlx::is_operand({value})) {{", f"  return {result};", "}"]
        else:
            operation = string_literal(function.operation)
            lines.append(f"opgen_mlx::check_operand({value}, {operation});")
    return lines


def submodule_variable(submodule: str) -> str:
    """The C++ variable of the module a function is defined in: `m`, or `m_linalg`."""
    return f"m_{submodule}" if submodule else "m"


def _body(
    overload: BoundOverload, args: tuple[PyArgument, ...], namespace: str, submodule: str = ""
) -> list[str]:
    """A submodule's functions are looked up in the namespace of its name in `namespace`."""
    own = f"{namespace}::{submodule}" if submodule else namespace
    lines: list[str] = []
    promotion = mlx_python.promotion(overload)
    if promotion is not None:
        lines.append(promotion)
    lines += [line for a in args if a.conversion is not None for line in a.conversion.split("\n")]
    if overload.code is not None:
        # The code names what it uses as in the library's namespace.
        lines.append(f"using namespace {namespace};")
        if submodule:
            lines.append(f"using namespace {own};")
        code = overload.code
        statements = _RETURN.search(code) is not None
        if statements and overload.returns.startswith("tuple[array"):
            lines += ["return opgen_mlx::as_tuple([&] {", *indent(code.splitlines()), "}());"]
        elif statements:
            lines += code.splitlines()
        else:
            lines.append(f"return {_returned(overload, ' '.join(code.split()))};")
        return lines
    assert overload.function is not None
    function = overload.function
    if "::" not in function:
        function = f"{own}::{function}"
    by_name = {a.name: a for a in args}
    return lines + _branches(function, overload, by_name, 0, [])


def _returned(overload: BoundOverload, expression: str) -> str:
    """What a lambda returns of `expression`: a tuple where the signature says one."""
    tuple_ = overload.returns.startswith("tuple[array")
    return f"opgen_mlx::as_tuple({expression})" if tuple_ else expression


def _branches(
    function: str,
    overload: BoundOverload,
    by_name: dict[str, PyArgument],
    i: int,
    passed: list[str],
) -> list[str]:
    """Statements that call `function`, branching on the arguments from the i-th on."""
    if i == len(overload.arguments):
        has_stream = any(p.name == "stream" for p in overload.parameters)
        stream = [mlx_python.stream_name(overload)] if has_stream else []
        call = f"{function}({', '.join([*passed, *stream])})"
        return [f"return {_returned(overload, call)};"]
    argument = overload.arguments[i]
    p = by_name[argument.name].parameter
    value = argument.name
    lines: list[str] = []
    if argument.omit_if_none:
        lines += [f"if (!{value}) {{"]
        lines += indent(_branches(function, overload, by_name, i + 1, passed), "  ")
        lines += ["}"]
        value = f"*{value}"
    if p.type.is_union:
        inner = _branches(function, overload, by_name, i + 1, [*passed, argument.name])
        lines += [f"return std::visit([&](const auto& {argument.name}) {{"]
        lines += indent(inner, "  ")
        lines += [f"}}, {value});"]
        return lines
    return lines + _branches(function, overload, by_name, i + 1, [*passed, value])
