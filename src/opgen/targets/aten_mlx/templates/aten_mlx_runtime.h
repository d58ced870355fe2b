// The semantics every operator `opgen aten-mlx` generates shares: PyTorch's numbers,
// dtypes, type promotion, dimensions and arguments, over MLX's arrays. Written once
// here, never once per operator; the generated functions call these helpers.
#pragma once

#include <algorithm>
#include <complex>
#include <cstdint>
#include <limits>
#include <optional>
#include <sstream>
#include <stdexcept>
#include <string>
#include <tuple>
#include <utility>
#include <variant>
#include <vector>

#include "mlx/mlx.h"

namespace aten_mlx {

using mlx::core::array;
using mlx::core::Dtype;

// A refusal: the operator cannot honour an argument's value. It names both.
[[noreturn]] inline void refuse(const char* op, const char* argument, const std::string& why) {
  std::ostringstream message;
  message << op << ": argument '" << argument << "': " << why;
  throw std::invalid_argument(message.str());
}

[[noreturn]] inline void fail(const char* op, const std::string& why) {
  std::ostringstream message;
  message << op << ": " << why;
  throw std::invalid_argument(message.str());
}

inline std::string dtype_name(Dtype dtype) {
  std::ostringstream text;
  text << dtype;
  return text.str();
}

// A PyTorch Scalar: a Python bool, int, float or complex, remembering which.
struct Scalar {
  enum class Kind { boolean, integer, floating, complex };
  Kind kind = Kind::integer;
  std::int64_t integer = 0;
  double real = 0;
  double imag = 0;

  Scalar() = default;
  Scalar(bool value) : kind(Kind::boolean), integer(value), real(value) {}
  Scalar(int value) : kind(Kind::integer), integer(value), real(value) {}
  Scalar(std::int64_t value) : kind(Kind::integer), integer(value), real(static_cast<double>(value)) {}
  Scalar(double value) : kind(Kind::floating), integer(static_cast<std::int64_t>(value)), real(value) {}
  Scalar(std::complex<double> value)
      : kind(Kind::complex), real(value.real()), imag(value.imag()) {}

  bool is_integral() const {
    return kind == Kind::boolean || kind == Kind::integer;
  }
  double to_double() const {
    return real;
  }
  std::int64_t to_int() const {
    return kind == Kind::floating ? static_cast<std::int64_t>(real) : integer;
  }
  // The dtype PyTorch gives the number as a wrapped number (a Python value in a tensor's
  // place), before categories: bool, int64, float64 (default float32), complex.
  Dtype wrapped_dtype() const {
    switch (kind) {
      case Kind::boolean:
        return mlx::core::bool_;
      case Kind::integer:
        return mlx::core::int64;
      case Kind::floating:
        return mlx::core::float32;
      default:
        return mlx::core::complex64;
    }
  }
  // The number as a 0-d array of `dtype`.
  array as_array(Dtype dtype) const {
    if (kind == Kind::complex) {
      return mlx::core::astype(array(std::complex<float>(real, imag)), dtype);
    }
    if (mlx::core::issubdtype(dtype, mlx::core::floating) ||
        mlx::core::issubdtype(dtype, mlx::core::complexfloating)) {
      return array(real, dtype);
    }
    if (dtype == mlx::core::bool_) {
      return array(kind == Kind::floating ? real != 0 : integer != 0);
    }
    return array(kind == Kind::floating ? static_cast<std::int64_t>(real) : integer, dtype);
  }
};

// An array, or a number in an array's place (a "wrapped number" in PyTorch's words, which
// weighs least in type promotion).
struct Operand {
  std::variant<array, Scalar> value;

  Operand(array a) : value(std::move(a)) {}
  Operand(Scalar s) : value(s) {}
  Operand(bool v) : value(Scalar(v)) {}
  Operand(int v) : value(Scalar(v)) {}
  Operand(std::int64_t v) : value(Scalar(v)) {}
  Operand(double v) : value(Scalar(v)) {}

