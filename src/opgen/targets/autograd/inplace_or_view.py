"""`ADInplaceOrViewType_{0,1}.cpp` (and the Everything file): the ADInplaceOrView kernels.

The ADInplaceOrView dispatch key sits just below autograd. Its kernels do the
bookkeeping autograd needs for operators that alias or mutate their inputs,
then redispatch below the key:
- an inplace or out= operator that returns something bumps the version
  counter of each returned (mutated) tensor, `increment_version(self)`;
- a view operator (`opgen.autograd.views`) marks its output as a view
  of its base (`as_view`), with how it was created (`CreationMeta`: default,
  several outputs, no grad mode, inference mode). Where the base cannot be
  viewed through `as_strided` (or the view changes metadata, or replay is
  requested), it also records how to redo the view on another base (a
  ViewFunc, see view_funcs.py) and how to undo it (a lambda calling the view's
  hand-written inverse, `FunctionalInverses::<view>_inverse`).
A view with no differentiable output is a view autograd does not track.

Operators with a derived autograd kernel (`wrappers.use_derived`) are
spread over two shards by their base name; the files are not generated with
`--disable-autograd`.
"""

from __future__ import annotations

from collections.abc import Sequence

from opgen.api import cpp
from opgen.api.dispatcher import DispatcherSignature
from opgen.api.functionalization import reverse_name
from opgen.api.types import (
    BOOL,
    CONST_OPTIONAL_TENSOR_REF,
    CONST_TENSOR_REF,
    INT64,
    INT_ARRAY_REF,
    SYM_INT,
    SYM_INT_ARRAY_REF,
    Binding,
    CType,
    OptionalCType,
)
from opgen.autograd.model import NativeFunctionWithDifferentiabilityInfo
from opgen.autograd.views import (
    VIEW_FUNCTIONS_WITH_METADATA_CHANGE,
    get_view_info,
    is_tensor_list_type,
    is_tensor_type,
    modifies_arguments,
)
from opgen.diagnostics import SpecError
from opgen.spec.native import NativeFunction
from opgen.targets.autograd.run import AutogradRun, emitted
from opgen.targets.autograd.view_funcs import VIEW_IDX, view_func_name
from opgen.targets.autograd.wrappers import (
    TMP_VAR,
    assign_return_value,
    get_return_value,
    method_definition,
    tie_return_values,
    type_wrapper_name,
    use_derived,
    wrapper_formals,
    wrapper_registration,
)
from opgen.targets.emitters import Emitted

# The types of view arguments a replay can capture by value (array refs are
# copied into vectors first, optional ints replaced by their value or 0).
REPLAYABLE_ARGUMENT_TYPES: tuple[CType, ...] = (
    INT64,
    OptionalCType(INT64),
    SYM_INT,
    OptionalCType(SYM_INT),
    BOOL,
    INT_ARRAY_REF,
    SYM_INT_ARRAY_REF,
    CONST_TENSOR_REF,
    CONST_OPTIONAL_TENSOR_REF,
)

# Where the kernels hand the call on: below ADInplaceOrView.
REDISPATCH_KEYS = "ks & c10::after_ADInplaceOrView_keyset"

SHARDED_KEYS = (
    "ops_headers",
    "inplace_or_view_method_definitions",
    "inplace_or_view_wrapper_registrations",
)


def has_kernel(f: NativeFunction) -> bool:
    """Whether `f` gets an ADInplaceOrView kernel: a view, or a mutating operator that
    returns what it mutates (one returning nothing cannot be supported by autograd,
    pytorch/pytorch#53796)."""
    return get_view_info(f) is not None or (modifies_arguments(f) and len(f.func.returns) > 0)


