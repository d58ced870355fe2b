"""`VmapGeneratedPlumbing.h` (`--generate headers`): functorch's batching-rule plumbing.

For every operator (selected or not) that takes at least one tensor, one
template `<op>_generated_plumbing<batch_rule_t, batch_rule>` in the dispatcher
convention: it excludes the FuncTorchBatched key, finds the current vmap
level, calls the operator directly when no tensor argument is batched at that
level, and otherwise unwraps each `Tensor` (then each `Tensor?`) argument into
a value and a batch dimension, calls the batch rule and re-wraps its results.

Which operators get one:
- no returns: plumbing that returns nothing;
- otherwise every return must be tensor-like (except a few attention
  operators that also return SymInts; the quantized flash attention from torch
  2.11, `VMAP_QUANTIZED_FLASH_ATTENTION`), and `inplace_view` operators are left out;
- inplace operators: only when the first argument is the one mutated one and
  every return is a `Tensor` or `Tensor[]`; the plumbing returns that argument;
- functional operators: results re-wrapped with `makeBatched`
  (`makeBatchedVector` for lists); out=, mutable and scratch operators get none.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from opgen.api.dispatcher import DispatcherSignature
from opgen.releases import VMAP_QUANTIZED_FLASH_ATTENTION, Release
from opgen.spec.arguments import Argument, Return
from opgen.spec.keys import SchemaKind
from opgen.spec.native import NativeFunction
from opgen.spec.schema import FunctionSchema
from opgen.spec.types import BaseTy, BaseType, ListType, OptionalType, Type
from opgen.targets.aten.run import AtenRun
from opgen.targets.emitters import Emitted

# Operators whose plumbing is generated although they also return non-tensors.
_RETURNS_SYMINT = frozenset(
    {"_scaled_dot_product_flash_attention", "_scaled_dot_product_cudnn_attention"}
)
_QUANTIZED_FLASH_ATTENTION = "_scaled_dot_product_flash_attention_quantized"


def returns_symint(release: Release) -> frozenset[str]:
    """The operators (unambiguous names) whose plumbing is generated although they
    also return non-tensors."""
    if release.has(VMAP_QUANTIZED_FLASH_ATTENTION):
        return _RETURNS_SYMINT | {_QUANTIZED_FLASH_ATTENTION}
    return _RETURNS_SYMINT


_LEVEL = "cur_level"


def _is_tensor(t: Type) -> bool:
    return isinstance(t, BaseType) and t.name is BaseTy.Tensor


def _is_optional_tensor(t: Type) -> bool:
    return isinstance(t, OptionalType) and _is_tensor(t.elem)


def _is_tensor_list(t: Type) -> bool:
    return isinstance(t, ListType) and _is_tensor(t.elem)


def _indent(text: str) -> str:
    """Two spaces before every line that is not blank (textwrap.indent's rule)."""
    return "\n".join("  " + line if line.strip() else line for line in text.split("\n"))


def _unwraps(args: Sequence[Argument]) -> tuple[str, list[str]]:
    """The unwrapping code, and the batch rule's arguments."""
    tensors = {a.name for a in args if _is_tensor(a.type)}
    optionals = {a.name for a in args if _is_optional_tensor(a.type)}
    lines = [
        f"auto [{a.name}_value, {a.name}_bdim] = unwrapTensorAtLevel({a.name}, {_LEVEL});"
        for a in args
        if a.name in tensors
    ]
    for a in args:
        if a.name in optionals:
            n = a.name
            lines += [
                f"std::optional<Tensor> {n}_value;",
                f"std::optional<int64_t> {n}_bdim;",
                f"if ({n}) {{",
                f"    std::tie({n}_value, {n}_bdim) = unwrapTensorAtLevel({n}.value(), {_LEVEL});",
                "}",
            ]
    call_args: list[str] = []
    for a in args:
        if a.name in tensors or a.name in optionals:
            call_args += [f"{a.name}_value", f"{a.name}_bdim"]
        else:
            call_args.append(a.name)
    return "\n".join(lines), call_args


def _unbatched_case(sig: DispatcherSignature, func: FunctionSchema) -> str:
    conditions = [
        f"!isBatchedAtLevel({a.name}, {_LEVEL})"
        for a in func.arguments.flat_all
        if a.type.is_tensor_like()
    ]
    args = ", ".join(b.name for b in sig.arguments())
    return (
        f"if ({' && '.join(conditions)}) {{\n"
        f"  return at::_ops::{func.name.unambiguous_name()}::call({args});\n"
        "}"
    )


def _returns(returns: Sequence[Return]) -> str:
    index = 0
    wrapped = []
    for r in returns:
        pair = f"std::get<{index}>(results), std::get<{index + 1}>(results), {_LEVEL}"
        if _is_tensor(r.type):
            wrapped.append(f"makeBatched({pair})")
            index += 2
        elif _is_tensor_list(r.type):
            wrapped.append(f"makeBatchedVector({pair})")
            index += 2
        else:
            wrapped.append(f"std::get<{index}>(results)")
            index += 1
    if len(wrapped) == 1:
        return f"return {wrapped[0]};"
    return f"return std::make_tuple({', '.join(wrapped)});"


def _plumbing(
    sig: DispatcherSignature, func: FunctionSchema, check: str, tail: Callable[[str], str]
) -> str:
    """The plumbing around the batch-rule call `tail(arguments)`."""
    unwraps, call_args = _unwraps(func.arguments.flat_all)
    name = func.name.unambiguous_name() + "_generated_plumbing"
    return f"""\
template <typename batch_rule_t, batch_rule_t batch_rule>
{sig.decl(name=name)} {{
  c10::impl::ExcludeDispatchKeyGuard guard(DispatchKey::FuncTorchBatched);
  auto maybe_layer = maybeCurrentDynamicLayer();
  vmap_check_escaped(maybe_layer, "{check}");
  int64_t {_LEVEL} = maybe_layer->layerId();
{_indent(_unbatched_case(sig, func))}
{_indent(unwraps)}
{tail(", ".join(call_args))}
}}"""


def _inplace_plumbing(sig: DispatcherSignature, func: FunctionSchema) -> str | None:
    args = func.arguments.flat_all
    if not args[0].is_write or sum(a.is_write for a in args) != 1:
        return None
    if not all(_is_tensor(r.type) or _is_tensor_list(r.type) for r in func.returns):
        return None
    mutated = args[0].name
    return _plumbing(
        sig,
        func,
        "gen_vmap_inplace_plumbing",
        lambda call_args: f"  batch_rule({call_args});\n  return {mutated};",
    )


def vmap_plumbing(
    f: NativeFunction, sig: DispatcherSignature, symint_returns: frozenset[str] = _RETURNS_SYMINT
) -> str | None:
    """The plumbing of `f`, or None where it gets none; `symint_returns`: `returns_symint`."""
    func = f.func
    if not any(a.type.is_tensor_like() for a in func.arguments.flat_all):
        return None
    if not func.returns:
        return _plumbing(sig, func, "gen_vmap_plumbing_no_returns", lambda a: f"  batch_rule({a});")
    if (
        not all(r.type.is_tensor_like() for r in func.returns)
        and func.name.unambiguous_name() not in symint_returns
    ):
        return None
    if "inplace_view" in f.tags:
        return None
    if func.kind is SchemaKind.inplace:
        return _inplace_plumbing(sig, func)
    if func.kind is not SchemaKind.functional:
        return None
    wrapped = _returns(func.returns)
    return _plumbing(
        sig,
        func,
        "gen_vmap_plumbing",
        lambda a: f"  auto results = batch_rule({a});\n  {wrapped}",
    )


def _header(run: AtenRun) -> str:
    bodies = []
    symint_returns = returns_symint(run.release)
    for f in run.spec.functions:
        text = vmap_plumbing(f, run.signatures.of(f).dispatcher, symint_returns)
        if text is not None:
            bodies.append(text)
    body = "\n".join(bodies)
    return (
        "\n#pragma once\n#include <ATen/Operators.h>\n#include <ATen/functorch/PlumbingHelper.h>\n"
        f"\nnamespace at {{ namespace functorch {{\n\n{body}\n\n}}}} // namespace at::functorch\n"
    )


def emit_vmap_plumbing(run: AtenRun) -> Emitted:
    """VmapGeneratedPlumbing.h (AtenPart.headers)."""
    outputs = run.outputs()
    outputs.cpu.add("VmapGeneratedPlumbing.h", lambda: _header(run))
    return outputs.emitted()
