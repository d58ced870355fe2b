"""The kernels of `<Key>NativeFunctions.cpp` and the shape functions they call.

A lazy kernel traces instead of computing. In order it:
1. falls back to the eager kernel when asked to (`force_eager_fallback`, only
   with `KernelStyle.gen_forced_fallback_code`);
2. counts the call (`KernelStyle.metrics_counter`);
3. finds the common device of its tensor arguments (or of a `Device?` one);
4. gets the lazy tensor of each tensor argument, and an IR value for each
   Scalar;
5. reuses a cached IR node with equal operands, or computes the output shapes
   and makes one. Structured operators and `view_copy` operators get their
   shapes from their meta (or CompositeExplicitAutogradNonFunctional) kernel,
   run on meta tensors; every other operator calls a hand-written
   `torch::lazy::compute_shape_<kernel>`, which `shape_inference_declarations`
   declares;
6. wraps the node in a new lazy tensor (one per output), or, for inplace and
   out= operators, makes it the new value of the mutated tensor.

Kernels have the kernel signature of the backend (the dispatcher API for an
out-of-tree backend), with SymInts as `c10::SymInt` when the kernel is
SymInt-aware (listed under `symint:`).
"""

from __future__ import annotations

from opgen.api import dispatcher
from opgen.api.dispatcher import DispatcherSignature
from opgen.api.lazy import (
    LazyArgument,
    LazyIrSchema,
    UnsupportedLazyOperator,
    value_type,
)
from opgen.api.native import NativeSignature, kernel_signature
from opgen.api.translate import translate
from opgen.api.types import DEVICE, ArgumentStyle, BaseCType, Binding, OptionalCType, VectorCType
from opgen.spec.arguments import Argument
from opgen.spec.backend import BackendIndex, BackendMetadata
from opgen.spec.native import NativeFunction
from opgen.spec.types import ListType
from opgen.targets.lazy.nodes import aten_symbol
from opgen.targets.lazy.options import KernelStyle

_OPTIONAL_DEVICE = OptionalCType(DEVICE)


def _metadata(f: NativeFunction, index: BackendIndex) -> BackendMetadata:
    metadata = index.get_kernel(f)
    if metadata is None:
        raise UnsupportedLazyOperator(f"no {index.dispatch_key} kernel for '{f.func.name}'")
    return metadata


def kernel_metadata(f: NativeFunction, index: BackendIndex) -> BackendMetadata:
    """The metadata of a kernel the backend defines (so its signature must exist);
    UnsupportedLazyOperator if there is none, or it cannot be."""
    metadata = _metadata(f, index)
    if metadata.supports_symint() and not f.func.has_symint():
        raise UnsupportedLazyOperator(
            f"'{f.func.name}' has no SymInt arguments, so it cannot have a SymInt kernel "
            f"({metadata.kernel})"
        )
    return metadata


def _shapes_from_meta(f: NativeFunction) -> bool:
    """Whether the output shapes come from a meta kernel (see the module doc)."""
    return f.structured or f.structured_delegate is not None or "view_copy" in f.tags


def shape_inference_declaration(f: NativeFunction, metadata: BackendMetadata) -> str | None:
    """The `compute_shape_<kernel>` declaration `f`'s lazy kernel calls, if it calls one:
    the backend's shape inference header must declare it."""
    if _shapes_from_meta(f):
        return None
    symint = metadata.supports_symint()
    style = ArgumentStyle.of(f)
    params = ", ".join(b.decl() for b in dispatcher.arguments(f.func, style=style, symint=symint))
    return f"TORCH_API std::vector<torch::lazy::Shape> compute_shape_{metadata.kernel}({params});"


def shape_inference_declarations(
    f: NativeFunction, index: BackendIndex, value_class: str
) -> list[str]:
    """`shape_inference_declaration` of `f` alone, as a list; UnsupportedLazyOperator if
    its kernel's arguments have no lazy IR form (the kernel passes every one on)."""
    metadata = _metadata(f, index)
    if _shapes_from_meta(f):
        return []
    LazyIrSchema.of(f.func, value_type(value_class), symint=metadata.supports_symint())
    declaration = shape_inference_declaration(f, metadata)
    return [] if declaration is None else [declaration]