  const array* as_array() const {
    return std::get_if<array>(&value);
  }
  // The operand as an array: a number becomes a 0-d array of its wrapped dtype.
  array to_array() const {
    if (const array* a = as_array()) {
      return *a;
    }
    const Scalar& s = std::get<Scalar>(value);
    return s.as_array(s.wrapped_dtype());
  }
};

// A list of ints (`int[]`, `SymInt[]`, `int[N]`): sizes, strides, dimensions.
struct IntList : std::vector<std::int64_t> {
  using std::vector<std::int64_t>::vector;
  IntList(std::vector<std::int64_t> values) : std::vector<std::int64_t>(std::move(values)) {}
};

struct BoolList : std::vector<bool> {
  using std::vector<bool>::vector;
};

// A `Generator` argument that is not None (MLX cannot honour one).
struct Generator {};

// A sized list (`int[2] stride`) as PyTorch reads it: one number stands for every element.
inline IntList sized(const char* op, const char* argument, const IntList& values, std::size_t size) {
  if (values.size() == 1 && size > 1) {
    return IntList(size, values[0]);
  }
  if (values.size() != size) {
    std::ostringstream why;
    why << "expected " << size << " values, got " << values.size();
    refuse(op, argument, why.str());
  }
  return values;
}

// PyTorch's categories of dtypes, as its promotion compares them.
inline bool is_complex(Dtype d) {
  return d == mlx::core::complex64;
}
inline bool is_floating(Dtype d) {
  return d == mlx::core::float16 || d == mlx::core::bfloat16 || d == mlx::core::float32 ||
      d == mlx::core::float64;
}
inline bool is_integral(Dtype d, bool include_bool) {
  return (include_bool && d == mlx::core::bool_) ||
      mlx::core::issubdtype(d, mlx::core::integer);
}
inline bool is_unsigned_wide(Dtype d) {
  return d == mlx::core::uint16 || d == mlx::core::uint32 || d == mlx::core::uint64;
}

// torch.promote_types over the dtypes MLX has.
inline Dtype promote_types(const char* op, Dtype a, Dtype b) {
  using namespace mlx::core;
  if (a == b) {
    return a;
  }
  if (a == bool_) {
    return b;
  }
  if (b == bool_) {
    return a;
  }
  if (is_unsigned_wide(a) || is_unsigned_wide(b)) {
    fail(op, "PyTorch does not promote " + dtype_name(a) + " with " + dtype_name(b));
  }
  if (is_complex(a) || is_complex(b)) {
    const Dtype other = is_complex(a) ? b : a;
    if (other == float64) {
      fail(op, "the result would be complex128, which MLX does not have");
    }
    return complex64;
  }
  if (is_floating(a) || is_floating(b)) {
    if (!is_floating(a)) {
      return b;
    }
    if (!is_floating(b)) {
      return a;
    }
    if ((a == float16 && b == bfloat16) || (a == bfloat16 && b == float16)) {
      return float32;
    }
    return a.size() >= b.size() ? a : b;
  }
  // Integers: uint8 with a signed type takes the next signed size up.
  if (a == uint8 || b == uint8) {
    const Dtype other = a == uint8 ? b : a;
    if (other == int8) {
      return int16;
    }
    return other;
  }
  return a.size() >= b.size() ? a : b;
}

// How an elementwise operator turns the promoted dtype into the dtypes it computes and
// returns in (PyTorch's ELEMENTWISE_TYPE_PROMOTION_KIND).
enum class Promotion { none, default_, int_to_float, always_bool, complex_to_float, bool_to_long };

// PyTorch's result type of tensors (by dimension: more than zero, zero) and wrapped numbers.
class ResultType {
 public:
  explicit ResultType(const char* op) : op_(op) {}

