"""The IR node classes of `LazyIr.h` and `LazyNonNativeIr.h`: one C++ class per operator.

A node class derives from the backend's node base (`NodeStyle.node_base`) and
holds its operator's arguments in the lazy IR convention (`opgen.api.lazy`):
values are the node's operands (passed to the base, in order), scalars are
members. It has a `ClassOpKind()`, a constructor, a `ToString()` that prints
the scalars (moving the stream's text out since torch 2.13), a `CanBeReused()`
that tells whether a cached node equals a node about to be built, and, with
TorchScript lowerings (`NodeStyle.gen_ts_lowerings`), `Create` and `Lower`
methods. Which methods are generated or only declared, and how the shape is
found, are the node's properties.

Native operators get the properties `NATIVE_PROPERTIES` (the kernel computes
the shapes); a backend's non-native entries start from `NON_NATIVE_PROPERTIES`
plus the properties they list, and are SymInt-aware.
"""

from __future__ import annotations

from collections.abc import Sequence

from opgen.api.lazy import (
    NON_NATIVE_PROPERTIES,
    LazyArgument,
    LazyIrSchema,
    UnsupportedLazyOperator,
    value_type,
)
from opgen.api.types import BaseCType, OptionalCType, VectorCType
from opgen.releases import LAZY_TO_STRING_MOVES
from opgen.spec.backend import BackendIndex
from opgen.spec.native import NativeFunction
from opgen.spec.schema import FunctionSchema
from opgen.targets.lazy.options import NodeStyle
from opgen.targets.lazy.ts_lowering import lower_method

# Operators whose `aten::` symbol is not interned: their OpKind is built from a string.
_UNINTERNED_SYMBOLS = frozenset({"sigmoid_backward"})


def node_schema(f: NativeFunction, index: BackendIndex, value_class: str) -> LazyIrSchema:
    """`f`'s IR node, in the lazy IR convention: SymInt-aware when its kernel is;
    UnsupportedLazyOperator if the IR cannot hold an argument."""
    metadata = index.get_kernel(f)
    symint = metadata is not None and metadata.supports_symint()
    return LazyIrSchema.of(f.func, value_type(value_class), symint=symint)


def ir_node_classes(f: NativeFunction, index: BackendIndex, style: NodeStyle) -> list[str]:
    """The node class of `f` (one text), as `LazyIr.h` declares it."""
    return [node_class(node_schema(f, index, style.value_class), style)]


def non_native_schema(
    schema: FunctionSchema, properties: Sequence[str], opkind: str | None, value_class: str
) -> LazyIrSchema:
    """The IR node of a backend's `non_native:` entry: SymInt-aware, with
    `NON_NATIVE_PROPERTIES` and then `properties` (names of
    `opgen.api.lazy.LAZY_IR_PROPERTIES`, ValueError otherwise), applied in order."""
    chosen = NON_NATIVE_PROPERTIES
    for p in properties:
        chosen = chosen.with_property(p)
    return LazyIrSchema.of(schema, value_type(value_class), chosen, symint=True, opkind=opkind)


def non_native_node(
    schema: FunctionSchema, properties: Sequence[str], opkind: str | None, style: NodeStyle
) -> str:
    """The node class of a backend's `non_native:` entry, as `LazyNonNativeIr.h` declares it."""
    return node_class(non_native_schema(schema, properties, opkind, style.value_class), style)


def aten_symbol(schema: LazyIrSchema) -> str:
    """The C++ expression of the operator's interned symbol."""
    name = schema.aten_name
    if name in _UNINTERNED_SYMBOLS:
        return f'c10::Symbol::fromQualString("aten::{name}")'
    return name if name.startswith("at::") else f"at::aten::{name}"


def node_class(schema: LazyIrSchema, style: NodeStyle) -> str:
    """The C++ class of one IR node; UnsupportedLazyOperator if an operand is of a type the
    node base cannot take."""
    node, base = schema.node_name, style.node_base
    opkind = schema.opkind or aten_symbol(schema)
    params = [f"const {a.lazy_type.cpp_type()}& {a.name}" for a in schema.filtered_args()]
    reuse_params = ", ".join(params)
    if style.use_lazy_shape and "ShapePrecompute" in schema.properties:
        params.append("std::vector<torch::lazy::Shape>&& shapes")
    scalars = schema.scalars
    initializers = "".join(f",\n        {_member_initializer(a)}" for a in scalars)
    optional_values = [a.name for a in schema.values if isinstance(a.lazy_type, OptionalCType)]
    has_definitions = "\n    ".join(f"has_{name} = !!{name};" for name in optional_values)
    has_members = "\n  ".join(f"bool has_{name}: 1;" for name in optional_values)
    printed = "\n    ".join(_printed_member(a) for a in scalars)
    members = "\n  ".join(_member_declaration(a) for a in scalars)
    if style.gen_ts_lowerings:
        create = _create_method(schema, reuse_params)
        reuse = _can_be_reused_method(schema, reuse_params)
        lower = lower_method(schema)
    else:  # without TorchScript lowerings: no Create, no Lower, never reused
        create, lower = "", ""
        reuse = f"bool CanBeReused({reuse_params}) const {{\n    return false;\n    }}"
    text = "std::move(ss).str()" if style.release.has(LAZY_TO_STRING_MOVES) else "ss.str()"
    return f"""\
class {node} : public {base} {{
 public:
  static torch::lazy::OpKind ClassOpKind() {{
    return torch::lazy::OpKind({opkind});
  }}

  {node}({", ".join(params)})
      : {_base_constructor_call(schema, base)}{initializers}
  {{
    {has_definitions}
  }}

  std::string ToString() const override {{
    std::stringstream ss;
    ss << {base}::ToString();
    {printed}
    return {text};
  }}

  {create}

  {reuse}

  {lower}

  {members}
  {has_members}

}};

"""


