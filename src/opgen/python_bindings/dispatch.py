"""How a Python binding calls the C++ function whose arguments it parsed.

A binding parses its arguments with `PythonArgParser` (signatures of
`python.py`) into `_r`, and reads each back by position with the unpack
method of its type: `_r.tensor(0)`, `_r.toInt64(1)`, `_r.scalartypeOptional(2)`,
`_r.deviceWithDefault(4, torch::tensors::get_default_device())` for an
argument whose default is not a constant. It then calls the C++ API through
a lambda that releases the GIL:

    auto dispatch_add = [](const at::Tensor & self, const at::Tensor & other,
                           const at::Scalar & alpha) -> at::Tensor {
      pybind11::gil_scoped_release no_gil;
      return self.add(other, alpha);
    };
    return wrap(dispatch_add(self, _r.tensor(0), _r.scalar(1)));

The lambda takes the C++ API's arguments (TensorOptions packed into
`options`, out arguments first), always with `self`, except that:
- a method's `self` is `const at::Tensor &` (the bound tensor itself);
- a mutable tensor is taken by value, since the parser's outputs are
  temporaries, unless it is one of several outputs, which are unpacked into a
  local (`auto out = _r.tensorlist_n<2>(3);`) and passed as `out[i]`;
- an optional list of dimension names (`Dimname[]?`, torch 2.12 and before)
  is unwrapped into a local `::std::optional<DimnameList>` first;
- its return type drops annotations (a value, never a reference to a
  temporary), and must be one `wrap()` handles (`SUPPORTED_RETURN_TYPES`);
- a deprecated signature calls with its own argument order and constants.

TensorOptions are packed from the parsed dtype, device, layout,
requires_grad and pin_memory (`const auto options = TensorOptions()...`);
an out= call with those keywords checks them against the out tensor
(`check_out_type_matches`); a call that cannot take `requires_grad` sets it on
the result. The callee is the method (`self.add`) for method variants, else
`torch::` for factories and `*_like` functions (which go through the variable
factories), else `at::`; SymInt functions call their `_symint` overload.
Facts from torchgen/api/python.py.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from opgen.api import cpp
from opgen.api.python import (
    PythonArgument,
    PythonOutArgument,
    PythonSignature,
    PythonSignatureDeprecated,
)
from opgen.api.signatures import FunctionSignatures
from opgen.api.types import ArgumentStyle, BindingMemo, TupleCType
from opgen.frozen import frozen
from opgen.releases import METHOD_DEVICE_INIT_GUARD, NEWEST, Release
from opgen.spec.arguments import Arguments, Return
from opgen.spec.keys import Variant
from opgen.spec.native import NativeFunction
from opgen.spec.types import BaseTy, BaseType, ListType, OptionalType, Type

# What the lambdas may return: the types `wrap()` (torch/csrc/autograd/utils/wrap_outputs.h)
# turns into Python objects.
SUPPORTED_RETURN_TYPES = frozenset(
    {
        "bool",
        "void",
        "void*",
        "double",
        "int64_t",
        "at::Scalar",
        "at::Stream",
        "at::Tensor",
        "at::QScheme",
        "at::ScalarType",
        "at::IntArrayRef",
        "::std::vector<at::Tensor>",
        "::std::tuple<double,int64_t>",
        "::std::tuple<at::Tensor,at::Tensor>",
        "::std::tuple<at::Tensor,at::Tensor,at::Tensor>",
        "::std::tuple<at::Tensor,::std::vector<at::Tensor>>",
        "::std::tuple<at::Tensor,at::Tensor,double,int64_t>",
        "::std::tuple<at::Tensor,at::Tensor,at::Tensor,int64_t>",
        "::std::tuple<at::Tensor,at::Tensor,at::Tensor,at::Tensor>",
        "::std::tuple<at::Tensor,at::Tensor,double,at::Tensor,int64_t>",
        "::std::tuple<at::Tensor,at::Tensor,at::Tensor,at::Tensor,int64_t>",
        "::std::tuple<at::Tensor,at::Tensor,at::Tensor,at::Tensor,at::Tensor>",
        "::std::tuple<at::Tensor,at::Tensor,at::Tensor,at::Tensor,at::Tensor,at::Tensor>",
        "::std::tuple<at::Tensor,at::Tensor,at::Tensor,at::Tensor,"
        "c10::SymInt,c10::SymInt,at::Tensor,at::Tensor,at::Tensor>",
    }
)

# The TensorOptions keywords and the types they must have.
TENSOR_OPTIONS_FIELDS = {
    "device": "Device?",
    "dtype": "ScalarType?",
    "layout": "Layout?",
    "pin_memory": "bool?",
    "requires_grad": "bool?",
}


@frozen
class PythonArgParserOutputExpr:
    """One parsed argument, read back from `_r`."""

    expr: str  # `_r.toInt64(1)`
    index: int

    @property
    def is_none_expr(self) -> str:
        return f"_r.isNone({self.index})"


@frozen
class DispatchCall:
    """The lambda a binding calls a C++ function through, and the call of it."""

    formals: str  # the lambda's parameters: `const at::Tensor & self, int64_t dim`
    returns: str  # its return type: `at::Tensor`
    callee: str  # `self.sum`, `at::sum`, `torch::zeros_symint`
    callee_args: str  # what the lambda passes on: `dim, keepdim`
    inits: tuple[str, ...]  # locals the call's arguments use (`auto self = ...;`)
    args: str  # the lambda's arguments: `self, _r.toInt64(0)`
    # `.set_requires_grad(...)` for the result, where the callee cannot take it; else "".
    set_requires_grad: str


# -- parser outputs ------------------------------------------------------------------

# Unpack methods of the base types whose method is their name in lower case, and of the rest.
_LOWER_CASE_UNPACK = frozenset(
    {BaseTy.Tensor, BaseTy.Stream, BaseTy.Storage, BaseTy.Scalar, BaseTy.Dimname}
)
_BASE_UNPACK = {
    BaseTy.ScalarType: "scalartype",
    BaseTy.Device: "device",
    BaseTy.DeviceIndex: "toInt64",
    BaseTy.int: "toInt64",
    BaseTy.SymInt: "toSymInt",
    BaseTy.bool: "toBool",
    BaseTy.float: "toDouble",
    BaseTy.str: "stringView",
    BaseTy.Layout: "layout",
    BaseTy.MemoryFormat: "memoryformat",
}
# Types whose unpack method can supply a non-constant default (`...WithDefault`).
_WITH_DEFAULT = frozenset({BaseTy.ScalarType, BaseTy.Device, BaseTy.bool, BaseTy.Layout})
_TYPES_WITH_DEFAULT_INIT = frozenset(
    {"ScalarType?", "ScalarType", "Device", "Device?", "Layout", "Layout?", "bool", "bool?"}
)
_LIST_UNPACK = {
    "Tensor?": "list_of_optional_tensors",
    "int": "intlist",
    "float": "doublelist",
    "SymInt": "symintlist",
    "Scalar": "scalarlist",
    "Dimname": "dimnamelist",  # `Dimname[1]` too: the parser accepts any length
}
_NONE_DEFAULTS = (None, "None", "::std::nullopt", "std::nullopt")


def arg_parser_unpack_method(t: Type, default: str | None, default_init: str | None) -> str:
    """The `_r` method that reads an argument of type `t`; ValueError if there is none."""
    if default_init is not None and str(t) not in _TYPES_WITH_DEFAULT_INIT:
        raise ValueError(f"the parser cannot give an argument of type '{t}' a computed default")
    if isinstance(t, BaseType):
        if t.name in _LOWER_CASE_UNPACK:
            return t.name.name.lower()
        method = _BASE_UNPACK.get(t.name)
        if method is not None:
            if default_init is not None and t.name in _WITH_DEFAULT:
                return f"{method}WithDefault"
            return method
    elif isinstance(t, OptionalType):
        elem = str(t.elem)
        if elem == "Tensor":
            return "optionalTensor"
        if elem == "Generator":
            return "generator"
        if elem == "Dimname[]":
            return "toDimnameListOptional"
        if default_init is None and default in _NONE_DEFAULTS:
            return arg_parser_unpack_method(t.elem, None, None) + "Optional"
        return arg_parser_unpack_method(t.elem, default, default_init)
    elif isinstance(t, ListType):
        elem = str(t.elem)
        if elem == "Tensor":
            return "tensorlist" if t.size is None else f"tensorlist_n<{t.size}>"
        method = _LIST_UNPACK.get(elem)
        if method is not None:
            return method
    raise ValueError(f"the Python argument parser cannot read an argument of type '{t}'")


def arg_parser_output_expr(index: int, a: PythonArgument) -> PythonArgParserOutputExpr:
    method = arg_parser_unpack_method(a.type, a.default, a.default_init)
    if a.default_init is None:
        return PythonArgParserOutputExpr(f"_r.{method}({index})", index)
    return PythonArgParserOutputExpr(f"_r.{method}({index}, {a.default_init})", index)


class UnreadableArgument(ValueError):
    """An argument of a type the parser cannot read."""

    def __init__(self, message: str, name: str) -> None:
        super().__init__(message)
        self.name = name


def arg_parser_output_exprs(ps: PythonSignature) -> dict[str, PythonArgParserOutputExpr]:
    """Every parsed argument of `ps`, by name; UnreadableArgument for a type the parser
    cannot read."""
    outputs = {}
    for i, a in enumerate(ps.arguments()):
        try:
            outputs[a.name] = arg_parser_output_expr(i, a)
        except ValueError as e:
            raise UnreadableArgument(str(e), a.name) from None
    return outputs


# -- the lambda ----------------------------------------------------------------------


@frozen
class DispatchLambdaArgs:
    formals: str
    names: tuple[str, ...]


def dispatch_lambda_args(
    args: Arguments, method: bool, style: ArgumentStyle, memo: BindingMemo | None
) -> DispatchLambdaArgs:
    """The lambda's parameters: the C++ API's (see the module doc); defaults do not matter."""
    params = cpp.arguments(
        args,
        faithful=False,
        symint=True,
        method=False,
        cpp_no_default_args=frozenset(),
        style=style,
        memo=memo,
    )
    out_names = {a.name for a in args.out}
    one_output = len(out_names) <= 1
    formals = []
    for b in params.bindings:
        type_str, name = b.type, b.name
        if method and name == "self":
            type_str = "const at::Tensor &"  # the bound tensor, whatever the schema says
        elif type_str == "at::Tensor &" and (one_output or name not in out_names):
            type_str = "at::Tensor"  # a temporary from the parser: by value
        formals.append(f"{type_str} {name}")
    return DispatchLambdaArgs(", ".join(formals), tuple(b.name for b in params.bindings))


def _lambda_args_of(
    ps: PythonSignature, f: NativeFunction, sigs: FunctionSignatures
) -> DispatchLambdaArgs:
    func = ps.deprecated_schema if isinstance(ps, PythonSignatureDeprecated) else f.func
    args, method, style, memo = func.arguments, ps.method, sigs.style, sigs.memo
    if memo is None:
        return dispatch_lambda_args(args, method, style, None)
    return memo.derived(
        args, ("python.lambda", method, style.key), dispatch_lambda_args, method, style, memo
    )


# Returns without annotations are values: the style (how mutable tensors are passed) is moot.
_PLAIN = ArgumentStyle()


def dispatch_lambda_return_str(f: NativeFunction, memo: BindingMemo | None = None) -> str:
    """The lambda's return type: the C++ one without references; ValueError if `wrap` lacks it."""
    returns = f.func.returns
    if memo is None:
        text = _value_returns(returns)
    else:
        text = memo.derived(returns, "python.dispatch_lambda_return_str", _value_returns)
    if text not in SUPPORTED_RETURN_TYPES:
        raise ValueError(f"{f.func.name} returns {text}, which the Python bindings cannot wrap")
    return text


