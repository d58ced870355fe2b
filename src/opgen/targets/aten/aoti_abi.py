"""The C ABI of the AOTInductor shim: how schema types cross it, both ways.

Each schema argument becomes one or more C parameters, and an expression that
rebuilds the ATen value from them inside the shim:

- base types map to fixed C types: tensors are `AtenTensorHandle`, `bool`,
  enums and `DeviceIndex` are `int32_t`, `int`/`SymInt` are `int64_t`,
  `Scalar`/`float` are `double`, `str` is `const char*`, `Generator` is
  `AtenGeneratorHandle`; a `Device` is two `int32_t`s (type, `<name>_index_`);
- `T?` passes a pointer to T's first C parameter (null for none);
- `T[]` passes `const T*` and a length `<name>_len_`; only one-parameter
  element types can be listed;
- a written tensor is passed by pointer to the caller's tensor, so the
  kernel can write it.

Results come back through `ret<i>` pointers (functions return
`AOTITorchError`); only base types can be returned. A type outside these
rules (a named dimension, `Dimname`, among them) raises `Unsupported`: the
function gets no shim.
"""

from __future__ import annotations

from collections.abc import Iterable

from opgen.api import cpp_literals
from opgen.spec.arguments import Argument
from opgen.spec.schema import FunctionSchema
from opgen.spec.types import BaseTy, BaseType, ListType, OptionalType, Type

B = BaseTy

# base type -> (C type, ATen type, how the ATen value is rebuilt: a function or "" for itself)
_BASE: dict[BaseTy, tuple[str, str, str]] = {
    B.Tensor: ("AtenTensorHandle", "at::Tensor", "resolve_tensor_dispatch_flags"),
    B.bool: ("int32_t", "bool", ""),
    B.int: ("int64_t", "int64_t", ""),
    B.SymInt: ("int64_t", "c10::SymInt", ""),
    B.Scalar: ("double", "c10::Scalar", ""),
    B.float: ("double", "double", ""),
    B.str: ("const char*", "::std::string_view", ""),
    B.DeviceIndex: ("int32_t", "c10::DeviceIndex", "static_cast<c10::DeviceIndex>"),
    B.Layout: ("int32_t", "c10::Layout", "static_cast<c10::Layout>"),
    B.MemoryFormat: ("int32_t", "c10::MemoryFormat", "static_cast<c10::MemoryFormat>"),
    B.ScalarType: ("int32_t", "c10::ScalarType", "static_cast<c10::ScalarType>"),
    B.Generator: ("AtenGeneratorHandle", "at::Generator", "*generator_handle_to_generator_pointer"),
}

# Operators (any overload whose unambiguous name contains one of these) whose
# callers may pass a null pointer for a result they do not want.
_NULLABLE_RESULTS = (
    # Backward kernels: a caller may want only some of the gradients.
    "convolution_backward",
    "grid_sampler_2d_backward",
    "grid_sampler_3d_backward",
    "linear_backward",
    "_thhn_fused_lstm_cell_backward_impl",
    # Attention kernels: a caller may not want the auxiliary outputs.
    "_scaled_dot_product_cudnn_attention",
    "_scaled_dot_product_efficient_attention",
    "_scaled_dot_product_efficient_attention_backward",
    "_scaled_dot_product_flash_attention",
    "_scaled_dot_product_fused_attention_overrideable",
    # Its result is only a dependency token.
    "_functional_sym_constrain_range",
)


class Unsupported(Exception):
    """A type the C ABI cannot express."""


class Converted:
    """One argument across the ABI: C types and names (in step), ATen types, ATen values."""

    __slots__ = ("aten_types", "c_types", "exprs", "names")

    def __init__(
        self, c_types: list[str], names: list[str], aten_types: list[str], exprs: list[str]
    ) -> None:
        self.c_types, self.names, self.aten_types, self.exprs = c_types, names, aten_types, exprs


def convert(t: Type, name: str, is_write: bool = False) -> Converted:
    if isinstance(t, BaseType):
        return _convert_base(t, name, is_write)
    if isinstance(t, OptionalType):
        return _convert_optional(t, name)
    if isinstance(t, ListType):
        return _convert_list(t, name, is_write)
    raise Unsupported(str(t))


def _convert_base(t: BaseType, name: str, is_write: bool) -> Converted:
    base = _BASE.get(t.name)
    if base is not None:
        c_type, aten_type, rebuild = base
        if t.name is B.Tensor and is_write:
            expr = f"*tensor_handle_to_tensor_pointer({name})"  # an lvalue the kernel can write
        else:
            expr = f"{rebuild}({name})" if rebuild else name
        return Converted([c_type], [name], [aten_type], [expr])
    if t.name is B.Device:
        expr = (
            f"c10::Device(static_cast<c10::DeviceType>({name}), "
            f"static_cast<c10::DeviceIndex>({name}_index_))"
        )
        return Converted(["int32_t", "int32_t"], [name, f"{name}_index_"], ["c10::Device"], [expr])
    raise Unsupported(str(t))