def _base_constructor_call(schema: LazyIrSchema, base: str) -> str:
    values = schema.values
    operands = []
    for a in values:
        if isinstance(a.lazy_type, OptionalCType):
            operands.append(f"{a.name}.value_or(kNullValue)")
        elif isinstance(a.lazy_type, BaseCType | VectorCType):
            operands.append(a.name)
        else:
            raise UnsupportedLazyOperator(
                f"'{schema.name}': an IR node cannot take argument '{a.name}' "
                f"({a.lazy_type.cpp_type()}) as operands"
            )
    scalar_names = [a.name for a in schema.scalars]
    properties = schema.properties
    if "ShapePrecompute" in properties:
        shape = "std::move(shapes),"
    elif "ShapeCompute" in properties:
        shape_args = ", ".join([a.name for a in values] + scalar_names)
        shape = f"compute_shape_{schema.name}({shape_args}),"
    elif "ShapeCache" in properties:
        shape_args = ", ".join([f"operand({i})" for i in range(len(values))] + scalar_names)
        shape = f"[&](){{ return compute_shape_{schema.name}({shape_args})[0]; }},"
    else:
        shape = ""
    return f"""{base}(
              {schema.node_name}::ClassOpKind(),
              OpList{{{", ".join(operands)}}},
              {shape}
              /* num_outputs */ {schema.returns_count},
              torch::lazy::MHash({", ".join(scalar_names)}))"""


# Strings are passed as views and kept as `std::string`s.
_STRING_VIEW = "c10::string_view"
_OPTIONAL_STRING_VIEW = "::std::optional<c10::string_view>"


def _member_initializer(a: LazyArgument) -> str:
    if a.lazy_type.cpp_type() == _OPTIONAL_STRING_VIEW:
        copied = f"::std::make_optional(std::string(*{a.name}))"
        return f"{a.name}({a.name}.has_value() ? {copied} : ::std::nullopt)"
    return f"{a.name}({a.name})"


def _member_declaration(a: LazyArgument) -> str:
    ctype = a.lazy_type.cpp_type()
    if ctype == _STRING_VIEW:
        return f"std::string {a.name};"
    if ctype == _OPTIONAL_STRING_VIEW:
        return f"::std::optional<std::string> {a.name};"
    return f"{ctype} {a.name};"


def _printed_member(a: LazyArgument) -> str:
    if not isinstance(a.lazy_type, OptionalCType):
        return f'ss << ", {a.name}=" << {a.name};'
    shown = '"torch.Generator()"' if a.is_generator else f"{a.name}.value()"
    return (
        f"if ({a.name}.has_value()) {{\n"
        f'      ss << ", {a.name}=" << {shown};\n'
        "    } else {\n"
        f'      ss << ", {a.name}=null";\n'
        "    }"
    )


def _create_method(schema: LazyIrSchema, params: str) -> str:
    signature = f"static NodePtr Create({params})"
    if "CreateFnDeclOnly" in schema.properties:
        return f"{signature};"
    if "CreateFn" not in schema.properties:
        return ""
    return f"{signature} {{\n    return ReuseOrMakeNode<{schema.node_name}>(data);\n  }}"


def _can_be_reused_method(schema: LazyIrSchema, params: str) -> str:
    signature = f"bool CanBeReused({params}) const"
    if "CanBeReusedDeclOnly" in schema.properties:
        return f"{signature};"
    if "CanBeReused" not in schema.properties:
        return ""
    comparisons = []
    for a in (*schema.positional_values, *schema.keyword_values):
        if isinstance(a.lazy_type, OptionalCType):
            comparisons.append(f"nullable_operand(i++) == {a.name}.value_or(kNullValue)")
        else:
            comparisons.append(f"operand(i++) == {a.name}")
    for a in (*schema.positional_scalars, *schema.keyword_scalars):
        mine, theirs = f"this->{a.name}", a.name
        if isinstance(a.lazy_type, OptionalCType):
            comparisons.append(
                f"((!{mine}&&!{theirs}) || ({mine}&&{theirs} && *({mine}) == *{theirs}))"
            )
        else:
            comparisons.append(f"{mine} == {theirs}")
    compared = " &&\n        ".join(comparisons)
    return f"{signature} {{\n    size_t i = 0;\n    return ({compared});\n  }}"
