"""What every `Register<Key>.cpp` shares, in-tree (`opgen aten`) or out-of-tree (`opgen backend`).

The file head: the includes a key's registrations need besides the
operators' (`dispatch_headers`) and the static helpers of structured kernels
(`dispatch_helpers`: `create_out`, `resize_out`, `check_inplace`,
`maybe_create_proxy`, as far as the key can allocate tensors); and, in each
kernel wrapper, the check that all tensor arguments are on one device and the
device guard. Facts from torchgen 2.13's dest/register_dispatch_key.py.
"""

from __future__ import annotations

from opgen.spec.backend import BackendIndex
from opgen.spec.keys import CUDA_DISPATCH_KEYS, DispatchKey
from opgen.spec.native import NativeFunction

K = DispatchKey

# The header declaring each key's tensor factories (`at::detail::empty_<key>`).
_EMPTY_TENSOR_HEADERS = {
    K.CPU: "ATen/EmptyTensor.h",
    K.Meta: "ATen/EmptyTensor.h",
    K.MPS: "ATen/mps/EmptyTensor.h",
    K.XPU: "ATen/xpu/EmptyTensor.h",
    K.MTIA: "ATen/native/mtia/EmptyTensor.h",
}
_DEVICE_FACTORY_KEYS = frozenset({K.Meta, K.CPU, K.CUDA, K.MPS, K.XPU, K.MTIA})
_GENERIC_FACTORY_KEYS = frozenset(
    {K.CompositeExplicitAutogradNonFunctional, K.QuantizedCPU, K.QuantizedCUDA}
)

# The structured kernels' helpers, copied into every Register<Key>.cpp that needs them.
# Emitted C++ as torchgen writes it (byte-identical output). `resize_out`.
_RESIZE_OUT = """
void resize_out(const Tensor &out, IntArrayRef sizes, IntArrayRef strides, const TensorOptions &options) {
  TORCH_CHECK(options.dtype() == out.dtype(),
      "Expected out tensor to have dtype ", options.dtype(), ", but got ", out.dtype(), " instead");
  TORCH_CHECK(options.device() == out.device(),
      "Expected out tensor to have device ", options.device(), ", but got ", out.device(), " instead");
  const bool resized = at::native::resize_output(out, sizes);
  // Only restride if a resize occurred; otherwise we ignore the (advisory)
  // strides from the meta function and directly use the output tensor's
  // preexisting strides
  if (resized) {
    if (!strides.empty()) {
      TORCH_INTERNAL_ASSERT(!options.memory_format_opt().has_value());
      // TODO: avoid the redispatch here
      out.as_strided_(sizes, strides);
    } else if (options.memory_format_opt().has_value()) {
      out.unsafeGetTensorImpl()->empty_tensor_restride(*options.memory_format_opt());
    }
  }
}
"""  # noqa: E501

# Emitted C++ as torchgen writes it (byte-identical output). `check_inplace`.
_CHECK_INPLACE = """
void check_inplace(const Tensor &self, IntArrayRef sizes, const TensorOptions &options) {
  // These checks are needed on those operators that:
  //   1) don't use 'TensorIterator' (e.g. 'addmm' and 'baddbmm')
  //   2) have particular typing rules (e.g. 'cumsum' and 'cumprod')
  // For other operators (e.g. 'add'), 'TensorIterator' already checks
  // these things separately.
  TORCH_CHECK(options.dtype() == self.dtype(),
      "Bad in-place call: ",
      "input tensor dtype ", self.dtype(), " and output tensor dtype ", options.dtype(), " should match");
  TORCH_CHECK(options.device() == self.device(),
      "Bad in-place call: ",
      "input tensor device ", self.device(), " and output tensor device ", options.device(), " should match");
  TORCH_CHECK(sizes == self.sizes(),
      "Bad in-place call: ",
      "input tensor size ", self.sizes(), " and output tensor size ", sizes, " should match");
}
"""  # noqa: E501


def _factories(index: BackendIndex) -> tuple[str, str] | None:
    """The functions allocating plain and strided tensors for the key, if it has any."""
    key = index.dispatch_key
    if key in _DEVICE_FACTORY_KEYS:
        return f"at::detail::empty_{key.lower()}", f"at::detail::empty_strided_{key.lower()}"
    if key in _GENERIC_FACTORY_KEYS:
        return "at::empty", "at::empty_strided"
    return None


