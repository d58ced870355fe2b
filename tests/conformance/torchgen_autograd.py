"""Upstream torchgen's derivatives model, converted to opgen's classes.

The oracle side of the autograd conformance tests. `load_derivatives` and
`match_differentiability_info` run in torchgen; every object they return is
converted, field by field, into the opgen class of the same name
(`opgen.autograd.model`), with opgen's own `NativeFunction` objects (matched by
schema text), C++ types and bindings. Comparing opgen's model with this one
is the model's conformance test; rendering this one with opgen's emitters
tests an emitter on its own, whatever state the loader is in.
"""

from __future__ import annotations

import functools
import os
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import torchgen.api.autograd as tga
import torchgen.api.types as tgt
from torchgen.api import cpp as tg_cpp
from torchgen.gen import parse_native_yaml
from torchgen.packaged.autograd.load_derivatives import load_derivatives
from torchgen.selective_build.selector import SelectiveBuilder

import opgen.api.types as ot
import opgen.autograd.model as oa
from opgen.spec import Spec
from opgen.spec.arguments import Argument, SelfArgument, TensorOptionsArguments
from opgen.spec.native import NativeFunction
from opgen.spec.types import Type


@dataclass(frozen=True)
class TorchgenAutograd:
    infos: oa.DerivativeInfos
    # Every native function (selected for training), sorted by C++ name, as
    # gen_autograd passes them to the emitters.
    fns_with_diff_infos: tuple[oa.NativeFunctionWithDifferentiabilityInfo, ...]


def torchgen_autograd(
    spec: Spec,
    native_yaml: str,
    tags_yaml: str,
    autograd_dir: str,
    selector: SelectiveBuilder | None = None,
) -> TorchgenAutograd:
    """torchgen's model of `autograd_dir/derivatives.yaml`, as opgen objects over `spec`."""
    infos, used_keys = load_derivatives(
        os.path.join(autograd_dir, "derivatives.yaml"), native_yaml, tags_yaml
    )
    convert = _Converter(spec)
    ours = oa.DerivativeInfos(
        infos={
            convert.function_by_schema(str(schema)).func: {
                key: convert.info(info) for key, info in per_key.items()
            }
            for schema, per_key in infos.items()
        },
        used_dispatch_keys=frozenset(used_keys),
    )
    selector = selector or SelectiveBuilder.get_nop_selector()
    native = parse_native_yaml(native_yaml, tags_yaml).native_functions
    fns = sorted(
        filter(selector.is_native_function_selected_for_training, native),
        key=lambda f: tg_cpp.name(f.func),
    )
    # match_differentiability_info adds the foreach infos it derives to its argument.
    matched = tga.match_differentiability_info(fns, dict(infos))
    return TorchgenAutograd(ours, tuple(convert.with_info(fn) for fn in matched))


