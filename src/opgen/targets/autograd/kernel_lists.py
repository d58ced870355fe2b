"""Operator lists, kept by hand in PyTorch, that change VariableType's kernels.

None of this is in the spec: PyTorch's autograd codegen names these operators
in its own source. Names are base names (`add` for every overload of `add`
and not `add_`) unless a list says otherwise.
"""

from __future__ import annotations

from opgen.releases import (
    COMPLEX_LDEXP,
    COMPLEX_LINEAR_NARROW_COPY,
    COMPLEX_NAN_TO_NUM,
    COMPLEX_POLAR_AND_SQRTH,
    Release,
)


def _names(text: str) -> frozenset[str]:
    return frozenset(text.split())


# Operators whose outputs never require grad: the kernel records no history and,
# for inplace ones, leaves requires_grad and grad_fn alone. They depend only on
# their inputs' shape and device, work on integral or boolean data, return
# integers, booleans or nothing, or must stay out of autograd's reach.
DONT_REQUIRE_DERIVATIVE = _names(
    """
    empty_like ones_like full_like zeros_like rand_like randn_like
    new_empty new_empty_strided new_full new_zeros new_ones
    __and__ __iand__ __ilshift__ __ior__ __irshift__ __ixor__ __lshift__ __or__ __rshift__ __xor__
    _sobol_engine_draw _sobol_engine_ff _sobol_engine_scramble_ _sobol_engine_initialize_state_
    _coalesced_
    quantize_per_tensor quantize_per_channel
    argmax argmin argsort searchsorted bucketize
    isnan isposinf isneginf isinf signbit isin allclose
    record_stream
    logical_and logical_xor logical_not logical_or
    _nested_tensor_size _nested_tensor_strides _nested_tensor_storage_offsets
    """
)

# Operators whose backward is implemented and tested for complex (C -> C, R -> C)
# tensors, in torch 2.13 (`gradient_implemented_for_complex` gives every release's);
# every other kernel rejects complex differentiable outputs.
GRADIENT_IMPLEMENTED_FOR_COMPLEX = _names(
    """
    fill t t_copy view reshape reshape_as view_as view_copy roll clone block_diag diag_embed
    repeat expand expand_copy flip fliplr flipud rot90 nanmean nansum transpose transpose_copy
    permute permute_copy squeeze squeeze_copy unsqueeze unsqueeze_copy resize resize_as tril
    triu chunk zero_ eq_ ne_ add __radd__ sum _conj sin cos mul sinc sinh cosh __rmul__ sgn asin
    acos sub div cat view_as_complex index_put neg complex select where as_strided
    as_strided_copy as_strided_scatter slice constant_pad_nd unbind unbind_copy split
    split_with_sizes unsafe_split split_with_sizes_backward dot vdot cholesky triangular_solve
    mm _unsafe_view mv outer bmm diagonal alias atan ldexp linear log log10 log1p log2 logaddexp
    logsumexp logcumsumexp reciprocal tan pow rsqrt tanh tanh_backward asinh acosh atanh take
    fill_ exp exp2 expm1 nonzero mean std_mean var_mean inverse solve linalg_cholesky addcmul
    addcdiv matrix_exp linalg_matrix_exp _linalg_eigh cholesky_solve linalg_qr _linalg_svd
    _fft_c2c _fft_r2c linalg_solve sqrt stack gather index_select index_add_ linalg_inv
    linalg_inv_ex baddbmm addbmm addmm addmv addr linalg_householder_product ormqr
    reflection_pad1d reflection_pad2d reflection_pad3d linalg_cholesky_ex linalg_eig
    diagonal_copy diagonal_scatter alias_copy select_backward diagonal_backward slice_backward
    reflection_pad1d_backward reflection_pad2d_backward reflection_pad3d_backward
    _sparse_sparse_matmul replication_pad1d replication_pad2d replication_pad3d put put_
    _to_copy replication_pad1d_backward replication_pad2d_backward replication_pad3d_backward
    diag masked_scatter masked_select index_add index_fill trace polar cumsum rsub eig lerp
    linalg_vector_norm cumprod prod index_copy lu unfold unfold_backward index masked_fill
    masked_scatter_backward linalg_cross lu_unpack renorm _conj_physical linalg_lu_factor_ex
    scatter scatter_add sigmoid sigmoid_backward sparse_mask trapezoid cumulative_trapezoid
    conj_physical_ _neg_view _reshape_alias _reshape_copy narrow_copy _linalg_det lu_solve
    linalg_solve_triangular linalg_pinv linalg_lstsq unfold_copy col2im im2col cholesky_inverse
    to_sparse sparse_sampled_addmm linalg_lu pixel_shuffle pixel_unshuffle channel_shuffle
    linalg_lu_solve _linalg_slogdet _linalg_solve_ex _unsafe_index _unsafe_index_put
    _unsafe_masked_index _unsafe_masked_index_put_accumulate
    """
) | _names(
    # ... and for sparse complex tensors.
    """
    _to_dense _coalesce coalesce values _sparse_coo_tensor_with_dims_and_tensors _sparse_addmm
    """
)

# What each release added to (or, for 2.14, took from) the 2.13 list, by its Change.
_COMPLEX_SINCE_2_11 = _names("ldexp")
_COMPLEX_SINCE_2_12 = _names("linear narrow_copy")
_COMPLEX_SINCE_2_14 = _names("linalg_matrix_sqrth linalg_polar")
_COMPLEX_UNTIL_2_14 = _names("cholesky")
_COMPLEX_SINCE_2_15 = _names("nan_to_num")


def gradient_implemented_for_complex(release: Release) -> frozenset[str]:
    """GRADIENT_IMPLEMENTED_FOR_COMPLEX as `release` has it."""
    names = GRADIENT_IMPLEMENTED_FOR_COMPLEX
    if not release.has(COMPLEX_LINEAR_NARROW_COPY):
        names = names - _COMPLEX_SINCE_2_12
    if not release.has(COMPLEX_LDEXP):
        names = names - _COMPLEX_SINCE_2_11
    if release.has(COMPLEX_POLAR_AND_SQRTH):
        names = names - _COMPLEX_UNTIL_2_14 | _COMPLEX_SINCE_2_14
    if release.has(COMPLEX_NAN_TO_NUM):
        names = names | _COMPLEX_SINCE_2_15
    return names


# Operators (full names, with the inplace `_`) that invalidate the input's gradient
# accumulator, which the kernel then resets.
RESET_GRAD_ACCUMULATOR = _names("set_ resize_")

# Inplace foreach operators (base name, overload) without differentiability info
# of their own: no reference operator has the matching backward.
FOREACH_WITHOUT_DIFFERENTIABILITY_INFO = frozenset(
    {
        ("_foreach_maximum", "Scalar"),
        ("_foreach_maximum", "ScalarList"),
        ("_foreach_minimum", "Scalar"),
        ("_foreach_minimum", "ScalarList"),
        ("_foreach_addcdiv", "Tensor"),
        ("_foreach_addcmul", "Tensor"),
        ("_foreach_copy", ""),
    }
)

# Inplace foreach operators with fewer arguments than their reference operator
# (no `alpha` scaling the right-hand side).
FOREACH_WITH_DIFFERENT_ARITY = frozenset(
    {
        ("_foreach_add", "Scalar"),
        ("_foreach_add", "ScalarList"),
        ("_foreach_sub", "Scalar"),
        ("_foreach_sub", "ScalarList"),
    }
)
