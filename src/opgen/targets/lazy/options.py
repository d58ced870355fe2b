"""How a lazy-tensor backend's generated code names its classes and helpers.

`opgen lazy` generates, for a backend built on PyTorch's lazy-tensor core
(TorchScript's own, torch_xla, torch-mlir), IR node classes and the kernels
that build them. The generated C++ calls into the backend's runtime by name:
its tensor class, how it gets a lazy tensor from an `at::Tensor`, how it
counts calls. Upstream's `run_gen_lazy_tensor` takes these as keyword
arguments (its command line exposes only some); `LazyOptions` holds them all,
with upstream's defaults, and every one is a flag of `opgen lazy`. The node classes
read only `NodeStyle` of them, the kernels only `KernelStyle`.
"""

from __future__ import annotations

from opgen.frozen import frozen
from opgen.releases import Release
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


@frozen
class NodeStyle:
    """How the IR node classes are written (`nodes`): what of `LazyOptions` they read."""

    node_base: str
    value_class: str  # the IR value type, `ns::Class`
    use_lazy_shape: bool
    gen_ts_lowerings: bool
    release: Release

    @classmethod
    def of(cls, options: LazyOptions, release: Release) -> NodeStyle:
        return cls(
            options.node_base,
            options.lazy_value_class,
            options.use_lazy_shape,
            options.gen_ts_lowerings,
            release,
        )


@frozen
class KernelStyle:
    """What the generated kernels call in the backend's runtime (`kernels`): what of
    `LazyOptions` they read."""

    gen_forced_fallback_code: bool
    metrics_counter: str
    get_device_fn: str
    backend_namespace: str
    get_tensorlist: str
    get_tensor_or_wrap_number: str
    try_get_tensor: str
    lazy_tensor_ptr: str
    create_tensor: str
    create_from_first_tensor: bool
    create_aten_from_ltc_tensor: str
    tuple_aten_from_ltc_tensors: str

    @classmethod
    def of(cls, options: LazyOptions) -> KernelStyle:
        return cls(
            options.gen_forced_fallback_code,
            options.metrics_counter,
            options.get_device_fn,
            options.backend_namespace,
            options.get_tensorlist,
            options.get_tensor_or_wrap_number,
            options.try_get_tensor,
            options.lazy_tensor_ptr,
            options.create_tensor,
            options.create_from_first_tensor,
            options.create_aten_from_ltc_tensor,
            options.tuple_aten_from_ltc_tensors,
        )
