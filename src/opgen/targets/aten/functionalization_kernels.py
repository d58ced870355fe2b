"""The kernels of the Functionalize dispatch key, one per view or mutating operator.

Each kernel follows the dispatcher convention, redispatching (it takes a
`c10::DispatchKeySet` first), and is named `<name>` or `<name>_<overload>`
(`<name>_out` for out= operators). All of them first unwrap their tensor
arguments (`Tensor`, `Tensor?`, lists; lists into owning
`::std::vector<at::Tensor>`) from functional tensors, and no-op (redispatch
past Functionalize) when given plain tensors.

- View kernels call the view, or its `_copy` variant when views are not
  reapplied, and wrap the result in a functional tensor carrying a `ViewMeta`
  (see `opgen.api.functionalization`); inplace views (tag `inplace_view`)
  mutate the input's view metadata instead. For XLA and lazy tensors a meta
  tensor run gives the reference sizes and strides.
- Mutation kernels (inplace, out= and mutable operators of a group) run the
  operator on meta tensors first (inplace operators without Storage
  arguments only), call the group's functional operator, and write its
  results back into the mutated arguments. `cumsum.out` and `cumprod.out`
  (and their `dimname_out` overloads) pass the out tensor's dtype when no
  dtype is given (`releases.CUMULATIVE_OUT_DTYPE`).

Each kernel uses the argument style of the operator it implements, also for
the signatures of the operators it calls.
"""

from __future__ import annotations

from opgen.api import cpp, dispatcher
from opgen.api import functionalization as fapi
from opgen.api.dispatcher import DispatcherSignature
from opgen.api.translate import call_arguments, call_expressions
from opgen.api.types import (
    OPTIONAL_SYM_INT_ARRAY_REF,
    SYM_INT,
    SYM_INT_ARRAY_REF,
    TENSOR,
    ArgumentStyle,
    BaseCType,
    Binding,
    CType,
    OptionalCType,
    VectorCType,
)
from opgen.releases import CUMULATIVE_OUT_DTYPE
from opgen.spec.arguments import Argument
from opgen.spec.groups import NativeFunctionsGroup, NativeFunctionsViewGroup
from opgen.spec.keys import SchemaKind
from opgen.spec.native import NativeFunction
from opgen.spec.schema import FunctionSchema
from opgen.spec.types import BaseTy, BaseType
from opgen.targets.aten.run import AtenRun
from opgen.targets.aten.view_copy import dispatcher_signature, return_statement

# Out= operators whose functional variant must be told the out tensor's dtype
# (`CUMULATIVE_OUT_DTYPE`). The Dimname overloads need no gate of their own: only
# releases with named dimensions (2.12) accept a spec that has them.
_OUT_DTYPE_PRESERVING = frozenset(
    {"cumsum.out", "cumprod.out", "cumsum.dimname_out", "cumprod.dimname_out"}
)

_TENSOR_VECTOR = VectorCType(TENSOR)
_NON_OWNING_LISTS = {"at::TensorList": "{}.vec()", "at::ITensorListRef": "{{{}.begin(), {}.end()}}"}
_STORAGE = BaseType(BaseTy.Storage)
_TENSOR_TYPE = BaseType(BaseTy.Tensor)
_IMPL = "at::functionalization::impl::"


def wrapper_name(func: FunctionSchema) -> str:
    """The kernel's name: the C++ name, plus `_<overload>`."""
    name = cpp.name(func)
    return f"{name}_{func.name.overload_name}" if func.name.overload_name else name


def _is_tensor_like(b: Binding) -> bool:
    return isinstance(b.argument, Argument) and b.argument.type.is_tensor_like()


def _owning(ctype: CType, name: str) -> tuple[CType, str]:
    """The owning type of an unwrapped argument, and how to copy the argument into it."""
    if isinstance(ctype, BaseCType) and ctype.name in _NON_OWNING_LISTS:
        return _TENSOR_VECTOR, _NON_OWNING_LISTS[ctype.name].format(name, name)
    return ctype, name


def unwrap_tensor_args(sig: DispatcherSignature, *, is_view_op: bool) -> tuple[str, list[Binding]]:
    """The code unwrapping every tensor argument into `<name>_`, and the bindings after it."""
    context: list[Binding] = []
    blocks: list[str] = []
    for arg in sig.arguments():
        if not _is_tensor_like(arg):
            context.append(arg)
            continue
        name, unwrapped = arg.name, f"{arg.name}_"
        sync = "" if is_view_op else f"{_IMPL}sync({name});"
        ctype, copied = _owning(arg.nctype.type.remove_const_ref(), name)
        blocks.append(f"""
      {ctype.cpp_type()} {unwrapped};
      if ({_IMPL}isFunctionalTensor({name})) {{
        {sync}
        {unwrapped} = {_IMPL}from_functional_tensor({name});
      }} else {{
        {unwrapped} = {copied};
      }}""")
        context.append(arg.with_name(unwrapped))
    return "\n      ".join(blocks), context


