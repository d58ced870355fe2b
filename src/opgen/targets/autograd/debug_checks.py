"""The debug-mode checks around a VariableType kernel's redispatch.

In builds without NDEBUG, each kernel checks that the operator below it
behaved:
1. it did not swap an input's TensorImpl or Storage, even one it writes to
   (inplace and out= functions);
and, for functions that write no argument,
2. each returned tensor is fresh: its TensorImpl is used once (twice with a
   Python object);
3. a view's result shares its base's Storage; any other result's Storage is
   used once.

The checks are saved state before the call and assertions after it, each
block in `#ifndef NDEBUG`. Some operators are known to break a rule and are
exempt (the `DONT_ENFORCE_*` lists, kept by hand in PyTorch).
"""

from __future__ import annotations

from collections.abc import Callable

from opgen.api import cpp
from opgen.api.types import (
    I_TENSOR_LIST_REF,
    OPTIONAL_TENSOR,
    TENSOR,
    TENSOR_LIST,
    Binding,
    ListCType,
)
from opgen.autograd.views import ALL_VIEW_FUNCTIONS
from opgen.releases import STORAGE_SAVED_RESERVED
from opgen.spec.keys import SchemaKind
from opgen.targets.autograd.autograd_kernel import VariableTypeKernel
from opgen.targets.autograd.wrappers import type_wrapper_name, unpacked_name

# Operators (C++ names) expected to change their inputs' TensorImpl or Storage.
DONT_ENFORCE_SAME_TENSOR_IMPL_OR_STORAGE = frozenset(
    {
        "set_",
        "_cudnn_rnn_flatten_weight",
        "_unsafe_masked_index",
        "_unsafe_masked_index_put_accumulate",
    }
)

# Functions (wrapper names) whose results' TensorImpl may be used more than once.
DONT_ENFORCE_TENSOR_IMPL_USE_COUNT = frozenset(
    {
        # May return an input as is (pytorch/pytorch#60426).
        "_cudnn_rnn_backward",
        "_embedding_bag",
        "_embedding_bag_forward_only",
        "lu_unpack",
        "q_per_channel_scales",
        "q_per_channel_zero_points",
        # Break only the Storage rule; the TensorImpl check is skipped too, to be safe.
        "_cudnn_rnn",
        "dequantize_self",
        # No tensor that requires grad should reach these.
        "_nested_tensor_size",
        "_nested_tensor_storage_offsets",
        "_nested_tensor_strides",
        "lift",
        "lift_fresh",
        "lift_fresh_copy",
    }
)

# Functions (wrapper names) whose results, not views, may share their Storage.
DONT_ENFORCE_STORAGE_IMPL_USE_COUNT = DONT_ENFORCE_TENSOR_IMPL_USE_COUNT | {
    "_slow_conv2d_forward",
    "slow_conv3d_forward",
    "channel_shuffle",
}

_OPTIONAL_TENSOR_LIST = ListCType(OPTIONAL_TENSOR)


def _save_tensor(t: str, reserve: bool) -> str:  # `reserve`: for lists only
    return (
        f"auto {t}_storage_saved =\n"
        f"  {t}.has_storage() ? ::std::optional<Storage>({t}.storage()) : ::std::nullopt;\n"
        f"c10::intrusive_ptr<TensorImpl> {t}_impl_saved;\n"
        f"if ({t}.defined()) {t}_impl_saved = {t}.getIntrusivePtr();\n"
    )


def _same_storage(t: str, out: str) -> str:
    """Input `t` still has its Storage (`out` = `t`), or view `out` shares it."""
    return (
        f"if ({t}_storage_saved.has_value() &&\n"
        "    !at::impl::dispatch_mode_enabled() &&\n"
        f"    !at::impl::tensor_has_dispatch({t}) &&\n"
        f"    !at::impl::tensor_has_dispatch({out}))\n"
        f"  TORCH_INTERNAL_ASSERT({t}_storage_saved.value().is_alias_of({out}.storage()));\n"
    )


