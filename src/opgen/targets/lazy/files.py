"""The files `opgen lazy` writes beside the backend's class header and registrations.

- `<Key>NativeFunctions.cpp` (template `DispatchKeyNativeFunctions.cpp`): the
  generated kernels of the `full_codegen` operators, which build IR nodes,
  and the `to_meta` helpers they use for shape inference.
- `LazyIr.h` (template `LazyIr.h`): one IR node class per `full_codegen` and
  `ir_gen` operator.
- `LazyNonNativeIr.h` (template `LazyNonNativeIr.h`): the node classes of the
  `non_native` entries.

Operators are visited in upstream's order: the grouped spec sorted by the
name of each item's functional operator, then each item's functions.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence, Set
from functools import partial
from operator import itemgetter

from opgen.api.lazy import UnsupportedLazyOperator
from opgen.diagnostics import Diagnostic, SpecError
from opgen.frozen import frozen
from opgen.output import OutputSet
from opgen.releases import Release
from opgen.spec.backend import BackendIndex
from opgen.spec.external_backend import ExternalBackend
from opgen.spec.native import NativeFunction
from opgen.spec.schema import OperatorName
from opgen.targets.backend.files import BackendRun, Position, members
from opgen.targets.dispatch_registration import namespace_lines
from opgen.targets.lazy.kernels import native_function_definitions
from opgen.targets.lazy.nodes import ir_node_classes, non_native_node
from opgen.targets.lazy.options import LazyOptions

PerFunction = Callable[[NativeFunction, BackendIndex, LazyOptions], list[str]]

# What the generated kernels call, besides the backend's own headers.
# Emitted C++ as torchgen writes it (byte-identical output). The includes, in order.
_KERNEL_INCLUDES = """\
#include <ATen/Functions.h>
#include <ATen/native/TensorConversions.h>
#include <ATen/NativeFunctions.h>
#include <ATen/CompositeExplicitAutogradNonFunctionalFunctions.h>
#include <ATen/MetaFunctions.h>
#include <ATen/Operators.h>
#include <ATen/native/CPUFallback.h>
#include <torch/csrc/lazy/core/ir_builder.h>
#include <torch/csrc/lazy/core/lazy_graph_executor.h>
#include <torch/csrc/lazy/core/metrics.h>
#include <torch/csrc/lazy/core/shape.h>"""
_IR_SYSTEM_INCLUDES = (
    "ATen/core/Formatting.h",
    "c10/core/ScalarType.h",
    "torch/csrc/lazy/core/hash.h",
    "torch/csrc/lazy/core/ir.h",
    "torch/csrc/lazy/core/shape.h",
    "optional",
    "vector",
)
_NON_NATIVE_INCLUDES = (
    "torch/csrc/lazy/core/ir.h",
    "torch/csrc/lazy/core/ir_builder.h",
    "torch/csrc/lazy/core/internal_ops/ltc_ops.h",
    "torch/csrc/lazy/core/shape_inference.h",
)

# Converting the kernels' arguments to meta tensors, to run meta kernels for shapes.
# Emitted C++ as torchgen writes it (byte-identical output). `to_meta`.
_TO_META = """\
at::Tensor to_meta(const at::Tensor& tensor) {
  // undefined tensors can't be converted to the meta device, since they don't have sizes/strides
  if (!tensor.defined()) return tensor;
  auto out = at::native::empty_strided_meta_symint(tensor.sym_sizes(), tensor.sym_strides(), \
/*dtype=*/tensor.scalar_type(), /*layout=*/tensor.layout(), \
/*device=*/c10::Device(c10::kMeta), /*pin_memory=*/std::nullopt);
  // needs to handle wrapped numbers, so dtype promotion works properly.
  if (tensor.unsafeGetTensorImpl()->is_wrapped_number()) {
    out.unsafeGetTensorImpl()->set_wrapped_number(true);
  }
  return out;
}
std::optional<at::Tensor> to_meta(const std::optional<at::Tensor>& tensor) {
  if (tensor.has_value()) {
    return to_meta(*tensor);
  }
  return std::nullopt;
}

std::vector<at::Tensor> to_meta(at::ITensorListRef t_list) {
  std::vector<at::Tensor> outs;
  outs.reserve(t_list.size());
  for (const auto& tensor : t_list) {
    outs.push_back(to_meta(tensor));
  }
  return outs;
}
"""


# The per-operator texts of the lazy files from one part of the spec (or all of it), as
# plain values (which a forked worker sends back without pickling, `opgen.forked`), each
# with the position of its operator's item: the full_codegen kernels
# (<Key>NativeFunctions.cpp), the full_codegen and ir_gen node classes (LazyIr.h), and
# the node classes of the `non_native` entries (LazyNonNativeIr.h; the same from
# every part).
PositionedText = tuple[Position, str]
LazyPartTexts = tuple[list[PositionedText], list[PositionedText], list[str]]


