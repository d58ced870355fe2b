"""Facts about the methods of `torch._C.TensorBase` that the spec does not hold.

`python_variable_methods.cpp` binds some methods by hand (`size`, `to`,
`__getitem__`, the dtype conversions, the Python operators) or parses more
than their schemas say (`add` takes a Python number). PyTorch's stubs declare
them by hand; these are those declarations, as data, checked against the
stubs of torch 2.13. Upstream lists them in `tools/pyi/gen_pyi.py`.

`tensor_methods` (`TENSOR_METHODS`, and what only some releases declare) come
before a name's declarations derived from the spec, `tensor_operators` (the
Python operator methods) after them. The key of a method is the name its
docstring and its place in the sorted class body go by; it differs from the
method's name once (`storage` declares `untyped_storage`).
"""

from __future__ import annotations

from opgen.api import pyi
from opgen.targets.pyi.stubs import Attribute, Definition
from opgen.targets.pyi.torch_functions import FACTORY_OPTIONS, OUT

_DEVICE = "device: DeviceLikeType | None = None"
_INDICES = "indices: _Index | tuple[_Index, ...]"
_MEMORY_FORMAT = "memory_format: torch.memory_format = torch.{}"
_SYMBOLIC = "torch.SymInt | torch.SymFloat"
_TO_OPTIONS = (
    "non_blocking: _bool = False",
    "copy: _bool = False",
    "*",
    "memory_format: torch.memory_format | None = None",
)
_TO_DEVICE = (
    "device: _device | _int | str | None = None",
    "non_blocking: _bool = False",
    _MEMORY_FORMAT.format("preserve_format"),
)
_SOURCE = "source: Storage | TypedStorage | UntypedStorage"


def _method(name: str, parameters: tuple[str, ...], returns: str) -> Definition:
    return Definition(name, ("self", *parameters), returns)


def _constructor(name: str, first: str, returns: str) -> list[Definition]:
    """`Tensor(...)`'s legacy overloads (`first` is `self` or `cls`)."""
    return [
        Definition(name, (first, "*args: Any", _DEVICE), returns),
        Definition(name, (first, "storage: Storage"), returns),
        Definition(name, (first, "other: Tensor"), returns),
        Definition(name, (first, "size: _size", "*", _DEVICE), returns),
    ]


def _static(name: str, parameters: tuple[str, ...]) -> Definition:
    """A static method making a Tensor subclass instance."""
    return Definition(name, ("cls: type[S]", *parameters), "S", decorators=("staticmethod",))


def _binary(name: str, other: str, *keywords: str) -> list[tuple[str, Definition]]:
    """A binary method and its in-place form (which takes no `out`)."""
    out = ("*", OUT) if not keywords else (OUT,)
    return [
        (name, _method(name, (f"other: {other}", *keywords, *out), "Tensor")),
        (f"{name}_", _method(f"{name}_", (f"other: {other}", *keywords), "Tensor")),
    ]


_ALPHA = ("*", "alpha: Number | _complex | None = 1")
_FLAGS = (
    "is_cpu",
    "is_cuda",
    "is_xpu",
    "is_leaf",
    "is_nested",
    "is_sparse",
    "is_sparse_csr",
    "is_quantized",
    "is_meta",
    "is_mps",
    "is_mtia",
    "is_maia",
    "is_mkldnn",
    "is_vulkan",
    "is_ipu",
)
# Methods converting to a dtype: `x.half()`.
_CONVERSIONS = (
    "bfloat16",
    "bool",
    "byte",
    "char",
    "double",
    "float",
    "half",
    "int",
    "long",
    "short",
)

