"""VariableType: the Autograd kernels of every operator, and their registrations.

Files (skipped with --disable-autograd):
- `VariableType.h`, the template with only its generated comment filled in;
- `templates/VariableType.cpp`, an intermediate template: the VariableType.cpp
  template with one `${type_derived_method_definitions_<key>}` placeholder and
  one `TORCH_LIBRARY_IMPL(aten, <key>, m)` block per dispatch key the
  derivatives use (`Default` registers as `Autograd`), in sorted key order;
- `VariableType_0.cpp` ... `VariableType_9.cpp` (`_4` before torch 2.13) and
  `VariableTypeEverything.cpp`, that intermediate template rendered with the
  kernels and registrations, sharded by operator name. They are rendered from
  the intermediate text in memory; it is never read back.

Each function VariableType handles (`use_derived`) gets a kernel per key of
its derivatives entry (`Default` if it has none), registered with `m.impl`.
A function with no entry at all, which the kernel would only mark as not
differentiable, instead registers the boxed `autogradNotImplementedFallback`,
unless a rule needs the generated kernel (resetting the gradient accumulator,
`DONT_REQUIRE_DERIVATIVE`, no differentiable output, exemptions from the debug
checks). Each kernel's text is computed once, for its shard and Everything
(`OutputSet.add_sharded`, with the intermediate text as the template).
"""

from __future__ import annotations

import functools
from collections.abc import Mapping, Sequence

from opgen.api import cpp
from opgen.api.signatures import SignatureSet
from opgen.autograd.model import (
    DEFAULT_KEY,
    NativeFunctionWithDifferentiabilityInfo,
)
from opgen.autograd.views import get_base_name
from opgen.diagnostics import SpecError
from opgen.output import OutputSet
from opgen.releases import Release
from opgen.targets.autograd.autograd_kernel import VariableTypeKernel
from opgen.targets.autograd.debug_checks import (
    DONT_ENFORCE_SAME_TENSOR_IMPL_OR_STORAGE,
    DONT_ENFORCE_STORAGE_IMPL_USE_COUNT,
    DONT_ENFORCE_TENSOR_IMPL_USE_COUNT,
)
from opgen.targets.autograd.kernel_lists import DONT_REQUIRE_DERIVATIVE, RESET_GRAD_ACCUMULATOR
from opgen.targets.autograd.run import AutogradRun, emitted
from opgen.targets.autograd.variable_type_body import emit_body
from opgen.targets.autograd.wrappers import (
    MANUAL_AUTOGRAD_AND_TRACER,
    MANUAL_BACKEND,
    autograd_not_implemented_registration,
    autograd_shards,
    method_definition,
    type_wrapper_name,
    use_derived,
    wrapper_formals,
    wrapper_registration,
)
from opgen.targets.emitters import Emitted
from opgen.template import Template

_TEMPLATE = "VariableType.cpp"

# A function's contribution to its shard: {placeholder name: fragments}.
Fragments = Mapping[str, Sequence[str]]


def emit_variable_type(run: AutogradRun) -> Emitted:
    out = run.output_set()
    out.add_template(
        "VariableType.h",
        {"generated_comment": f"@generated from {run.template_comment_dir}/VariableType.h"},
    )
    intermediate = _Intermediate(out, run.derivatives.used_dispatch_keys)
    out.add(f"templates/{_TEMPLATE}", intermediate.text, family=intermediate)
    keys = sorted(run.derivatives.used_dispatch_keys)
    signatures = run.signatures
    release = run.release
    out.add_sharded(
        _TEMPLATE,
        [fn for fn in run.fns if use_derived(fn)],
        key=lambda fn: cpp.name(fn.func.func),
        env=lambda fn: kernel_fragments(signatures, fn, release),
        num_shards=autograd_shards(release),
        sharded_keys=[
            _placeholders(kind, key)
            for kind in ("type_derived_method_definitions", "wrapper_registrations")
            for key in keys
        ],
        base_env={"generated_comment": f"@generated from {run.template_comment_dir}/{_TEMPLATE}"},
        source=intermediate.template,
        family=intermediate,
        weight=2,  # the largest family by far (about half the rendering): started first
    )
    return emitted(out)


def _placeholders(kind: str, key: str) -> str:
    return f"{kind}_{key}"


