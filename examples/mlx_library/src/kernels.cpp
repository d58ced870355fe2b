// The hand-written part of mlx_library's kernels module (kernels.yaml): the
// CPU kernels of its primitives, plain loops over float32 data, and the
// composite swish_impl. mlxkern_ops.h declares them all.
//
// A CPU kernel runs on the stream's CPU worker when MLX evaluates the graph;
// the generated Primitive has already made the inputs row-contiguous and
// allocated the outputs, so a kernel only reads and writes.
#include <algorithm>
#include <cstddef>
#include <stdexcept>

#include "mlxkern_ops.h"

namespace mx = mlx::core;

namespace mlxkern {
namespace {

// The float32 data of an array, checked; the kernels take no other dtype.
const float* floats(const mx::array& a, const char* op) {
  if (a.dtype() != mx::float32) {
    throw std::invalid_argument(std::string(op) + ": expects float32 arrays");
  }
  return a.data<float>();
}

} // namespace

void axpby_cpu(
    const std::vector<mx::array>& inputs,
    std::vector<mx::array>& outputs,
    float alpha,
    float beta) {
  const float* x = floats(inputs[0], "axpby");
  const float* y = floats(inputs[1], "axpby");
  if (inputs[0].size() != inputs[1].size()) {
    throw std::invalid_argument("axpby: x and y must have the same shape");
  }
  float* out = outputs[0].data<float>();
  for (std::size_t i = 0; i < outputs[0].size(); ++i) {
    out[i] = alpha * x[i] + beta * y[i];
  }
}

void clip_scale_cpu(
    const std::vector<mx::array>& inputs,
    std::vector<mx::array>& outputs,
    float limit,
    float scale) {
  const float* x = floats(inputs[0], "clip_scale");
  float* out = outputs[0].data<float>();
  for (std::size_t i = 0; i < outputs[0].size(); ++i) {
    out[i] = scale * std::clamp(x[i], -limit, limit);
  }
}

void minmax_cpu(const std::vector<mx::array>& inputs, std::vector<mx::array>& outputs) {
  const float* x = floats(inputs[0], "minmax");
  const std::size_t n = inputs[0].size();
  if (n == 0) {
    throw std::invalid_argument("minmax: the array is empty");
  }
  const auto [lo, hi] = std::minmax_element(x, x + n);
  *outputs[0].data<float>() = *lo;
  *outputs[1].data<float>() = *hi;
}

mx::array swish_impl(const mx::array& x, float beta, mx::StreamOrDevice s) {
  const mx::array bx = mx::multiply(x, mx::array(beta, x.dtype()), s);
  return mx::multiply(x, mx::sigmoid(bx, s), s);
}

} // namespace mlxkern