def _same_tensor_impl(t: str) -> str:
    return (
        f"if ({t}_impl_saved && !at::impl::dispatch_mode_enabled() "
        f"&& !at::impl::tensor_has_dispatch({t}))\n"
        f"  TORCH_INTERNAL_ASSERT({t}_impl_saved == {t}.getIntrusivePtr());\n"
    )


def _storage_list(ts: str, reserve: bool) -> tuple[str, str]:
    """The declaration of a list argument's saved storages, and the call that appends."""
    if reserve:  # torch 2.15 on
        return (
            f"std::vector<::std::optional<Storage>> {ts}_storage_saved;\n"
            f"{ts}_storage_saved.reserve({ts}.size());\n"
        ), "emplace_back"
    return f"std::vector<::std::optional<Storage>> {ts}_storage_saved({ts}.size());\n", "push_back"


def _save_tensor_list(ts: str, reserve: bool) -> str:
    declaration, append = _storage_list(ts, reserve)
    return (
        declaration + f"for (const Tensor& tensor : {ts})\n"
        f"  {ts}_storage_saved.{append}(\n"
        "    tensor.has_storage() ? ::std::optional<Storage>(tensor.storage()) : ::std::nullopt);\n"
        f"std::vector<c10::intrusive_ptr<TensorImpl>> {ts}_impl_saved({ts}.size());\n"
        f"for (size_t i=0; i<{ts}.size(); i++)\n"
        f"  if ({ts}[i].defined()) {ts}_impl_saved[i] = {ts}[i].getIntrusivePtr();\n"
    )


def _same_tensor_list(ts: str) -> str:
    loop = f"for (size_t i=0; i<{ts}.size() && !at::impl::dispatch_mode_enabled(); i++) {{\n"
    return (
        f"{loop}"
        f"  if ({ts}_storage_saved[i].has_value() && !at::impl::tensorlist_has_dispatch({ts}))\n"
        f"    TORCH_INTERNAL_ASSERT({ts}_storage_saved[i].value()"
        f".is_alias_of({ts}[i].storage()));\n"
        "}\n"
        f"{loop}"
        f"  if ({ts}_impl_saved[i] && !at::impl::tensorlist_has_dispatch({ts}))\n"
        f"    TORCH_INTERNAL_ASSERT({ts}_impl_saved[i] == {ts}[i].getIntrusivePtr());\n"
        "}\n"
    )


def _save_optional_tensor_list(ts: str, reserve: bool) -> str:
    declaration, append = _storage_list(ts, reserve)
    return (
        declaration + f"for (const ::std::optional<Tensor>& tensor : {ts})\n"
        f"  {ts}_storage_saved.{append}(\n"
        "    tensor.has_value() && tensor->has_storage() "
        "? ::std::optional<Storage>(tensor->storage()) : ::std::nullopt);\n"
        f"std::vector<c10::intrusive_ptr<TensorImpl>> {ts}_impl_saved({ts}.size());\n"
        f"for (size_t i=0; i<{ts}.size(); i++) {{\n"
        f"  ::std::optional<Tensor> t = {ts}[i];\n"
        f"  if (t.has_value() && t->defined()) {ts}_impl_saved[i] = t->getIntrusivePtr();\n"
        "}\n"
    )


def _same_optional_tensor_list(ts: str) -> str:
    loop = f"for (size_t i=0; i<{ts}.size() && !at::impl::dispatch_mode_enabled(); i++) {{\n"
    element = f"static_cast<::std::optional<Tensor>>({ts}[i])"
    return (
        f"{loop}"
        f"  if ({ts}_storage_saved[i].has_value() && !at::impl::tensorlist_has_dispatch({ts}))\n"
        f"    TORCH_INTERNAL_ASSERT({ts}_storage_saved[i].value().is_alias_of(\n"
        f"        {element}->storage()));\n"
        "}\n"
        f"{loop}"
        f"  if ({ts}_impl_saved[i])\n"
        "    TORCH_INTERNAL_ASSERT(\n"
        f"      {ts}_impl_saved[i] == {element}->getIntrusivePtr());\n"
        "}\n"
    )


