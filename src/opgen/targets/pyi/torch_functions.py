"""Facts about `torch._C._VariableFunctions` that the spec does not hold.

The Python bindings of some `torch.` functions are written by hand (factory
functions that take Python data, the functionalization helpers, thread
settings) or parse more than their schemas say (`div` takes a Python number
as its first argument). PyTorch's stubs declare them by hand; these are those
declarations, as data. Upstream lists them in `tools/pyi/gen_pyi.py`; the
values here were checked against the stubs of torch 2.13.

A name's hand-written declarations come before those derived from the spec.
"""

from __future__ import annotations

from opgen.api import pyi
from opgen.targets.pyi.stubs import Definition, Import

# The options every factory function takes, in the order the stubs list them.
FACTORY_OPTIONS = (
    "dtype: _dtype | None = None",
    "device: DeviceLikeType | None = None",
    "requires_grad: _bool = False",
    "pin_memory: _bool = False",
)
OUT = "out: Tensor | None = None"
_SPARSE_OPTIONS = (
    "dtype: _dtype | None = None",
    "device: DeviceLikeType | None = None",
    "requires_grad: _bool = False",
    "check_invariants: _bool | None = None",
)


def _function(name: str, parameters: tuple[str, ...], returns: str | None) -> Definition:
    return Definition(name, parameters, returns)


def _tensor_query(name: str, argument: str, returns: str) -> Definition:
    """A functionalization helper of one tensor."""
    return Definition(name, (f"{argument}: Tensor",), returns)


def _compressed_sparse(layout: str, compressed: str, plain: str) -> Definition:
    """`sparse_<layout>_tensor(<compressed>_indices, <plain>_indices, values, size)`."""
    return Definition(
        f"sparse_{layout}_tensor",
        (
            f"{compressed}_indices: Tensor | list",
            f"{plain}_indices: Tensor | list",
            "values: Tensor | list",
            "size: _size | None = None",
            "*",
            *_SPARSE_OPTIONS,
        ),
        "Tensor",
    )


def _binary(name: str, operand: str, *keywords: str) -> Definition:
    """A binary operation whose operands may both be Python numbers."""
    parameters = (f"input: {operand}", f"other: {operand}", "*", *keywords, OUT)
    return Definition(name, parameters, "Tensor")


def _asarray(requires_grad: str) -> Definition:
    parameters = (
        "obj: Any",
        "*",
        "dtype: _dtype | None = None",
        "device: DeviceLikeType | None = None",
        "copy: _bool | None = None",
        requires_grad,
    )
    return _function("asarray", parameters, "Tensor")


_SCALAR = "Tensor | Number"
_COMPLEX = "Tensor | Number | _complex"