def dispatch_headers(
    index: BackendIndex, *, per_operator_headers: bool, rocm: bool, native_aot_stubs: bool = False
) -> list[str]:
    """The includes a key's registrations need besides the operators'.

    `native_aot_stubs`: the key has native AOT declarations (torch 2.15 on), whose stubs
    CUDA's structured wrappers call (`opgen.targets.aten.native_aot`).
    """
    key = index.dispatch_key
    headers = [
        "#include <ATen/ops/as_strided_native.h>"
        if per_operator_headers
        else "#include <ATen/NativeFunctions.h>"
    ]
    if key in _EMPTY_TENSOR_HEADERS:
        headers.append(f"#include <{_EMPTY_TENSOR_HEADERS[key]}>")
    elif key is K.CUDA:
        headers.append(f"#include <ATen/{'hip' if rocm else 'cuda'}/EmptyTensor.h>")
        if native_aot_stubs:
            headers.append("#include <ATen/NativeAotStubs.h>")
    elif per_operator_headers:
        headers.extend(
            f"#include <ATen/ops/{op}.h>"
            for op in ("empty", "empty_strided", "_copy_from_and_resize", "_copy_from")
        )
    else:
        headers.append("#include <ATen/Functions.h>")
    headers.append("#include <c10/macros/Macros.h>")
    return headers


def dispatch_helpers(index: BackendIndex) -> list[str]:
    """The static helpers of the structured classes, as far as the key can provide them."""
    helpers = ['C10_DIAGNOSTIC_PUSH_AND_IGNORED_IF_DEFINED("-Wunused-function")']
    factories = _factories(index)
    if factories is not None:
        empty, empty_strided = factories
        options = "options.device(at::kMeta)" if index.dispatch_key is K.Meta else "options"
        # Emitted C++ as torchgen writes it (byte-identical output). `create_out`.
        helpers.append(
            "\nTensor create_out(IntArrayRef sizes, IntArrayRef strides, "
            "const TensorOptions &options) {\n"
            "  if (strides.empty()) {\n"
            f"      return {empty}(sizes, {options});\n"
            "  } else {\n"
            f"      return {empty_strided}(sizes, strides, {options});\n"
            "  }\n}\n"
        )
    # Only functional kernels are derived for this key, so it never resizes outputs.
    if index.dispatch_key is not K.CompositeExplicitAutogradNonFunctional:
        helpers.append(_RESIZE_OUT)
    helpers.append(_CHECK_INPLACE)
    if factories is not None:
        # Emitted C++ as torchgen writes it (byte-identical output). `maybe_create_proxy`.
        helpers.append(
            "\nstd::optional<Tensor> maybe_create_proxy(const Tensor &out, IntArrayRef sizes, "
            "IntArrayRef strides, const TensorOptions &options) {\n"
            "  if (out.strides() != strides) {\n"
            f"    return {factories[1]}(sizes, strides, options);\n"
            "  }\n"
            "  return std::nullopt;\n}\n"
        )
    helpers.append("C10_DIAGNOSTIC_POP()")
    return helpers


def device_check(f: NativeFunction, wrapper_name: str) -> str:
    """The check that every tensor argument is on one device (`device_check: NoCheck` skips it)."""
    if f.device_check.name == "NoCheck":
        return "  // No device check\n"
    lines = [
        "std::optional<Device> common_device = std::nullopt;\n",
        "(void)common_device; // Suppress unused variable warning\n",
    ]
    arguments = f.func.arguments
    for a in (*arguments.out, *arguments.flat_positional):
        if a.type.is_tensor_like():
            lines.append(
                "\n  c10::impl::check_and_update_common_device("
                f'common_device, {a.name}, "{wrapper_name}", "{a.name}");'
            )
    return "".join(lines)


def device_guard(key: DispatchKey, f: NativeFunction) -> str:
    """The wrapper's device guard: from a factory's options, else its first tensor argument."""
    arguments = f.func.arguments
    if arguments.tensor_options is not None:  # a factory: the device comes from the options
        guard = "\n  const DeviceGuard device_guard(device_or_default(device));"
        if key in CUDA_DISPATCH_KEYS:
            return f"globalContext().lazyInitDevice(c10::DeviceType::CUDA);\n{guard}"
        return guard
    self_arg = [arguments.self_arg.argument] if arguments.self_arg is not None else []
    for a in (*self_arg, *arguments.out, *arguments.flat_positional):
        if a.type.is_tensor_like():
            return f"const OptionalDeviceGuard device_guard(device_of({a.name}));"
    return "// DeviceGuard omitted"


def namespace_lines(namespace: str, *, max_level: int) -> tuple[str, str]:
    """The lines opening and closing a (nested) C++ namespace."""
    parts = namespace.split("::")
    if len(parts) > max_level:
        raise ValueError(f"namespace {namespace} is nested deeper than {max_level} levels")
    opening = "\n".join(f"namespace {n} {{" for n in parts)
    closing = "\n".join(f"}} // namespace {n}" for n in reversed(parts))
    return opening, closing
