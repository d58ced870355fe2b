"""The files `opgen lazy` writes beside the backend's class header and registrations.

- `<Key>NativeFunctions.cpp` (template `DispatchKeyNativeFunctions.cpp`): the
  generated kernels of the `full_codegen` operators, which build IR nodes,
  and the `to_meta` helpers they use for shape inference.
- `LazyIr.h` (template `LazyIr.h`): one IR node class per `full_codegen` and
  `ir_gen` operator.
- `LazyNonNativeIr.h` (template `LazyNonNativeIr.h`): the node classes of the
  `non_native` entries.

Each part of the spec renders its operators' texts from its plan (`lazy_texts`,
`opgen.targets.lazy.plan`), in upstream's order; the model (`LazyModel`) holds them
merged, and the emitters (`EMITTERS`, with `opgen backend`'s) fill the templates.
"""

from __future__ import annotations

from collections.abc import Sequence
from operator import itemgetter

from opgen.api.lazy import UnsupportedLazyOperator
from opgen.diagnostics import Diagnostic, SpecError
from opgen.frozen import frozen
from opgen.targets.backend import files as backend_files
from opgen.targets.backend.files import OUTPUT, BackendModel, Position
from opgen.targets.dispatch_registration import namespace_lines
from opgen.targets.emitters import Emitted, Emitter
from opgen.targets.lazy.kernels import kernel_definition
from opgen.targets.lazy.nodes import node_class
from opgen.targets.lazy.options import KernelStyle, LazyOptions, NodeStyle
from opgen.targets.lazy.plan import LazyPlan, located

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

    kernels: tuple[str, ...]  # <Key>NativeFunctions.cpp: the full_codegen operators' kernels
    nodes: tuple[str, ...]  # LazyIr.h: the full_codegen and ir_gen operators' node classes
    non_native: tuple[str, ...]  # LazyNonNativeIr.h


def merged_lazy_texts(parts: Sequence[LazyPartTexts]) -> LazyTexts:
    """The texts of the parts of a spec as one, in the order of their positions."""
    kernels = sorted((k for part in parts for k in part[0]), key=itemgetter(0))
    nodes = sorted((n for part in parts for n in part[1]), key=itemgetter(0))
    return LazyTexts(tuple(t for _, t in kernels), tuple(t for _, t in nodes), tuple(parts[0][2]))


def lazy_texts(plan: LazyPlan, nodes: NodeStyle, kernels: KernelStyle) -> LazyPartTexts:
    """Every planned operator's texts; a SpecError at the YAML entry of each one whose C++
    cannot be written (each kernel's, then each node's, then each non_native entry's)."""
    kernel_errors: list[Diagnostic] = []
    node_errors: list[Diagnostic] = []
    kernel_texts: list[PositionedText] = []
    node_texts: list[PositionedText] = []
    for op in plan.operators:
        f = op.function
        if op.kernel is not None:
            try:
                text = kernel_definition(f, plan.index, op.kernel.metadata, op.schema, kernels)
                kernel_texts.append((op.position, text))
            except UnsupportedLazyOperator as e:
                kernel_errors.append(located(f, op.location, e))
        try:
            node_texts.append((op.position, node_class(op.schema, nodes)))
        except UnsupportedLazyOperator as e:
            node_errors.append(located(f, op.location, e))
    non_native = []
    non_native_errors = []
    for node in plan.non_native:
        try:
            non_native.append(node_class(node.schema, nodes))
        except UnsupportedLazyOperator as e:
            non_native_errors.append(Diagnostic(node.location, str(e)))
    errors = [*kernel_errors, *node_errors, *non_native_errors]
    if errors:
        raise SpecError.of(errors)
    return kernel_texts, node_texts, non_native


@frozen(eq=False)
class LazyModel:
    """What `opgen lazy` emits: `opgen backend`'s model, and the lazy files' texts."""

    backend: BackendModel  # the kernel class header and the registrations
    texts: LazyTexts
    options: LazyOptions  # the headers the files include


def emit_native_functions_header(model: LazyModel) -> Emitted:
    return backend_files.emit_native_functions_header(model.backend)


def emit_registrations(model: LazyModel) -> Emitted:
    return backend_files.emit_registrations(model.backend)


def emit_kernels(model: LazyModel) -> Emitted:
    """`<Key>NativeFunctions.cpp`: the generated kernels."""
    options, backend = model.options, model.backend
    key = backend.backend.backend_key
    output_dir = backend.style.output_dir
    prologue, epilogue = namespace_lines(backend.backend.cpp_namespace, max_level=2)
    fallback = ["torch/csrc/lazy/ts_backend/ts_eager_fallback.h"]
    backend_headers = [options.tensor_class_hdr, options.shape_inference_hdr]
    generated_headers = [
        f"{output_dir}/{key}NativeFunctions.h",
        f"{output_dir}/LazyIr.h",
        *(fallback if options.gen_forced_fallback_code else []),
    ]
    out = backend.output_set()
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
            "namespace_prologue": prologue,
            "namespace_epilogue": epilogue,
            "native_function_definitions": list(model.texts.kernels),
        },
        template="DispatchKeyNativeFunctions.cpp",
    )
    return Emitted({OUTPUT: out})


def emit_ir(model: LazyModel) -> Emitted:
    """`LazyIr.h`: the node classes of the full_codegen and ir_gen operators."""
    node_base_hdr = model.options.node_base_hdr
    prologue, epilogue = namespace_lines(model.backend.backend.cpp_namespace, max_level=2)
    out = model.backend.output_set()
    out.add_template(
        "LazyIr.h",
        {
            "lazy_ir_sysinc": [f"#include <{path}>" for path in _IR_SYSTEM_INCLUDES],
            "lazy_ir_inc": [f'#include "{node_base_hdr}"'] if node_base_hdr else [],
            "ir_declarations": list(model.texts.nodes),
            "namespace_prologue": prologue,
            "namespace_epilogue": epilogue,
        },
    )
    return Emitted({OUTPUT: out})


def emit_non_native_ir(model: LazyModel) -> Emitted:
    """`LazyNonNativeIr.h`: the node classes of the `non_native:` entries."""
    includes = [*_NON_NATIVE_INCLUDES, *filter(None, [model.options.node_base_hdr])]
    prologue, epilogue = namespace_lines(model.backend.backend.cpp_namespace, max_level=2)
    out = model.backend.output_set()
    out.add_template(
        "LazyNonNativeIr.h",
        {
            "lazy_non_native_ir_inc": [f"#include <{path}>" for path in includes],
            "non_native_ir_nodes": list(model.texts.non_native),
            "namespace_prologue": prologue,
            "namespace_epilogue": epilogue,
        },
    )
    return Emitted({OUTPUT: out})


# `opgen lazy`'s files, in the order it lists them.
EMITTERS: tuple[Emitter[LazyModel], ...] = (
    emit_native_functions_header,
    emit_registrations,
    emit_kernels,
    emit_ir,
    emit_non_native_ir,
)