def meta_tensor_args(sig: DispatcherSignature) -> tuple[str, list[Binding]]:
    """The code converting every tensor argument to a meta tensor `<name>_meta`."""
    context: list[Binding] = []
    lines: list[str] = []
    for arg in sig.arguments():
        if _is_tensor_like(arg):
            lines.append(f"auto {arg.name}_meta = to_meta({arg.name});")
            context.append(arg.with_name(f"{arg.name}_meta"))
        else:
            context.append(arg)
    return "\n        ".join(lines), context


def _has_symbolic_values(expr: str, ctype: CType) -> str:
    if ctype == SYM_INT:
        return f"{expr}.is_symbolic()"
    if isinstance(ctype, OptionalCType):
        inner = _has_symbolic_values(f"(*{expr})", ctype.elem)
        return f"{expr}.has_value() ? {inner} : false"
    if ctype == OPTIONAL_SYM_INT_ARRAY_REF:
        return _has_symbolic_values(expr, OptionalCType(SYM_INT_ARRAY_REF))
    if ctype in (SYM_INT_ARRAY_REF, VectorCType(SYM_INT)):
        check = _has_symbolic_values("arg", SYM_INT)
        return f"std::any_of({expr}.begin(), {expr}.end(), [=](auto& arg) {{ return {check}; }})"
    raise ValueError(f"no symbolic-value check for {ctype.cpp_type()}")


def has_symbolic_inputs(sig: DispatcherSignature) -> str:
    """Code setting `has_symbolic_inputs` from the SymInt arguments."""
    statements = [
        "has_symbolic_inputs = has_symbolic_inputs | "
        f"({_has_symbolic_values(b.name, b.nctype.type)});"
        for b in sig.arguments()
        if isinstance(b.argument, Argument) and b.argument.type.is_symint_like()
    ]
    body = "\n      ".join(statements)
    return f"""
      bool has_symbolic_inputs = false;
      {body}"""


_NOOP = (
    "// functionalization is re-entrant, but will no-op if it wasn't passed a "
    "FunctionalTensorWrapper."
)
_REAPPLY = f"""auto reapply_views = {_IMPL}getFunctionalizationReapplyViewsTLS();
      auto inverse_return_mode = (
          reapply_views ? at::functionalization::InverseReturnMode::ViewOrScatterInverse
            : at::functionalization::InverseReturnMode::NeverView
      );"""


def _reference_meta(tensor: str, return_type: str, meta: str, noop: str, meta_args: str) -> str:
    return f"""auto compute_reference_meta =
        {tensor}.key_set().has_backend(c10::BackendComponent::XLABit) ||
        {tensor}.key_set().has_backend(c10::BackendComponent::LazyBit);
      {return_type} reference_tensor_output;
      if (compute_reference_meta && !disable_meta_reference()) {{
        {meta}
        at::AutoDispatchSkipFunctionalize func_guard;
        c10::impl::ExcludeDispatchKeyGuard guard(exclude_keys_for_meta_dispatch);
        reference_tensor_output = at::_ops::{noop}::call({meta_args});
      }}"""