# The declarations every release's stubs share (see `declarations`).
TORCH_FUNCTIONS: tuple[Definition, ...] = (
    _compressed_sparse("csr", "crow", "col"),
    _compressed_sparse("csc", "ccol", "row"),
    _compressed_sparse("bsr", "crow", "col"),
    _compressed_sparse("bsc", "ccol", "row"),
    _function("set_flush_denormal", ("mode: _bool",), "_bool"),
    _function("get_default_dtype", (), "_dtype"),
    _function("from_numpy", ("ndarray",), "Tensor"),
    _function(
        "frombuffer",
        (
            "buffer: Any",
            "*",
            "dtype: _dtype",
            "count: int = -1",
            "offset: int = 0",
            "requires_grad: _bool = False",
        ),
        "Tensor",
    ),
    _function("numel", ("self: Tensor",), "_int"),
    _function("as_tensor", ("data: Any", *FACTORY_OPTIONS[:2]), "Tensor"),
    _function("get_num_threads", (), "_int"),
    _function("set_num_threads", ("num: _int",), "None"),
    _function("init_num_threads", (), "None"),
    _function("get_num_interop_threads", (), "_int"),
    _function("set_num_interop_threads", ("num: _int",), "None"),
    _function("tensor", ("data: Any", *FACTORY_OPTIONS), "Tensor"),
    _function(
        "sparse_coo_tensor",
        (
            "indices: Tensor",
            "values: Tensor | list",
            "size: _size | None = None",
            "*",
            *_SPARSE_OPTIONS,
            "is_coalesced: _bool | None = None",
        ),
        "Tensor",
    ),
    _function(
        "sparse_compressed_tensor",
        (
            "compressed_indices: Tensor | list",
            "plain_indices: Tensor | list",
            "values: Tensor | list",
            "size: _size | None = None",
            "*",
            *_SPARSE_OPTIONS[:1],
            "layout: _layout | None = None",
            *_SPARSE_OPTIONS[1:],
        ),
        "Tensor",
    ),
    _tensor_query("_sync", "t", "None"),
    _tensor_query("_is_functional_tensor", "t", "_bool"),
    _tensor_query("_is_functional_tensor_base", "t", "_bool"),
    _tensor_query("_from_functional_tensor", "t", "Tensor"),
    _tensor_query("_to_functional_tensor", "t", "Tensor"),
    _function("_functionalize_replace", ("self_: Tensor", "other: Tensor"), "None"),
    _tensor_query("_functionalize_commit_update", "t", "None"),
    _function("_functionalize_unsafe_set", ("dst: Tensor", "src: Tensor"), "None"),
    _tensor_query("_functionalize_mark_mutation_hidden_from_autograd", "t", "None"),
    _tensor_query("_functionalize_mutation_counter", "t", "_int"),
    _tensor_query("_functionalize_storage_changed_counter", "t", "_int"),
    _tensor_query("_functionalize_inductor_storage_resized_counter", "t", "_int"),
    _tensor_query("_functionalize_are_all_mutations_hidden_from_autograd", "t", "_bool"),
    _tensor_query("_functionalize_are_all_mutations_under_no_grad_or_inference_mode", "t", "_bool"),
    _tensor_query("_functionalize_was_inductor_storage_resized", "t", "_bool"),
    _tensor_query("_functionalize_sync", "t", "None"),
    _tensor_query("_functionalize_was_storage_changed", "tensor", "_bool"),
    _tensor_query("_functionalize_mark_storage_changed", "tensor", "_bool"),
    _tensor_query("_functionalize_has_metadata_mutation", "tensor", "_bool"),
    _function("_functionalize_apply_view_metas", ("tensor: Tensor", "base: Tensor"), "Tensor"),
    _tensor_query("_functionalize_is_symbolic", "tensor", "_bool"),
    _function("_enable_functionalization", ("*", "reapply_views: _bool = False"), "None"),
    _function("_disable_functionalization", (), None),
    _function(
        "range",
        ("start: Number", "end: Number", "step: Number = 1", "*", OUT, *FACTORY_OPTIONS),
        "Tensor",
    ),
    _function(
        "arange",
        ("start: Number", "end: Number", "step: Number", "*", OUT, *FACTORY_OPTIONS),
        "Tensor",
    ),
    _function("arange", ("start: Number", "end: Number", "*", OUT, *FACTORY_OPTIONS), "Tensor"),
    _function("arange", ("end: Number", "*", OUT, *FACTORY_OPTIONS), "Tensor"),
    _function(
        "linspace",
        ("start: Number", "end: Number", "steps: _int | None = None", "*", OUT, *FACTORY_OPTIONS),
        "Tensor",
    ),
    _function(
        "logspace",
        (
            "start: Number",
            "end: Number",
            "steps: _int | None = None",
            "base: _float = 10.0",
            "*",
            OUT,
            *FACTORY_OPTIONS,
        ),
        "Tensor",
    ),
    _function(
        "randint",
        (
            "low: _int",
            "high: _int",
            "size: _size",
            "*",
            "generator: Generator | None = None",
            *FACTORY_OPTIONS,
        ),
        "Tensor",
    ),
    _function(
        "randint",
        ("high: _int", "size: _size", "*", "generator: Generator | None = None", *FACTORY_OPTIONS),
        "Tensor",
    ),
    _function(
        "full",
        (
            "size: _size",
            "fill_value: Number | _complex",
            "*",
            OUT,
            "layout: _layout = strided",
            *FACTORY_OPTIONS,
        ),
        "Tensor",
    ),
    _function(
        "full",
        (
            "size: _size",
            "fill_value: Number | _complex",
            "*",
            "names: list[str | None]",
            "layout: _layout = strided",
            *FACTORY_OPTIONS,
        ),
        "Tensor",
    ),
    _function("is_grad_enabled", (), "_bool"),
    _function("is_inference_mode_enabled", (), "_bool"),
    _function(
        "nonzero",
        ("input: Tensor", "*", "as_tuple: Literal[False] = False", OUT),
        "Tensor",
    ),
    _function("nonzero", ("input: Tensor", "*", "as_tuple: Literal[True]"), "tuple[Tensor, ...]"),
    _function("dsmm", ("input: Tensor", "mat2: Tensor"), "Tensor"),
    _function("hsmm", ("input: Tensor", "mat2: Tensor"), "Tensor"),
    _function(
        "saddmm",
        (
            "input: Tensor",
            "mat1: Tensor",
            "mat2: Tensor",
            "*",
            "beta: Number = 1",
            "alpha: Number = 1",
            OUT,
        ),
        "Tensor",
    ),
    _function("spmm", ("input: Tensor", "mat2: Tensor"), "Tensor"),
    _binary("div", _SCALAR, "rounding_mode: str | None = None"),
    _binary("true_divide", _SCALAR),
    _binary("floor_divide", _SCALAR),
    _binary("mul", _COMPLEX),
    _binary("add", _COMPLEX, "alpha: Number | _complex | None = 1"),
    _binary("sub", _COMPLEX, "alpha: Number | _complex | None = 1"),
)


