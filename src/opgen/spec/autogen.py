"""Derived operators: the out= and functional variants an entry's `autogen:` asks for.

Operators that share a `FunctionSchema.signature()` are variants of one
operator (functional `add`, inplace `add_`, out= `add.out`, and `foo` with
mutable positional arguments). Transforms such as functionalization need the
functional and out= variants of every operator, so they are derived when the
spec lacks them:

- the out= variant `name.out` (or `name.{overload}_out`) of a functional,
  inplace or mutable operator, when its `autogen:` names an out= overload;
- the functional variant of an operator that has (or now gets) an out= variant.
  It is named like the original, except that the functional variant of a
  mutable `foo` is `foo_functional`, so that it cannot be confused with `foo`.

Derived operators carry the `generated` tag, have a CompositeExplicitAutograd
kernel named after them, and keep the line of the entry they come from.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator

from opgen.diagnostics import SpecError
from opgen.releases import AUTOMATIC_OUT_INPLACE_TAGS, NEWEST, Release
from opgen.spec.arguments import Argument, Return, shared
from opgen.spec.backend import DEFAULT_KERNEL_NAMESPACE, BackendMetadata, default_kernel_name
from opgen.spec.groups import PreGroup
from opgen.spec.keys import DeviceCheckType, SchemaKind, Variant
from opgen.spec.native import NativeFunction
from opgen.spec.schema import BaseOperatorName, FunctionSchema, OperatorName, fresh_alias_names
from opgen.spec.types import TENSOR, Annotation

# Known exceptions in PyTorch's own spec, by operator name. Each would otherwise
# be rejected; they are accepted so that the upstream spec loads unchanged.
# An out= operator whose other variants have a different signature:
UNPAIRED_OUT_OPERATORS = frozenset(
    {"adaptive_avg_pool3d_backward.grad_input", "_slow_conv2d_backward.grad_input"}
)
# Operators without a Tensor return, which therefore cannot get an out= variant:
NO_OUT_VARIANT_OPERATORS = frozenset(
    {
        "_assert_async",
        "_assert_async.msg",
        "_assert_scalar",
        "_assert_tensor_metadata",
        "_chunk_grad_outputs_efficient_attention",
        "_cslt_sparse_mm_search",
        "_cummax_helper",
        "_cummin_helper",
        "_dimI",
        "_dimV",
        "_fused_sdp_choice",
        "_has_same_storage_numel",
        "_linalg_check_errors",
        "_local_scalar_dense",
        "_nested_get_ragged_idx",
        "_nested_tensor_from_mask_left_aligned",
        "_nested_tensor_storage_offsets",
        "_nnz",
        "_print",
        "_sink_tokens",
        "_use_cudnn_ctc_loss",
        "_use_cudnn_ctc_loss.Tensor",
        "_use_miopen_ctc_loss",
        "_use_miopen_ctc_loss.Tensor",
        "_validate_compressed_sparse_indices",
        "allclose",
        "dense_dim",
        "equal",
        "is_coalesced",
        "is_pinned",
        "is_same_size",
        "is_set_to",
        "q_per_channel_axis",
        "q_scale",
        "q_zero_point",
        "qscheme",
        "record_stream",
        "sparse_dim",
        "sym_constrain_range",
        "sym_constrain_range_for_size",
    }
)
# Inplace operators whose schema differs from their functional variant's:
UNPAIRED_INPLACE_OPERATORS = frozenset({"polygamma_"})

# Tags a derived operator inherits from the one it is derived from.
INHERITED_TAGS = frozenset({"nondeterministic_seeded", "view_copy", "pt2_compliant_tag"})


def pre_group(functions: Iterable[NativeFunction]) -> dict[FunctionSchema, PreGroup]:
    """Functions by signature, then by kind; in order of first appearance."""
    groups: dict[FunctionSchema, PreGroup] = {}
    for f in functions:
        group = groups.setdefault(f.func.signature(), {})
        kind = f.func.kind
        if kind in group:
            other = group[kind]
            raise SpecError(
                f"'{f.func.name}' and '{other.func.name}' (line {other.loc.line}) are both "
                f"{kind.value} variants of the same operator; their signatures must differ",
                f.location_of("func"),
            )
        group[kind] = f
    return groups


def derive_functions(
    pre_groups: Iterable[PreGroup], lenient: bool = False, release: Release = NEWEST
) -> list[tuple[PreGroup, NativeFunction, BackendMetadata]]:
    """The derived functions, each with its group and its CompositeExplicitAutograd kernel.

    `lenient` (reading a spec to compare it, maybe an older one, whose exceptions were
    not this version's) derives nothing for a group that breaks a rule instead of failing.
    """
    kind_tags = release.has(AUTOMATIC_OUT_INPLACE_TAGS)
    return [
        (group, f, metadata)
        for group in pre_groups
        for f, metadata in _derive_group(group, lenient, kind_tags)
    ]


def _skips_derivation(group: PreGroup) -> bool:
    manual = composite = True
    is_core = False
    for f in group.values():
        # set_ is tagged inplace_view but is treated as an ordinary inplace op here.
        if f.is_view_op and str(f.func.name.name) != "set_":
            return True
        manual = manual and f.manual_cpp_binding
        composite = composite and f.has_composite_implicit_autograd_kernel
        is_core = is_core or "core" in f.tags
    # Manual C++ bindings bypass the dispatcher; non-core composite operators
    # decompose, so transforms never see them.
    return manual or (composite and not is_core)


def _derive_group(
    group: PreGroup, lenient: bool, kind_tags: bool
) -> Iterator[tuple[NativeFunction, BackendMetadata]]:
    if _skips_derivation(group):
        return
    has_out = SchemaKind.out in group
    if has_out and len(group) == 1:
        out = group[SchemaKind.out]
        if str(out.func.name) not in UNPAIRED_OUT_OPERATORS and not lenient:
            raise SpecError(
                f"out= operator '{out.func.name}' has no functional, inplace or mutable "
                "variant with the same signature; add a functional variant",
                out.location_of("func"),
            )
        return
    inplace = group.get(SchemaKind.inplace)
    if inplace is not None and str(inplace.func.name) in UNPAIRED_INPLACE_OPERATORS:
        return
    base = next(
        (
            group[k]
            for k in (SchemaKind.mutable, SchemaKind.inplace, SchemaKind.out, SchemaKind.functional)
            if k in group
        ),
        None,
    )
    if base is None:  # only a scratch variant: nothing to derive from
        return
    can_have_out = base.func.kind is SchemaKind.inplace or any(
        r.type.is_tensor_like() for r in base.func.returns
    )
    if not has_out and not can_have_out and str(base.func.name) not in NO_OUT_VARIANT_OPERATORS:
        if lenient:
            return
        raise SpecError(
            f"operator '{base.func.name}' returns no Tensor, so it cannot have an out= variant; "
            "give it 'manual_cpp_binding: True' or a CompositeImplicitAutograd kernel",
            base.location_of("func"),
        )
    wants_out = any("out" in str(name) for name in base.autogen)
    gets_out = not has_out and can_have_out and wants_out
    if gets_out and base.func.kind is not SchemaKind.inplace and _returns_written(base.func):
        if lenient:
            return
        raise SpecError(
            f"no out= variant can be derived from '{base.func.name}': it returns an argument "
            "it writes; return nothing from it, or write the out= variant yourself",
            base.location_of("autogen"),
        )
    if gets_out:
        yield _derive(base, SchemaKind.out, kind_tags)
    if SchemaKind.functional not in group and (has_out or gets_out):
        yield _derive(base, SchemaKind.functional, kind_tags)


def _returns_written(func: FunctionSchema) -> bool:
    return any(r.is_write for r in func.returns)


def _derive(
    f: NativeFunction, kind: SchemaKind, kind_tags: bool
) -> tuple[NativeFunction, BackendMetadata]:
    func = _functional_schema(f.func) if kind is SchemaKind.functional else _out_schema(f.func)
    # Out= kernels are named op_overload, which keeps e.g. randn.names_out and
    # randn.generator_with_names_out apart.
    kernel = (
        func.name.unambiguous_name() if func.kind is SchemaKind.out else default_kernel_name(func)
    )
    if f.func.has_symint():
        kernel += "_symint"
    tags = {"generated"} | (f.tags & INHERITED_TAGS)
    if kind_tags and func.is_out_fn():
        tags.add("out")
    if kind_tags and func.name.name.inplace:
        tags.add("inplace")
    derived = NativeFunction(
        namespace=f.namespace,
        func=func,
        use_const_ref_for_mutable_tensors=f.use_const_ref_for_mutable_tensors,
        device_guard=False,
        device_check=DeviceCheckType.NoCheck,
        python_module=None,
        category_override=None,
        variants=frozenset({Variant.function}),  # derived operators are not user-facing
        manual_kernel_registration=False,
        manual_cpp_binding=False,
        loc=f.loc,
        autogen=(),
        ufunc_inner_loop={},
        structured=False,
        structured_delegate=None,
        structured_inherits=None,
        precomputed=None,
        cpp_no_default_args=frozenset(),
        is_abstract=f.is_abstract,
        has_composite_implicit_autograd_kernel=False,
        has_composite_implicit_autograd_nested_tensor_kernel=False,
        has_composite_explicit_autograd_kernel=True,
        has_composite_explicit_autograd_non_functional_kernel=False,
        tags=frozenset(tags),
    )
    return derived, BackendMetadata(kernel, False, DEFAULT_KERNEL_NAMESPACE)


def _out_overload(overload: str) -> str:
    return f"{overload}_out" if overload else "out"


def _functional_schema(func: FunctionSchema) -> FunctionSchema:
    """Mutable arguments become returns named `{arg}_out`."""
    name = func.name.name
    base = BaseOperatorName(
        name.base, False, name.dunder_method, functional_overload=func.kind is SchemaKind.mutable
    )
    signature = func.signature(keep_return_names=True)
    return signature.with_name(OperatorName(base, func.name.overload_name))


def _out_schema(func: FunctionSchema) -> FunctionSchema:
    name = func.name.remove_inplace().with_overload(_out_overload(func.name.overload_name))
    if func.kind is SchemaKind.inplace:
        # self is no longer written; a new `out` of the same type is, and is returned.
        assert func.arguments.self_arg is not None
        self_arg = func.arguments.self_arg.argument
        out = shared(Argument("out", self_arg.type, None, self_arg.annotation))
        arguments = func.arguments.remove_self_annotation().with_out_args([out])
        return FunctionSchema(name, arguments, func.returns)
    returns, outs = _outs_for_returns(func)
    if func.kind is SchemaKind.functional:
        # Out= variants of factories take no TensorOptions: the out tensor has them.
        name = func.name.with_overload(_out_overload(func.name.overload_name))
        return FunctionSchema(name, func.arguments.signature().with_out_args(outs), returns)
    assert func.kind is SchemaKind.mutable
    return FunctionSchema(name, func.arguments.with_out_args(outs), returns)


def _outs_for_returns(func: FunctionSchema) -> tuple[tuple[Return, ...], list[Argument]]:
    """An out argument per Tensor-like return, with fresh alias names.

    The out= variant returns its out arguments only if every return is a plain
    Tensor; otherwise it returns just the returns that are not Tensor-like.
    """
    assert not any(r.is_write for r in func.returns)
    used = [n for a in func.arguments.flat_all if a.annotation for n in a.annotation.alias_set]
    fresh = fresh_alias_names(used)
    all_plain = all(r.type == TENSOR for r in func.returns)
    outs: list[Argument] = []
    returns: list[Return] = []
    for i, r in enumerate(func.returns):
        if not r.type.is_tensor_like():
            returns.append(r)
            continue
        annotation = Annotation((fresh[i],), True, ())
        name = "out" if len(func.returns) == 1 else f"out{i}"
        outs.append(shared(Argument(name, r.type, None, annotation)))
        if all_plain:
            returns.append(shared(Return(None, r.type, annotation)))
    return tuple(returns), outs