  void add(const Operand& operand) {
    if (const array* a = operand.as_array()) {
      add_array(*a);
    } else {
      add_scalar(std::get<Scalar>(operand.value));
    }
  }
  void add(const std::optional<Operand>& operand) {
    if (operand) {
      add(*operand);
    }
  }
  void add(const array& a) {
    add_array(a);
  }
  void add(const std::optional<array>& a) {
    if (a) {
      add_array(*a);
    }
  }
  void add(const Scalar& s) {
    add_scalar(s);
  }
  void add(const std::optional<Scalar>& s) {
    if (s) {
      add_scalar(*s);
    }
  }
  void add(const std::vector<array>& arrays) {
    for (const array& a : arrays) {
      add_array(a);
    }
  }

  // The result type; float32 (PyTorch's default) when nothing was added.
  Dtype dtype() const {
    const std::optional<Dtype> found = combine(dim_, combine(zero_, wrapped_));
    return found ? *found : mlx::core::float32;
  }

 private:
  void add_array(const array& a) {
    if (a.ndim() > 0) {
      dim_ = merge(dim_, a.dtype());
    } else {
      zero_ = merge(zero_, a.dtype());
    }
  }
  void add_scalar(const Scalar& s) {
    wrapped_ = merge(wrapped_, s.wrapped_dtype());
  }
  std::optional<Dtype> merge(std::optional<Dtype> a, Dtype b) const {
    return a ? promote_types(op_, *a, b) : b;
  }
  // PyTorch's combine_categories: the higher-priority group wins within its category.
  std::optional<Dtype> combine(std::optional<Dtype> higher, std::optional<Dtype> lower) const {
    if (!higher) {
      return lower;
    }
    if (!lower) {
      return higher;
    }
    if (is_complex(*higher)) {
      return higher;
    }
    if (is_complex(*lower)) {
      return is_floating(*higher) ? std::optional<Dtype>(mlx::core::complex64) : lower;
    }
    if (is_floating(*higher)) {
      return higher;
    }
    if (*higher == mlx::core::bool_ || is_floating(*lower)) {
      return promote_types(op_, *higher, *lower);
    }
    return higher;
  }

  const char* op_;
  std::optional<Dtype> dim_;
  std::optional<Dtype> zero_;
  std::optional<Dtype> wrapped_;
};

// The dtypes an elementwise operator computes and returns in, and its operands cast.
struct Promoted {
  const char* op;
  Dtype compute;
  Dtype result;

  array operator()(const Operand& operand) const {
    if (const array* a = operand.as_array()) {
      return a->dtype() == compute ? *a : mlx::core::astype(*a, compute);
    }
    return std::get<Scalar>(operand.value).as_array(compute);
  }
  array operator()(const array& a) const {
    return a.dtype() == compute ? a : mlx::core::astype(a, compute);
  }
  std::optional<array> operator()(const std::optional<Operand>& operand) const {
    return operand ? std::optional<array>((*this)(*operand)) : std::nullopt;
  }
  std::optional<array> operator()(const std::optional<array>& a) const {
    return a ? std::optional<array>((*this)(*a)) : std::nullopt;
  }
  array operator()(const Scalar& s) const {
    return s.as_array(compute);
  }
  std::optional<array> operator()(const std::optional<Scalar>& s) const {
    return s ? std::optional<array>(s->as_array(compute)) : std::nullopt;
  }
  std::vector<array> operator()(const std::vector<array>& arrays) const {
    std::vector<array> cast;
    cast.reserve(arrays.size());
    for (const array& a : arrays) {
      cast.push_back((*this)(a));
    }
    return cast;
  }
  // The computed value in the result dtype.
  array finish(const array& value) const {
    return value.dtype() == result ? value : mlx::core::astype(value, result);
  }
};

inline Promoted promoted(const char* op, Promotion kind, Dtype common) {
  using namespace mlx::core;
  switch (kind) {
    case Promotion::int_to_float:
      if (is_integral(common, true)) {
        return {op, float32, float32};
      }
      return {op, common, common};
    case Promotion::always_bool:
      return {op, common, bool_};
    case Promotion::complex_to_float:
      return {op, common, is_complex(common) ? float32 : common};
    case Promotion::bool_to_long:
      return common == bool_ ? Promoted{op, int64, int64} : Promoted{op, common, common};
    default:
      return {op, common, common};
  }
}

// `alpha` of an elementwise operator (add's, sub's): a number in the dtype the operator
// computes in. Multiplying by it (`multiply(other, alpha)`) builds nothing when it is one,
// the value it nearly always has.
struct Alpha {
  Scalar value;
  Dtype dtype;