def view_kernel(run: AtenRun, g: NativeFunctionsViewGroup, f: NativeFunction) -> str:
    """The kernel of view (or inplace view) `f` of group `g`."""
    assert g.view_copy is not None, f"view {g.view.func.name} has no copy variant"
    style = ArgumentStyle.of(f)
    call_sig = dispatcher_signature(run, g.view_copy, style)
    copy_name = g.view_copy.func.name.unambiguous_name()
    noop = f.func.name.unambiguous_name()
    sig = run.signatures.of(f).dispatcher
    tensor = sig.arguments()[0].name
    return_type = sig.returns_type().remove_const_ref().cpp_type()
    unwrap, unwrapped = unwrap_tensor_args(sig, is_view_op=True)
    call_goals = call_sig.arguments()
    redispatch = call_arguments(unwrapped, call_goals)
    meta, meta_ctx = meta_tensor_args(sig)
    meta_args = call_arguments(meta_ctx, call_goals)
    symbolic = has_symbolic_inputs(call_sig)
    new = fapi.new_view_meta(f.func, style)
    reference = _reference_meta(tensor, return_type, meta, noop, meta_args)
    defn = sig.defn(name=wrapper_name(f.func), is_redispatching_fn=True)
    if "inplace_view" in f.tags:
        return f"""
    {defn} {{
      if (!at::functionalization::impl::isFunctionalTensor({tensor})) {{
        {_NOOP}
        {unwrap}
        at::AutoDispatchSkipFunctionalize guard;
        return at::_ops::{noop}::call({redispatch});
      }}
      {_REAPPLY}
      {symbolic}
      auto view_meta = {new};
      {reference}
      // This function adds the above view meta to the current tensor and replays them off the base,
      // mutating the size/stride info of the current FunctionalTensorWrapper.
      // Because of this, we need to make sure to run the reference shape function above,
      // BEFORE doing this (otherwise we'll end up running the reference function using the wrong sizes/strides)
      at::functionalization::impl::mutate_view_meta({tensor}, view_meta);
      // See  Note [Propagating strides in the functionalization pass]
      // XLA/LTC don't implement the logic to propagate strides correctly, so we need to rely
      // on a reference implementation here (instead of relying on the output from the forward lambda
      // having the correct stride info)
      if (compute_reference_meta && !disable_meta_reference()) {{
        at::functionalization::impl::set_sizes_strides_offset({tensor}, reference_tensor_output);
      }}
      return {tensor};
    }}
"""  # noqa: E501
    return f"""
    {defn} {{
      {unwrap}
      if (!at::functionalization::impl::isFunctionalTensor({tensor})) {{
        {_NOOP}
        at::AutoDispatchSkipFunctionalize guard;
        return at::_ops::{noop}::call({redispatch});
      }}
      {_REAPPLY}
      {reference}
      {return_type} tmp_output;
      {{
        at::AutoDispatchSkipFunctionalize guard;
        if (reapply_views) {{
          tmp_output = at::_ops::{noop}::call({redispatch});
        }} else {{
          tmp_output = at::_ops::{copy_name}::call({redispatch});
        }}
      }}
      {symbolic}
      auto view_meta = {new};
      auto out = at::functionalization::impl::create_functional_tensor_with_view_meta(tmp_output, {tensor}, view_meta);
      // See  Note [Propagating strides in the functionalization pass]
      if (compute_reference_meta && !disable_meta_reference()) {{
        at::functionalization::impl::set_sizes_strides_offset(out, reference_tensor_output);
      }}
      return out;
    }}
"""  # noqa: E501


def _redispatch_return_names(func: FunctionSchema, var: str) -> tuple[list[str], list[str]]:
    """The returns aliasing arguments (by argument name), and the fresh ones read off `var`."""
    aliased: list[str] = []
    fresh: list[str] = []
    single = len(func.returns) == 1
    for i, name in enumerate(func.aliased_return_names()):
        if name is not None:
            aliased.append(name)
        else:
            fresh.append(var if single else f"std::get<{i}>({var})")
    return aliased, fresh


def _propagate_mutations(
    f: NativeFunction, functional: FunctionSchema, style: ArgumentStyle
) -> str:
    mutated = f.func.arguments.mutable_arg_names()
    aliased, outer_fresh = _redispatch_return_names(f.func, "tmp_output")
    _, inner_fresh = _redispatch_return_names(functional, "tmp_output")
    assert len(mutated) + len(outer_fresh) == len(inner_fresh), f"{f.func.name}: return mismatch"
    updates = []
    wrapped = []
    for i, inner in enumerate(inner_fresh[: len(outer_fresh)]):
        updates.append(f"  auto output_{i} = {_IMPL}to_functional_tensor({inner});")
        wrapped.append(f"output_{i}")
    for a, inner in zip(mutated, inner_fresh[len(outer_fresh) :], strict=True):
        updates.append(f"""\
  auto {a}_inner = {_IMPL}from_functional_tensor({a});
  {_IMPL}replace_({a}, {inner});
  {_IMPL}commit_update({a});
  {_IMPL}sync({a});
  auto {a}_inner_updated = {_IMPL}from_functional_tensor({a});
  {_IMPL}propagate_xla_data_direct({a}_inner, {a}_inner_updated);""")
    returns = return_statement(f.func.returns, aliased + wrapped, style)
    return "\n".join(updates) + f"\n    {returns}"