def intermediate_env(used_keys: frozenset[str]) -> dict[str, str]:
    """What the VariableType.cpp template is filled with to give the per-key template."""
    keys = sorted(used_keys)
    blocks = []
    for key in keys:
        dispatch_key = "Autograd" if key == DEFAULT_KEY else key
        placeholder = _placeholders("wrapper_registrations", key)
        blocks.append(f"TORCH_LIBRARY_IMPL(aten, {dispatch_key}, m) {{\n${{{placeholder}}}\n}}")
    definitions = [
        "${" + _placeholders("type_derived_method_definitions", key) + "}" for key in keys
    ]
    return {
        "type_derived_method_definitions": "\n\n".join(definitions),
        "wrapper_registrations": "\n\n".join(blocks),
    }


def kernel_fragments(
    signatures: SignatureSet, fn: NativeFunctionWithDifferentiabilityInfo, release: Release
) -> Fragments:
    """The kernels of a `use_derived` function and their registrations, by placeholder."""
    f = fn.func
    _check_registration(fn)
    if _uses_not_implemented_fallback(fn):
        return {
            _placeholders("type_derived_method_definitions", DEFAULT_KEY): [""],
            _placeholders("wrapper_registrations", DEFAULT_KEY): [
                autograd_not_implemented_registration(f)
            ],
        }
    dispatcher = signatures.of(f).dispatcher
    formals = wrapper_formals(dispatcher)
    fragments: dict[str, list[str]] = {}
    for key in fn.info or (DEFAULT_KEY,):
        name = type_wrapper_name(f, key)
        body = emit_body(VariableTypeKernel.of(fn, key, release), dispatcher.bindings)
        definition = method_definition(dispatcher.returns_text, name, formals, body)
        fragments[_placeholders("type_derived_method_definitions", key)] = [definition]
        fragments[_placeholders("wrapper_registrations", key)] = [
            wrapper_registration(f, name, "VariableType")
        ]
    return fragments


def _uses_not_implemented_fallback(fn: NativeFunctionWithDifferentiabilityInfo) -> bool:
    """A function without derivatives entry whose kernel would only refuse backward."""
    f = fn.func
    wrapper = type_wrapper_name(f)
    return (
        fn.info is None
        and str(f.func.name.name) not in RESET_GRAD_ACCUMULATOR
        and get_base_name(f) not in DONT_REQUIRE_DERIVATIVE
        and len(fn.differentiable_outputs()) > 0
        and cpp.name(f.func) not in DONT_ENFORCE_SAME_TENSOR_IMPL_OR_STORAGE
        and wrapper not in DONT_ENFORCE_STORAGE_IMPL_USE_COUNT
        and wrapper not in DONT_ENFORCE_TENSOR_IMPL_USE_COUNT
    )


def _check_registration(fn: NativeFunctionWithDifferentiabilityInfo) -> None:
    f = fn.func
    name = cpp.name(f.func)
    if (name in MANUAL_BACKEND) != f.manual_kernel_registration:
        raise SpecError(
            f"{name}: manual_kernel_registration is for the operators whose backend, Autograd "
            "and Tracer kernels are all written by hand",
            f.location_of("manual_kernel_registration"),
        )
    has_formulas = fn.info is not None and any(i.has_derivatives for i in fn.info.values())
    if (name in MANUAL_AUTOGRAD_AND_TRACER or has_formulas) and not f.is_abstract:
        raise SpecError(
            f"There's a formula for {name}(or its functional variant) in derivatives.yaml. "
            "It's required to add a dispatch section for it with explicit supported backends "
            "e.g CPU/CUDA or CompositeExplicitAutograd in native_functions.yaml. Please see "
            "https://github.com/pytorch/pytorch/tree/master/aten/src/ATen/native"
            "#choosing-the-right-dispatch-keyword for instructions to choose the right "
            "dispatch keyword.",
            f.loc,
        )


class _Intermediate:
    """The per-key VariableType.cpp template, rendered on first use and kept: it is
    written as a file, and the shards are rendered from it."""

    def __init__(self, out: OutputSet, used_keys: frozenset[str]) -> None:
        self._out = out
        self._used_keys = used_keys

    @functools.cached_property
    def _text(self) -> str:
        return self._out.render(_TEMPLATE, intermediate_env(self._used_keys))

    @functools.cached_property
    def _template(self) -> Template:
        return Template(self._text, f"templates/{_TEMPLATE}")

    def text(self) -> str:
        return self._text

    def template(self) -> Template:
        return self._template