  bool is_one() const {
    switch (value.kind) {
      case Scalar::Kind::boolean:
      case Scalar::Kind::integer:
        return value.integer == 1;
      case Scalar::Kind::floating:
        return value.real == 1.0;
      default:
        return value.real == 1.0 && value.imag == 0.0;
    }
  }
  operator array() const {
    return value.as_array(dtype);
  }
};

inline array multiply(const array& a, const Alpha& alpha) {
  return alpha.is_one() ? a : mlx::core::multiply(a, static_cast<array>(alpha));
}

inline array multiply(const Alpha& alpha, const array& a) {
  return multiply(a, alpha);
}

// `alpha` of add and sub: an integral operation takes no non-integral alpha, and a
// boolean one only a boolean (PyTorch's alpha_check).
inline void check_alpha(const char* op, Dtype dtype, const Scalar& alpha) {
  if (dtype == mlx::core::bool_ && alpha.kind != Scalar::Kind::boolean) {
    refuse(op, "alpha", "a boolean operation takes a boolean alpha");
  }
  if (is_integral(dtype, true) && !alpha.is_integral()) {
    refuse(op, "alpha", "an integral operation takes an integral alpha");
  }
}

// A dimension in [-ndim, ndim) as an axis in [0, ndim); 0-d arrays take -1 and 0.
inline int wrap_dim(const char* op, const char* argument, std::int64_t dim, int ndim) {
  const int64_t extent = std::max(ndim, 1);
  if (dim < -extent || dim >= extent) {
    std::ostringstream why;
    why << "dimension " << dim << " is out of range [" << -extent << ", " << extent - 1 << "]";
    refuse(op, argument, why.str());
  }
  return static_cast<int>(dim < 0 ? dim + extent : dim);
}

// The axes a reduction over `dims` reduces: all of them for none or an empty list.
inline std::vector<int> reduction_axes(
    const char* op,
    const char* argument,
    const std::optional<std::vector<std::int64_t>>& dims,
    int ndim) {
  std::vector<int> axes;
  if (!dims || dims->empty()) {
    for (int i = 0; i < ndim; ++i) {
      axes.push_back(i);
    }
    return axes;
  }
  for (std::int64_t dim : *dims) {
    const int axis = wrap_dim(op, argument, dim, ndim);
    if (std::find(axes.begin(), axes.end(), axis) != axes.end()) {
      std::ostringstream why;
      why << "dimension " << dim << " appears more than once";
      refuse(op, argument, why.str());
    }
    if (ndim > 0) {
      axes.push_back(axis);
    }
  }
  return axes;
}

inline std::vector<int> reduction_axes(
    const char* op, const char* argument, const std::vector<std::int64_t>& dims, int ndim) {
  return reduction_axes(op, argument, std::optional<std::vector<std::int64_t>>(dims), ndim);
}

inline std::vector<int> reduction_axes(
    const char* op, const char* argument, const std::optional<IntList>& dims, int ndim) {
  if (!dims) {
    return reduction_axes(op, argument, std::optional<std::vector<std::int64_t>>(), ndim);
  }
  return reduction_axes(op, argument, std::optional<std::vector<std::int64_t>>(*dims), ndim);
}

inline std::vector<int> reduction_axes(
    const char* op, const char* argument, const IntList& dims, int ndim) {
  return reduction_axes(op, argument, std::optional<std::vector<std::int64_t>>(dims), ndim);
}

inline std::vector<int> reduction_axes(
    const char* op, const char* argument, std::int64_t dim, int ndim) {
  return reduction_axes(op, argument, std::vector<std::int64_t>{dim}, ndim);
}

inline std::vector<int> reduction_axes(
    const char* op, const char* argument, std::optional<std::int64_t> dim, int ndim) {
  if (!dim) {
    return reduction_axes(op, argument, std::optional<std::vector<std::int64_t>>(), ndim);
  }
  return reduction_axes(op, argument, std::vector<std::int64_t>{*dim}, ndim);
}

// The input of a reduction in the dtype it accumulates in: `dtype` if given, else int64
// for bool and integers where PyTorch sums them so (`integral_to_long`).
inline array reduction_input(const array& self, std::optional<Dtype> dtype, bool integral_to_long) {
  if (dtype) {
    return self.dtype() == *dtype ? self : mlx::core::astype(self, *dtype);
  }
  if (integral_to_long && is_integral(self.dtype(), true) && self.dtype() != mlx::core::int64) {
    return mlx::core::astype(self, mlx::core::int64);
  }
  return self;
}

// A size (a list of SymInts) as MLX's Shape, each dimension checked into 32 bits.
inline mlx::core::Shape to_shape(const char* op, const char* argument, const std::vector<std::int64_t>& sizes) {
  mlx::core::Shape shape;
  shape.reserve(sizes.size());
  for (std::int64_t size : sizes) {
    if (size < -1 || size > std::numeric_limits<std::int32_t>::max()) {
      std::ostringstream why;
      why << "size " << size << " does not fit MLX's 32-bit dimensions";
      refuse(op, argument, why.str());
    }
    shape.push_back(static_cast<std::int32_t>(size));
  }
  return shape;
}

// PyTorch's arguments that place or lay out memory. MLX arrays have one layout (strided,
// dense) and live in unified memory, so layout must be strided; devices, pinning and
// memory formats change where and how values are stored, never the values, and are
// accepted as PyTorch accepts them. A generator cannot be honoured: MLX's random numbers
// come from MLX's own key.
inline void check_layout(const char* op, const std::optional<std::string>& layout) {
  if (layout && *layout != "strided" && *layout != "torch.strided") {
    refuse(op, "layout", "MLX arrays are strided; layout " + *layout + " cannot be honoured");
  }
}

inline void check_generator(const char* op, bool has_generator) {
  if (has_generator) {
    refuse(op, "generator", "MLX draws random numbers from its own key; pass generator=None");
  }
}

inline Dtype dtype_or(const std::optional<Dtype>& dtype, Dtype fallback) {
  return dtype ? *dtype : fallback;
}

// An out= variant's result in the dtype of its `out` argument (the values are the
// functional result: MLX arrays are not written in place).
inline array finish_out(const char* op, const char* argument, const array& result, const array& out) {
  if (result.shape() != out.shape() && out.size() != 0) {
    refuse(op, argument, "its shape differs from the result's, and MLX cannot resize it");
  }
  return result.dtype() == out.dtype() ? result : mlx::core::astype(result, out.dtype());
}

// The coordinates of a mask's true (non-zero) elements, [count, ndim] int64: the count
// depends on the values, so the mask is evaluated here.
inline array nonzero(const array& mask) {
  using namespace mlx::core;
  array flat = contiguous(reshape(astype(mask, bool_), {-1}));
  flat.eval();
  const bool* values = flat.data<bool>();
  const int ndim = static_cast<int>(mask.ndim());
  std::vector<std::int64_t> coordinates;
  for (std::size_t i = 0; i < flat.size(); ++i) {
    if (!values[i]) {
      continue;
    }
    std::size_t rest = i;
    const std::size_t start = coordinates.size();
    coordinates.resize(start + ndim);
    for (int d = ndim - 1; d >= 0; --d) {
      const std::size_t extent = static_cast<std::size_t>(mask.shape(d));
      coordinates[start + d] = static_cast<std::int64_t>(rest % extent);
      rest /= extent;
    }
  }
  const int count = ndim == 0 ? static_cast<int>(coordinates.empty() ? 0 : 1)
                              : static_cast<int>(coordinates.size() / ndim);
  return array(coordinates.begin(), Shape{count, ndim}, int64);
}

// PyTorch's advanced indexing, `self[indices]`: each index a tensor of integers (or a
// boolean mask, standing for its true elements' coordinates over as many dimensions) or
// None for a whole dimension. The index tensors broadcast together; their result's
// dimensions replace the indexed ones where those are adjacent, else come first.
inline array advanced_index(
    const char* op, const array& self, const std::vector<std::optional<array>>& indices) {
  using namespace mlx::core;
  std::vector<std::optional<array>> expanded;  // one entry per indexed dimension
  for (const std::optional<array>& index : indices) {
    if (index && index->dtype() == bool_) {
      const array coordinates = nonzero(*index);
      for (int d = 0; d < static_cast<int>(index->ndim()); ++d) {
        expanded.push_back(take(coordinates, d, 1));
      }
    } else if (index && !is_integral(index->dtype(), false)) {
      refuse(op, "indices", "tensors used as indices must be long, int, byte or bool");
    } else {
      expanded.push_back(index);
    }
  }
  const int ndim = static_cast<int>(self.ndim());
  if (static_cast<int>(expanded.size()) > ndim) {
    refuse(op, "indices", "too many indices for the tensor's dimensions");
  }
  std::vector<int> indexed;
  std::vector<array> arrays;
  for (int d = 0; d < static_cast<int>(expanded.size()); ++d) {
    if (expanded[d]) {
      indexed.push_back(d);
      const array extent = array(self.shape(d), int64);
      const array index = astype(*expanded[d], int64);
      arrays.push_back(where(less(index, array(0, int64)), add(index, extent), index));
    }
  }
  if (indexed.empty()) {
    return self;
  }
  arrays = broadcast_arrays(arrays);
  const bool adjacent = indexed.back() - indexed.front() + 1 == static_cast<int>(indexed.size());
  // The indexed dimensions first, flattened into one, indexed by a linear index.
  std::vector<int> order(indexed.begin(), indexed.end());
  for (int d = 0; d < ndim; ++d) {
    if (std::find(indexed.begin(), indexed.end(), d) == indexed.end()) {
      order.push_back(d);
    }
  }
  array moved = transpose(self, order);
  Shape flat_shape{-1};
  for (int d = static_cast<int>(indexed.size()); d < ndim; ++d) {
    flat_shape.push_back(moved.shape(d));
  }
  std::int64_t stride = 1;
  array linear = array(0, int64);
  for (int k = static_cast<int>(indexed.size()) - 1; k >= 0; --k) {
    linear = add(linear, multiply(arrays[k], array(stride, int64)));
    stride *= self.shape(indexed[k]);
  }
  if (stride == 0) {
    refuse(op, "indices", "index into a dimension of size 0");
  }
  const Shape index_shape = arrays[0].shape();
  array gathered = take(reshape(moved, flat_shape), reshape(linear, {-1}), 0);
  Shape result_shape = index_shape;
  for (int d = static_cast<int>(indexed.size()); d < ndim; ++d) {
    result_shape.push_back(moved.shape(d));
  }
  array result = reshape(gathered, result_shape);
  if (!adjacent || indexed.front() == 0) {
    return result;
  }
  // The indexed dimensions were adjacent, after `indexed.front()` others: put the index
  // dimensions back there.
  const int index_ndim = static_cast<int>(index_shape.size());
  std::vector<int> back;
  for (int d = 0; d < indexed.front(); ++d) {
    back.push_back(index_ndim + d);
  }
  for (int d = 0; d < index_ndim; ++d) {
    back.push_back(d);
  }
  for (int d = index_ndim + indexed.front(); d < static_cast<int>(result.ndim()); ++d) {
    back.push_back(d);
  }
  return transpose(result, back);
}

// PyTorch's accumulation dtype (its acc_type): half-precision floats are reduced and
// scanned in float32, then returned in their own dtype (MLX would accumulate in them).
inline Dtype accumulate_dtype(Dtype dtype) {
  return dtype == mlx::core::float16 || dtype == mlx::core::bfloat16 ? mlx::core::float32 : dtype;
}

inline array accumulated(const array& a) {
  const Dtype dtype = accumulate_dtype(a.dtype());
  return dtype == a.dtype() ? a : mlx::core::astype(a, dtype);
}

// A reduction without an identity (max, min, argmax, ...) over an empty dimension is an
// error in PyTorch.
inline void check_reducible(const char* op, const array& self, const std::vector<int>& axes) {
  for (int axis : axes) {
    if (self.shape(axis) == 0) {
      std::ostringstream why;
      why << "dimension " << axis << " is empty, and this reduction has no identity";
      refuse(op, "self", why.str());
    }
  }
}

// The index (int64) of the first maximum (`largest`) or minimum along `axis`, as PyTorch
// finds it: NaN is more extreme than any number, and the first of equals wins.
inline array arg_extreme(const array& x, int axis, bool keepdim, bool largest) {
  using namespace mlx::core;
  array index = largest ? argmax(x, axis, keepdim) : argmin(x, axis, keepdim);
  if (is_floating(x.dtype())) {
    const array nan = isnan(x);
    index = where(any(nan, axis, keepdim), argmax(nan, axis, keepdim), index);
  }
  return astype(index, int64);
}

// PyTorch's variance over `axes`: the squared deviations' sum over max(0, count -
// correction), so a correction at or past the count gives inf or nan as PyTorch does;
// half-precision floats computed in float32, complex numbers giving their real dtype.
inline array variance(const array& x, const std::vector<int>& axes, double correction, bool keepdim) {
  using namespace mlx::core;
  const array input = accumulated(x);
  double count = 1;
  for (int axis : axes) {
    count *= x.shape(axis);
  }
  const array deviation = subtract(input, mean(input, axes, true));
  const array squared = is_complex(x.dtype()) ? square(abs(deviation)) : square(deviation);
  const Dtype real = is_complex(x.dtype()) ? float32 : x.dtype();
  const array divisor = array(std::max(0.0, count - correction), squared.dtype());
  return astype(divide(sum(squared, axes, keepdim), divisor), real);
}

// The order of `x` along `axis` as PyTorch's stable sort gives it (int64 indices): NaN
// after every number (first when descending), equal elements in their order.
inline array stable_order(const array& x, int axis, bool descending) {
  using namespace mlx::core;
  if (x.ndim() == 0 || x.size() == 0) {
    return zeros(x.shape(), int64);  // MLX's sort fails on empty arrays
  }
  if (!descending) {
    return astype(argsort(x, axis), int64);
  }
  // Descending and stable: the ascending stable order of the reversed elements, reversed.
  const int extent = x.shape(axis);
  const array reverse = arange(extent - 1, -1, -1, int32);
  const array order = astype(take(argsort(take(x, reverse, axis), axis), reverse, axis), int64);
  return subtract(array(static_cast<std::int64_t>(extent - 1), int64), order);
}

// A tuple of arrays for multi-output operators.
template <typename... Arrays>
std::tuple<Arrays...> outputs(Arrays... arrays) {
  return std::tuple<Arrays...>(std::move(arrays)...);
}

} // namespace aten_mlx