def _value_returns(returns: tuple[Return, ...]) -> str:
    if not returns:
        return "void"
    types = [cpp.return_ctype(r.type, mutable=False, style=_PLAIN) for r in returns]
    return types[0].cpp_type() if len(types) == 1 else TupleCType(tuple(types)).cpp_type()


def cpp_dispatch_target(f: NativeFunction) -> str:
    """What the lambda calls: `self.add`, `at::add`, `torch::zeros_symint`."""
    name = cpp.name(f.func, symint_overload=f.func.has_symint())
    if Variant.method in f.variants:
        return f"self.{name}"
    if Variant.function not in f.variants:
        raise ValueError(f"{f.func.name} is neither a function nor a method")
    factory = f.func.arguments.tensor_options is not None or f.func.name.name.base.endswith("_like")
    return f"{'torch' if factory else 'at'}::{name}"


def cpp_dispatch_exprs(
    ps: PythonSignature, f: NativeFunction, lambda_names: Sequence[str]
) -> list[str]:
    """What the lambda passes to the callee: its own parameters (those of the C++ API, by
    name), or a deprecated signature's call; a method's `self` is the object called."""
    if isinstance(ps, PythonSignatureDeprecated):
        is_out = f.func.is_out_fn()
        exprs: Sequence[str] = [e for e in ps.deprecated_args_exprs if e != "out" or is_out]
    else:
        exprs = lambda_names
    if Variant.method in f.variants:
        return [e for e in exprs if e != "self"]
    return list(exprs)


