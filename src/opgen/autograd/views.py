"""Which operators return views of their inputs, as the autograd kernels treat them.

PyTorch's autograd keeps these lists by hand (they are not in the spec): an
operator in `VIEW_FUNCTIONS` returns views of the named argument, and its
ADInplaceOrView kernel records them (`as_view`); `RETURNS_VIEWS_OF_INPUT`
adds operators composed only of views (the JIT's alias analysis reads it);
`ALL_VIEW_FUNCTIONS` adds `_unsafe_view`, a view only for the storage checks
of VariableType's debug mode. Keys are base names (`transpose` for every
overload, `transpose_` excluded).
"""

from __future__ import annotations

from opgen.spec.keys import SchemaKind
from opgen.spec.native import NativeFunction
from opgen.spec.types import Type

# Views whose metadata differs from their base's: replayed with a view function
# even where as_strided is available.
VIEW_FUNCTIONS_WITH_METADATA_CHANGE = (
    # The dtype (complex <-> real).
    "view_as_complex",
    "view_as_real",
    # The conjugate and negative bits.
    "_conj",
    "_neg_view",
    # Nested tensors and their flat values.
    "_nested_get_values",
    "_nested_view_from_buffer",
    "_nested_view_from_jagged",
)

_VIEWS_OF_SELF = (
    "numpy_T",
    "alias",
    "as_strided",
    "diagonal",
    "expand",
    "permute",
    "select",
    "slice",
    "slice_inverse",
    "split",
    "split_with_sizes",
    "squeeze",
    "t",
    "transpose",
    "unfold",
    "unsqueeze",
    "flatten",
    "view",
    "unbind",
    "_indices",
    "_values",
    "indices",
    "values",
    "crow_indices",
    "col_indices",
    "ccol_indices",
    "row_indices",
)

# Base name -> the argument every output is a view of, in upstream's order.
VIEW_FUNCTIONS: dict[str, str] = {
    **{name: "self" for name in _VIEWS_OF_SELF},
    # The constructor's result views both indices and values; autograd tracks one base.
    "sparse_coo_tensor_with_dims_and_tensors": "values",
    "_reshape_alias": "self",
    "_test_autograd_multiple_dispatch_view": "self",
    **{name: "self" for name in VIEW_FUNCTIONS_WITH_METADATA_CHANGE},
}

RETURNS_VIEWS_OF_INPUT: frozenset[str] = frozenset(VIEW_FUNCTIONS) | {
    "chunk",
    "detach",
    "contiguous",
    "reshape",
    "reshape_as",
    "expand_as",
    "view_as",
    "real",
    "imag",
    "narrow",
    "movedim",
    "tensor_split",
    "swapdims",
    "swapaxes",
    "mT",
    "mH",
    "adjoint",
    "matrix_H",
}

ALL_VIEW_FUNCTIONS: dict[str, str] = {**VIEW_FUNCTIONS, "_unsafe_view": "self"}


def get_base_name(f: NativeFunction) -> str:
    """The operator's name without overload or inplace `_`: `add` for `add_.Tensor`."""
    return f.func.name.name.base


def get_view_info(f: NativeFunction) -> str | None:
    """The argument `f`'s outputs are views of, or None if it is no view."""
    base_name = get_base_name(f)
    view_info = VIEW_FUNCTIONS.get(base_name)
    if view_info is None and base_name in RETURNS_VIEWS_OF_INPUT:
        return "self"
    return view_info


def modifies_arguments(f: NativeFunction) -> bool:
    """Inplace and out= functions (not other mutable ones): they bump version counters."""
    return f.func.kind in (SchemaKind.inplace, SchemaKind.out)


def inverse_view_name(f: NativeFunction) -> str:
    """The function undoing a view, for replay: `select.int` -> `select_copy_int_inverse`."""
    overload = f.func.name.overload_name
    return f"{f.root_name}_copy{'_' + overload if overload else ''}_inverse"


def is_tensor_type(t: Type) -> bool:
    """A tensor or optional tensor, not a list."""
    return t.is_tensor_like() and t.is_list_like() is None


def is_tensor_list_type(t: Type) -> bool:
    return t.is_tensor_like() and t.is_list_like() is not None
