// mylib's C++ kernels. Their only declarations are generated (mylib/kernels.h):
// each kernel is defined here in the namespace the header declares it in
// (mylib::native, as the spec names them without namespace), with its signature.
// A kernel whose namespace or signature drifts from the spec gets a warning here
// (-Wmissing-declarations) and fails to link (--no-undefined), so the library
// never builds to fail at import with an undefined symbol.
#include "mylib/kernels.h"

namespace mylib::native {

namespace {
at::Tensor inverse_rms(const at::Tensor& x, double eps) {
  return at::rsqrt(x.pow(2).mean(-1, /*keepdim=*/true) + eps);
}
}  // namespace

at::Tensor rms_norm_cpu(const at::Tensor& x, const at::Tensor& weight, double eps) {
  TORCH_CHECK(x.size(-1) == weight.numel(), "rms_norm: weight must have x.size(-1) elements");
  return x * inverse_rms(x, eps) * weight;
}

at::Tensor rms_norm_meta(const at::Tensor& x, const at::Tensor& weight, double eps) {
  TORCH_CHECK(x.sym_size(-1) == weight.sym_numel(), "rms_norm: weight must have x.size(-1) elements");
  return at::empty_like(x);
}

std::tuple<at::Tensor, at::Tensor> rms_norm_backward_cpu(
    const at::Tensor& grad, const at::Tensor& x, const at::Tensor& weight, double eps,
    std::array<bool, 2> output_mask) {
  const at::Tensor r = inverse_rms(x, eps);
  const at::Tensor normalized = x * r;
  at::Tensor grad_x;
  at::Tensor grad_weight;
  if (output_mask[0]) {
    const at::Tensor g = grad * weight;
    const auto n = static_cast<double>(x.size(-1));
    grad_x = r * (g - normalized * (g * normalized).sum(-1, /*keepdim=*/true) / n);
  }
  if (output_mask[1]) {
    grad_weight = (grad * normalized).reshape({-1, x.size(-1)}).sum(0).reshape(weight.sizes());
  }
  return {grad_x, grad_weight};
}

at::Tensor scale(const at::Tensor& self, const at::Scalar& factor) {
  return self * factor;
}

void scale_(at::Tensor& self, const at::Scalar& factor) {
  self.mul_(factor);
}

void scale_out(const at::Tensor& self, const at::Scalar& factor, at::Tensor& out) {
  at::mul_out(out, self, at::scalar_tensor(factor, self.options()));
}

at::Tensor fused_mul_add_cpu(
    const at::Tensor& x, const at::Tensor& y, const std::optional<at::Tensor>& bias,
    double alpha) {
  at::Tensor result = x * y * alpha;
  if (bias.has_value() && bias->defined()) {
    result = result + *bias;
  }
  return result;
}

at::Tensor weighted_sum(at::TensorList tensors, std::optional<at::ArrayRef<double>> weights) {
  TORCH_CHECK(!tensors.empty(), "weighted_sum: needs at least one tensor");
  TORCH_CHECK(!weights || weights->size() == tensors.size(),
              "weighted_sum: needs one weight per tensor");
  at::Tensor total = at::zeros_like(tensors[0]);
  for (size_t i = 0; i < tensors.size(); ++i) {
    total = total + tensors[i] * (weights ? (*weights)[i] : 1.0);
  }
  return total;
}

at::Tensor grid(
    int64_t rows, int64_t cols, std::optional<at::ScalarType> dtype,
    std::optional<at::Layout> layout, std::optional<at::Device> device,
    std::optional<bool> pin_memory) {
  const auto options = at::TensorOptions()
                           .dtype(dtype.value_or(at::kFloat))
                           .layout(layout)
                           .device(device)
                           .pinned_memory(pin_memory);
  return at::arange(rows * cols, options).view({rows, cols});
}

namespace {
at::TensorOptions window_options(
    std::optional<at::ScalarType> dtype, std::optional<at::Layout> layout,
    std::optional<at::Device> device, std::optional<bool> pin_memory) {
  return at::TensorOptions()
      .dtype(dtype.value_or(at::kFloat))
      .layout(layout)
      .device(device)
      .pinned_memory(pin_memory);
}
}  // namespace

at::Tensor hann_cpu(
    int64_t n, std::optional<at::ScalarType> dtype, std::optional<at::Layout> layout,
    std::optional<at::Device> device, std::optional<bool> pin_memory) {
  TORCH_CHECK(n >= 0, "hann: n must not be negative");
  const auto options = window_options(dtype, layout, device, pin_memory);
  const at::Tensor k = at::arange(n, options.dtype(at::kDouble));
  constexpr double pi = 3.14159265358979323846;
  return (0.5 - 0.5 * at::cos(2 * pi * k / static_cast<double>(n))).to(options.dtype());
}

at::Tensor hann_meta(
    int64_t n, std::optional<at::ScalarType> dtype, std::optional<at::Layout> layout,
    std::optional<at::Device> device, std::optional<bool> pin_memory) {
  TORCH_CHECK(n >= 0, "hann: n must not be negative");
  return at::empty({n}, window_options(dtype, layout, device, pin_memory));
}

std::tuple<at::Tensor, at::Tensor> sort_desc_cpu(const at::Tensor& x, int64_t dim) {
  auto [values, indices] = at::sort(x, dim, /*descending=*/true);
  return {values, indices};
}

std::tuple<at::Tensor, at::Tensor> sort_desc_meta(const at::Tensor& x, int64_t dim) {
  return {at::empty_like(x), at::empty_like(x, x.options().dtype(at::kLong))};
}

}  // namespace mylib::native
