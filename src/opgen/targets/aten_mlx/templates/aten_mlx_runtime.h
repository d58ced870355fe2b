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
// An operand refers to the array it is given, which outlives the call it is an argument
// of (the caller's, or a temporary of the calling expression): it is never kept.
struct Operand {
  const array* array_ = nullptr;
  Scalar scalar_;

  Operand(const array& a) : array_(&a) {}
  Operand(Scalar s) : scalar_(s) {}
  Operand(bool v) : scalar_(v) {}
  Operand(int v) : scalar_(v) {}
  Operand(std::int64_t v) : scalar_(v) {}
  Operand(double v) : scalar_(v) {}

  const array* as_array() const {
    return array_;
  }
  const Scalar& scalar() const {
    return scalar_;
  }
  // The operand as an array: a number becomes a 0-d array of its wrapped dtype.
  array to_array() const {
    if (array_ != nullptr) {
      return *array_;
    }
    return scalar_.as_array(scalar_.wrapped_dtype());
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
      add_scalar(operand.scalar());
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
      if (*higher == mlx::core::float64 || *higher == mlx::core::float16) {
        fail(op_, "the result would be " +
                 std::string(*higher == mlx::core::float64 ? "complex128" : "complex32") +
                 ", which MLX does not have");
      }
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
    return operand.scalar().as_array(compute);
  }
  // An operand in the compute dtype, without a copy when it is an array of that dtype
  // already: the array itself, else the one made into `held`.
  const array& bind(const Operand& operand, std::optional<array>& held) const {
    if (const array* a = operand.as_array(); a != nullptr && a->dtype() == compute) {
      return *a;
    }
    return held.emplace((*this)(operand));
  }
  const array& bind(const array& a, std::optional<array>& held) const {
    return a.dtype() == compute ? a : held.emplace(mlx::core::astype(a, compute));
  }
  const array& bind(const Scalar& s, std::optional<array>& held) const {
    return held.emplace(s.as_array(compute));
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
  array finish(array value) const {
    return value.dtype() == result ? value : mlx::core::astype(std::move(value), result);
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
  array as_array() const {
    return value.as_array(dtype);
  }
};

inline array multiply(const array& a, const Alpha& alpha) {
  return alpha.is_one() ? a : mlx::core::multiply(a, alpha.as_array());
}

inline array multiply(const Alpha& alpha, const array& a) {
  return multiply(a, alpha);
}

// `alpha` of add and sub: an integral operation takes no non-integral alpha, and only a
// boolean operation a boolean alpha (PyTorch's alpha_check).
inline void check_alpha(const char* op, Dtype dtype, const Scalar& alpha) {
  if (alpha.kind == Scalar::Kind::boolean && dtype != mlx::core::bool_) {
    refuse(op, "alpha", "a boolean alpha is only supported for boolean results");
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
// The same, without a copy when the input is reduced as it is: `self` itself, else the
// cast array made into `held`.
inline const array& reduction_input(
    const array& self, std::optional<Dtype> dtype, bool integral_to_long, std::optional<array>& held) {
  if (dtype) {
    return self.dtype() == *dtype ? self : held.emplace(mlx::core::astype(self, *dtype));
  }
  if (integral_to_long && is_integral(self.dtype(), true) && self.dtype() != mlx::core::int64) {
    return held.emplace(mlx::core::astype(self, mlx::core::int64));
  }
  return self;
}

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

// Whether PyTorch writes a result of dtype `from` into a tensor of dtype `to` (its
// canCast): never complex into non-complex, floating into integral, or non-bool into
// bool.
inline bool can_cast(Dtype from, Dtype to) {
  if (is_complex(from) && !is_complex(to)) {
    return false;
  }
  if (is_floating(from) && is_integral(to, true)) {
    return false;
  }
  return from == mlx::core::bool_ || to != mlx::core::bool_;
}

// An argument PyTorch writes in place (an in-place operator's `self`, an out= argument,
// running statistics): the array object the caller passed is made to hold `value`, as
// `a[...] = b` rebinds an array in MLX's Python API. MLX arrays are values: another array
// that shared the old values (a view, in PyTorch's words) keeps them.
inline array write_back(const array& target, const array& value) {
  const_cast<array&>(target).overwrite_descriptor(value);
  return target;
}

// An in-place variant's result, in its `self`'s dtype, written into `self`. An elementwise
// operator (`elementwise`) cannot change self's shape by broadcasting; others may
// (`unsqueeze_`, `resize_`).
inline array finish_inplace(const char* op, const array& result, const array& self, bool elementwise) {
  const Dtype dtype = self.dtype();
  if (!can_cast(result.dtype(), dtype)) {
    refuse(op, "self", "result type " + dtype_name(result.dtype()) +
               " can't be cast to the desired output type " + dtype_name(dtype));
  }
  if (elementwise && result.shape() != self.shape()) {
    refuse(op, "self", "the result's shape differs from self's, which an in-place "
               "elementwise operation cannot change");
  }
  return write_back(self, result.dtype() == dtype ? result : mlx::core::astype(result, dtype));
}

// An out= variant's result in the dtype of its `out` argument, written into it (resized
// to the result's shape, as PyTorch resizes it).
inline array finish_out(const char* op, const char* argument, const array& result, const array& out) {
  if (!can_cast(result.dtype(), out.dtype())) {
    refuse(op, argument, "result type " + dtype_name(result.dtype()) +
               " can't be cast to the desired output type " + dtype_name(out.dtype()));
  }
  const array value = result.dtype() == out.dtype() ? result : mlx::core::astype(result, out.dtype());
  return write_back(out, value);
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
  int count = 0;
  for (std::size_t i = 0; i < flat.size(); ++i) {
    if (!values[i]) {
      continue;
    }
    ++count;
    std::size_t rest = i;
    const std::size_t start = coordinates.size();
    coordinates.resize(start + ndim);
    for (int d = ndim - 1; d >= 0; --d) {
      const std::size_t extent = static_cast<std::size_t>(mask.shape(d));
      coordinates[start + d] = static_cast<std::int64_t>(rest % extent);
      rest /= extent;
    }
  }
  // A 0-d mask has no coordinates: one row of none if it is true.
  return array(coordinates.begin(), Shape{count, ndim}, int64);
}

// Integer indices into a dimension of `extent` elements, as int64, checked as PyTorch
// checks them (an index out of range is an error there, and undefined in MLX): in
// [-extent, extent) with negative ones counted from the end (`wrap`), else in
// [0, extent). The check reads the indices' values, so it evaluates them.
inline array checked_index(
    const char* op, const char* argument, const array& index, std::int64_t extent, bool wrap) {
  using namespace mlx::core;
  if (!is_integral(index.dtype(), false)) {
    refuse(op, argument, "indices must be integers, not " + dtype_name(index.dtype()));
  }
  const array indices = index.dtype() == int64 ? index : astype(index, int64);
  if (indices.size() == 0) {
    return indices;
  }
  const array low = array(wrap ? -extent : 0, int64);
  const array outside = logical_or(less(indices, low), greater_equal(indices, array(extent, int64)));
  if (any(outside).item<bool>()) {
    std::ostringstream why;
    why << "index " << min(where(outside, indices, array(extent, int64))).item<std::int64_t>()
        << " is out of range for a dimension of size " << extent;
    refuse(op, argument, why.str());
  }
  return wrap ? where(less(indices, array(0, int64)), add(indices, array(extent, int64)), indices)
              : indices;
}

// PyTorch's advanced indexing, `self[indices]`, planned once for reading (index) and
// writing (index_put): each index a tensor of integers (negative ones count from the
// end), a boolean (or uint8) mask standing for its true elements' coordinates over as
// many dimensions, or None for a whole dimension. The index tensors broadcast together;
// their dimensions replace the indexed ones where those are adjacent, else come first.
// Here the indexed dimensions are moved first and flattened into one, which the index
// tensors address by one linear index.
struct AdvancedIndex {
  array flat = array(0);  // self, the indexed dimensions first, flattened: [N, rest...]
  array linear = array(0);  // the broadcast index tensors as indices into N, flattened
  mlx::core::Shape moved;  // self's shape with the indexed dimensions first
  std::vector<int> order;  // self's dimensions in that order
  mlx::core::Shape index_shape;  // the index tensors' broadcast shape
  mlx::core::Shape rest;  // the dimensions not indexed
  int position = 0;  // the result's first index dimension (after `position` of `rest`)
  bool indexes = false;  // false: every index is None

  // The result's shape: the index dimensions, then the rest.
  mlx::core::Shape front_shape() const {
    mlx::core::Shape shape = index_shape;
    shape.insert(shape.end(), rest.begin(), rest.end());
    return shape;
  }
  // The result's dimensions in PyTorch's order, from front_shape's.
  std::vector<int> placed() const {
    const int index_ndim = static_cast<int>(index_shape.size());
    std::vector<int> axes;
    for (int d = 0; d < position; ++d) {
      axes.push_back(index_ndim + d);
    }
    for (int d = 0; d < index_ndim; ++d) {
      axes.push_back(d);
    }
    for (int d = index_ndim + position; d < index_ndim + static_cast<int>(rest.size()); ++d) {
      axes.push_back(d);
    }
    return axes;
  }
};

inline AdvancedIndex advanced_indexing(
    const char* op, const array& self, const std::vector<std::optional<array>>& indices) {
  using namespace mlx::core;
  const int ndim = static_cast<int>(self.ndim());
  std::vector<std::optional<array>> expanded;  // one entry per indexed dimension
  for (const std::optional<array>& index : indices) {
    if (index && (index->dtype() == bool_ || index->dtype() == uint8)) {
      const int at = static_cast<int>(expanded.size());
      if (index->ndim() == 0) {
        refuse(op, "indices", "a 0-d boolean index (PyTorch's own indexing refuses it too)");
      }
      if (at + static_cast<int>(index->ndim()) > ndim) {
        refuse(op, "indices", "too many indices for the tensor's dimensions");
      }
      for (int d = 0; d < static_cast<int>(index->ndim()); ++d) {
        if (index->shape(d) != self.shape(at + d)) {
          std::ostringstream why;
          why << "the mask's dimension " << d << " has size " << index->shape(d)
              << ", the indexed tensor's dimension " << at + d << " has size "
              << self.shape(at + d);
          refuse(op, "indices", why.str());
        }
      }
      const array coordinates = nonzero(*index);
      for (int d = 0; d < static_cast<int>(index->ndim()); ++d) {
        // MLX takes nothing from an empty array, not even an empty column.
        expanded.push_back(
            coordinates.size() == 0 ? zeros({0}, int64) : take(coordinates, d, 1));
      }
    } else {
      expanded.push_back(index);
    }
  }
  if (static_cast<int>(expanded.size()) > ndim) {
    refuse(op, "indices", "too many indices for the tensor's dimensions");
  }
  AdvancedIndex plan;
  std::vector<int> indexed;
  std::vector<array> arrays;
  for (int d = 0; d < static_cast<int>(expanded.size()); ++d) {
    if (expanded[d]) {
      indexed.push_back(d);
      arrays.push_back(checked_index(op, "indices", *expanded[d], self.shape(d), true));
    }
  }
  plan.flat = self;
  plan.moved = self.shape();
  plan.rest = self.shape();
  if (indexed.empty()) {
    return plan;
  }
  plan.indexes = true;
  arrays = broadcast_arrays(arrays);
  const bool adjacent = indexed.back() - indexed.front() + 1 == static_cast<int>(indexed.size());
  plan.position = adjacent ? indexed.front() : 0;
  plan.order = indexed;
  plan.rest.clear();
  for (int d = 0; d < ndim; ++d) {
    if (std::find(indexed.begin(), indexed.end(), d) == indexed.end()) {
      plan.order.push_back(d);
      plan.rest.push_back(self.shape(d));
    }
  }
  std::int64_t stride = 1;
  array linear = array(0, int64);
  for (int k = static_cast<int>(indexed.size()) - 1; k >= 0; --k) {
    linear = add(linear, multiply(arrays[k], array(stride, int64)));
    stride *= self.shape(indexed[k]);
  }
  if (stride > std::numeric_limits<std::int32_t>::max()) {
    refuse(op, "indices", "the indexed dimensions hold more elements than MLX's 32-bit dimensions");
  }
  array moved = transpose(self, plan.order);
  plan.moved = moved.shape();
  Shape flat_shape{static_cast<int>(stride)};
  flat_shape.insert(flat_shape.end(), plan.rest.begin(), plan.rest.end());
  plan.flat = reshape(moved, flat_shape);
  plan.index_shape = arrays[0].shape();
  plan.linear = reshape(linear, {-1});
  return plan;
}

// `self[indices]` (aten::index).
inline array advanced_index(
    const char* op, const array& self, const std::vector<std::optional<array>>& indices) {
  using namespace mlx::core;
  const AdvancedIndex plan = advanced_indexing(op, self, indices);
  if (!plan.indexes) {
    return self;
  }
  const Shape shape = plan.front_shape();
  std::size_t size = 1;
  for (int extent : shape) {
    size *= static_cast<std::size_t>(extent);
  }
  const array front =
      size == 0 ? zeros(shape, self.dtype()) : reshape(take(plan.flat, plan.linear, 0), shape);
  return plan.position == 0 ? front : transpose(front, plan.placed());
}

// `self[indices] = values`, or `+= values` (`accumulate`, which sums repeated indices),
// on a copy of self (aten::index_put): values broadcast to the shape `self[indices]` has.
inline array advanced_index_put(
    const char* op,
    const array& self,
    const std::vector<std::optional<array>>& indices,
    const array& values,
    bool accumulate) {
  using namespace mlx::core;
  const AdvancedIndex plan = advanced_indexing(op, self, indices);
  const array cast = values.dtype() == self.dtype() ? values : astype(values, self.dtype());
  if (!plan.indexes) {
    const array whole = broadcast_to(cast, self.shape());
    return accumulate ? add(self, whole) : whole;
  }
  Shape shape = plan.front_shape();
  std::vector<int> placed = plan.placed();
  Shape torch_shape;
  for (int axis : placed) {
    torch_shape.push_back(shape[axis]);
  }
  if (plan.linear.size() == 0 || self.size() == 0) {
    (void)broadcast_to(cast, torch_shape);  // still refuses values of the wrong shape
    return self;
  }
  array front = broadcast_to(cast, torch_shape);
  if (plan.position != 0) {
    std::vector<int> inverse(placed.size());
    for (int i = 0; i < static_cast<int>(placed.size()); ++i) {
      inverse[placed[i]] = i;
    }
    front = transpose(front, inverse);
  }
  Shape update_shape{static_cast<int>(plan.linear.size()), 1};
  update_shape.insert(update_shape.end(), plan.rest.begin(), plan.rest.end());
  const array updates = reshape(front, update_shape);
  const array written = accumulate ? scatter_add(plan.flat, plan.linear, updates, 0)
                                   : scatter(plan.flat, plan.linear, updates, 0);
  std::vector<int> back(plan.order.size());
  for (int i = 0; i < static_cast<int>(plan.order.size()); ++i) {
    back[plan.order[i]] = i;
  }
  return transpose(reshape(written, plan.moved), back);
}

// The elements PyTorch's gather and scatter operators address: for each position of
// `index`, self's element at the same coordinates but along `dim`, where the index's
// value is (checked). As MLX's gather and scatter take them: the coordinates along every
// axis, each of index's shape. A 0-d self or index reads as 1-d, as PyTorch reads it.
struct Scattered {
  array self = array(0);  // self, at least 1-d
  std::vector<array> coordinates;  // per axis, of `shape`
  std::vector<int> axes;  // every axis
  mlx::core::Shape shape;  // index's shape, at least 1-d
  bool empty = false;  // index has no elements

  // `src`'s elements at index's positions, in self's dtype, as MLX's scatter takes them:
  // src must be as large as index in every dimension (checked).
  array updates(const char* op, const char* argument, const array& src) const {
    using namespace mlx::core;
    array values = src.ndim() == 0 ? reshape(src, {1}) : src;
    if (values.ndim() != shape.size()) {
      refuse(op, argument, "it has not as many dimensions as index");
    }
    for (std::size_t d = 0; d < shape.size(); ++d) {
      if (values.shape(d) < shape[d]) {
        refuse(op, argument, "it is smaller than index in dimension " + std::to_string(d));
      }
    }
    values = slice(values, Shape(shape.size(), 0), shape);
    if (values.dtype() != self.dtype()) {
      values = astype(values, self.dtype());
    }
    Shape update_shape = shape;
    update_shape.insert(update_shape.end(), shape.size(), 1);
    return reshape(values, update_shape);
  }
  // Gathered values of a tensor shaped like self (as large as index but along `dim`).
  array gather(const array& values) const {
    using namespace mlx::core;
    if (empty) {
      return zeros(shape, values.dtype());
    }
    return reshape(
        mlx::core::gather(values, coordinates, axes, Shape(shape.size(), 1)), shape);
  }
};

inline Scattered scattered(const char* op, const array& self, std::int64_t dim, const array& index) {
  using namespace mlx::core;
  Scattered plan;
  plan.self = self.ndim() == 0 ? reshape(self, {1}) : self;
  const array positions = index.ndim() == 0 ? reshape(index, {1}) : index;
  const int ndim = static_cast<int>(plan.self.ndim());
  const int axis = wrap_dim(op, "dim", dim, static_cast<int>(self.ndim()));
  if (positions.size() == 0) {
    // PyTorch checks nothing more of an empty index: nothing is read or written.
    plan.shape = positions.shape();
    plan.empty = true;
    return plan;
  }
  if (static_cast<int>(positions.ndim()) != ndim) {
    refuse(op, "index", "it has not as many dimensions as self");
  }
  plan.shape = positions.shape();
  for (int d = 0; d < ndim; ++d) {
    if (d != axis && plan.shape[d] > plan.self.shape(d)) {
      refuse(op, "index", "it is larger than self in dimension " + std::to_string(d));
    }
  }
  const array checked = checked_index(op, "index", positions, plan.self.shape(axis), false);
  for (int d = 0; d < ndim; ++d) {
    plan.axes.push_back(d);
    if (d == axis) {
      plan.coordinates.push_back(checked);
      continue;
    }
    Shape along(ndim, 1);
    along[d] = plan.shape[d];
    plan.coordinates.push_back(broadcast_to(reshape(arange(plan.shape[d], int64), along), plan.shape));
  }
  return plan;
}

// PyTorch's neural-network semantics that several operators share: pooling windows,
// convolution over MLX's channels-last layout, index padding, interpolation, bags.

// The dtype a floating operator accumulates in: float32 for halves, as PyTorch's CPU
// kernels do (opmath); int64 for integers.
inline Dtype accumulation_dtype(Dtype dtype) {
  if (dtype == mlx::core::float16 || dtype == mlx::core::bfloat16) {
    return mlx::core::float32;
  }
  return is_integral(dtype, true) ? mlx::core::int64 : dtype;
}

// C++'s integer division (toward zero), which PyTorch's integral kernels compute: the
// quotient of the magnitudes (where floor and truncation agree), signed.
inline array truncated_divide(const array& a, const array& b) {
  using namespace mlx::core;
  const array q = floor_divide(abs(a), abs(b));
  const array signs = not_equal(less(a, array(0, a.dtype())), less(b, array(0, b.dtype())));
  return where(signs, negative(q), q);
}

// a * b + c rounded once, as PyTorch's CPU kernels compute it with fused multiply-adds:
// for float32, the product's rounding error (Dekker's split) and the sum's (Knuth's)
// added back; other dtypes multiply and add.
inline array fused_multiply_add(const array& a, const array& b, const array& c) {
  using namespace mlx::core;
  if (a.dtype() != float32 || b.dtype() != float32 || c.dtype() != float32) {
    return add(multiply(a, b), c);
  }
  const array split = array(4097.0f);  // 2^12 + 1: a float32's high and low 12 bits
  const auto high = [&](const array& x) {
    const array t = multiply(split, x);
    return subtract(t, subtract(t, x));
  };
  const array ah = high(a), bh = high(b);
  const array al = subtract(a, ah), bl = subtract(b, bh);
  const array p = multiply(a, b);
  const array product_error = add(
      add(add(subtract(multiply(ah, bh), p), multiply(ah, bl)), multiply(al, bh)), multiply(al, bl));
  const array s = add(p, c);
  const array z = subtract(s, p);
  const array sum_error = add(subtract(p, subtract(s, z)), subtract(c, z));
  const array fused = add(s, add(sum_error, product_error));
  // Infinite or NaN products and sums have no error to add back.
  return where(logical_and(isfinite(p), isfinite(s)), fused, s);
}

// A sized list that PyTorch reads as one value for every dimension, or `fallback` if empty.
inline IntList per_dimension(
    const char* op, const char* argument, const IntList& values, std::size_t size,
    const IntList& fallback) {
  if (values.empty()) {
    return fallback;
  }
  return sized(op, argument, values, size);
}

// PyTorch's pooling output size along one dimension (pooling_output_shape).
inline std::int64_t pooling_output_size(
    std::int64_t size, std::int64_t kernel, std::int64_t pad, std::int64_t stride,
    std::int64_t dilation, bool ceil_mode) {
  const std::int64_t span =
      size + 2 * pad - dilation * (kernel - 1) - 1 + (ceil_mode ? stride - 1 : 0);
  std::int64_t out = (span >= 0 ? span / stride : -((-span + stride - 1) / stride)) + 1;
  if (ceil_mode && (out - 1) * stride >= size + pad) {
    --out;
  }
  return out;
}

// The windows of a pooling over the last `kernel.size()` dimensions of `self` (one or
// two leading dimensions): their count per dimension, checked as PyTorch checks them.
struct PoolingWindows {
  int lead = 0;
  IntList kernel, stride, padding, dilation;
  std::vector<std::int64_t> in, out;

  PoolingWindows(
      const char* op, const array& self, const IntList& kernel_arg, const IntList& stride_arg,
      const IntList& padding_arg, const IntList& dilation_arg, bool ceil_mode) {
    const std::size_t nd = kernel_arg.size();
    kernel = kernel_arg;
    stride = per_dimension(op, "stride", stride_arg, nd, kernel);
    padding = sized(op, "padding", padding_arg, nd);
    dilation = sized(op, "dilation", dilation_arg, nd);
    lead = static_cast<int>(self.ndim()) - static_cast<int>(nd);
    if (lead != 1 && lead != 2) {
      std::ostringstream why;
      why << "expected " << nd + 1 << "-d or " << nd + 2 << "-d input, got " << self.ndim() << "-d";
      refuse(op, "self", why.str());
    }
    for (std::size_t d = 0; d < nd; ++d) {
      if (kernel[d] <= 0 || stride[d] <= 0 || dilation[d] <= 0) {
        refuse(op, "kernel_size", "kernel sizes, strides and dilations must be positive");
      }
      if (padding[d] < 0 || padding[d] > kernel[d] / 2) {
        refuse(op, "padding", "pad should be at least zero and at most half of the kernel size");
      }
      const std::int64_t size = self.shape(lead + static_cast<int>(d));
      const std::int64_t count =
          pooling_output_size(size, kernel[d], padding[d], stride[d], dilation[d], ceil_mode);
      if (count <= 0) {
        refuse(op, "kernel_size", "the output would be empty: the input is too small");
      }
      in.push_back(size);
      out.push_back(count);
    }
  }

  int dims() const {
    return static_cast<int>(kernel.size());
  }
  // `x` padded so that every window's positions are inside it (every axis named: MLX's
  // gradient of a pad of some axes has the wrong shape).
  array padded(const array& x, const array& value) const {
    std::vector<int> axes;
    mlx::core::Shape low(x.ndim(), 0), high(x.ndim(), 0);
    for (int a = 0; a < static_cast<int>(x.ndim()); ++a) {
      axes.push_back(a);
    }
    for (int d = 0; d < dims(); ++d) {
      const std::int64_t reach = (out[d] - 1) * stride[d] + (kernel[d] - 1) * dilation[d] + 1;
      low[lead + d] = static_cast<int>(padding[d]);
      high[lead + d] = static_cast<int>(std::max(padding[d], reach - in[d] - padding[d]));
    }
    return mlx::core::pad(x, axes, low, high, value);
  }
  // The elements at kernel position `offset` of every window, of the padded input.
  array at(const array& x, const std::vector<std::int64_t>& offset) const {
    mlx::core::Shape start(x.ndim(), 0), stop = x.shape(), steps(x.ndim(), 1);
    for (int d = 0; d < dims(); ++d) {
      start[lead + d] = static_cast<int>(offset[d] * dilation[d]);
      stop[lead + d] = static_cast<int>(offset[d] * dilation[d] + (out[d] - 1) * stride[d] + 1);
      steps[lead + d] = static_cast<int>(stride[d]);
    }
    return mlx::core::slice(x, start, stop, steps);
  }
  // Along dimension d, an array over the windows (broadcasting over the others).
  array along(int d, const std::vector<std::int64_t>& values, Dtype dtype) const {
    mlx::core::Shape shape(lead + dims(), 1);
    shape[lead + d] = static_cast<int>(values.size());
    return mlx::core::astype(
        array(values.begin(), shape, mlx::core::int64), dtype);
  }
  // Every kernel position, in PyTorch's (row-major) order.
  std::vector<std::vector<std::int64_t>> offsets() const {
    std::vector<std::vector<std::int64_t>> found{{}};
    for (int d = 0; d < dims(); ++d) {
      std::vector<std::vector<std::int64_t>> next;
      for (const auto& prefix : found) {
        for (std::int64_t k = 0; k < kernel[d]; ++k) {
          next.push_back(prefix);
          next.back().push_back(k);
        }
      }
      found = std::move(next);
    }
    return found;
  }
};

// PyTorch's average pooling (avg_poolNd): each window's sum over the input (zeros for
// padding) divided by divisor_override, else by the window's size within the padded
// input (count_include_pad) or within the input. Integers divide toward zero.
inline array avg_pool_nd(
    const char* op, const array& self, const IntList& kernel_size, const IntList& stride,
    const IntList& padding, bool ceil_mode, bool count_include_pad,
    std::optional<std::int64_t> divisor_override) {
  using namespace mlx::core;
  const PoolingWindows w(
      op, self, kernel_size, stride, padding, IntList(kernel_size.size(), 1), ceil_mode);
  if (divisor_override && *divisor_override == 0) {
    refuse(op, "divisor_override", "the divisor must not be zero");
  }
  const Dtype dtype = accumulation_dtype(self.dtype());
  const array x = w.padded(astype(self, dtype), array(0, dtype));
  std::optional<array> total;
  for (const auto& offset : w.offsets()) {
    const array window = w.at(x, offset);
    total = total ? add(*total, window) : window;
  }
  array divisor = array(divisor_override ? *divisor_override : 1, int64);
  if (!divisor_override) {
    for (int d = 0; d < w.dims(); ++d) {
      std::vector<std::int64_t> counts;
      for (std::int64_t o = 0; o < w.out[d]; ++o) {
        const std::int64_t start = o * w.stride[d] - w.padding[d];
        const std::int64_t end = std::min(start + w.kernel[d], w.in[d] + w.padding[d]);
        const std::int64_t inside = std::min(end, w.in[d]) - std::max(start, std::int64_t{0});
        counts.push_back(count_include_pad ? end - start : inside);
      }
      divisor = multiply(divisor, w.along(d, counts, int64));
    }
  }
  const array result = is_integral(dtype, true) ? truncated_divide(*total, divisor)
                                                 : divide(*total, astype(divisor, dtype));
  return astype(result, self.dtype());
}

// PyTorch's max pooling with indices (max_poolNd_with_indices): each window's largest
// input element (NaN wins; the first of equals), and its flat position in its plane.
inline std::tuple<array, array> max_pool_nd(
    const char* op, const array& self, const IntList& kernel_size, const IntList& stride,
    const IntList& padding, const IntList& dilation, bool ceil_mode) {
  using namespace mlx::core;
  const PoolingWindows w(op, self, kernel_size, stride, padding, dilation, ceil_mode);
  const array x = w.padded(self, array(0, self.dtype()));
  const bool floating = !is_integral(self.dtype(), true);
  std::optional<array> best, index, seen;
  for (const auto& offset : w.offsets()) {
    array valid = array(true);
    array position = array(0, int64);
    std::int64_t plane = 1;
    for (int d = w.dims() - 1; d >= 0; --d) {
      std::vector<std::int64_t> places, inside;
      for (std::int64_t o = 0; o < w.out[d]; ++o) {
        const std::int64_t place = o * w.stride[d] - w.padding[d] + offset[d] * w.dilation[d];
        places.push_back(place);
        inside.push_back(place >= 0 && place < w.in[d]);
      }
      valid = logical_and(valid, w.along(d, inside, bool_));
      position = add(position, multiply(w.along(d, places, int64), array(plane, int64)));
      plane *= w.in[d];
    }
    const array window = w.at(x, offset);
    if (!best) {
      best = window;
      index = position;
      seen = valid;
      continue;
    }
    array better = logical_or(logical_not(*seen), greater(window, *best));
    if (floating) {
      better = logical_or(better, isnan(window));
    }
    const array take_it = logical_and(valid, better);
    best = where(take_it, window, *best);
    index = where(take_it, position, *index);
    seen = logical_or(*seen, valid);
  }
  return {*best, broadcast_to(*index, best->shape())};
}

// PyTorch's adaptive average pooling over the last `output_size.size()` dimensions: output
// element o of a dimension of size n averages [floor(o*n/out), ceil((o+1)*n/out)).
// `in_dtype`: PyTorch's kernel sums each window in the input's dtype, element by element
// in row-major order, and divides by each dimension's extent in turn (its 3-d kernel).
inline array adaptive_avg_pool_nd(
    const char* op, const array& self, const IntList& output_size, bool in_dtype = false) {
  using namespace mlx::core;
  const int nd = static_cast<int>(output_size.size());
  const int lead = static_cast<int>(self.ndim()) - nd;
  if (lead != 1 && lead != 2) {
    refuse(op, "self", "expected an unbatched or batched input");
  }
  const Dtype dtype = accumulation_dtype(self.dtype());
  if (is_integral(dtype, true)) {
    refuse(op, "self", "adaptive average pooling takes a floating input");
  }
  for (const std::int64_t out : output_size) {
    if (out < 0) {
      refuse(op, "output_size", "output sizes must not be negative");
    }
  }
  if (in_dtype && dtype != self.dtype()) {
    std::vector<std::vector<std::int32_t>> starts(nd), sizes(nd);
    std::vector<std::int32_t> widest(nd, 0);
    for (int d = 0; d < nd; ++d) {
      const std::int64_t n = self.shape(lead + d), out = output_size[d];
      for (std::int64_t o = 0; o < out; ++o) {
        const std::int64_t start = (o * n) / out, end = ((o + 1) * n + out - 1) / out;
        starts[d].push_back(static_cast<std::int32_t>(start));
        sizes[d].push_back(static_cast<std::int32_t>(end - start));
        widest[d] = std::max(widest[d], static_cast<std::int32_t>(end - start));
      }
    }
    const auto along = [&](int d, const std::vector<std::int32_t>& values) {
      mlx::core::Shape shape(self.ndim(), 1);
      shape[lead + d] = static_cast<int>(values.size());
      return reshape(array(values.begin(), {static_cast<int>(values.size())}, int32), shape);
    };
    std::optional<array> total;
    std::vector<std::int32_t> offset(nd, 0);
    while (nd > 0 && widest[0] > 0) {
      array window = self;
      array valid = array(true);
      for (int d = 0; d < nd; ++d) {
        std::vector<std::int32_t> index;
        for (std::size_t o = 0; o < starts[d].size(); ++o) {
          index.push_back(starts[d][o] + std::min(offset[d], sizes[d][o] - 1));
        }
        window = take(window, array(index.begin(), {static_cast<int>(index.size())}, int32), lead + d);
        valid = logical_and(valid, less(array(offset[d], int32), along(d, sizes[d])));
      }
      total = total ? where(valid, add(*total, window), *total) : window;
      int d = nd - 1;
      while (d >= 0 && ++offset[d] == widest[d]) {
        offset[d] = 0;
        --d;
      }
      if (d < 0) {
        break;
      }
    }
    if (!total) {
      mlx::core::Shape shape = self.shape();
      for (int d = 0; d < nd; ++d) {
        shape[lead + d] = static_cast<int>(output_size[d]);
      }
      return zeros(shape, self.dtype());
    }
    array result = *total;
    for (int d = 0; d < nd; ++d) {
      result = divide(result, astype(along(d, sizes[d]), self.dtype()));
    }
    return result;
  }
  array x = astype(self, dtype);
  for (int d = 0; d < nd; ++d) {
    const int axis = lead + d;
    const std::int64_t n = x.shape(axis);
    const std::int64_t out = output_size[d];
    if (out == n) {
      continue;
    }
    if (out > 0 && n % out == 0) {
      mlx::core::Shape split = x.shape();
      split[axis] = static_cast<int>(out);
      split.insert(split.begin() + axis + 1, static_cast<int>(n / out));
      x = mean(reshape(x, split), axis + 1);
      continue;
    }
    std::vector<array> parts;
    for (std::int64_t o = 0; o < out; ++o) {
      const std::int64_t start = (o * n) / out;
      const std::int64_t end = ((o + 1) * n + out - 1) / out;
      mlx::core::Shape begin(x.ndim(), 0), stop = x.shape();
      begin[axis] = static_cast<int>(start);
      stop[axis] = static_cast<int>(end);
      parts.push_back(mean(slice(x, begin, stop), axis, true));
    }
    if (parts.empty()) {
      mlx::core::Shape empty = x.shape();
      empty[axis] = 0;
      x = zeros(empty, dtype);
    } else {
      x = concatenate(parts, axis);
    }
  }
  return astype(x, self.dtype());
}

// The gradient of a pooling as PyTorch's CPU kernels compute it: each window's value of
// `delta` (its last dimensions the windows') added to every input element the window
// covers ([start, end) per dimension, clipped to the input), windows in row-major order,
// in delta's dtype (so half precision rounds after each addition, as PyTorch's does).
inline array pooling_scatter(
    const array& delta, const mlx::core::Shape& input_shape,
    const std::vector<std::vector<std::int64_t>>& starts,
    const std::vector<std::vector<std::int64_t>>& ends) {
  using namespace mlx::core;
  const int nd = static_cast<int>(starts.size());
  const int rank = static_cast<int>(input_shape.size());
  const int lead = rank - nd;
  std::vector<std::vector<std::int32_t>> first(nd), count(nd);
  std::vector<std::int32_t> widest(nd, 0);
  for (int d = 0; d < nd; ++d) {
    const int n = input_shape[lead + d];
    first[d].assign(n, -1);
    count[d].assign(n, 0);
    for (std::size_t o = 0; o < starts[d].size(); ++o) {
      const std::int64_t begin = std::max<std::int64_t>(starts[d][o], 0);
      const std::int64_t end = std::min<std::int64_t>(ends[d][o], n);
      for (std::int64_t i = begin; i < end; ++i) {
        first[d][i] = first[d][i] < 0 ? static_cast<std::int32_t>(o) : first[d][i];
        widest[d] = std::max(widest[d], ++count[d][i]);
      }
    }
  }
  array total = zeros(input_shape, delta.dtype());
  std::vector<std::int32_t> step(nd, 0);
  bool empty = false;
  for (int d = 0; d < nd; ++d) {
    empty = empty || widest[d] == 0;
  }
  while (!empty) {
    array value = delta;
    array valid = array(true);
    for (int d = 0; d < nd; ++d) {
      const int n = input_shape[lead + d];
      std::vector<std::int32_t> index(n);
      std::vector<std::int32_t> inside(n);
      for (int i = 0; i < n; ++i) {
        index[i] = std::max(first[d][i], 0) + std::min(step[d], std::max(count[d][i] - 1, 0));
        inside[i] = step[d] < count[d][i];
      }
      value = take(value, array(index.begin(), {n}, int32), lead + d);
      mlx::core::Shape shape(rank, 1);
      shape[lead + d] = n;
      valid = logical_and(valid, reshape(astype(array(inside.begin(), {n}, int32), bool_), shape));
    }
    total = where(valid, add(total, value), total);
    int d = nd - 1;
    while (d >= 0 && ++step[d] == widest[d]) {
      step[d] = 0;
      --d;
    }
    if (d < 0) {
      break;
    }
  }
  return total;
}

// MLX's conv_general for dtypes its convolution does not compute exactly (integers): the
// same arguments, as sums of products in the input's dtype.
inline array conv_general_exact(
    array x, array weight, const std::vector<int>& stride, const std::vector<int>& low,
    const std::vector<int>& high, const std::vector<int>& kernel_dilation,
    const std::vector<int>& input_dilation, int groups, bool flip) {
  using namespace mlx::core;
  const int nd = static_cast<int>(stride.size());
  for (int d = 0; d < nd; ++d) {
    const int axis = 1 + d;
    if (input_dilation[d] > 1) {
      mlx::core::Shape shape = x.shape();
      shape[axis] = (shape[axis] - 1) * input_dilation[d] + 1;
      mlx::core::Shape start(x.ndim(), 0), steps(x.ndim(), 1);
      steps[axis] = input_dilation[d];
      x = slice_update(zeros(shape, x.dtype()), x, start, shape, steps);
    }
    mlx::core::Shape start(x.ndim(), 0), stop = x.shape();
    start[axis] = std::max(0, -low[d]);
    stop[axis] = x.shape(axis) - std::max(0, -high[d]);
    x = slice(x, start, stop);
    std::vector<int> axes;
    for (int a = 0; a < static_cast<int>(x.ndim()); ++a) {
      axes.push_back(a);
    }
    mlx::core::Shape before(x.ndim(), 0), after(x.ndim(), 0);
    before[axis] = std::max(0, low[d]);
    after[axis] = std::max(0, high[d]);
    x = pad(x, axes, before, after, array(0, x.dtype()));  // every axis: see PoolingWindows
    if (flip) {
      const int k = weight.shape(axis);
      std::vector<std::int32_t> reversed(k);
      for (int i = 0; i < k; ++i) {
        reversed[i] = k - 1 - i;
      }
      weight = take(weight, array(reversed.begin(), {k}, int32), axis);
    }
  }
  const int out_channels = weight.shape(0);
  const int group_in = weight.shape(-1);
  const int group_out = out_channels / groups;
  std::vector<int> out(nd);
  for (int d = 0; d < nd; ++d) {
    const int reach = kernel_dilation[d] * (weight.shape(1 + d) - 1) + 1;
    out[d] = (x.shape(1 + d) - reach) / stride[d] + 1;
  }
  std::vector<array> results;
  for (int g = 0; g < groups; ++g) {
    mlx::core::Shape xs(x.ndim(), 0), xe = x.shape();
    xs.back() = g * group_in;
    xe.back() = (g + 1) * group_in;
    const array xg = slice(x, xs, xe);
    mlx::core::Shape ws(weight.ndim(), 0), we = weight.shape();
    ws[0] = g * group_out;
    we[0] = (g + 1) * group_out;
    const array wg = slice(weight, ws, we);
    std::optional<array> total;
    std::vector<int> offset(nd, 0);
    while (true) {
      mlx::core::Shape start(x.ndim(), 0), stop = xg.shape(), steps(x.ndim(), 1);
      mlx::core::Shape wstart(weight.ndim(), 0), wstop = wg.shape();
      for (int d = 0; d < nd; ++d) {
        start[1 + d] = offset[d] * kernel_dilation[d];
        stop[1 + d] = start[1 + d] + (out[d] - 1) * stride[d] + 1;
        steps[1 + d] = stride[d];
        wstart[1 + d] = offset[d];
        wstop[1 + d] = offset[d] + 1;
      }
      const array window = expand_dims(slice(xg, start, stop, steps), -2);
      const array taps = reshape(slice(wg, wstart, wstop), {group_out, group_in});
      const array term = sum(multiply(window, taps), -1);
      total = total ? add(*total, term) : term;
      int d = nd - 1;
      while (d >= 0 && ++offset[d] == wg.shape(1 + d)) {
        offset[d] = 0;
        --d;
      }
      if (d < 0) {
        break;
      }
    }
    results.push_back(*total);
  }
  return groups == 1 ? results[0] : concatenate(results, -1);
}

// PyTorch's convolution (aten::convolution) of a batched channels-first input: MLX
// convolves channels-last, so the input moves its channels last and the result back; a
// transposed convolution is the convolution of the stride-dilated input with the flipped
// kernel, its weight regrouped from (in, out/groups, k...) to (out, k..., in/groups).
inline array convolution_nd(
    const char* op, const array& input, const array& weight, const std::optional<array>& bias,
    const IntList& stride_arg, const IntList& padding_arg, const IntList& dilation_arg,
    bool transposed, const IntList& output_padding_arg, std::int64_t groups) {
  using namespace mlx::core;
  const int nd = static_cast<int>(weight.ndim()) - 2;
  if (nd < 1 || nd > 3) {
    refuse(op, "weight", "MLX convolves over 1, 2 or 3 dimensions");
  }
  if (static_cast<int>(input.ndim()) != nd + 2) {
    refuse(op, "input", "expected a batched input with as many dimensions as the weight");
  }
  if (groups <= 0) {
    refuse(op, "groups", "groups must be positive");
  }
  const auto fits = [&](const IntList& values, bool non_negative) {
    if (values.size() != static_cast<std::size_t>(nd)) {
      return false;
    }
    for (std::int64_t v : values) {
      if ((non_negative && v < 0) || v > std::numeric_limits<int>::max()) {
        return false;
      }
    }
    return true;
  };
  if (!transposed && (groups == 1 || nd < 3) && is_floating(input.dtype()) &&
      accumulation_dtype(input.dtype()) == input.dtype() && weight.dtype() == input.dtype() &&
      fits(stride_arg, true) && fits(padding_arg, true) && fits(dilation_arg, true)) {
    // The common case, without the general path's bookkeeping: a convolution MLX computes
    // as it is, channels moved last and back.
    const std::vector<int> stride(stride_arg.begin(), stride_arg.end());
    const std::vector<int> padding(padding_arg.begin(), padding_arg.end());
    const std::vector<int> dilation(dilation_arg.begin(), dilation_arg.end());
    array y = moveaxis(
        conv_general(moveaxis(input, 1, -1), moveaxis(weight, 1, -1), stride, padding, padding,
                     dilation, std::vector<int>(nd, 1), static_cast<int>(groups), false),
        -1, 1);
    if (bias) {
      mlx::core::Shape shape(y.ndim(), 1);
      shape[1] = -1;
      y = add(y, reshape(astype(*bias, y.dtype()), shape));
    }
    return y;
  }
  const auto ints = [&](const char* argument, const IntList& values) {
    const IntList expanded = sized(op, argument, values, nd);
    return std::vector<int>(expanded.begin(), expanded.end());
  };
  const std::vector<int> stride = ints("stride", stride_arg);
  const std::vector<int> padding = ints("padding", padding_arg);
  const std::vector<int> dilation = ints("dilation", dilation_arg);
  const std::vector<int> ones(nd, 1);
  const int g = static_cast<int>(groups);
  const Dtype dtype = input.dtype();
  // Integers (and complex numbers) as sums of products; halves in float32.
  const bool exact = is_integral(dtype, true) || is_complex(dtype);
  const Dtype compute = exact ? dtype : accumulation_dtype(dtype);
  const array x = moveaxis(astype(input, compute), 1, -1);
  array w = astype(weight, compute);
  std::vector<int> low = padding, high = padding, strides = stride, input_dilation = ones;
  if (transposed) {
    const std::vector<int> output_padding = ints("output_padding", output_padding_arg);
    const int in_channels = weight.shape(0);
    mlx::core::Shape grouped{g, in_channels / g, weight.shape(1)};
    std::vector<int> order{0, 2};
    for (int d = 0; d < nd; ++d) {
      grouped.push_back(weight.shape(2 + d));
      order.push_back(3 + d);
    }
    order.push_back(1);
    w = transpose(reshape(w, grouped), order);
    mlx::core::Shape regrouped{g * weight.shape(1)};
    for (int d = 0; d < nd; ++d) {
      regrouped.push_back(weight.shape(2 + d));
    }
    regrouped.push_back(in_channels / g);
    w = reshape(w, regrouped);
    for (int d = 0; d < nd; ++d) {
      const int reach = dilation[d] * (weight.shape(2 + d) - 1);
      low[d] = reach - padding[d];
      high[d] = reach - padding[d] + output_padding[d];
    }
    strides = ones;
    input_dilation = stride;
  } else {
    w = moveaxis(w, 1, -1);
  }
  // MLX pads only outward: a negative padding crops the result instead.
  std::vector<int> crop_low(nd, 0), crop_high(nd, 0);
  for (int d = 0; d < nd; ++d) {
    if (low[d] < 0) {
      crop_low[d] = -low[d];
      low[d] = 0;
    }
    if (high[d] < 0) {
      crop_high[d] = -high[d];
      high[d] = 0;
    }
  }
  array y = x;
  if (exact) {
    y = conv_general_exact(x, w, strides, low, high, dilation, input_dilation, g, transposed);
  } else if (g > 1 && nd == 3) {
    // MLX groups 1-d and 2-d convolutions only: a 3-d one convolves group by group.
    const int group_in = x.shape(-1) / g, group_out = w.shape(0) / g;
    std::vector<array> parts;
    for (int k = 0; k < g; ++k) {
      mlx::core::Shape xs(x.ndim(), 0), xe = x.shape(), ws(w.ndim(), 0), we = w.shape();
      xs.back() = k * group_in;
      xe.back() = (k + 1) * group_in;
      ws[0] = k * group_out;
      we[0] = (k + 1) * group_out;
      parts.push_back(conv_general(slice(x, xs, xe), slice(w, ws, we), strides, low, high,
                                   dilation, input_dilation, 1, transposed));
    }
    y = concatenate(parts, -1);
  } else {
    y = conv_general(x, w, strides, low, high, dilation, input_dilation, g, transposed);
  }
  bool cropped = false;
  mlx::core::Shape start(y.ndim(), 0), stop = y.shape();
  for (int d = 0; d < nd; ++d) {
    start[1 + d] = crop_low[d];
    stop[1 + d] = y.shape(1 + d) - crop_high[d];
    cropped = cropped || crop_low[d] != 0 || crop_high[d] != 0;
  }
  y = moveaxis(cropped ? slice(y, start, stop) : y, -1, 1);
  if (bias) {
    mlx::core::Shape shape(y.ndim(), 1);
    shape[1] = -1;
    y = add(y, reshape(astype(*bias, y.dtype()), shape));
  }
  return astype(y, dtype);
}

// PyTorch's reflection and replication padding of the last padding.size() / 2 dimensions:
// `padding` holds (before, after) pairs from the last dimension backward; a negative
// amount removes elements.
inline array index_pad_nd(const char* op, const array& self, const IntList& padding, bool reflect) {
  using namespace mlx::core;
  const int nd = static_cast<int>(padding.size() / 2);
  const int lead = static_cast<int>(self.ndim()) - nd;
  if (padding.size() % 2 != 0 || lead < 1 || lead > 2) {
    refuse(op, "padding", "expected (before, after) pairs for the last dimensions of an "
                          "unbatched or batched input");
  }
  array x = self;
  for (int d = 0; d < nd; ++d) {
    const int axis = static_cast<int>(self.ndim()) - 1 - d;
    const std::int64_t n = self.shape(axis);
    const std::int64_t before = padding[2 * d], after = padding[2 * d + 1];
    if (reflect && (before >= n || after >= n)) {
      refuse(op, "padding", "reflection padding must be smaller than the dimension it pads");
    }
    const std::int64_t size = n + before + after;
    if (size < 0 || (n == 0 && size > 0)) {
      refuse(op, "padding", "the padded size would be negative, or pad an empty dimension");
    }
    std::vector<std::int32_t> source;
    for (std::int64_t j = 0; j < size; ++j) {
      std::int64_t i = j - before;
      if (reflect) {
        i = i < 0 ? -i : (i >= n ? 2 * (n - 1) - i : i);
      } else {
        i = std::min(std::max(i, std::int64_t{0}), n - 1);
      }
      source.push_back(static_cast<std::int32_t>(i));
    }
    x = take(x, array(source.begin(), {static_cast<int>(size)}, int32), axis);
  }
  return x;
}

// PyTorch's output size of an upsampling (compute_output_size): output_size, or each
// input size times its scale factor, truncated.
inline IntList upsample_output_size(
    const char* op, const array& input, const std::optional<IntList>& output_size,
    const std::optional<std::vector<double>>& scale_factors, int dims) {
  const int lead = static_cast<int>(input.ndim()) - dims;
  if (output_size && scale_factors) {
    refuse(op, "scale_factors", "give output_size or scale_factors, not both");
  }
  if (output_size) {
    return sized(op, "output_size", *output_size, dims);
  }
  if (!scale_factors || static_cast<int>(scale_factors->size()) != dims) {
    refuse(op, "scale_factors", "expected one scale factor per spatial dimension");
  }
  IntList sizes;
  for (int d = 0; d < dims; ++d) {
    sizes.push_back(static_cast<std::int64_t>(input.shape(lead + d) * (*scale_factors)[d]));
  }
  return sizes;
}

// PyTorch's scale of an upsampled dimension (area_pixel_compute_scale), in float.
inline float upsample_scale(
    std::int64_t in, std::int64_t out, bool align_corners, std::optional<double> scale) {
  if (align_corners) {
    return out > 1 ? static_cast<float>(in - 1) / static_cast<float>(out - 1) : 0.0f;
  }
  return scale && *scale > 0 ? static_cast<float>(1.0 / *scale)
                             : static_cast<float>(in) / static_cast<float>(out);
}

// PyTorch's linear interpolation (upsample_linear1d, bilinear2d, trilinear3d) of the last
// sizes.size() dimensions of a channels-first input, one dimension after another from
// the last, in float (or the input's wider floating dtype).
inline array upsample_linear_nd(
    const char* op, const array& input, const IntList& sizes, bool align_corners,
    const std::vector<std::optional<double>>& scales) {
  using namespace mlx::core;
  const int nd = static_cast<int>(sizes.size());
  const int lead = static_cast<int>(input.ndim()) - nd;
  if (lead != 2) {
    refuse(op, "input", "expected a batched channels-first input");
  }
  const Dtype dtype = accumulation_dtype(input.dtype());
  if (is_integral(dtype, true)) {
    refuse(op, "input", "linear interpolation takes a floating input");
  }
  array x = astype(input, dtype);
  for (int d = nd - 1; d >= 0; --d) {
    const int axis = lead + d;
    const std::int64_t in = input.shape(axis), out = sizes[d];
    if (out <= 0 || in <= 0) {
      refuse(op, "output_size", "input and output sizes must be positive");
    }
    const float scale = upsample_scale(in, out, align_corners, scales[d]);
    std::vector<std::int32_t> first, second;
    std::vector<float> weight;
    for (std::int64_t o = 0; o < out; ++o) {
      float source = align_corners ? scale * static_cast<float>(o)
                                   : scale * (static_cast<float>(o) + 0.5f) - 0.5f;
      source = source < 0 ? 0.0f : source;
      const std::int64_t index = static_cast<std::int64_t>(source);
      first.push_back(static_cast<std::int32_t>(index));
      second.push_back(static_cast<std::int32_t>(index + (index < in - 1 ? 1 : 0)));
      weight.push_back(source - static_cast<float>(index));
    }
    mlx::core::Shape shape(x.ndim(), 1);
    shape[axis] = static_cast<int>(out);
    const int count = static_cast<int>(out);
    const array lambda1 = astype(reshape(array(weight.begin(), {count}, float32), shape), dtype);
    const array lambda0 = subtract(array(1, dtype), lambda1);
    const array a = take(x, array(first.begin(), {count}, int32), axis);
    const array b = take(x, array(second.begin(), {count}, int32), axis);
    x = add(multiply(lambda0, a), multiply(lambda1, b));
  }
  return astype(x, input.dtype());
}

// PyTorch's nearest-neighbour upsampling (upsample_nearestNd) of the last sizes.size()
// dimensions: output o takes input min(floor(o * scale), in - 1), in float.
inline array upsample_nearest_nd(
    const char* op, const array& input, const IntList& sizes,
    const std::vector<std::optional<double>>& scales) {
  using namespace mlx::core;
  const int nd = static_cast<int>(sizes.size());
  const int lead = static_cast<int>(input.ndim()) - nd;
  if (lead != 2) {
    refuse(op, "input", "expected a batched channels-first input");
  }
  array x = input;
  for (int d = 0; d < nd; ++d) {
    const int axis = lead + d;
    const std::int64_t in = input.shape(axis), out = sizes[d];
    if (out <= 0 || in <= 0) {
      refuse(op, "output_size", "input and output sizes must be positive");
    }
    const float scale = upsample_scale(in, out, false, scales[d]);
    std::vector<std::int32_t> source;
    for (std::int64_t o = 0; o < out; ++o) {
      std::int64_t i = o;
      if (out == 2 * in) {
        i = o >> 1;
      } else if (out != in) {
        i = std::min(static_cast<std::int64_t>(std::floor(static_cast<float>(o) * scale)), in - 1);
      }
      source.push_back(static_cast<std::int32_t>(i));
    }
    x = take(x, array(source.begin(), {static_cast<int>(out)}, int32), axis);
  }
  return x;
}

// An array's values on the host as int64 (indices, offsets, sizes that shape a result).
inline std::vector<std::int64_t> host_integers(const array& a) {
  array values = mlx::core::contiguous(mlx::core::astype(mlx::core::reshape(a, {-1}), mlx::core::int64));
  values.eval();
  const std::int64_t* data = values.data<std::int64_t>();
  return std::vector<std::int64_t>(data, data + values.size());
}

// PyTorch's CPU embedding_bag (_embedding_bag and _embedding_bag_forward_only): the bags'
// sums, means or maxima of weight's rows, skipping padding_idx, and the bookkeeping
// outputs as PyTorch's kernel leaves them: offset2bag (empty on the sum fast path),
// bag_size (zeros for sums; `requires_grad` gives one per bag, else one per offset),
// max_indices (a copy of bag_size but for maxima).
inline std::tuple<array, array, array, array> embedding_bag_nd(
    const char* op, const array& weight, const array& indices, const array& offsets,
    std::int64_t mode, const std::optional<array>& per_sample_weights,
    bool include_last_offset, std::int64_t padding_idx, bool requires_grad) {
  using namespace mlx::core;
  if (indices.ndim() != 1 || offsets.ndim() != 1 || weight.ndim() != 2) {
    refuse(op, "indices", "expected 1-d indices and offsets and a 2-d weight");
  }
  if (mode < 0 || mode > 2) {
    refuse(op, "mode", "mode is 0 (sum), 1 (mean) or 2 (max)");
  }
  if (per_sample_weights && mode != 0) {
    refuse(op, "per_sample_weights", "only mode 0 (sum) takes per-sample weights");
  }
  const Dtype index_dtype = promote_types(op, indices.dtype(), offsets.dtype());
  const std::vector<std::int64_t> index = host_integers(indices);
  const std::vector<std::int64_t> offset = host_integers(offsets);
  const std::int64_t n = static_cast<std::int64_t>(index.size());
  const std::int64_t rows = weight.shape(0), columns = weight.shape(1);
  if (include_last_offset && offset.empty()) {
    refuse(op, "offsets", "include_last_offset needs at least one offset");
  }
  const std::int64_t bags = static_cast<std::int64_t>(offset.size()) - (include_last_offset ? 1 : 0);
  std::vector<std::int64_t> bag_of(n, 0);
  {
    std::vector<std::int64_t> starts(n + 1, 0);
    for (std::int64_t b = 0; b < bags; ++b) {
      if (offset[b] < 0 || offset[b] > n) {
        refuse(op, "offsets", "offsets must lie within the indices");
      }
      starts[offset[b]] += 1;
    }
    if (bags > 0) {
      starts[0] -= 1;
    }
    std::int64_t running = 0;
    for (std::int64_t i = 0; i < n; ++i) {
      running += starts[i];
      bag_of[i] = running;
    }
  }
  std::vector<std::int64_t> bag_size(bags, 0);
  for (std::int64_t b = 0; b < bags; ++b) {
    bag_size[b] = (b + 1 < bags ? offset[b + 1] : n) - offset[b];
  }
  std::vector<std::int32_t> kept_rows, kept_bags, kept_positions;
  for (std::int64_t i = 0; i < n; ++i) {
    if (index[i] < 0 || index[i] >= rows) {
      refuse(op, "indices", "an index is out of range of weight's rows");
    }
    if (bag_of[i] < 0 || bag_of[i] >= bags) {
      continue;  // past the last bag's offset with include_last_offset: not in any bag
    }
    if (index[i] == padding_idx) {
      bag_size[bag_of[i]] -= 1;
      continue;
    }
    kept_rows.push_back(static_cast<std::int32_t>(index[i]));
    kept_bags.push_back(static_cast<std::int32_t>(bag_of[i]));
    kept_positions.push_back(static_cast<std::int32_t>(i));
  }
  const int kept = static_cast<int>(kept_rows.size());
  const Dtype dtype = accumulation_dtype(weight.dtype());
  const int b32 = static_cast<int>(bags), c32 = static_cast<int>(columns);
  array output = zeros({b32, c32}, dtype);
  array max_indices = zeros({0}, index_dtype);
  if (mode == 2) {
    // The maxima are chosen on the host, in float32 (exact for every dtype but float64,
    // which MLX computes on the CPU only) or float64.
    const bool wide = weight.dtype() == float64;
    array values = contiguous(astype(weight, wide ? float64 : float32));
    values.eval();
    std::vector<double> data(values.size());
    for (std::size_t i = 0; i < values.size(); ++i) {
      data[i] = wide ? values.data<double>()[i] : values.data<float>()[i];
    }
    std::vector<double> best(bags * columns, 0.0);
    std::vector<std::int64_t> which(bags * columns, 0);
    std::vector<bool> empty(bags, true);
    for (int k = 0; k < kept; ++k) {
      const std::int64_t b = kept_bags[k], row = kept_rows[k];
      for (std::int64_t c = 0; c < columns; ++c) {
        const double v = data[row * columns + c];
        if (empty[b] || v > best[b * columns + c]) {
          best[b * columns + c] = v;
          which[b * columns + c] = row;
        }
      }
      empty[b] = false;
    }
    output = array(best.begin(), {b32, c32}, wide ? float64 : float32);
    max_indices = astype(array(which.begin(), {b32, c32}, int64), index_dtype);
  } else if (kept > 0) {
    array gathered = astype(take(weight, array(kept_rows.begin(), {kept}, int32), 0), dtype);
    if (per_sample_weights) {
      const array scale = take(astype(*per_sample_weights, dtype),
                               array(kept_positions.begin(), {kept}, int32), 0);
      gathered = multiply(gathered, expand_dims(scale, 1));
    }
    output = scatter_add(output, array(kept_bags.begin(), {kept}, int32),
                         expand_dims(gathered, 1), 0);
  }
  if (mode == 1) {
    std::vector<std::int64_t> divisor(bag_size);
    for (auto& d : divisor) {
      d = std::max<std::int64_t>(d, 1);
    }
    output = divide(output, astype(reshape(array(divisor.begin(), {b32}, int64), {b32, 1}), dtype));
  }
  const bool fast_sum = mode == 0 && padding_idx < 0 &&
      (weight.dtype() == float32 || weight.dtype() == float16 || weight.dtype() == bfloat16);
  std::vector<std::int64_t> offset2bag = fast_sum ? std::vector<std::int64_t>{} : bag_of;
  std::vector<std::int64_t> sizes = bag_size;
  if (mode == 0) {
    sizes.assign(requires_grad ? bags : static_cast<std::int64_t>(offset.size()), 0);
  }
  const auto as_index = [&](const std::vector<std::int64_t>& values) {
    return astype(array(values.begin(), {static_cast<int>(values.size())}, int64), index_dtype);
  };
  const array bag_size_out = as_index(sizes);
  if (mode != 2) {
    max_indices = bag_size_out;
  }
  return {astype(output, weight.dtype()), as_index(offset2bag), bag_size_out, max_indices};
}

// PyTorch's batch normalization (batch_norm_cpu) over every dimension but the channels'
// (1): with the batch's statistics in training, else the running ones. The statistics are
// float for a half-precision input with float parameters (PyTorch's mixed type), else of
// the input's dtype. Returns the output, the saved mean and inverse standard deviation
// (empty outside training) and the running statistics as
// _native_batch_norm_legit_functional returns them (in training momentum-weighted
// towards the batch's, the variance unbiased).
inline std::tuple<array, array, array, std::optional<array>, std::optional<array>> batch_norm_nd(
    const char* op, const array& input, const std::optional<array>& weight,
    const std::optional<array>& bias, const std::optional<array>& running_mean,
    const std::optional<array>& running_var, bool training, double momentum, double eps) {
  using namespace mlx::core;
  if (input.ndim() < 2) {
    refuse(op, "input", "expected an input of at least 2 dimensions (N, C, ...)");
  }
  const Dtype dtype = accumulation_dtype(input.dtype());
  if (is_integral(dtype, true)) {
    refuse(op, "input", "batch normalization takes a floating input");
  }
  Dtype stats = input.dtype();
  for (const std::optional<array>* p : {&weight, &bias, &running_mean, &running_var}) {
    if (*p && (*p)->dtype() == float32 && dtype != input.dtype()) {
      stats = float32;
    }
  }
  const array x = astype(input, dtype);
  std::vector<int> axes;
  for (int i = 0; i < static_cast<int>(input.ndim()); ++i) {
    if (i != 1) {
      axes.push_back(i);
    }
  }
  mlx::core::Shape channel(input.ndim(), 1);
  channel[1] = -1;
  const auto per_channel = [&](const array& v) { return reshape(astype(v, dtype), channel); };
  array batch_mean = zeros({0}, dtype), variance = zeros({0}, dtype), mean_used = batch_mean,
        invstd = batch_mean;
  if (training) {
    // PyTorch keeps the statistics in their dtype as it computes them: a half-precision
    // mean, sum of squares, variance and inverse deviation each round.
    const auto kept = [&](const array& v) { return astype(astype(v, stats), dtype); };
    const double count = static_cast<double>(input.size()) / static_cast<double>(input.shape(1));
    batch_mean = mean(x, axes);
    const array squares = kept(sum(square(subtract(x, per_channel(batch_mean))), axes));
    variance = kept(divide(squares, array(count, dtype)));
    batch_mean = kept(batch_mean);
    mean_used = batch_mean;
    invstd = kept(divide(array(1, dtype), sqrt(add(variance, array(eps, dtype)))));
  } else {
    if (!running_mean || !running_var) {
      refuse(op, "running_mean", "normalizing outside training takes the running statistics");
    }
    mean_used = astype(*running_mean, dtype);
    invstd = divide(array(1, dtype), sqrt(add(astype(*running_var, dtype), array(eps, dtype))));
  }
  array y = multiply(subtract(x, per_channel(mean_used)), per_channel(invstd));
  if (weight) {
    y = multiply(y, per_channel(*weight));
  }
  if (bias) {
    y = add(y, per_channel(*bias));
  }
  std::optional<array> new_mean = running_mean, new_var = running_var;
  if (training && running_mean && running_var) {
    const double count = static_cast<double>(input.size()) / static_cast<double>(input.shape(1));
    const array m = array(momentum, dtype), keep = array(1.0 - momentum, dtype);
    const array unbiased = multiply(variance, array(count / (count - 1.0), dtype));
    new_mean = astype(add(multiply(keep, astype(*running_mean, dtype)), multiply(m, batch_mean)),
                      running_mean->dtype());
    new_var = astype(add(multiply(keep, astype(*running_var, dtype)), multiply(m, unbiased)),
                     running_var->dtype());
  }
  const array saved_mean = training ? astype(batch_mean, stats) : zeros({0}, stats);
  const array saved_invstd = training ? astype(invstd, stats) : zeros({0}, stats);
  return {astype(y, input.dtype()), saved_mean, saved_invstd, new_mean, new_var};
}

// PyTorch's matrix product of integral (or boolean) matrices, which MLX's matmul does not
// compute: sums of products in int64, wrapping into the operands' dtype as PyTorch's do.
inline array integral_matmul(const array& a, const array& b) {
  using namespace mlx::core;
  const array products =
      multiply(expand_dims(astype(a, int64), -1), expand_dims(astype(b, int64), -3));
  return astype(sum(products, -2), a.dtype());
}

// The dtype of an operand as PyTorch's checks see it: a tensor's, or a number's wrapped
// dtype (bool, int64, float32, complex64).
inline Dtype operand_dtype(const Operand& operand) {
  if (const array* a = operand.as_array()) {
    return a->dtype();
  }
  return operand.scalar().wrapped_dtype();
}

// Float16 and bfloat16 values in float32, the type PyTorch's CPU kernels compute them in
// (its "opmath" type), so that a composite formula rounds once, to the result's dtype.
inline array opmath(const array& a) {
  const Dtype d = a.dtype();
  return d == mlx::core::float16 || d == mlx::core::bfloat16 ? mlx::core::astype(a, mlx::core::float32)
                                                             : a;
}

// The dtypes a PyTorch kernel is defined for: floating only (gelu, elu, ...), or bool and
// integers only (bitwise operators). PyTorch raises for any other.
inline void require_floating(const char* op, const char* argument, const array& a) {
  if (!is_floating(a.dtype())) {
    refuse(op, argument, "PyTorch computes it for floating dtypes only, not " + dtype_name(a.dtype()));
  }
}

inline void require_integral(const char* op, const char* argument, const array& a) {
  if (!is_integral(a.dtype(), true)) {
    refuse(op, argument, "PyTorch computes it for bool and integer dtypes only, not " +
               dtype_name(a.dtype()));
  }
}

// IEEE's sign bit (set for -0.0 and negative NaNs); an integer's sign.
inline array sign_bit(const array& a) {
  using namespace mlx::core;
  const Dtype d = a.dtype();
  if (is_floating(d)) {
    const Dtype bits = d.size() == 2 ? int16 : (d.size() == 4 ? int32 : int64);
    return less(view(a, bits), array(0, bits));
  }
  if (issubdtype(d, signedinteger)) {
    return less(a, array(0, d));
  }
  return zeros(a.shape(), bool_);
}

// MLX computes exp, sin, cos, erf and erfinv of float64 values in single precision (and
// its exp overflows at float32's range). These give float64 values double precision
// through functions MLX computes in it (std::pow, std::tan); other dtypes go to MLX's own.
inline array precise_exp(const array& x) {
  using namespace mlx::core;
  if (x.dtype() != float64) {
    return exp(x);
  }
  return power(array(2.718281828459045, float64), x);
}

// sin and cos of float64 values by the half-angle tangent t: sin = 2t / (1 + t^2),
// cos = (1 - t^2) / (1 + t^2).
inline array precise_sin(const array& x) {
  using namespace mlx::core;
  if (x.dtype() != float64) {
    return sin(x);
  }
  const array t = tan(multiply(x, array(0.5, float64)));
  return divide(multiply(array(2.0, float64), t), add(array(1.0, float64), multiply(t, t)));
}

inline array precise_cos(const array& x) {
  using namespace mlx::core;
  if (x.dtype() != float64) {
    return cos(x);
  }
  const array t = tan(multiply(x, array(0.5, float64)));
  const array square = multiply(t, t);
  return divide(subtract(array(1.0, float64), square), add(array(1.0, float64), square));
}

// An operator whose MLX function computes float64 in single precision, and which has no
// double-precision formula here, refuses float64.
inline void refuse_float64(const char* op, const char* argument, const array& a) {
  if (a.dtype() == mlx::core::float64) {
    refuse(op, argument, "MLX computes this function of float64 values in single precision");
  }
}

// The divisor of an integral division (`a` by `b`), checked: PyTorch raises
// ZeroDivisionError where one is zero, and MLX's division would stop the process, so its
// values are read here. A divisor of -1 comes back as 1 (the callers negate): dividing the
// most negative number by -1 traps, where PyTorch wraps.
inline array integer_divisor(const char* op, const char* argument, const array& a, const array& b) {
  using namespace mlx::core;
  const Shape shape = broadcast_shapes(a.shape(), b.shape());
  const bool empty = std::any_of(shape.begin(), shape.end(), [](int size) { return size == 0; });
  if (!empty && any(equal(b, array(0, b.dtype()))).item<bool>()) {
    refuse(op, argument, "ZeroDivisionError: an integer divided by zero");
  }
  if (!issubdtype(b.dtype(), signedinteger)) {
    return b;
  }
  return where(equal(b, array(-1, b.dtype())), array(1, b.dtype()), b);
}

// PyTorch's integer and floating division and remainders (div's rounding modes 'trunc' and
// 'floor', fmod and remainder): `a` and `b` of one dtype, not bool; results in it.
inline array remainder_trunc(const char* op, const char* argument, const array& a, const array& b) {
  using namespace mlx::core;
  if (is_integral(a.dtype(), false)) {
    const array divisor = integer_divisor(op, argument, a, b);
    const array r = remainder(a, divisor);  // the sign of the divisor
    const array zero = array(0, a.dtype());
    const array differs = logical_and(not_equal(r, zero), not_equal(less(r, zero), less(a, zero)));
    return where(differs, subtract(r, divisor), r);
  }
  const array x = opmath(a);
  // The remainder of magnitudes is exact; it takes the dividend's sign.
  const array r = remainder(abs(x), abs(opmath(b)));
  return astype(where(less(x, array(0, x.dtype())), negative(r), r), a.dtype());
}

inline array remainder_floor(const char* op, const char* argument, const array& a, const array& b) {
  using namespace mlx::core;
  if (is_integral(a.dtype(), false)) {
    return remainder(a, integer_divisor(op, argument, a, b));
  }
  return astype(remainder(opmath(a), opmath(b)), a.dtype());
}

inline array div_trunc(const char* op, const char* argument, const array& a, const array& b) {
  using namespace mlx::core;
  if (is_integral(a.dtype(), false)) {
    const array divisor = integer_divisor(op, argument, a, b);
    // a less its remainder divides exactly, whichever way MLX rounds integer quotients.
    const array exact = subtract(a, remainder_trunc(op, argument, a, b));
    const array quotient = floor_divide(exact, divisor);
    if (!issubdtype(b.dtype(), signedinteger)) {
      return quotient;
    }
    return where(equal(b, array(-1, b.dtype())), negative(a), quotient);
  }
  // The quotient rounded to the dtype before it is truncated, as PyTorch's kernels do.
  return trunc(divide(a, b));
}

inline array div_floor(const char* op, const char* argument, const array& a, const array& b) {
  using namespace mlx::core;
  if (is_integral(a.dtype(), false)) {
    const array zero = array(0, a.dtype());
    const array quotient = div_trunc(op, argument, a, b);
    const array inexact = not_equal(remainder_trunc(op, argument, a, b), zero);
    const array signs_differ = not_equal(less(a, zero), less(b, zero));
    return where(logical_and(inexact, signs_differ), subtract(quotient, array(1, a.dtype())), quotient);
  }
  // c10's div_floor_floating, step by step.
  const array x = opmath(a);
  const array y = opmath(b);
  const Dtype d = x.dtype();
  const array zero = array(0, d);
  const array one = array(1, d);
  const array mod = remainder_trunc(op, argument, x, y);
  array quotient = divide(subtract(x, mod), y);
  const array adjust = logical_and(not_equal(mod, zero), not_equal(less(y, zero), less(mod, zero)));
  quotient = where(adjust, subtract(quotient, one), quotient);
  array floored = floor(quotient);
  floored = where(greater(subtract(quotient, floored), array(0.5, d)), add(floored, one), floored);
  const array true_quotient = divide(x, y);
  const array signed_zero = where(sign_bit(true_quotient), array(-0.0, d), zero);
  array result = where(equal(quotient, zero), signed_zero, floored);
  result = where(equal(y, zero), true_quotient, result);
  return astype(result, a.dtype());
}

// The shape a reduction over `axes` leaves. A reduction of an array without elements is
// made of it, never computed: MLX's reductions may loop forever on such arrays.
inline mlx::core::Shape reduced_shape(const array& x, const std::vector<int>& axes, bool keepdim) {
  mlx::core::Shape shape;
  for (int d = 0; d < static_cast<int>(x.ndim()); ++d) {
    if (std::find(axes.begin(), axes.end(), d) == axes.end()) {
      shape.push_back(x.shape(d));
    } else if (keepdim) {
      shape.push_back(1);
    }
  }
  return shape;
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
  if (x.size() == 0) {
    return zeros(reduced_shape(x, {axis}, keepdim), int64);
  }
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
// Only of floating and complex numbers, as in PyTorch.
inline array variance(
    const char* op, const array& x, const std::vector<int>& axes, double correction, bool keepdim) {
  using namespace mlx::core;
  if (!is_floating(x.dtype()) && !is_complex(x.dtype())) {
    refuse(op, "self", "the variance of " + dtype_name(x.dtype()) + ": only of floating types");
  }
  const Dtype real = is_complex(x.dtype()) ? float32 : x.dtype();
  if (x.size() == 0) {
    return full(reduced_shape(x, axes, keepdim), std::numeric_limits<float>::quiet_NaN(), real);
  }
  const array input = opmath(x);
  double count = 1;
  for (int axis : axes) {
    count *= x.shape(axis);
  }
  const array deviation = subtract(input, mean(input, axes, true));
  const array squared = is_complex(x.dtype()) ? square(abs(deviation)) : square(deviation);
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