def _same_tensor(t: str) -> str:
    return _same_storage(t, t) + _same_tensor_impl(t)


# The checks of an input, by its C++ type without reference: (save, enforce).
_INPUT_CHECKS: dict[object, tuple[Callable[[str, bool], str], Callable[[str], str]]] = {
    TENSOR_LIST: (_save_tensor_list, _same_tensor_list),
    I_TENSOR_LIST_REF: (_save_tensor_list, _same_tensor_list),
    _OPTIONAL_TENSOR_LIST: (_save_optional_tensor_list, _same_optional_tensor_list),
    TENSOR: (_save_tensor, _same_tensor),
}


def _storage_use_count_is_one(t: str, fn_name: str) -> str:
    return (
        f"if ({t}.has_storage() && !at::impl::dispatch_mode_enabled() "
        f"&& !at::impl::tensor_has_dispatch({t})) {{\n"
        f'  TORCH_INTERNAL_ASSERT({t}.storage().use_count() == 1, "function: {fn_name}");\n'
        "}\n"
    )


def _tensor_impl_use_count_is_fresh(t: str, fn_name: str) -> str:
    return (
        f"if (!at::impl::dispatch_mode_enabled() && !at::impl::tensor_has_dispatch({t}))\n"
        f"  TORCH_INTERNAL_ASSERT({t}.use_count() == expected_fresh_use_count({t}), "
        f'"function: {fn_name}");\n'
    )


def _output_checks(kernel: VariableTypeKernel) -> list[str]:
    """Rules 2 and 3 for each returned tensor of a function that writes no argument."""
    f = kernel.f
    if f.func.kind in (SchemaKind.inplace, SchemaKind.out):
        return []
    base_name = f.func.name.name.base
    aliased = ALL_VIEW_FUNCTIONS.get(base_name)
    fn_name = type_wrapper_name(f)
    checks = []
    for i, (ret, ret_name) in enumerate(zip(f.func.returns, cpp.return_names(f), strict=True)):
        ctype = cpp.return_type(ret, style=kernel.style).remove_const_ref()
        if ctype != TENSOR:
            # No operator returns a list here that these checks would have to cover.
            assert ctype not in (TENSOR_LIST, _OPTIONAL_TENSOR_LIST), (
                f"use_count checks for {ctype}"
            )
            continue
        if aliased is not None:
            assert i == 0, f"view function {base_name} returns more than one tensor"
            checks.append(_same_storage(unpacked_name(aliased), ret_name))
        elif fn_name not in DONT_ENFORCE_STORAGE_IMPL_USE_COUNT:
            checks.append(_storage_use_count_is_one(ret_name, fn_name))
        if fn_name not in DONT_ENFORCE_TENSOR_IMPL_USE_COUNT:
            checks.append(_tensor_impl_use_count_is_fresh(ret_name, fn_name))
    return checks


def _debug_only(statements: list[str]) -> str:
    # Each statement ends in a newline and no line has trailing whitespace.
    return "#ifndef NDEBUG\n" + "".join(statements) + "#endif\n"


def with_debug_checks(kernel: VariableTypeKernel, call: str, unpacked: list[Binding]) -> str:
    """`call` (the redispatch and what binds its results) with the checks around it."""
    if kernel.name in DONT_ENFORCE_SAME_TENSOR_IMPL_OR_STORAGE:
        return call
    before: list[str] = []
    after: list[str] = []
    reserve = kernel.release.has(STORAGE_SAVED_RESERVED)
    for binding in unpacked:
        checks = _INPUT_CHECKS.get(binding.nctype.type.remove_const_ref())
        if checks is not None:
            save, enforce = checks
            before.append(save(binding.name, reserve))
            after.append(enforce(binding.name))
    after += _output_checks(kernel)
    if not before or not after:
        # Output checks alone are not emitted: without saved inputs there is no block.
        return call
    return _debug_only(before) + call + _debug_only(after)