def replay_arguments(f: NativeFunction, bindings: Sequence[Binding]) -> tuple[list[str], list[str]]:
    """The statements that copy the view's arguments for capture by value, and the
    arguments the view's inverse then gets (the base, `input_base`, first)."""
    copies: list[str] = []
    arguments: list[str] = []
    for b in bindings:
        name, ctype = b.name, b.nctype.type
        if name == "self":
            arguments.append("input_base")
            continue
        if ctype not in REPLAYABLE_ARGUMENT_TYPES:
            raise SpecError(
                f"view {cpp.name(f.func)} has argument {name} of C++ type {ctype.cpp_type()}, "
                "which its replay cannot capture by value; the types it can capture are "
                + ", ".join(t.cpp_type() for t in REPLAYABLE_ARGUMENT_TYPES),
                f.location_of("func"),
            )
        if ctype in (INT_ARRAY_REF, SYM_INT_ARRAY_REF):  # a reference: copy the elements
            copies.append(f"auto {name}_vec = {name}.vec();")
            arguments.append(f"{name}_vec")
        elif ctype == OptionalCType(INT64):
            copies.append(f"auto {name}_val = {name}.value_or(0);")
            arguments.append(f"{name}_val")
        else:
            arguments.append(name)
    return copies, arguments


def view_replay(f: NativeFunction, bindings: Sequence[Binding], view_idx: str | None) -> str:
    """Statements setting `func` (redoes the view) and `rev_func` (undoes it) where the
    view cannot be redone with `as_strided`; else both stay null. `bindings` are the
    wrapper's (the dispatcher signature's)."""
    copies, replay_args = replay_arguments(f, bindings)
    index = [] if view_idx is None else [view_idx]
    func_args = ", ".join([*(b.name for b in bindings if b.name != "self"), *index])
    # The inverse takes the original base and the view, then the view's other arguments
    # (the replay's, less the first: the base, `self` in every view).
    inverse_args = ", ".join(
        [
            "self",
            "input_view",
            "at::functionalization::InverseReturnMode::AlwaysView",
            *index,
            *replay_args[1:],
        ]
    )
    metadata_change = "true" if cpp.name(f.func) in VIEW_FUNCTIONS_WITH_METADATA_CHANGE else "false"
    lines = [
        "std::unique_ptr<torch::autograd::ViewFunc> func(nullptr);",
        "std::function<at::Tensor(const at::Tensor&)> rev_func=nullptr;",
        f"if ({metadata_change} ||",
        "    !self.unsafeGetTensorImpl()->support_as_strided() ||",
        "    self.unsafeGetTensorImpl()->is_python_dispatch() ||",
        "    c10::AutogradState::get_tls_state().get_view_replay_enabled()) {",
        *(f"  {line}" for line in copies),
        f"  func = std::make_unique<{view_func_name(f, include_namespace=True)}>({func_args});",
        "  rev_func = [=](const at::Tensor& input_view) {",
        f"    return {reverse_name(f, include_namespace=True)}({inverse_args});",
        "  };",
        "}",
    ]
    return "\n".join(lines)


def creation_meta(when_grad_enabled: str) -> str:
    """The view's CreationMeta: inference mode and no-grad mode override the usual one."""
    return (
        "InferenceMode::is_enabled() ? CreationMeta::INFERENCE_MODE : "
        f"(at::GradMode::is_enabled() ? {when_grad_enabled} : CreationMeta::NO_GRAD_MODE)"
    )