def _functional_exprs(
    run: AtenRun, f: NativeFunction, functional_sig: DispatcherSignature, exprs: list[str]
) -> list[str]:
    """The functional call's arguments; out dtype threaded through for cumulative ops."""
    if f.func.kind is not SchemaKind.out or str(f.func.name) not in _OUT_DTYPE_PRESERVING:
        return exprs
    if not run.release.has(CUMULATIVE_OUT_DTYPE):
        return exprs
    (out,) = f.func.arguments.out
    names = [b.name for b in functional_sig.arguments()]
    i = names.index("dtype")
    exprs = list(exprs)
    exprs[i] = (
        f"{exprs[i]}.has_value() ? {exprs[i]} : "
        f"std::optional<at::ScalarType>({out.name}_.scalar_type())"
    )
    return exprs


def _check(joiner: str, first: str, terms: list[str]) -> str:
    return f" {joiner} ".join([first, *terms])


def mutation_kernel(run: AtenRun, f: NativeFunction, g: NativeFunctionsGroup) -> str:
    """The kernel of mutating operator `f` of group `g`, via `g`'s functional operator."""
    assert f.func.is_mutable, f"{f.func.name} mutates nothing"
    style = ArgumentStyle.of(f)
    sig = run.signatures.of(f).dispatcher
    unwrap, unwrapped = unwrap_tensor_args(sig, is_view_op=False)
    args = f.func.arguments.flat_all
    mutated = [a.name for a in args if a.type.is_tensor_like() and a.annotation is not None]
    inputs = [a.name for a in args if a.type.is_tensor_like() and a.annotation is None]
    plain = [a.name for a in args if a.type == _TENSOR_TYPE and a.annotation is None]
    all_functional = _check("&&", "true", [f"{_IMPL}isFunctionalTensor({a})" for a in mutated])
    any_functional = _check("||", "false", [f"{_IMPL}isFunctionalTensor({a})" for a in inputs])
    any_xla = _check("||", "false", [f"{a}.device().type() == c10::DeviceType::XLA" for a in plain])
    inplace_args = call_arguments(unwrapped, sig.arguments())
    functional = g.functional.func
    return_type = dispatcher.returns_type(functional.returns, style=style)
    functional_sig = dispatcher_signature(run, g.functional, style)
    exprs = call_expressions(unwrapped, functional_sig.arguments())
    exprs = _functional_exprs(run, f, functional_sig, exprs)
    meta, meta_ctx = meta_tensor_args(sig)
    run_meta = not any(a.type == _STORAGE for a in args) and f.func.kind is SchemaKind.inplace
    name = f.func.name.unambiguous_name()
    output = ""
    if f.func.returns:
        output_type = dispatcher.returns_type(f.func.returns, style=style)
        output = f"{output_type.remove_const_ref().cpp_type()} tmp_output = "
    aliased, fresh = _redispatch_return_names(f.func, "tmp_output")
    noop_return = return_statement(f.func.returns, aliased + fresh, style)
    propagate = _propagate_mutations(f, functional, style)
    # Emitted C++ as torchgen writes it (byte-identical output). The mutation kernel.
    return f"""
    {sig.defn(name=wrapper_name(f.func), is_redispatching_fn=True)} {{
      if ({str(run_meta).lower()} && !disable_meta_reference()) {{
        // Before converting the mutable op to its functional variant, run meta tensors through the original op.
        // This will help us catch shape errors that apply to inplace ops that wouldn't apply to their functional variants.
        // (We can only do this for inplace ops today though, because they technically all support meta tensors).
        {meta}
        at::AutoDispatchSkipFunctionalize func_guard;
        c10::impl::ExcludeDispatchKeyGuard guard(exclude_keys_for_meta_dispatch);
        at::_ops::{name}::call({", ".join(b.name for b in meta_ctx)});
      }}
      {unwrap}
      if (!({all_functional})) {{
        // We want to disable this check if there are any XLA tensors.
        // cpu_tensor.copy_(xla_tensor) is valid code.
        if (!({any_xla}) && ({any_functional})) {{
         // case 1: trying to mutate a non functional tensor with a functional tensor is an error
         TORCH_INTERNAL_ASSERT(false,
           "mutating a non-functional tensor with a functional tensor is not allowed.",
           " Please ensure that all of your inputs are wrapped inside of a functionalize() call.");
        }} else {{
         // case 2: arguments are not functional tensors, so we no-op and redispatch.
         at::AutoDispatchSkipFunctionalize guard;
         {output}at::_ops::{name}::call({inplace_args});
         {noop_return}
        }}
      }} else {{
        {return_type.remove_const_ref().cpp_type()} tmp_output;
        {{
          at::AutoDispatchSkipFunctionalize guard;
          tmp_output = at::_ops::{functional.name.unambiguous_name()}::call({", ".join(exprs)});
        }}
        {propagate}
      }}
    }}"""  # noqa: E501
