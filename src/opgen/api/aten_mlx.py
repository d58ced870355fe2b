"""The ATen-on-MLX convention: an ATen overload as a C++ function over MLX, bound to Python.

Each lowered overload is a C++ function `aten_<name>_<overload>` in namespace `aten_mlx`,
whose parameters are the schema's, in schema order, with the schema's names, typed as
MLX's C++ API holds values:

    Tensor            const mlx::core::array&   (an elementwise operator's promoted
                      operands: const Operand&, an array or a wrapped number)
    Tensor? / []      std::optional<array>, std::vector<array>, std::vector<std::optional<array>>
    Scalar(?)         Scalar (a Python bool, int, float or complex, remembering which)
    int, SymInt       std::int64_t          int[], SymInt[], int[N]: IntList
    float / bool / str  double / bool / std::string      each `?`: std::optional<...>
    ScalarType        mlx::core::Dtype
    Layout, Device, MemoryFormat   std::string (PyTorch's name: "strided", "cpu", ...)
    Generator?        std::optional<Generator> (refused unless None)

and whose result is the schema's returns: `array`, a `std::tuple` of arrays, a
`std::vector<array>` for `Tensor[]`, `std::int64_t` for `SymInt`, `bool` for `SymBool`,
`Scalar`. Python sees the function under `name_overload` (`add_Tensor`, `abs`), with the
schema's parameter names, defaults and keyword-only parameters, taking `mx.array`s and
MLX's types (`mx.Dtype`; layouts, devices and memory formats as PyTorch's names).

The differences from PyTorch's own Python convention: there are no `TensorOptions`, no
method variants, no overload resolution (each overload is its own function), and a
sized list (`int[2] stride=1`) takes one number for every element, as PyTorch's does.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from opgen.frozen import frozen
from opgen.spec.arguments import Argument, Return
from opgen.spec.schema import FunctionSchema, OperatorName
from opgen.spec.types import BaseTy, BaseType, ListType, OptionalType, Type

# The names the runtime header (`aten_mlx_runtime.h`) declares, which bodies may use.
RUNTIME_NAMES = frozenset(
    {
        "refuse",
        "fail",
        "dtype_name",
        "Scalar",
        "Operand",
        "is_complex",
        "is_floating",
        "is_integral",
        "promote_types",
        "Promotion",
        "ResultType",
        "Promoted",
        "promoted",
        "check_alpha",
        "Alpha",
        "wrap_dim",
        "reduction_axes",
        "reduction_input",
        "to_shape",
        "check_layout",
        "check_generator",
        "dtype_or",
        "outputs",
        "IntList",
        "BoolList",
        "Generator",
        "sized",
        "finish_out",
        "finish_inplace",
        "write_back",
        "can_cast",
        "nonzero",
        "advanced_index",
        "operand_dtype",
        "opmath",
        "require_floating",
        "require_integral",
        "sign_bit",
        "integer_divisor",
        "precise_exp",
        "precise_sin",
        "precise_cos",
        "refuse_float64",
        "remainder_trunc",
        "remainder_floor",
        "div_trunc",
        "div_floor",
        "accumulation_dtype",
        "truncated_divide",
        "fused_multiply_add",
        "per_dimension",
        "pooling_output_size",
        "PoolingWindows",
        "avg_pool_nd",
        "max_pool_nd",
        "adaptive_avg_pool_nd",
        "pooling_scatter",
        "conv_general_exact",
        "convolution_nd",
        "index_pad_nd",
        "upsample_output_size",
        "upsample_scale",
        "upsample_linear_nd",
        "upsample_nearest_nd",
        "host_integers",
        "embedding_bag_nd",
        "batch_norm_nd",
        "integral_matmul",
        "checked_index",
        "AdvancedIndex",
        "advanced_indexing",
        "advanced_index_put",
        "Scattered",
        "scattered",
        "reduced_shape",
        "check_reducible",
        "arg_extreme",
        "variance",
        "stable_order",
    }
)

PYTHON_KEYWORDS = frozenset(
    [
        "False",
        "None",
        "True",
        "and",
        "as",
        "assert",
        "async",
        "await",
        "break",
        "class",
        "continue",
        "def",
        "del",
        "elif",
        "else",
        "except",
        "finally",
        "for",
        "from",
        "global",
        "if",
        "import",
        "in",
        "is",
        "lambda",
        "nonlocal",
        "not",
        "or",
        "pass",
        "raise",
        "return",
        "try",
        "while",
        "with",
        "yield",
    ]
)


class NoMlxValue(Exception):
    """A schema type with no MLX meaning (`Dimname`, `Storage`, `Stream`, ...)."""


@frozen
class LoweredParameter:
    """One schema argument in the convention."""

    name: str  # the schema's name (the C++ and Python name)
    type: Type
    cpp_type: str  # the C++ parameter's type
    stub_type: str  # its Python annotation
    keyword_only: bool
    default: str | None  # the schema's default, as written
    size: int | None  # a sized list's size (`int[2]`), else None
    operand: bool  # an elementwise operator's promoted operand (Operand)

    @property
    def python_default(self) -> str | None:
        return None if self.default is None else python_default(self.default, self.type)


_BASE_CPP = {
    BaseTy.Tensor: "mlx::core::array",
    BaseTy.Scalar: "Scalar",
    BaseTy.int: "std::int64_t",
    BaseTy.SymInt: "std::int64_t",
    BaseTy.float: "double",
    BaseTy.bool: "bool",
    BaseTy.SymBool: "bool",
    BaseTy.str: "std::string",
    BaseTy.ScalarType: "mlx::core::Dtype",
    BaseTy.Layout: "std::string",
    BaseTy.Device: "std::string",
    BaseTy.MemoryFormat: "std::string",
    BaseTy.Generator: "Generator",
}
_BASE_STUB = {
    BaseTy.Tensor: "array",
    BaseTy.Scalar: "bool | int | float | complex",
    BaseTy.int: "int",
    BaseTy.SymInt: "int",
    BaseTy.float: "float",
    BaseTy.bool: "bool",
    BaseTy.SymBool: "bool",
    BaseTy.str: "str",
    BaseTy.ScalarType: "Dtype",
    BaseTy.Layout: "str",
    BaseTy.Device: "str",
    BaseTy.MemoryFormat: "str",
    BaseTy.Generator: "object",
}
OPERAND_STUB = "array | bool | int | float | complex"
_BY_VALUE = frozenset({"std::int64_t", "double", "bool"})


def parameter_types(type: Type, *, operand: bool) -> tuple[str, str]:
    """(C++ type, Python annotation) of a parameter of schema type `type`; `operand`: an
    elementwise operator's promoted Tensor. NoMlxValue if MLX has no such value."""
    if isinstance(type, BaseType):
        if type.name not in _BASE_CPP:
            raise NoMlxValue(str(type))
        if type.name is BaseTy.Tensor and operand:
            return "Operand", OPERAND_STUB
        return _BASE_CPP[type.name], _BASE_STUB[type.name]
    if isinstance(type, OptionalType):
        cpp, stub = parameter_types(type.elem, operand=operand)
        return f"std::optional<{cpp}>", f"{stub} | None"
    if isinstance(type, ListType):
        elem = type.elem
        base = elem.base_ty
        if isinstance(elem, BaseType) and base in (BaseTy.int, BaseTy.SymInt):
            return "IntList", "int | Sequence[int]"
        if isinstance(elem, BaseType) and base is BaseTy.bool:
            return "BoolList", "Sequence[bool]"
        if isinstance(elem, BaseType) and base is BaseTy.float:
            return "std::vector<double>", "Sequence[float]"
        if isinstance(elem, BaseType) and base is BaseTy.Tensor:
            return "std::vector<mlx::core::array>", "Sequence[array]"
        if isinstance(elem, OptionalType) and elem.elem == BaseType(BaseTy.Tensor):
            return "std::vector<std::optional<mlx::core::array>>", "Sequence[array | None]"
        raise NoMlxValue(str(type))
    raise NoMlxValue(str(type))