@frozen
class LazyTexts:
    """The per-operator texts of the lazy files, in order, computed before any is written."""

    kernels: list[str]  # <Key>NativeFunctions.cpp: the full_codegen operators' kernels
    nodes: list[str]  # LazyIr.h: the full_codegen and ir_gen operators' node classes
    non_native: list[str]  # LazyNonNativeIr.h


def merged_lazy_texts(parts: Sequence[LazyPartTexts]) -> LazyTexts:
    """The texts of the parts of a spec as one, in the order of their positions."""
    kernels = sorted((k for part in parts for k in part[0]), key=itemgetter(0))
    nodes = sorted((n for part in parts for n in part[1]), key=itemgetter(0))
    return LazyTexts([t for _, t in kernels], [t for _, t in nodes], parts[0][2])


def lazy_texts(run: BackendRun, options: LazyOptions, release: Release) -> LazyPartTexts:
    """Every operator's texts; a SpecError at the YAML entry of each one lazy IR cannot express."""
    backend = run.backend
    generated = {op.name for op in backend.full_codegen}
    with_ir = generated | {op.name for op in backend.ir_gen}
    where = {op.name: op.location for op in (*backend.full_codegen, *backend.ir_gen)}
    errors: list[Diagnostic] = []

    def texts(names: Set[OperatorName], per_function: PerFunction) -> list[PositionedText]:
        found: list[PositionedText] = []
        for f, index, position in functions_of(run, names):
            try:
                found.extend((position, text) for text in per_function(f, index, options))
            except UnsupportedLazyOperator as e:
                message = str(e) if f"'{f.func.name}'" in str(e) else f"'{f.func.name}': {e}"
                errors.append(Diagnostic(where[f.func.name], message))
        return found

    kernels = texts(generated, native_function_definitions)
    nodes = texts(with_ir, partial(ir_node_classes, release=release))
    non_native = []
    for node in backend.non_native:
        try:
            text = non_native_node(node.func, node.properties, node.opkind, options, release)
            non_native.append(text)
        except UnsupportedLazyOperator as e:
            errors.append(Diagnostic(node.location, str(e)))
    if errors:
        raise SpecError.of(errors)
    return kernels, nodes, non_native


def functions_of(
    run: BackendRun, names: Set[OperatorName]
) -> Iterator[tuple[NativeFunction, BackendIndex, Position]]:
    """The functions named, in upstream's order (see the module doc), with the backend's
    index and the position of their item."""
    backend = run.backend
    assert backend.backend_key is not None, "a lazy backend has kernels"
    index = backend.indices[backend.backend_key]
    for item, position in zip(run.items, run.positions, strict=True):
        for f in members(item):
            if f.func.name in names:
                yield f, index, position


def add_lazy_files(
    out: OutputSet,
    backend: ExternalBackend,
    texts: LazyTexts,
    options: LazyOptions,
    output_dir: str,
) -> None:
    key = backend.backend_key
    assert key is not None, "a lazy backend has kernels"
    prologue, epilogue = namespace_lines(backend.cpp_namespace, max_level=2)
    namespace = {"namespace_prologue": prologue, "namespace_epilogue": epilogue}
    fallback = ["torch/csrc/lazy/ts_backend/ts_eager_fallback.h"]
    backend_headers = [options.tensor_class_hdr, options.shape_inference_hdr]
    generated_headers = [
        f"{output_dir}/{key}NativeFunctions.h",
        f"{output_dir}/LazyIr.h",
        *(fallback if options.gen_forced_fallback_code else []),
    ]
    out.add_template(
        f"{key}NativeFunctions.cpp",
        {
            "includes": [
                *(f"#include <{path}>" for path in backend_headers),
                *_KERNEL_INCLUDES.splitlines(),
                *(f"#include <{path}>" for path in generated_headers),
            ],
            "helper_fns": _TO_META,
            "native_functions_include": "",
            **namespace,
            "native_function_definitions": texts.kernels,
        },
        template="DispatchKeyNativeFunctions.cpp",
    )
    node_base = [f'#include "{options.node_base_hdr}"'] if options.node_base_hdr else []
    out.add_template(
        "LazyIr.h",
        {
            "lazy_ir_sysinc": [f"#include <{path}>" for path in _IR_SYSTEM_INCLUDES],
            "lazy_ir_inc": node_base,
            "ir_declarations": texts.nodes,
            **namespace,
        },
    )
    non_native_includes = [*_NON_NATIVE_INCLUDES, *filter(None, [options.node_base_hdr])]
    out.add_template(
        "LazyNonNativeIr.h",
        {
            "lazy_non_native_ir_inc": [f"#include <{path}>" for path in non_native_includes],
            "non_native_ir_nodes": texts.non_native,
            **namespace,
        },
    )
