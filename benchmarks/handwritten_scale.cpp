// mylib::scale written by hand, for bench_wrapper.py: the same kernel
// (mylib::native::scale) defined and registered with TORCH_LIBRARY (m.def, m.impl),
// and its gradient as a plain torch::autograd::Function, the way PyTorch's custom
// C++ operator tutorial writes one. Compiled into the example library, so it is
// built with the same flags as the generated code it is compared with.
#include <torch/autograd.h>
#include <torch/library.h>

#include "mylib/kernels.h"

namespace {

struct ScaleFunction : public torch::autograd::Function<ScaleFunction> {
  static at::Tensor forward(
      torch::autograd::AutogradContext* ctx, const at::Tensor& self, const at::Scalar& factor) {
    at::AutoDispatchBelowADInplaceOrView guard;
    static auto op = c10::Dispatcher::singleton()
                         .findSchemaOrThrow("handwritten::scale", "")
                         .typed<at::Tensor(const at::Tensor&, const at::Scalar&)>();
    ctx->saved_data["factor"] = factor;
    return op.call(self, factor);
  }

  static torch::autograd::variable_list backward(
      torch::autograd::AutogradContext* ctx, torch::autograd::variable_list grads) {
    return {grads[0] * ctx->saved_data["factor"].toScalar(), at::Tensor()};
  }
};

at::Tensor scale_autograd(const at::Tensor& self, const at::Scalar& factor) {
  return ScaleFunction::apply(self, factor);
}

}  // namespace

TORCH_LIBRARY(handwritten, m) {
  m.def("scale(Tensor self, Scalar factor) -> Tensor");
}

TORCH_LIBRARY_IMPL(handwritten, CompositeExplicitAutograd, m) {
  m.impl("scale", TORCH_FN(mylib::native::scale));
}

TORCH_LIBRARY_IMPL(handwritten, Autograd, m) {
  m.impl("scale", TORCH_FN(scale_autograd));
}