def parameters(
    func: FunctionSchema, operands: frozenset[str] = frozenset()
) -> list[LoweredParameter]:
    """Every argument of `func` in the convention, in schema order; `operands`: the names
    of the Tensor arguments an elementwise operator promotes (Operand). NoMlxValue
    (naming the argument) for a type MLX has no value of."""
    found: list[LoweredParameter] = []
    kwarg_only = {id(a) for a in (*func.arguments.flat_kwarg_only, *func.arguments.out)}
    for argument in func.arguments.flat_all:
        try:
            cpp, stub = parameter_types(argument.type, operand=argument.name in operands)
        except NoMlxValue:
            raise NoMlxValue(
                f"argument '{argument.name}' is of type '{argument.type}', which has no MLX value"
            ) from None
        listed = argument.type.is_list_like()
        found.append(
            LoweredParameter(
                name=argument.name,
                type=argument.type,
                cpp_type=cpp,
                stub_type=stub,
                keyword_only=id(argument) in kwarg_only,
                default=argument.default,
                size=listed.size if listed is not None else None,
                operand=argument.name in operands,
            )
        )
    return found


def parameter_declaration(p: LoweredParameter, name: str) -> str:
    """`const T& name` (numbers by value)."""
    if p.cpp_type in _BY_VALUE:
        return f"{p.cpp_type} {name}"
    return f"const {p.cpp_type}& {name}"


def return_type(returns: Sequence[Return]) -> tuple[str, str]:
    """(C++ type, Python annotation) of the schema's returns."""
    if not returns:
        return "void", "None"
    if len(returns) > 1:
        cpp = [return_type([r])[0] for r in returns]
        stubs = [return_type([r])[1] for r in returns]
        return f"std::tuple<{', '.join(cpp)}>", f"tuple[{', '.join(stubs)}]"
    type = returns[0].type
    if type == BaseType(BaseTy.Tensor):
        return "mlx::core::array", "array"
    if isinstance(type, ListType) and type.elem == BaseType(BaseTy.Tensor):
        return "std::vector<mlx::core::array>", "list[array]"
    if isinstance(type, BaseType) and type.name in (BaseTy.SymInt, BaseTy.int):
        return "std::int64_t", "int"
    if isinstance(type, BaseType) and type.name in (BaseTy.SymBool, BaseTy.bool):
        return "bool", "bool"
    if isinstance(type, BaseType) and type.name is BaseTy.Scalar:
        return "Scalar", "bool | int | float | complex"
    if isinstance(type, BaseType) and type.name is BaseTy.float:
        return "double", "float"
    raise NoMlxValue(f"it returns '{type}', which has no MLX value")


