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

// An element of an evaluated row-contiguous array as a Python object: a bool, an int, a
// float or a complex, by the array's dtype.
inline nb::object python_element(const mlx::core::array& a, std::size_t i) {
  using Val = mlx::core::Dtype::Val;
  switch (a.dtype().val()) {
    case Val::bool_:
      return nb::bool_(a.data<bool>()[i]);
    case Val::uint8:
      return nb::int_(a.data<std::uint8_t>()[i]);
    case Val::uint16:
      return nb::int_(a.data<std::uint16_t>()[i]);
    case Val::uint32:
      return nb::int_(a.data<std::uint32_t>()[i]);
    case Val::uint64:
      return nb::int_(a.data<std::uint64_t>()[i]);
    case Val::int8:
      return nb::int_(a.data<std::int8_t>()[i]);
    case Val::int16:
      return nb::int_(a.data<std::int16_t>()[i]);
    case Val::int32:
      return nb::int_(a.data<std::int32_t>()[i]);
    case Val::int64:
      return nb::int_(a.data<std::int64_t>()[i]);
    case Val::float16:
      return nb::float_(static_cast<float>(a.data<mlx::core::float16_t>()[i]));
    case Val::bfloat16:
      return nb::float_(static_cast<float>(a.data<mlx::core::bfloat16_t>()[i]));
    case Val::float32:
      return nb::float_(a.data<float>()[i]);
    case Val::float64:
      return nb::float_(a.data<double>()[i]);
    case Val::complex64: {
      const mlx::core::complex64_t value = a.data<mlx::core::complex64_t>()[i];
      return nb::steal(PyComplex_FromDoubles(value.real(), value.imag()));
    }
  }
  throw std::invalid_argument("[convert] Unsupported dtype.");
}

// An array's elements as Python objects, evaluated: one for a 0-d array, nested lists
// of them for others (MLX's `tolist`); `scalar` alone: the element of a one-element
// array (MLX's `item`).
inline nb::object python_values(const mlx::core::array& given, bool scalar = false) {
  if (scalar && given.size() != 1) {
    throw std::invalid_argument(
        "[convert] Only length-1 arrays can be converted to Python scalars.");
  }
  mlx::core::array a = mlx::core::contiguous(given);
  a.eval();
  if (scalar) {
    return python_element(a, 0);
  }
  std::size_t next = 0;
  auto nested = [&](auto& self, int axis) -> nb::object {
    if (axis == static_cast<int>(a.ndim())) {
      return python_element(a, next++);
    }
    nb::list items;
    for (int i = 0; i < a.shape(axis); ++i) {
      items.append(self(self, axis + 1));
    }
    return items;
  };
  return nested(nested, 0);
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