# -- the call ------------------------------------------------------------------------


def dispatch_call(
    ps: PythonSignature,
    f: NativeFunction,
    outputs: Mapping[str, PythonArgParserOutputExpr],
    sigs: FunctionSignatures,
    release: Release = NEWEST,
) -> DispatchCall:
    """How the binding parsing `ps` (with `outputs`, its `arg_parser_output_exprs`) calls `f`
    in `release`.

    ValueError where the bindings cannot call `f` so (see the module doc).
    """
    lam = _lambda_args_of(ps, f, sigs)
    inits, exprs = _argument_exprs(ps, f, outputs)
    has_options = f.func.arguments.tensor_options is not None
    options_names = [a.name for a in ps.tensor_options_args]
    if has_options:
        inits.append(_packed_options(ps, f, outputs, options_names, release))
        exprs["options"] = "options"
    elif options_names:
        if "dtype" in options_names:
            inits.append(_out_type_check(f, outputs, options_names))
        if "requires_grad" not in options_names:
            raise ValueError(
                f"{f.func}: expected 'requires_grad' among the TensorOptions keywords, "
                f"not only {options_names}"
            )
    set_requires_grad = ""
    if options_names and (not has_options or ps.method):
        set_requires_grad = f".set_requires_grad({outputs['requires_grad'].expr})"
    try:
        args = ", ".join([exprs[name] for name in lam.names])
    except KeyError as missing:
        raise ValueError(f"{f.func}: the Python signature has no argument {missing}") from None
    return DispatchCall(
        lam.formals,
        dispatch_lambda_return_str(f, sigs.memo),
        cpp_dispatch_target(f),
        ", ".join(cpp_dispatch_exprs(ps, f, lam.names)),
        tuple(inits),
        args,
        set_requires_grad,
    )


