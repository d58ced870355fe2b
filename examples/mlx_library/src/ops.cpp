// The composite operators of mlx_library (ops.yaml): each `<name>_impl` is
// built from mlx::core operations on the stream `s`. opgen generates the
// operators around them (mlxlib_ops.h declares both); where ops.yaml gives
// gradient formulas, they replace MLX's own differentiation of these.
#include "mlxlib_ops.h"

namespace mx = mlx::core;

namespace mlxlib {

mx::array rms_norm_impl(
    const mx::array& x,
    const mx::array& weight,
    float eps,
    mx::StreamOrDevice s) {
  const mx::array ms = mx::mean(mx::square(x, s), -1, true, s);
  const mx::array r = mx::rsqrt(mx::add(ms, mx::array(eps, x.dtype()), s), s);
  return mx::multiply(mx::multiply(x, r, s), weight, s);
}

mx::array softplus_impl(
    const mx::array& x,
    float beta,
    std::optional<float> threshold,
    mx::StreamOrDevice s) {
  // log(1 + exp(b x)) / b = logaddexp(0, b x) / b, which never overflows.
  const mx::array bx = mx::multiply(x, mx::array(beta, x.dtype()), s);
  const mx::array y = mx::divide(
      mx::logaddexp(mx::zeros_like(bx, s), bx, s), mx::array(beta, x.dtype()), s);
  if (!threshold) {
    return y;
  }
  return mx::where(mx::greater(bx, mx::array(*threshold, x.dtype()), s), x, y, s);
}

mx::array scaled_add_impl(
    const mx::array& a,
    const mx::array& b,
    float alpha,
    mx::StreamOrDevice s) {
  return mx::add(a, mx::multiply(b, mx::array(alpha, b.dtype()), s), s);
}

mx::array linear_impl(
    const mx::array& x,
    const mx::array& w,
    const std::optional<mx::array>& bias,
    mx::StreamOrDevice s) {
  const mx::array y = mx::matmul(x, mx::transpose(w, s), s);
  return bias ? mx::add(y, *bias, s) : y;
}

mx::array weighted_sum_impl(
    const std::vector<mx::array>& xs,
    const std::optional<mx::array>& weights,
    mx::StreamOrDevice s) {
  if (xs.empty()) {
    throw std::invalid_argument("weighted_sum: needs at least one array");
  }
  if (weights && (weights->ndim() != 1 || weights->size() != xs.size())) {
    throw std::invalid_argument("weighted_sum: weights must be 1-D, one per array");
  }
  std::optional<mx::array> total;
  for (std::size_t i = 0; i < xs.size(); ++i) {
    const int index = static_cast<int>(i);
    const mx::array term =
        weights ? mx::multiply(xs[i], mx::take(*weights, index, s), s) : xs[i];
    total = total ? mx::add(*total, term, s) : term;
  }
  return *total;
}

std::tuple<mx::array, mx::array> mean_var_impl(const mx::array& x, int axis, mx::StreamOrDevice s) {
  const mx::array mean = mx::mean(x, axis, false, s);
  const mx::array centred = mx::subtract(x, mx::expand_dims(mean, axis, s), s);
  return {mean, mx::mean(mx::square(centred, s), axis, false, s)};
}

} // namespace mlxlib