def _convert_optional(t: OptionalType, name: str) -> Converted:
    inner = convert(t.elem, name)
    c_types, names = inner.c_types, inner.names
    aten_types: list[str] = []
    exprs: list[str] = []
    j = 0  # the C parameter of the current ATen value
    for aten_type in inner.aten_types:
        c_types[j] += "*"  # a pointer to the value's first parameter; null for none
        aten_types.append(f"::std::optional<{aten_type}>")
        if aten_type.startswith("c10::ArrayRef<"):
            elem = aten_type[len("c10::ArrayRef<") : -1]
            exprs.append(f"pointer_to_optional_list<{elem}>({names[j]}, {names[j + 1]})")
            j += 2
        elif aten_type == "c10::Device":
            exprs.append(f"pointer_to_optional_device({names[j]}, {names[j + 1]})")
            j += 2
        elif aten_type == "at::Tensor":
            exprs.append(f"resolve_tensor_dispatch_flags({names[j]})")
            j += 1
        else:
            exprs.append(f"pointer_to_optional<{aten_type}>({names[j]})")
            j += 1
    return Converted(c_types, names, aten_types, exprs)


def _convert_list(t: ListType, name: str, is_write: bool) -> Converted:
    inner = convert(t.elem, name)
    if len(inner.c_types) != 1:
        raise Unsupported(str(t))
    elem = inner.aten_types[0]
    length = f"{inner.names[0]}_len_"
    if elem == "bool":
        if t.size is None:
            raise Unsupported(str(t))  # becomes a ::std::array<bool, N>, which needs N
        expr = f"pointer_to_list<{t.size}>({name})"
    elif elem == "at::Tensor" and not is_write:
        expr = f"resolve_tensor_list_dispatch_flags({name}, {length})"
    elif elem == "::std::optional<at::Tensor>":
        resolved = f"resolve_tensor_list_dispatch_flags({name}, {length})"
        expr = f"c10::List<{elem}>(c10::ArrayRef<{elem}>({resolved}))"
    else:
        expr = f"pointer_to_list<{elem}>({name}, {length})"
    return Converted(
        [f"const {inner.c_types[0]}*", "int64_t"],
        [inner.names[0], length],
        [f"c10::ArrayRef<{elem}>"],
        [expr],
    )


def arguments(
    flat: Iterable[Argument], skipped: set[str], defaults: bool = True
) -> tuple[list[str], list[str]]:
    """The C parameters and the call's argument expressions.

    A skipped argument (added by a later version) has no parameter and is
    passed its default (`defaults`; `std::nullopt` without one), else `std::nullopt`.
    """
    params: list[str] = []
    exprs: list[str] = []
    for a in flat:
        if a.name in skipped:
            default = a.default if defaults else None
            exprs.append(
                "std::nullopt"
                if default is None
                else cpp_literals.default_expr(default, a.type, symint=False)
            )
            continue
        c = convert(a.type, a.name, a.is_write)
        params.extend(f"{t} {n}" for t, n in zip(c.c_types, c.names, strict=False))
        exprs.extend(c.exprs)
    return params, exprs


def returns(func: FunctionSchema) -> tuple[list[str], list[str]]:
    """The `ret<i>` pointer parameters, and the statements storing the results."""
    params: list[str] = []
    for i, r in enumerate(func.returns):
        if not isinstance(r.type, BaseType) or r.type.name not in _BASE:
            raise Unsupported(str(r.type))
        params.append(f"{_BASE[r.type.name][0]}* ret{i}")
    name = func.name.unambiguous_name()
    nullable = any(n in name for n in _NULLABLE_RESULTS)
    stores: list[str] = []
    for i, r in enumerate(func.returns):
        assert isinstance(r.type, BaseType)
        value = _returned(
            r.type.name, "tmp_result" if len(params) == 1 else f"std::get<{i}>(tmp_result)"
        )
        stores.append(
            f"if (ret{i}) {{ *ret{i} = {value}; }}" if nullable else f"*ret{i} = {value};"
        )
    return params, stores


def _returned(base: BaseTy, value: str) -> str:
    if base is B.Tensor:
        return f"new_tensor_handle(std::move({value}))"
    if base is B.SymInt:
        return f"{value}.expect_int()"
    if base is B.Scalar:
        return f"{value}.toDouble()"
    return value