def _argument_exprs(
    ps: PythonSignature, f: NativeFunction, outputs: Mapping[str, PythonArgParserOutputExpr]
) -> tuple[list[str], dict[str, str]]:
    """Locals to declare, and the expression for each lambda argument by name."""
    inits: list[str] = []
    exprs: dict[str, str] = {}
    has_options = f.func.arguments.tensor_options is not None
    for a in ps.arguments(skip_tensor_options=True):
        name = a.name
        expr = outputs[name].expr
        if has_options and name == "self":
            inits.append(f"auto self = {expr};")
            exprs[name] = name
        elif isinstance(a, PythonOutArgument) and len(a.outputs) > 1 and f.func.is_out_fn():
            inits.append(f"auto out = {expr};")
            for i, out in enumerate(a.outputs):
                exprs[out.name] = f"out[{i}]"
        elif str(a.type) == "Dimname[]?":
            inits.extend(_optional_dimname_list(name, expr))
            exprs[name] = name
        else:
            exprs[name] = expr
    if ps.method:  # the bound tensor, not a parsed argument
        exprs["self"] = "self"
    return inits, exprs


def _optional_dimname_list(name: str, expr: str) -> tuple[str, str]:
    """The locals of a `Dimname[]?` argument. `_r` hands back the names as an owning vector
    in an optional and the lambda takes a view in an optional; C++ does not convert one
    optional into the other, so a local holds the view."""
    # Emitted C++ as torchgen writes it (byte-identical output).
    return (
        f"auto __{name} = {expr};",
        f"::std::optional<DimnameList> {name} = __{name} ? "
        f"::std::make_optional(DimnameList(__{name}.value())) : ::std::nullopt;",
    )