def native_function_definitions(
    f: NativeFunction, index: BackendIndex, value_class: str, style: KernelStyle
) -> list[str]:
    """The lazy kernel of `f` (one text) alone, its schema made here."""
    metadata = kernel_metadata(f, index)
    value = value_type(value_class)
    schema = LazyIrSchema.of(f.func, value, symint=metadata.supports_symint())
    return [kernel_definition(f, index, metadata, schema, style)]


def kernel_definition(
    f: NativeFunction,
    index: BackendIndex,
    metadata: BackendMetadata,
    schema: LazyIrSchema,
    style: KernelStyle,
) -> str:
    """The lazy kernel of `f`, a method of `<Key>NativeFunctions`, from its planned schema;
    UnsupportedLazyOperator if its C++ cannot be written."""
    sig = kernel_signature(f, index)
    fallback = _eager_fallback(f, schema, sig) if style.gen_forced_fallback_code else ""
    name = f"{index.dispatch_key}NativeFunctions::{metadata.kernel}"
    return f"""\
    {sig.decl(name=name)} {{
        {fallback}
        {style.metrics_counter};
        {_common_device(schema, style)}
        {tensor_declarations(schema, style)}
        {_build_node(f, schema, metadata)}
        {_result(f, schema, style)}
    }}

    """


def _eager_fallback(
    f: NativeFunction, schema: LazyIrSchema, sig: DispatcherSignature | NativeSignature
) -> str:
    goals = dispatcher.arguments(f.func, style=ArgumentStyle.of(f))
    exprs = ",\n                ".join(e.expr for e in translate(sig.arguments(), goals))
    overload = f.func.name.overload_name
    op = f"ATEN_OP2({schema.aten_name}, {overload})" if overload else f"ATEN_OP({schema.aten_name})"
    call = f"at::native::call_fallback_fn_symint<&ltc_eager_fallback, {op}>::call"
    return f"""
        if (force_eager_fallback({aten_symbol(schema)})) {{
            return {call}(
                {exprs}
            );
        }}
"""


def _tensor_names(schema: LazyIrSchema) -> list[str]:
    """The IR values that come from tensors (not from Scalars)."""
    return [a.name for a in schema.values if not a.is_wrapped_scalar]


def _common_device(schema: LazyIrSchema, style: KernelStyle) -> str:
    devices = [a.name for a in schema.scalars if a.lazy_type == _OPTIONAL_DEVICE]
    names = _tensor_names(schema) + devices
    if not names:
        raise UnsupportedLazyOperator(
            f"'{schema.name}' has no argument the IR holds as a value, nor a 'Device?' "
            "argument, to find the device from (tensor lists are values only with the default "
            "value class torch::lazy::Value)"
        )
    return f"""auto common_device = {style.get_device_fn}({", ".join(names)});
        TORCH_INTERNAL_ASSERT(common_device);
        """


def _build_node(f: NativeFunction, schema: LazyIrSchema, metadata: BackendMetadata) -> str:
    node, operands = schema.node_name, node_arguments(schema)
    return f"""torch::lazy::NodePtr node = torch::lazy::ReuseNode<{node}>({operands});
        if (!node) {{
            {_shapes(f, schema, metadata)}
            node = torch::lazy::MakeNode<{node}>({operands}, std::move(shapes));
            CacheNode(node);
        }}
        """


def _shapes(f: NativeFunction, schema: LazyIrSchema, metadata: BackendMetadata) -> str:
    if _shapes_from_meta(f):
        computed = _meta_shapes(f, schema, metadata)
    else:
        args = ", ".join(a.name for a in schema.filtered_args())
        computed = (
            f"\n            auto shapes = torch::lazy::compute_shape_{metadata.kernel}({args});"
        )
    inputs = ", ".join(a.name for a in schema.filtered_args())
    return f"""{computed}
            TORCH_INTERNAL_ASSERT(shapes.size() == {schema.returns_count});
            if(torch::lazy::symbolicShapeEnabled()){{
                std::vector<torch::jit::IValue> inputs = {{ {inputs} }};
                const char* schema_str = "aten::{f.func}";
                applySymbolicShapesOnLT(schema_str, inputs, shapes);
            }}
        """