def view_body(
    fn: NativeFunctionWithDifferentiabilityInfo, bindings: Sequence[Binding], var: str
) -> tuple[str, str]:
    """Statements marking the redispatch's result `var` as a view, and the value returned
    (`bindings`: the wrapper's)."""
    f = fn.func
    base = get_view_info(f)
    assert base is not None, "only views get a view body"
    outputs = fn.differentiable_outputs()
    if not outputs:  # e.g. `indices()` of a sparse tensor
        untracked = (
            f"as_view({base}, {var}, /* is_bw_differentiable */ false, "
            "/* is_fw_differentiable */ false)"
        )
        return "", untracked
    if len(outputs) > 1:
        raise SpecError(
            f"view {f.func.name} has several differentiable outputs, which autograd does not "
            "support for views",
            f.location_of("func"),
        )
    (output,) = outputs
    tracked = (
        "/* is_bw_differentiable */ true, /* is_fw_differentiable */ true, "
        "/* view_func */ std::move(func), /* rev_view_func */ rev_func, /* creation_meta */ "
    )
    if is_tensor_list_type(output.type):
        # Each tensor of the list is a view; none may have its history rebased.
        each = (
            f"as_view(/* base */ {base}, /* output */ {var}[{VIEW_IDX}], {tracked}"
            f"{creation_meta('CreationMeta::MULTI_OUTPUT_NODE')});"
        )
        replay = view_replay(f, bindings, VIEW_IDX).replace("\n", "\n  ")
        loop = f"for (auto {VIEW_IDX} : c10::irange({var}.size())) {{\n  {replay}\n  {each}\n}}\n"
        return loop, f"std::move({var})"
    if not is_tensor_type(output.type):
        raise SpecError(
            f"view {f.func.name} returns a differentiable {output.type}; views that return "
            "differentiable outputs can only return Tensor or Tensor[]",
            f.location_of("func"),
        )
    rhs = (
        f"as_view(/* base */ {base}, /* output */ {var}, {tracked}"
        f"{creation_meta('CreationMeta::DEFAULT')})"
    )
    return view_replay(f, bindings, None) + "\n", rhs


def kernel_body(
    fn: NativeFunctionWithDifferentiabilityInfo, dispatcher: DispatcherSignature
) -> list[str]:
    """The kernel's statements: redispatch, then bump versions or mark views."""
    f = fn.func
    unambiguous = f.func.name.unambiguous_name()
    args = ", ".join([REDISPATCH_KEYS, *(e.expr for e in dispatcher.exprs())])
    body: list[str]
    if modifies_arguments(f):
        body = [
            "{\n"
            "  at::AutoDispatchBelowADInplaceOrView guard;\n"
            f"  at::_ops::{unambiguous}::redispatch({args});\n"
            "}\n",
            *(f"increment_version({name});" for name in cpp.return_names(f)),
        ]
    else:
        redispatch = (
            f"auto {TMP_VAR} = ([&]() {{\n"
            "  at::AutoDispatchBelowADInplaceOrView guard;\n"
            f"  return at::_ops::{unambiguous}::redispatch({args});\n"
            "})();\n"
        )
        call, rhs = view_body(fn, dispatcher.bindings, TMP_VAR)
        body = [redispatch, call, assign_return_value(tie_return_values(f), rhs)]
    if f.func.returns:
        body.append(f"return {get_return_value(f)};")
    return body


def kernel_env(
    run: AutogradRun, fn: NativeFunctionWithDifferentiabilityInfo
) -> dict[str, list[str]]:
    """One operator's contribution to its shard: its header, kernel and registration."""
    f = fn.func
    if not has_kernel(f):
        return {key: [] for key in SHARDED_KEYS}
    name, dispatcher = type_wrapper_name(f), run.signatures.of(f).dispatcher
    body = kernel_body(fn, dispatcher)
    return {
        "ops_headers": [f"#include <ATen/ops/{f.root_name}_ops.h>"],
        "inplace_or_view_method_definitions": [
            method_definition(dispatcher.returns_text, name, wrapper_formals(dispatcher), body)
        ],
        "inplace_or_view_wrapper_registrations": [wrapper_registration(f, name, "ADInplaceOrView")],
    }


def emit_inplace_or_view(run: AutogradRun) -> Emitted:
    template = "ADInplaceOrViewType.cpp"
    out = run.output_set()
    out.add_sharded(
        template,
        [fn for fn in run.fns if use_derived(fn)],
        key=lambda fn: fn.func.root_name,
        env=lambda fn: kernel_env(run, fn),
        num_shards=2,
        sharded_keys=SHARDED_KEYS,
        base_env={"generated_comment": f"@generated from {run.template_comment_dir}/{template}"},
    )
    return emitted(out)