# (key, declaration), in upstream's order (which matters within a key).
TENSOR_METHODS: tuple[tuple[str, Definition | Attribute], ...] = (
    ("size", _method("size", ("dim: None = None",), "Size")),
    ("size", _method("size", ("dim: _int",), "_int")),
    ("stride", _method("stride", ("dim: None = None",), "tuple[_int, ...]")),
    ("stride", _method("stride", ("dim: _int",), "_int")),
    ("new_ones", _method("new_ones", ("size: _size", *FACTORY_OPTIONS), "Tensor")),
    ("new_tensor", _method("new_tensor", ("data: Any", *FACTORY_OPTIONS), "Tensor")),
    ("__new__", Definition("__new__", ("cls", "*args", "**kwargs"), "Self")),
    *(("new", d) for d in _constructor("new", "cls", "Self")),
    *(("__init__", d) for d in _constructor("__init__", "self", "None")),
    ("as_subclass", _method("as_subclass", ("cls: type[S]",), "S")),
    (
        "_make_subclass",
        _static(
            "_make_subclass",
            (
                "data: Tensor",
                "require_grad: _bool = False",
                "dispatch_strides: _bool = False",
                "dispatch_device: _bool = False",
                "device_for_backend_keys: _device | None = None",
            ),
        ),
    ),
    (
        "_make_wrapper_subclass",
        _static(
            "_make_wrapper_subclass",
            (
                "size: Sequence[_int | SymInt]",
                "strides: Sequence[_int | SymInt] | None = None",
                "storage_offset: _int | SymInt | None = None",
                "memory_format: torch.memory_format | None = None",
                "dtype: _dtype | None = None",
                "layout: _layout = strided",
                "device: _device | None = None",
                "pin_memory: _bool = False",
                "requires_grad: _bool = False",
                "dispatch_sizes_strides_policy: str | None = None",
                "dispatch_device: _bool = False",
                "dispatch_layout: _bool = False",
                "_extra_dispatch_keys: torch.DispatchKeySet | None = None",
                "storage_size: _int | SymInt | None = None",
            ),
        ),
    ),
    (
        "_dtensor__new__",
        _static(
            "_dtensor__new__",
            (
                "local_tensor: Tensor",
                "spec: torch.distributed.tensor._dtensor_spec.DTensorSpec",
                "requires_grad: _bool",
            ),
        ),
    ),
    ("__contains__", _method("__contains__", ("item: Any", "/"), "_bool")),
    ("__getitem__", _method("__getitem__", (_INDICES, "/"), "Tensor")),
    ("__setitem__", _method("__setitem__", (_INDICES, "value: Tensor | Number", "/"), "None")),
    ("tolist", _method("tolist", (), "list")),
    ("requires_grad_", _method("requires_grad_", ("mode: _bool = True",), "Tensor")),
    ("element_size", _method("element_size", (), "_int")),
    ("data_ptr", _method("data_ptr", (), "_int")),
    ("dim", _method("dim", (), "_int")),
    ("nonzero", _method("nonzero", ("*", "as_tuple: Literal[False] = False"), "Tensor")),
    ("nonzero", _method("nonzero", ("*", "as_tuple: Literal[True]"), "tuple[Tensor, ...]")),
    ("numel", _method("numel", (), "_int")),
    ("ndimension", _method("ndimension", (), "_int")),
    ("nelement", _method("nelement", (), "_int")),
    ("cuda", _method("cuda", _TO_DEVICE, "Tensor")),
    ("xpu", _method("xpu", _TO_DEVICE, "Tensor")),
    ("cpu", _method("cpu", (_MEMORY_FORMAT.format("preserve_format"),), "Tensor")),
    ("numpy", _method("numpy", ("*", "force: _bool = False"), "numpy.ndarray")),
    ("apply_", _method("apply_", ("callable: Callable",), "Tensor")),
    ("map_", _method("map_", ("other: Tensor", "callable: Callable"), "Tensor")),
    ("map2_", _method("map2_", ("x: Tensor", "y: Tensor", "callable: Callable"), "Tensor")),
    ("storage", _method("untyped_storage", (), "UntypedStorage")),
    ("storage_type", _method("storage_type", (), "Storage")),
    ("type", _method("type", ("dtype: None = None", "non_blocking: _bool = False"), "str")),
    (
        "type",
        _method("type", ("dtype: str | _dtype", "non_blocking: _bool = False"), "Tensor"),
    ),
    ("get_device", _method("get_device", (), "_int")),
    (
        "contiguous",
        _method("contiguous", (_MEMORY_FORMAT.format("contiguous_format"),), "Tensor"),
    ),
    (
        "is_contiguous",
        _method("is_contiguous", (_MEMORY_FORMAT.format("contiguous_format"),), "_bool"),
    ),
    ("_is_view", _method("_is_view", (), "_bool")),
    *((flag, Attribute(flag, "_bool")) for flag in _FLAGS),
    ("storage_offset", _method("storage_offset", (), "_int | SymInt")),
    ("to", _method("to", ("dtype: _dtype", *_TO_OPTIONS), "Tensor")),
    ("to", _method("to", (_DEVICE, "dtype: _dtype | None = None", *_TO_OPTIONS), "Tensor")),
    ("to", _method("to", ("other: Tensor", *_TO_OPTIONS), "Tensor")),
    ("item", _method("item", (), "Number")),
    ("copy_", _method("copy_", ("other: Tensor", "non_blocking: _bool = False"), "Tensor")),
    (
        "set_",
        _method(
            "set_",
            (_SOURCE, "storage_offset: IntLikeType", "size: _symsize", "stride: _symsize"),
            "Tensor",
        ),
    ),
    ("set_", _method("set_", (_SOURCE,), "Tensor")),
    ("split", _method("split", ("split_size: _int", "dim: _int = 0"), "Sequence[Tensor]")),
    (
        "split",
        _method("split", ("split_size: tuple[_int, ...]", "dim: _int = 0"), "Sequence[Tensor]"),
    ),
    (
        "div",
        _method(
            "div", ("other: Tensor | Number", "*", "rounding_mode: str | None = None"), "Tensor"
        ),
    ),
    (
        "div_",
        _method(
            "div_", ("other: Tensor | Number", "*", "rounding_mode: str | None = None"), "Tensor"
        ),
    ),
    *_binary("true_divide", f"Tensor | Number | {_SYMBOLIC}"),
    *_binary("floor_divide", f"Tensor | Number | {_SYMBOLIC}"),
    *_binary("mul", f"Tensor | Number | _complex | {_SYMBOLIC}"),
    *_binary("add", f"Tensor | Number | _complex | {_SYMBOLIC}", *_ALPHA),
    *_binary("sub", f"Tensor | Number | _complex | {_SYMBOLIC}", *_ALPHA),
    *((name, _method(name, (), "Tensor")) for name in _CONVERSIONS),
)