def _meta_shapes(f: NativeFunction, schema: LazyIrSchema, metadata: BackendMetadata) -> str:
    """The shapes from running the meta kernel on meta copies of the tensor arguments."""
    goals = dispatcher.arguments(f.func, style=ArgumentStyle.of(f))
    context: list[Binding] = []
    conversions = []
    for b in goals:
        if isinstance(b.argument, Argument) and b.argument.type.is_tensor_like():
            conversions.append(f"auto {b.name}_meta = to_meta({b.name});")
            b = b.with_name(f"{b.name}_meta")
        context.append(b)
    args = ", ".join(e.expr for e in translate(context, goals, method=False))
    if "view_copy" in f.tags:
        if not f.has_composite_explicit_autograd_non_functional_kernel:
            raise UnsupportedLazyOperator(
                f"view_copy operator '{f.func.name}' has no "
                "CompositeExplicitAutogradNonFunctional kernel to compute its shapes"
            )
        namespace = "compositeexplicitautogradnonfunctional"
    else:
        namespace = "meta"
    name = schema.aten_name
    if f.func.has_symint() and metadata.supports_symint():
        name += "_symint"
    count = schema.returns_count
    if count > 1:
        each = ",".join(
            f"torch::lazy::Shape(std::get<{i}>(out_meta).scalar_type(), "
            f"std::get<{i}>(out_meta).sizes().vec())"
            for i in range(count)
        )
        shapes = f"std::vector<torch::lazy::Shape> shapes{{{each}}};"
    else:
        shapes = (
            "\nstd::vector<torch::lazy::Shape> shapes{torch::lazy::Shape("
            "out_meta.scalar_type(), out_meta.sizes().vec())};"
        )
    converted = "\n        ".join(conversions)
    return f"""\
        {converted}
        auto out_meta = at::{namespace}::{name}({args});
        {shapes}"""


def _result(f: NativeFunction, schema: LazyIrSchema, style: KernelStyle) -> str:
    count = schema.returns_count
    tensors = _tensor_names(schema)
    # None when there is no tensor argument: upstream then writes `lazy_None` below.
    first = tensors[0] if tensors else None
    make = _tensor_constructor(first, style)
    if schema.name.name.inplace or f.func.is_out_fn():
        if count != 1:
            raise UnsupportedLazyOperator(
                f"inplace or out= operator '{f.func.name}' returns {count} tensors; "
                "the lazy kernel supports one"
            )
        result = f"lazy_{first}->SetInPlaceIrValue(node);\n        auto& result = {first};"
    elif count > 1:
        if not tensors:
            raise UnsupportedLazyOperator(
                f"'{f.func.name}' returns several tensors but has no tensor argument"
            )
        result = f"""std::vector<{style.lazy_tensor_ptr}> lazy_tensors;
        for (int i = 0; i < {count}; i++) {{
            lazy_tensors.push_back({make}({schema.value}(node, i), *common_device));
        }}
        auto result = {style.tuple_aten_from_ltc_tensors}<{count}>(lazy_tensors);"""
    else:
        result = f"""auto result = {style.create_aten_from_ltc_tensor}(
                {make}(std::move(node), *common_device));"""
    return f"{result}\n        return result;"


def _tensor_constructor(first: str | None, style: KernelStyle) -> str:
    """How a new lazy tensor is made: a static function, or a method of the first tensor."""
    if not style.create_from_first_tensor:
        return f"{style.backend_namespace}::{style.create_tensor}"
    if first is None:
        raise UnsupportedLazyOperator(
            "the lazy tensor is created from the first tensor argument "
            "(create_from_first_tensor), but there is none"
        )
    return f"{first}.{style.create_tensor}"