def python_name(name: OperatorName) -> str:
    """The Python name of an overload: `add_Tensor`, `abs`, `add__Tensor` (`add_.Tensor`)."""
    text = str(name).replace(".", "_")
    return f"{text}_" if text in PYTHON_KEYWORDS else text


def cpp_name(name: OperatorName) -> str:
    """The C++ function of an overload: `aten_add_Tensor`, never an MLX function's name."""
    return "aten_" + str(name).replace(".", "_")


_DTYPES = {
    "float": "float32",
    "double": "float64",
    "half": "float16",
    "bfloat16": "bfloat16",
    "long": "int64",
    "int": "int32",
    "short": "int16",
    "char": "int8",
    "byte": "uint8",
    "bool": "bool_",
}
_NUMBER = re.compile(r"-?(\d+\.?\d*|\.\d+)([eE][-+]?\d+)?\Z")


def python_default(default: str, type: Type) -> str:
    """The schema's default as the Python value the signature shows."""
    if default in ("True", "False", "None"):
        return default
    if type.base_ty is BaseTy.ScalarType and default in _DTYPES:
        return f"mlx.core.{_DTYPES[default]}"
    if default.startswith("[") or _NUMBER.match(default):
        return default.replace(",", ", ") if default.startswith("[") else default
    if default.startswith(("'", '"')):
        return default
    return repr(default)  # contiguous_format, mean, ...


def cpp_default(default: str, p: LoweredParameter) -> str:
    """The schema's default as a C++ value of the parameter's type."""
    type = p.type
    optional = isinstance(type, OptionalType)
    if default == "None":
        return "std::nullopt"
    base = type.base_ty
    value: str
    if base is BaseTy.ScalarType:
        value = f"mlx::core::{_DTYPES.get(default, default)}"
    elif type.is_list_like() is not None:
        items = default.strip("[]").replace(" ", "")
        value = f"{p.cpp_type.removeprefix('std::optional<').removesuffix('>')}{{{items}}}"
    elif default in ("True", "False"):
        value = "true" if default == "True" else "false"
    elif base is BaseTy.Scalar:
        number = default if any(c in default for c in ".eE") else f"std::int64_t{{{default}}}"
        value = f"Scalar({number})"
    elif base in (BaseTy.int, BaseTy.SymInt):
        value = f"std::int64_t{{{default}}}"
    elif base is BaseTy.float:
        value = default if any(c in default for c in ".eE") else f"{default}.0"
    elif default.startswith(("'", '"')):
        value = f'std::string("{default[1:-1]}")'
    else:
        value = f'std::string("{default}")'
    return f"std::optional<{_unwrapped(p.cpp_type)}>({value})" if optional else value


def _unwrapped(cpp: str) -> str:
    return cpp.removeprefix("std::optional<").removesuffix(">")


def nanobind_default(default: str, p: LoweredParameter) -> str:
    """The schema's default as the C++ expression `nb::arg(...) = ...` takes: a Python
    object, or a C++ value nanobind converts to one."""
    type = p.type
    if default == "None":
        return "nb::none()"
    if default in ("True", "False"):
        return "nb::bool_(true)" if default == "True" else "nb::bool_(false)"
    base = type.base_ty
    if base is BaseTy.ScalarType:
        return f"nb::cast(mlx::core::{_DTYPES.get(default, default)})"
    if type.is_list_like() is not None:
        items = [i for i in default.strip("[]").replace(" ", "").split(",") if i]
        if base is BaseTy.float:
            return f"nb::cast(std::vector<double>{{{', '.join(items)}}})"
        return f"nb::cast(std::vector<std::int64_t>{{{', '.join(items)}}})"
    if default.startswith(("'", '"')):
        return f'nb::str("{default[1:-1]}")'
    if _NUMBER.match(default):
        if any(c in default for c in ".eE") or base is BaseTy.float:
            return f"nb::float_({float(default)!r})"
        return f"nb::int_({default})"
    return f'nb::str("{default}")'


def stub_signature(python: str, params: Sequence[LoweredParameter], returns: str) -> str:
    """`def add_Tensor(self: ..., other: ..., *, alpha: ... = 1) -> array`."""
    parts: list[str] = []
    star = False
    for p in params:
        if p.keyword_only and not star:
            parts.append("*")
            star = True
        text = f"{p.name}: {p.stub_type}"
        if p.default is not None:
            text += f" = {p.python_default}"
        parts.append(text)
    return f"def {python}({', '.join(parts)}) -> {returns}"


def mutated(func: FunctionSchema) -> list[Argument]:
    """The arguments an overload writes to (`Tensor(a!)`): its out= and in-place ones."""
    return [a for a in func.arguments.flat_all if a.is_write]
