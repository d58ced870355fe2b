"""`variable_factories.h`: `torch::` tensor factories that return autograd Variables.

For every factory function of the spec (a function variant that takes
TensorOptions, or whose name ends in `_like`), the header defines an inline
`torch::<name>` with the parameters of `at::<name>` (the C++ API's
convenience form, and its `_symint` form where there is one). It calls the
ATen factory below the ADInplaceOrView key with `requires_grad` cleared from
the options, then makes the result a Variable that requires grad as the
options asked. Like TraceType it covers the whole spec, whatever the operator
selection. Facts from torchgen/packaged/autograd/gen_variable_factories.py.
"""

from __future__ import annotations

import re

from opgen.api import cpp
from opgen.api.cpp import CppSignature, CppSignatureGroup
from opgen.spec.arguments import TensorOptionsArguments
from opgen.spec.keys import Variant
from opgen.spec.native import NativeFunction
from opgen.targets.autograd.run import AutogradRun, emitted
from opgen.targets.emitters import Emitted

# A type spelled `std::optional<...>` (nothing before it): the qualification
# applies to what it holds.
_OPTIONAL = re.compile(r"std::optional<(?P<inner>.+)>")
# A type name starting with a capital letter (`Tensor`, `const Scalar &`) is ATen's.
_ATEN_NAME = re.compile(r"(?:const\s+)?(?=[A-Z]\w)")


def is_factory_function(f: NativeFunction) -> bool:
    """A function variant taking TensorOptions, or named `*_like`."""
    if Variant.function not in f.variants:
        return False
    return f.func.arguments.tensor_options is not None or cpp.name(f.func).endswith("_like")


def fully_qualified_type(type_text: str) -> str:
    """`type_text` with `at::` before an unqualified ATen type name, also inside an optional."""
    optional = _OPTIONAL.match(type_text)
    if optional is not None:
        return f"std::optional<{fully_qualified_type_name(optional['inner'])}>"
    return fully_qualified_type_name(type_text)


def fully_qualified_type_name(type_text: str) -> str:
    name = _ATEN_NAME.match(type_text)
    if name is None:
        return type_text
    return f"{type_text[: name.end()]}at::{type_text[name.end() :]}"


def factory_wrapper(sig: CppSignature) -> str:
    """The inline `torch::` factory for one C++ API signature of a factory function."""
    formals: list[str] = []
    exprs: list[str] = []
    requires_grad = "false"
    for binding in sig.arguments():
        formal = f"{fully_qualified_type(binding.type)} {binding.name}"
        formals.append(formal if binding.default is None else f"{formal} = {binding.default}")
        if isinstance(binding.argument, TensorOptionsArguments):
            # The kernel must not see requires_grad (it asserts so); the Variable gets it.
            exprs.append(f"at::TensorOptions({binding.name}).requires_grad(::std::nullopt)")
            requires_grad = f"{binding.name}.requires_grad()"
        else:
            exprs.append(binding.name)
    name = sig.name()
    return (
        f"inline at::Tensor {name}({', '.join(formals)}) {{\n"
        "  at::AutoDispatchBelowADInplaceOrView guard;\n"
        f"  return autograd::make_variable(at::{name}({', '.join(exprs)}), "
        f"/*requires_grad=*/{requires_grad});\n"
        "}\n"
    )


def factory_wrappers(group: CppSignatureGroup) -> str:
    """The wrappers of the convenience form and of its `_symint` form, if any."""
    sigs = [group.signature]
    if group.symint_signature is not None:
        sigs.append(group.symint_signature)
    return "".join(factory_wrapper(sig) for sig in sigs)


def _cpp_group(run: AutogradRun, f: NativeFunction) -> CppSignatureGroup:
    """The `at::` signatures, named as `at::` names them (never a `__dispatch_` fallback)."""
    sigs = run.signatures.of(f)
    if not f.manual_cpp_binding:
        return sigs.cpp
    return CppSignatureGroup.from_native_function(
        f, method=False, memo=run.signatures.memo, style=sigs.style
    )


def emit_variable_factories(run: AutogradRun) -> Emitted:
    """`variable_factories.h`."""

    def env() -> dict[str, object]:
        factories = [f for f in run.spec.functions if is_factory_function(f)]
        return {
            "generated_comment": (
                f"@generated from {run.template_comment_dir}/variable_factories.h"
            ),
            "ops_headers": [f"#include <ATen/ops/{f.root_name}.h>" for f in factories],
            "function_definitions": [factory_wrappers(_cpp_group(run, f)) for f in factories],
        }

    out = run.output_set()
    out.add_template("variable_factories.h", env)
    return emitted(out)
