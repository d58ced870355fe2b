"""`RegisterFunctionalization_<N>.cpp` and `...Everything.cpp` (`--generate sources`).

The Functionalize dispatch key's kernels (see `functionalization_kernels`) and
their registrations, sharded over 4 files by the root name of each item. The
items, in order: every group of functional/inplace/out/mutable operators, every
view group, then every operator in neither kind of group.

- Groups: a kernel for the out= operator, then the inplace and mutable ones;
  a registration for each member that mutates an argument and is not
  CompositeImplicitAutograd (none for the group of `set_.source_Tensor`, whose
  kernel is hand-written, nor for groups holding `lift` or `resize_`).
- View groups: kernels for the view and inplace view unless the view is
  CompositeImplicitAutograd; registrations for both either way (a composite
  one registers its `at::native` kernel, so it decomposes before
  functionalization); none for `lift_fresh`.
- Other operators: no kernel; a registration when they mutate an argument and
  are not CompositeImplicitAutograd (some known mutating operators that cannot
  be functionalized are left out); a CompositeImplicitAutograd operator
  registers its `at::native` kernel.

A selective build (one that does not include all operators) gets neither
kernels nor registrations. Every item contributes the `_native.h` and `_ops.h`
headers of its operators (per-operator builds only).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TypeAlias

from opgen.spec.groups import NativeFunctionsGroup, NativeFunctionsViewGroup
from opgen.spec.keys import DispatchKey
from opgen.spec.native import NativeFunction
from opgen.targets.aten.functionalization_kernels import mutation_kernel, view_kernel, wrapper_name
from opgen.targets.aten.run import AtenRun
from opgen.targets.emitters import Emitted

Item: TypeAlias = NativeFunction | NativeFunctionsGroup | NativeFunctionsViewGroup

# Mutating operators the pass does not handle: they cannot be grouped properly,
# or need hand-written kernels (resize_), or are for testing only, or are
# inference-only kernels called behind a custom op's graph break.
# `_flash_attention_forward_no_dropout_inplace` joined the list in torch 2.12 and
# `_cudnn_attention_forward_no_dropout_inplace` in torch 2.15; they need no release
# gate because only the specs of those releases (and later) have the operators.
NOT_FUNCTIONALIZED = frozenset(
    {
        "adaptive_avg_pool3d_backward.grad_input",
        "_slow_conv2d_backward.grad_input",
        "_cummax_helper",
        "_cummin_helper",
        "polygamma_",
        "record_stream",
        "resize_",
        "resize_as_",
        "_fill_mem_eff_dropout_mask_",
        "_flash_attention_forward_no_dropout_inplace",
        "_cudnn_attention_forward_no_dropout_inplace",
    }
)

_SHARDED_KEYS = (
    "ops_headers",
    "func_definitions",
    "func_registrations",
    "func_add_back_views_definitions",
    "func_add_back_views_registrations",
)


def _headers(functions: Sequence[NativeFunction | None]) -> list[str]:
    headers = []
    for f in functions:
        if f is not None:
            headers.append(f"#include <ATen/ops/{f.root_name}_native.h>")
            headers.append(f"#include <ATen/ops/{f.root_name}_ops.h>")
    return headers


def op_headers(item: Item) -> list[str]:
    if isinstance(item, NativeFunctionsViewGroup):
        return _headers([item.view, item.view_copy])
    if isinstance(item, NativeFunctionsGroup):
        return _headers([item.functional, item.out, item.inplace, item.mutable])
    return _headers([item])


def _registration(run: AtenRun, f: NativeFunction) -> str:
    if f.has_composite_implicit_autograd_kernel:
        metadata = run.backend_index(DispatchKey.CompositeImplicitAutograd).get_kernel(f)
        assert metadata is not None, f"no CompositeImplicitAutograd kernel for {f.func.name}"
        sig = run.signatures.of(f).native(metadata)
        kernel = f"static_cast<{sig.ptr_type()}>(at::native::{metadata.kernel})"
    else:
        kernel = f"TORCH_FN(functionalization::{wrapper_name(f.func)})"
    return f'm.impl("{f.func.name}", {kernel});'


def registrations(run: AtenRun, item: Item) -> list[str]:
    if isinstance(item, NativeFunctionsViewGroup):
        if str(item.view.func.name) == "lift_fresh":
            return []
        return [_registration(run, f) for f in (item.view, item.view_inplace) if f is not None]
    if isinstance(item, NativeFunctionsGroup):
        inplace = item.inplace
        if inplace is not None and str(inplace.func.name) == "set_.source_Tensor":
            return []
        functions = list(item.functions())
    else:
        if str(item.func.name) in NOT_FUNCTIONALIZED:
            return []
        functions = [item]
    result = []
    for f in functions:
        if f.has_composite_implicit_autograd_kernel:
            continue
        if str(f.func.name) in ("lift", "resize_"):
            return []
        if f.func.is_mutable:
            result.append(_registration(run, f))
    return result


def definitions(run: AtenRun, item: Item) -> list[str]:
    if isinstance(item, NativeFunctionsViewGroup):
        if item.composite:
            return []
        return [view_kernel(run, item, f) for f in (item.view, item.view_inplace) if f is not None]
    if isinstance(item, NativeFunctionsGroup):
        members = (item.out, item.inplace, item.mutable)
        return [mutation_kernel(run, f, item) for f in members if f is not None]
    return []


def items(run: AtenRun) -> list[Item]:
    """Groups, view groups, then the operators in neither."""
    groups, view_groups = run.spec.groups, run.spec.view_groups
    grouped = {f.func.name for g in groups for f in g.functions()}
    grouped.update(f.func.name for g in view_groups for f in g.functions())
    rest = [f for f in run.spec.functions if f.func.name not in grouped]
    return [*groups, *view_groups, *rest]


def emit_functionalization(run: AtenRun) -> Emitted:
    """RegisterFunctionalization_{0..3}.cpp and ...Everything.cpp (AtenPart.sources)."""
    selected = run.selection.include_all_operators

    def env(item: Item) -> dict[str, list[str]]:
        if not selected:
            return {"ops_headers": op_headers(item)}
        return {
            "ops_headers": op_headers(item),
            "func_definitions": definitions(run, item),
            "func_registrations": registrations(run, item),
        }

    outputs = run.outputs()
    outputs.cpu.add_sharded(
        "RegisterFunctionalization.cpp",
        items(run),
        key=lambda item: item.root_name,
        env=env,
        num_shards=4,
        sharded_keys=_SHARDED_KEYS,
    )
    return outputs.emitted()
