"""The `Lower` method of an IR node for TorchScript's lazy-tensor backend.

Lowering emits a call of the ATen builtin the node stands for into a
TorchScript graph: the node's operands (read in order through `operand(i++)`;
an absent optional one lowers to `nullptr`) and its constants become the
call's positional and keyword arguments, named as in the schema (Generators
too, as constants).
"""

from __future__ import annotations

from opgen.api.lazy import LazyArgument, LazyIrSchema
from opgen.api.types import OptionalCType

_LOWER_SIGNATURE = """
  torch::lazy::TSOpVector Lower(
      std::shared_ptr<torch::jit::GraphFunction> function,
      torch::lazy::TSLoweringContext* loctx) const override"""


def lower_method(schema: LazyIrSchema) -> str:
    """The node's `Lower`: defined, declared only, or absent, as its properties say."""
    if "LowerDeclOnly" in schema.properties:
        return f"{_LOWER_SIGNATURE};"
    if "Lower" not in schema.properties:
        return ""
    return f"{_LOWER_SIGNATURE} {{\n    {lowering_body(schema)}\n  }}\n            "


def _lowered_value(a: LazyArgument) -> str:
    if isinstance(a.lazy_type, OptionalCType):
        return f"has_{a.name} ? loctx->GetOutputOp(operand(i++)) : nullptr"
    return "loctx->GetOutputOp(operand(i++))"


def lowering_body(schema: LazyIrSchema) -> str:
    positional = [
        _lowered_value(a) if a.is_lazy_value else f'"{a.name}", {a.name}'
        for a in schema.positional_args
    ]
    keyword = [f'"{a.name}", {_lowered_value(a)}' for a in schema.keyword_values]
    keyword += [f'"{a.name}", {a.name}' for a in schema.keyword_scalars]
    pushed = "\n    ".join(f"arguments.emplace_back({a});" for a in positional)
    pushed_keywords = "\n    ".join(f"kwarguments.emplace_back({a});" for a in keyword)
    result = f"{schema.aten_name}_out"
    call = "torch::lazy::LowerTSBuiltin(function, op().op, arguments, kwarguments)"
    return f"""\
    std::vector<torch::jit::NamedValue> arguments;
    std::vector<torch::jit::NamedValue> kwarguments;
    arguments.reserve({len(positional)});
    kwarguments.reserve({len(keyword)});
    size_t i = 0;
    {pushed}
    {pushed_keywords}
    torch::lazy::TSOpVector {result} = {call};
    TORCH_CHECK_EQ({result}.size(), {schema.returns_count});

    return {result};
"""