class _Converter:
    def __init__(self, spec: Spec) -> None:
        self._by_schema = {str(f.func): f for f in spec.functions}
        self._infos: dict[int, oa.DifferentiabilityInfo] = {}

    def function_by_schema(self, schema: str) -> NativeFunction:
        return self._by_schema[schema]

    def function(self, f: Any) -> NativeFunction:
        return self._by_schema[str(f.func)]

    def info(self, info: tga.DifferentiabilityInfo) -> oa.DifferentiabilityInfo:
        # One opgen object per torchgen object, so shared infos stay shared.
        found = self._infos.get(id(info))
        if found is not None:
            return found
        f = self.function(info.func)
        converted = oa.DifferentiabilityInfo(
            name=info.name,
            func=f,
            op=info.op,
            derivatives=tuple(self.derivative(d, f) for d in info.derivatives),
            forward_derivatives=tuple(self.forward(d) for d in info.forward_derivatives),
            all_saved_inputs=tuple(self.saved(s) for s in info.all_saved_inputs),
            all_saved_outputs=tuple(self.saved(s) for s in info.all_saved_outputs),
            available_named_gradients=tuple(info.available_named_gradients),
            used_named_gradients=frozenset(info.used_named_gradients),
            args_with_derivatives=tuple(self.binding(b, f) for b in info.args_with_derivatives),
            non_differentiable_arg_names=tuple(info.non_differentiable_arg_names),
            output_differentiability=_tuple_or_none(info.output_differentiability),
            output_differentiability_conditions=_tuple_or_none(
                info.output_differentiability_conditions
            ),
        )
        self._infos[id(info)] = converted
        return converted

    def derivative(self, d: tga.Derivative, f: NativeFunction) -> oa.Derivative:
        return oa.Derivative(
            formula=d.formula,
            original_formula=d.original_formula,
            var_names=tuple(d.var_names),
            saved_inputs=tuple(self.saved(s) for s in d.saved_inputs),
            saved_outputs=tuple(self.saved(s) for s in d.saved_outputs),
            named_gradients=frozenset(d.named_gradients),
        )

    def forward(self, d: tga.ForwardDerivative) -> oa.ForwardDerivative:
        return oa.ForwardDerivative(
            formula=d.formula,
            var_names=tuple(d.var_names),
            var_types=tuple(Type.parse(str(t)) for t in d.var_types),
            required_inputs_fw_grad=_tuple_or_none(d.required_inputs_fw_grad),
            required_inputs_primal=_tuple_or_none(d.required_inputs_primal),
            required_original_self_value=d.required_original_self_value,
            is_reusing_outplace_formula=d.is_reusing_outplace_formula,
        )

    def saved(self, s: tga.SavedAttribute) -> oa.SavedAttribute:
        return oa.SavedAttribute(nctype=named_ctype(s.nctype), expr=s.expr)

    def binding(self, b: tgt.Binding, f: NativeFunction) -> ot.Binding:
        return ot.Binding(b.name, named_ctype(b.nctype), _argument(f, b.argument), b.default)

    def with_info(
        self, fn: tga.NativeFunctionWithDifferentiabilityInfo
    ) -> oa.NativeFunctionWithDifferentiabilityInfo:
        return oa.NativeFunctionWithDifferentiabilityInfo(
            func=self.function(fn.func),
            info=None
            if fn.info is None
            else {key: self.info(info) for key, info in fn.info.items()},
            fw_derivatives=None
            if fn.fw_derivatives is None
            else {key: tuple(self.forward(d) for d in ds) for key, ds in fn.fw_derivatives.items()},
        )


def _tuple_or_none(values: Sequence[Any] | None) -> tuple[Any, ...] | None:
    return None if values is None else tuple(values)


def _argument(f: NativeFunction, argument: Any) -> Argument | TensorOptionsArguments | SelfArgument:
    arguments = f.func.arguments
    if type(argument).__name__ == "TensorOptionsArguments":
        assert arguments.tensor_options is not None
        return arguments.tensor_options
    if type(argument).__name__ == "SelfArgument":
        assert arguments.self_arg is not None
        return arguments.self_arg
    for a in arguments.flat_all:
        if a.name == argument.name:
            return a
    raise AssertionError(f"{f.func.name} has no argument {argument.name}")


def named_ctype(nctype: tgt.NamedCType) -> ot.NamedCType:
    name = nctype.name
    if isinstance(name, tgt.SpecialArgName):
        return ot.NamedCType(ot.SpecialArgName(name.value), ctype(nctype.type))
    return ot.NamedCType(name, ctype(nctype.type))


@functools.singledispatch
def ctype(t: Any) -> ot.CType:
    raise AssertionError(f"no opgen C++ type for {t!r}")


@ctype.register
def _(t: tgt.BaseCType) -> ot.CType:
    return ot.BaseCType(str(t.type))


@ctype.register
def _(t: tgt.ConstRefCType) -> ot.CType:
    return ot.ConstRefCType(ctype(t.elem))


@ctype.register
def _(t: tgt.MutRefCType) -> ot.CType:
    return ot.MutRefCType(ctype(t.elem))


@ctype.register
def _(t: tgt.OptionalCType) -> ot.CType:
    return ot.OptionalCType(ctype(t.elem))


@ctype.register
def _(t: tgt.VectorCType) -> ot.CType:
    return ot.VectorCType(ctype(t.elem))


@ctype.register
def _(t: tgt.ArrayCType) -> ot.CType:
    return ot.ArrayCType(ctype(t.elem), t.size)


@ctype.register
def _(t: tgt.ArrayRefCType) -> ot.CType:
    return ot.ArrayRefCType(ctype(t.elem))


@ctype.register
def _(t: tgt.ListCType) -> ot.CType:
    return ot.ListCType(ctype(t.elem))


@ctype.register
def _(t: tgt.TupleCType) -> ot.CType:
    return ot.TupleCType(tuple(ctype(e) for e in t.elems))