def tensor_methods(hints: pyi.Hints) -> tuple[tuple[str, Definition | Attribute], ...]:
    """The hand-written methods of a release's stubs: TENSOR_METHODS, and `has_names` while
    tensors had named dimensions."""
    if not hints.has_names:
        return TENSOR_METHODS
    return (*TENSOR_METHODS, ("has_names", _method("has_names", (), "_bool")))


# The Python operator methods, by the type of the other operand. In-place
# operators that Python knows (`__iadd__`, not `__idiv__`) return Tensor where
# ruff expects Self, hence the `noqa`.
_NUMBER = "Tensor | Number | _complex"
_INTEGER = "Tensor | _int"
_ARITHMETIC = (
    "add", "sub", "mul", "div", "pow", "mod", "truediv", "matmul", "floordiv",
    "radd", "rsub", "rmul", "rtruediv", "rfloordiv",
)  # fmt: skip
_IN_PLACE_ARITHMETIC = ("iadd", "isub", "imul", "ifloordiv", "imod")
_BITWISE = (
    "and", "or", "xor", "rand", "ror", "rxor", "iand", "ior", "ixor",
    "lshift", "rshift", "ilshift", "irshift",
)  # fmt: skip
_ORDER = ("ge", "gt", "lt", "le")
_UNARY = ("neg", "abs", "invert")
_PYTHON_VALUES = (  # (operator, the Python value it converts to)
    ("bool", "_bool"),
    ("float", "_float"),
    ("complex", "_complex"),
    ("long", "_int"),
    ("index", "_int"),
    ("int", "_int"),
    ("nonzero", "_bool"),
)


def _operator(op: str, other: str | None, returns: str, comment: str = "") -> Definition:
    parameters = ("self",) if other is None else ("self", f"other: {other}")
    return Definition(f"__{op}__", parameters, returns, comment=comment)


def tensor_operators(hints: pyi.Hints) -> tuple[tuple[str, Definition], ...]:
    """The Python operator methods of Tensor, as a release's stubs declare them."""
    definitions = [
        *(
            _operator(op, hints.matmul if op == "matmul" else _NUMBER, "Tensor")
            for op in _ARITHMETIC
        ),
        *(_operator(op, hints.ordered, "Tensor") for op in _ORDER),
        _operator("idiv", _NUMBER, "Tensor"),
        *(_operator(op, _NUMBER, "Tensor", "noqa: PYI034") for op in _IN_PLACE_ARITHMETIC),
        _operator("rpow", _NUMBER, "Tensor", "type: ignore[has-type]"),
        *(_operator(op, _INTEGER, "Tensor") for op in _BITWISE),
        *(_operator(op, None, "Tensor") for op in _UNARY),
        *(_operator(op, None, value) for op, value in _PYTHON_VALUES),
    ]
    for op in ("eq", "ne"):  # unsafe overrides of object's: mypy issue 5704
        definitions += [
            _operator(op, _NUMBER, "Tensor", "type: ignore[overload-overlap]"),
            _operator(op, "object", "_bool"),
        ]
    return tuple((d.name, d) for d in definitions)