def _packed_options(
    ps: PythonSignature,
    f: NativeFunction,
    outputs: Mapping[str, PythonArgParserOutputExpr],
    names: Sequence[str],
    release: Release,
) -> str:
    """`options`, packed from the parsed keywords, and the device initialised (by a method
    only for a tensor without a dispatch mode, since torch 2.13)."""
    if f.func.is_out_fn():
        raise ValueError(f"{f.func}: an out= function cannot take TensorOptions")
    for a in ps.tensor_options_args:
        expected = TENSOR_OPTIONS_FIELDS.get(a.name)
        if expected is None:
            raise ValueError(f"{f.func}: '{a.name}' is not a TensorOptions keyword")
        if str(a.type) != expected:
            raise ValueError(f"{f.func}: the TensorOptions keyword '{a.name}' must be {expected}")
    if not all(field in names for field in TENSOR_OPTIONS_FIELDS):
        raise ValueError(f"{f.func}: incomplete TensorOptions keywords {names}")
    if ps.method and release.has(METHOD_DEVICE_INIT_GUARD):
        # a tensor subclass without storage needs no device
        initialize = (
            "if (!at::impl::tensor_has_dispatch(self)) {\n"
            "  torch::utils::maybe_initialize_device(options);\n"
            "}\n"
        )
    else:
        initialize = "torch::utils::maybe_initialize_device(options);\n"
    return (
        "const auto options = TensorOptions()\n"
        f"    .dtype({outputs['dtype'].expr})\n"
        f"    .device({outputs['device'].expr})\n"
        f"    .layout({outputs['layout'].expr})\n"
        f"    .requires_grad({outputs['requires_grad'].expr})\n"
        f"    .pinned_memory({outputs['pin_memory'].expr});\n"
        f"{initialize}"
    )


def _out_type_check(
    f: NativeFunction, outputs: Mapping[str, PythonArgParserOutputExpr], names: Sequence[str]
) -> str:
    """An out= call given dtype, layout or device checks them against the out tensor."""
    if not f.func.is_out_fn():
        raise ValueError(f"{f.func}: dtype among the keywords of a function without out=")
    if not all(field in names for field in ("layout", "device")):
        raise ValueError(f"{f.func}: incomplete TensorOptions keywords {list(names)} for out=")
    dtype, device = outputs["dtype"], outputs["device"]
    indent = " " * len("check_out_type_matches(")
    return (
        f"check_out_type_matches({outputs['out'].expr}, {dtype.expr},\n"
        f"{indent}{dtype.is_none_expr}, {outputs['layout'].expr},\n"
        f"{indent}{device.expr}, {device.is_none_expr});\n"
    )