def declarations(hints: pyi.Hints) -> tuple[Definition, ...]:
    """The hand-written declarations of a release's stubs: TORCH_FUNCTIONS and `asarray`,
    whose `requires_grad` differs between releases (a name's place here does not matter:
    the stubs sort names)."""
    return (*TORCH_FUNCTIONS, _asarray(hints.asarray_requires_grad))


# Names whose spec-derived declarations the stubs leave out (deprecated
# signatures excepted): the names above whose bindings parse more than their
# schemas; functions torch defines in Python (`torch.functional`) or binds by
# hand; and names that are attributes rather than methods of Tensor.
UNDERIVED_NAMES = frozenset(
    {
        "__init_subclass__",
        "__new__",
        "__subclasshook__",
        "cdist",
        "device",
        "grad",
        "requires_grad",
        "range",
        "einsum",
        "broadcast_tensors",
        "align_tensors",
        "meshgrid",
        "cartesian_prod",
        "block_diag",
        "norm",
        "chain_matmul",
        "stft",
        "tensordot",
        "split",
        "unique_consecutive",
        "atleast_1d",
        "atleast_2d",
        "atleast_3d",
        *(
            f"{name}{suffix}"
            for name in ("add", "sub", "mul", "div", "true_divide", "floor_divide")
            for suffix in ("", "_", "_out")
        ),
        "to",
        "_to_copy",
        "copy_",
    }
)

# What `torch/_C/_VariableFunctions.pyi` (and `torch/_VF.pyi`) import, by block.
_IMPORTS: tuple[tuple[Import, ...], ...] = (
    (
        Import("collections.abc", ("Callable", "Sequence")),
        Import("types", ("EllipsisType",)),
        Import("typing", ("Any", "Literal", "overload", "TypeVar")),
    ),
    (
        Import("torch"),
        Import(
            "torch",
            (
                "contiguous_format",
                "Generator",
                "inf",
                "memory_format",
                "strided",
                "SymInt",
                "Tensor",
            ),
        ),
        Import("torch._prims_common", ("DeviceLikeType",)),
        Import(
            "torch.types",
            (
                "_bool",
                "_complex",
                "_device",
                "_dtype",
                "_float",
                "_int",
                "_layout",
                "_qscheme",
                "_size",
                "Device",
                "Number",
            ),
        ),
    ),
)


def imports(hints: pyi.Hints) -> tuple[tuple[Import, ...], ...]:
    """The imports of `_VariableFunctions.pyi`: with symbolic scalar hints, PySymType too."""
    if "PySymType" not in hints.scalar:
        return _IMPORTS
    *rest, (*others, types) = _IMPORTS
    return (*rest, (*others, Import(types.module, (*types.names, "PySymType"))))
