"""How a lazy-tensor backend's generated code names its classes and helpers.

`opgen lazy` generates, for a backend built on PyTorch's lazy-tensor core
(TorchScript's own, torch_xla, torch-mlir), IR node classes and the kernels
that build them. The generated C++ calls into the backend's runtime by name:
its tensor class, how it gets a lazy tensor from an `at::Tensor`, how it
counts calls. Upstream's `run_gen_lazy_tensor` takes these as keyword
arguments (its command line exposes only some); `LazyOptions` holds them all,
with upstream's defaults, and every one is a flag of `opgen lazy`.
"""

from __future__ import annotations

from opgen.frozen import frozen
from opgen.targets.backend.options import BackendOptions
from opgen.targets.contract import RunOptions


@frozen
class LazyOptions:
    node_base: str = "Node"  # the IR nodes' base class
    node_base_hdr: str | None = None  # its header, included by LazyIr.h
    shape_inference_hdr: str = "torch/csrc/lazy/core/shape_inference.h"
    tensor_class: str = "torch::lazy::LazyTensor"
    tensor_class_hdr: str = "torch/csrc/lazy/core/tensor.h"
    backend_name: str = "TorchScript"
    gen_ts_lowerings: bool = False  # IR nodes with TorchScript `Lower` methods
    use_lazy_shape: bool = True  # nodes carry shapes (`torch::lazy::Shape`)
    build_in_tree: bool = False  # include generated headers as <...>, not "..."
    per_operator_headers: bool = False  # ATen was built with per-operator headers
    gen_forced_fallback_code: bool = False  # kernels may fall back to eager (force_eager_fallback)
    backend_namespace: str = "torch::lazy"
    get_tensorlist: str = "GetTensorList"
    get_tensor_or_wrap_number: str = "GetLtcTensorOrCreateForWrappedNumber"
    try_get_tensor: str = "TryGetLtcTensor"
    metrics_counter: str = 'TORCH_LAZY_FN_COUNTER("lazy::")'
    create_tensor: str = "LazyTensor::Create"
    create_from_first_tensor: bool = False
    create_aten_from_ltc_tensor: str = "torch::lazy::CreateAtenFromLtcTensor"
    tuple_aten_from_ltc_tensors: str = "torch::lazy::TupleAtenFromLtcTensors"
    lazy_value_class: str = "torch::lazy::Value"  # the IR value type (`setValueT` upstream)
    lazy_tensor_ptr: str = "LazyTensorPtr"
    get_device_fn: str = "torch::lazy::GetBackendDevice"


@frozen
class LazyBackendOptions:
    """The flags of one `opgen lazy` run: `opgen backend`'s, and run_gen_lazy_tensor's."""

    backend: BackendOptions
    lazy: LazyOptions

    @property
    def run(self) -> RunOptions:
        return self.backend.run