# -- from tensors to IR values -------------------------------------------------------


def tensor_declarations(schema: LazyIrSchema, style: KernelStyle) -> str:
    """The lazy tensor, tensor list or Scalar value of each IR value argument."""
    namespace = style.backend_namespace
    lines = []
    for a in schema.values:
        name = a.name
        if a.is_wrapped_scalar:
            if isinstance(a.lazy_type, OptionalCType):
                lines.append(
                    f"""auto node_{name} = {name} ?
                std::make_optional(torch::lazy::LazyGraphExecutor::Get()->
                    GetIrValueForScalarFromCodegen(*{name}, *common_device)):
                ::std::nullopt;"""
                )
            else:
                lines.append(
                    f"""auto node_{name} = torch::lazy::LazyGraphExecutor::Get()->
                            GetIrValueForScalarFromCodegen({name}, *common_device);"""
                )
        elif a.is_symint_or_list:
            continue  # the node reads SymInts' values itself (`node_arguments`)
        elif a.is_tensor_list:
            lines.append(
                f"auto lazy_{name}_tensorlist = {namespace}::{style.get_tensorlist}({name});"
            )
        elif isinstance(a.lazy_type, BaseCType):
            lines.append(
                f"{style.lazy_tensor_ptr} lazy_{name} = "
                f"{namespace}::{style.get_tensor_or_wrap_number}({name}, *common_device);"
            )
        elif isinstance(a.lazy_type, OptionalCType) and a.lazy_type.elem == schema.value:
            lines.append(
                f"{style.lazy_tensor_ptr} lazy_{name} = "
                f"{namespace}::{style.try_get_tensor}({name}.value_or(at::Tensor()));"
            )
        else:
            raise _unsupported_value(schema, a)
    return "\n        ".join(lines)


def node_arguments(schema: LazyIrSchema) -> str:
    """The arguments of the node's constructor, in the kernel."""
    return ", ".join(_node_argument(schema, a) for a in schema.filtered_args())


def _node_argument(schema: LazyIrSchema, a: LazyArgument) -> str:
    name, ctype = a.name, a.lazy_type
    if a.is_lazy_value:
        if isinstance(ctype, BaseCType):
            if a.is_wrapped_scalar:
                return f"node_{name}"
            if a.is_tensor_list:
                return f"lazy_{name}_tensorlist"
            if a.is_symint_or_list:
                return f"GetSymIntValue({name})"
            return f"lazy_{name}->GetIrValue()"
        if isinstance(ctype, OptionalCType):
            if a.is_symint_or_list:
                return f"{name} ? std::make_optional(GetSymIntValue(*{name})) : ::std::nullopt"
            if a.is_wrapped_scalar:
                return f"node_{name}"
            return f"lazy_{name} ? std::make_optional(lazy_{name}->GetIrValue()) : ::std::nullopt"
        raise _unsupported_value(schema, a)
    t = a.type
    if isinstance(t, ListType) and str(t.elem) == "SymInt":
        if a.symint:
            return f"GetSymIntArrayRefValue({name})"
        return f"std::vector<int64_t>({name}.begin(), {name}.end())"
    if isinstance(ctype, VectorCType) and isinstance(ctype.elem, BaseCType):
        return f"std::vector<{ctype.elem.cpp_type()}>({name}.begin(), {name}.end())"
    if (
        isinstance(ctype, OptionalCType)
        and isinstance(ctype.elem, VectorCType)
        and isinstance(ctype.elem.elem, BaseCType)
    ):
        return f"torch::lazy::ToOptionalVector<{ctype.elem.elem.cpp_type()}>({name})"
    return name


def _unsupported_value(schema: LazyIrSchema, a: LazyArgument) -> UnsupportedLazyOperator:
    return UnsupportedLazyOperator(
        f"'{schema.name}': argument '{a.name}' ({a.type}) has no lazy tensor form "
        f"({a.lazy_type.cpp_type()})"
    )
