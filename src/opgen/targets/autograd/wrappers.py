"""What the generated kernel wrappers of TraceType, ADInplaceOrViewType and VariableType share.

Each of these files defines, per operator, a C++ function in the dispatcher
convention with the dispatch key set first (`c10::DispatchKeySet ks, ...`),
named by `type_wrapper_name`, which unpacks or forwards its arguments,
redispatches, and returns what the redispatch returned. Some operators are
written by hand in PyTorch (`MANUAL_*`) and get no generated wrapper.
VariableType and TraceType are split into the same number of shards
(`autograd_shards`).
"""

from __future__ import annotations

from collections.abc import Sequence

from opgen.api import cpp
from opgen.api.dispatcher import DispatcherSignature
from opgen.api.types import ArgumentStyle, Binding
from opgen.autograd.model import NativeFunctionWithDifferentiabilityInfo, dispatch_strategy
from opgen.autograd.views import is_tensor_list_type
from opgen.releases import TEN_AUTOGRAD_SHARDS, Release
from opgen.spec.arguments import SelfArgument, TensorOptionsArguments
from opgen.spec.keys import SchemaKind
from opgen.spec.native import NativeFunction
from opgen.template import Template


def autograd_shards(release: Release) -> int:
    """How many shards VariableType and TraceType are split into (`<file>_<n>.cpp`)."""
    return 10 if release.has(TEN_AUTOGRAD_SHARDS) else 5


# Operators with manual_kernel_registration whose backend, Autograd and Tracer
# kernels are all written by hand (torch/csrc/autograd/VariableTypeManual.cpp).
MANUAL_BACKEND = frozenset(
    {
        "options",
        "data",
        "set_data",
        "is_leaf",
        "output_nr",
        "_version",
        "retain_grad",
        "_backward",
        "requires_grad_",
    }
)

# Operators whose Autograd and Tracer kernels are written by hand.
MANUAL_AUTOGRAD_AND_TRACER = frozenset(
    {"resize_", "resize_as_", "detach", "detach_", "copy_", "_fw_primal", "_make_dual"}
)

MANUAL_AUTOGRAD = MANUAL_TRACER = MANUAL_BACKEND | MANUAL_AUTOGRAD_AND_TRACER

# The local holding a redispatch's result before it is wrapped (views, outputs).
TMP_VAR = "_tmp"


def type_wrapper_name(f: NativeFunction, key: str = "Default") -> str:
    """`add_Tensor`; VariableType's kernels for other autograd keys add `_<key>`."""
    name = cpp.name(f.func)
    overload = f.func.name.overload_name
    if overload:
        name = f"{name}_{overload}"
    if key != "Default":
        name = f"{name}_{key}"
    return name


def wrapper_formals(dispatcher: DispatcherSignature) -> str:
    """The wrapper's parameters: the key set, then the dispatcher's (every schema
    argument, SymInt types, no defaults)."""
    parameters = dispatcher.defined_parameters
    return f"c10::DispatchKeySet ks, {parameters}" if parameters else "c10::DispatchKeySet ks"


def tie_return_values(f: NativeFunction) -> str:
    """The declaration that receives a redispatch's result: `auto result`, `auto [a, b]`."""
    returns = f.func.returns
    if len(returns) == 1:
        return f"auto {returns[0].name or 'result'}"
    return f"auto [{', '.join(cpp.return_names(f))}]"


def get_return_value(f: NativeFunction) -> str:
    """What the wrapper returns: the one value, or the values as a tuple."""
    names = cpp.return_names(f)
    if len(f.func.returns) == 1:
        return names[0]
    if f.func.kind is SchemaKind.out:
        return f"std::forward_as_tuple({', '.join(names)})"
    return f"std::make_tuple({', '.join(f'std::move({name})' for name in names)})"


def unpacked_name(arg_name: str) -> str:
    return arg_name + "_"


def extract_bindings(f: NativeFunction) -> list[Binding]:
    """The C++ API bindings of every argument in schema order, without defaults' effects."""
    style = ArgumentStyle.of(f)
    return [
        binding
        for a in f.func.schema_order_arguments()
        for binding in cpp.argument(
            a,
            cpp_no_default_args=frozenset(),
            method=False,
            faithful=False,
            symint=True,
            has_tensor_options=False,
            style=style,
        )
    ]


def unpack_args(bindings: Sequence[Binding]) -> tuple[list[str], list[Binding]]:
    """Statements unpacking each non-optional tensor argument (`auto& self_ = unpack(...)`),
    and the bindings the redispatch then passes (unpacked tensors renamed `<name>_`).

    `bindings` are the wrapper's: the dispatcher signature's, every argument in schema
    order (`extract_bindings` but without defaults, which no caller reads).
    """
    body: list[str] = []
    unpacked: list[Binding] = []
    for i, binding in enumerate(bindings):
        argument = binding.argument
        assert not isinstance(argument, SelfArgument | TensorOptionsArguments), (
            "wrappers take schema-order arguments, without TensorOptions"
        )
        if not argument.type.is_tensor_like() or argument.type.is_nullable():
            unpacked.append(binding)
            continue
        ref = "" if is_tensor_list_type(argument.type) else "&"
        body.append(f'auto{ref} {binding.name}_ = unpack({binding.name}, "{binding.name}", {i});')
        unpacked.append(
            Binding(unpacked_name(binding.name), binding.nctype, argument, binding.default)
        )
    return body, unpacked


def use_derived(fn: NativeFunctionWithDifferentiabilityInfo) -> bool:
    """Whether VariableType and ADInplaceOrView generate a kernel for the function."""
    return cpp.name(fn.func.func) not in MANUAL_AUTOGRAD and dispatch_strategy(fn) == "use_derived"


# -- C++ snippets the kernel files share -------------------------------------------


_METHOD_DEFINITION = Template("${return_type} ${name}(${formals}) {\n  ${body}\n}\n")


def method_definition(return_type: str, wrapper_name: str, formals: str, body: list[str]) -> str:
    """A wrapper's definition: `body`'s statements (each may span lines) indented as a block."""
    return _METHOD_DEFINITION.substitute(
        return_type=return_type, name=wrapper_name, formals=formals, body=body
    )


def wrapper_registration(f: NativeFunction, wrapper_name: str, class_type: str) -> str:
    """`m.impl(...)` registering wrapper `class_type::wrapper_name` for `f`'s operator."""
    return f'm.impl("{f.func.name}",\n       TORCH_FN({class_type}::{wrapper_name})\n);\n'


def autograd_not_implemented_registration(f: NativeFunction) -> str:
    """Registers the boxed kernel that makes `f`'s outputs fail in backward."""
    return f'm.impl("{f.func.name}", torch::autograd::autogradNotImplementedFallback());\n'


def assign_return_value(return_values: str, rhs_value: str) -> str:
    """`auto result = std::move(_tmp);`: the redispatch's values bound to the return names."""
    return f"{return_values} = {rhs_value};\n"
