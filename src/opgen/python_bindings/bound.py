"""Which functions PyTorch binds in Python, and in which Python namespace.

The Python bindings (`torch._C._VariableFunctions`, the `torch.Tensor`
methods, `torch._C._nn`, `torch._C._linalg`, ...) cover every function of the
spec except those skipped here: operators PyTorch binds by hand or keeps
internal, by C++ name (`SKIP_PYTHON_BINDINGS`, regular expressions matching
the whole name) or by exact schema, and functions the code generator made up
(tagged `generated`, except `view_copy` ones, which were exposed before they
were generated). A bound function's namespace follows from its
`python_module:` and its variants. Before torch 2.12, a few Tensor queries
(`dim`, `numel`, ...) still had generated bindings (`HANDWRITTEN_TENSOR_QUERIES`).

Facts from torchgen/packaged/autograd/gen_python_functions.py; the bindings
target and `annotated_fn_args.py` share them.
"""

from __future__ import annotations

import re
from collections.abc import Callable

from opgen.api import cpp
from opgen.releases import HANDWRITTEN_TENSOR_QUERIES, NEWEST, Release
from opgen.spec.keys import Variant
from opgen.spec.native import NativeFunction

# C++ names without generated bindings: hand-written in python_variable_methods
# or the torch functions, attributes rather than functions in Python (`mT`),
# internal (backward, functionalization and forward-AD helpers), or overridable
# hooks for backend extensions.
SKIP_PYTHON_BINDINGS: tuple[str, ...] = (
    # Exact names.
    "_batch_norm_no_update",
    "_batch_norm_with_update",
    "_batch_norm_with_update_out",
    "_foreach_copy",
    "_fw_primal",
    "_has_same_storage_numel",
    "_local_scalar_dense",
    "_new_zeros_with_same_feature_meta",
    "_reshape_alias",
    "_reshape_copy",
    "_reshape_copy_out",
    "_sparse_add_out",
    "_sparse_dense_add_out",
    "_to_copy",
    "_to_copy_out",
    "_unsafe_view",
    "_version",
    "alias",
    "contiguous",
    "copy",
    "copy_",
    "copy_sparse_to_sparse_",
    "data",
    "dim",
    "fake_quantize_per_channel_affine_cachemask",
    "fake_quantize_per_tensor_affine_cachemask",
    "get_device",
    "index",
    "index_out",
    "is_contiguous",
    "is_cuda",
    "is_leaf",
    "is_sparse",
    "is_sparse_csr",
    "item",
    "itemsize",
    "mH",
    "mT",
    "matrix_H",
    "nbytes",
    "normal_functional",
    "numel",
    "numpy_T",
    "output_nr",
    "replace_",
    "requires_grad_",
    "retains_grad",
    "set_",
    "set_data",
    "size",
    "slice",
    "storage_offset",
    "stride",
    "sym_is_contiguous",
    "sym_numel",
    "sym_size",
    "sym_storage_offset",
    "sym_stride",
    "tensor",
    "to",
    "unique_dim_consecutive",
    # Patterns.
    ".*_backward",
    ".*_backward_(out|input|weight|bias)",
    ".*_forward",
    ".*_forward_out",
    ".*_jvp",
    ".*_overrideable",
    "_?sparse_(coo|compressed|csr|csc|bsr|bsc)_tensor.*",
    "_cholesky.*",
    "_cumprod.*",
    "_cumsum.*",
    "_inverse.*",
    "_prod.*",
    "_qr.*",
    "_range.*",
    "_solve.*",
    "_sparse_div.*",
    "_sparse_mul.*",
    "_sparse_sub.*",
    "_sum.*",
    "_svd.*",
    "_th_.*",
    "_thnn_.*",
    "_triangular_solve.*",
    "fill.Scalar",
    "fill.Tensor",
    "lift.*",
    "nonzero(_(out|numpy))?",
    "range.*",
)

# Scalar overloads the Tensor overloads already cover in Python.
SKIP_PYTHON_BINDINGS_SIGNATURES = frozenset(
    {
        "add.Scalar(Tensor self, Scalar other, Scalar alpha=1) -> Tensor",
        "add_.Scalar(Tensor(a!) self, Scalar other, Scalar alpha=1) -> Tensor(a!)",
        "div.Scalar(Tensor self, Scalar other) -> Tensor",
        "div_.Scalar(Tensor(a!) self, Scalar other) -> Tensor(a!)",
        "mul.Scalar(Tensor self, Scalar other) -> Tensor",
        "mul_.Scalar(Tensor(a!) self, Scalar other) -> Tensor(a!)",
        "sub.Scalar(Tensor self, Scalar other, Scalar alpha=1) -> Tensor",
        "sub_.Scalar(Tensor(a!) self, Scalar other, Scalar alpha=1) -> Tensor(a!)",
    }
)

# The names of SKIP_PYTHON_BINDINGS that HANDWRITTEN_TENSOR_QUERIES added.
_TENSOR_QUERIES = frozenset({"dim", "get_device", "is_contiguous", "numel", "storage_offset"})


def _skipped_name(patterns: tuple[str, ...]) -> re.Pattern[str]:
    """One pattern for all: a name is skipped when some pattern matches all of it."""
    return re.compile("|".join(f"(?:{pattern})" for pattern in patterns))


_SKIPPED_NAME = _skipped_name(SKIP_PYTHON_BINDINGS)
_SKIPPED_NAME_BEFORE_2_12 = _skipped_name(
    tuple(p for p in SKIP_PYTHON_BINDINGS if p not in _TENSOR_QUERIES)
)


def should_generate_py_binding(f: NativeFunction, release: Release = NEWEST) -> bool:
    """Whether `f` gets a generated Python binding (in some namespace) in `release`."""
    if "generated" in f.tags and "view_copy" not in f.tags:
        return False
    skipped = (
        _SKIPPED_NAME if release.has(HANDWRITTEN_TENSOR_QUERIES) else _SKIPPED_NAME_BEFORE_2_12
    )
    if skipped.fullmatch(cpp.name(f.func)):
        return False
    return str(f.func) not in SKIP_PYTHON_BINDINGS_SIGNATURES


# Which functions each Python namespace binds. A function without a
# `python_module:` is a `torch.` function (in `torch._C._VariableFunctions`), a
# `Tensor` method, or both, as its variants say; one with `python_module: m` is
# in `torch._C._m` only, behind `torch.m` (`torch.nn.functional` for `nn`).
BindsFunction = Callable[[NativeFunction], bool]


def _at_top_level(variant: Variant) -> BindsFunction:
    def binds(f: NativeFunction) -> bool:
        return f.python_module is None and variant in f.variants

    return binds


def _in_module(module: str) -> BindsFunction:
    def binds(f: NativeFunction) -> bool:
        return f.python_module == module

    return binds


is_py_variable_method = _at_top_level(Variant.method)
is_py_torch_function = _at_top_level(Variant.function)
is_py_fft_function = _in_module("fft")
is_py_linalg_function = _in_module("linalg")
is_py_nested_function = _in_module("nested")
is_py_nn_function = _in_module("nn")
is_py_sparse_function = _in_module("sparse")
is_py_special_function = _in_module("special")
