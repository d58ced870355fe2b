"""The autograd convention: what `derivatives.yaml` says about each function.

A `DifferentiabilityInfo` is one derivatives entry as the autograd emitters
read it, for one dispatch key ("Default", or an autograd key such as
`AutogradNestedTensor` from a `dispatch:` sub-table): the backward formulas
(`Derivative`, one per group of inputs), the forward formulas
(`ForwardDerivative`, one per group of outputs), and what the backward node
must save, inferred from the formulas' text (`SavedAttribute`: a name, its C++
type in the node, and the expression that computes it when the node is built,
e.g. `self_sym_sizes` saved as `self.sym_sizes()`).

`NativeFunctionWithDifferentiabilityInfo` pairs every native function with
the infos it uses: its own entry's, or its out-of-place variant's (an inplace
or out= function without an entry of its own), or one derived for a foreach
function from the non-foreach operator it loops over. `DerivativeInfos` is a
whole derivatives file so read.

The names of classes and fields are torchgen's (`torchgen.api.autograd`), so
the emitters read like the generators they replace; unlike torchgen's, the
objects are immutable (tuples and frozensets) and locations are kept for
diagnostics. Reading the file (`opgen.spec.derivatives`) and building these
objects (`opgen.autograd.load_derivatives`) happen once per run.
"""

from __future__ import annotations

import re
from collections.abc import Mapping

from opgen.api import cpp
from opgen.api.types import ArgumentStyle, Binding, NamedCType
from opgen.cached import cached
from opgen.diagnostics import Location
from opgen.frozen import field, frozen
from opgen.spec.keys import SchemaKind
from opgen.spec.native import NativeFunction
from opgen.spec.schema import FunctionSchema
from opgen.spec.types import Type

# The dispatch key of formulas given outside a `dispatch:` sub-table.
DEFAULT_KEY = "Default"


def uses_name(text: str, name: str) -> bool:
    """Whether C++ expression `text` mentions identifier `name` (not as part of a longer one).

    The same boundary torchgen uses when it scans formulas (`IDENT_REGEX`): the
    name must not be preceded or followed by a word character.
    """
    return re.search(rf"(?:^|\W){re.escape(name)}(?:$|\W)", text) is not None


@frozen
class SavedAttribute:
    """A value the backward node saves: `self_sym_sizes` (its C++ type) from `self.sym_sizes()`."""

    nctype: NamedCType
    expr: str  # computes the value when the node is built


@frozen
class Derivative:
    """A backward formula for one or more inputs (`self, other: ...`)."""

    formula: str  # with uses of inputs replaced by saved attributes (`self_sym_sizes`)
    original_formula: str  # as written
    var_names: tuple[str, ...]  # the inputs it computes gradients of
    saved_inputs: tuple[SavedAttribute, ...]
    saved_outputs: tuple[SavedAttribute, ...]
    named_gradients: frozenset[str]  # `grad_<output name>` gradients it uses
    location: Location | None = field(default=None, compare=False)  # of the formula


@frozen
class ForwardDerivative:
    """A forward formula for one or more outputs (`result: ...`)."""

    formula: str  # `auto_element_wise` / `auto_linear` already expanded
    var_names: tuple[str, ...]  # the outputs it computes
    var_types: tuple[Type, ...]
    required_inputs_fw_grad: tuple[str, ...] | None  # inputs whose tangents (`x_t`) it uses
    required_inputs_primal: tuple[str, ...] | None  # inputs whose values (`x_p`) it uses
    required_original_self_value: bool  # inplace: uses `original_self_p` / `original_self_t`
    is_reusing_outplace_formula: bool  # inplace function using its out-of-place formula
    location: Location | None = field(default=None, compare=False)  # of the formula


@frozen(eq=False)
class DifferentiabilityInfo:
    """One derivatives entry for one dispatch key, matched to its native function."""

    name: str  # the base name of the entry (`mul`, `mul_`), or the operator's for foreach
    func: NativeFunction
    op: str | None  # the backward node's class (`MulBackward0`); None without derivatives
    derivatives: tuple[Derivative, ...]
    forward_derivatives: tuple[ForwardDerivative, ...]
    all_saved_inputs: tuple[SavedAttribute, ...]
    all_saved_outputs: tuple[SavedAttribute, ...]
    available_named_gradients: tuple[str, ...]  # `grad_<name>`, in the order of grads
    used_named_gradients: frozenset[str]
    args_with_derivatives: tuple[Binding, ...]  # in schema order
    non_differentiable_arg_names: tuple[str, ...]
    output_differentiability: tuple[bool, ...] | None
    output_differentiability_conditions: tuple[str, ...] | None
    location: Location | None = field(default=None, compare=False)  # the entry's `name:`
    output_differentiability_location: Location | None = field(default=None, compare=False)

    @property
    def has_derivatives(self) -> bool:
        return len(self.args_with_derivatives) > 0


@frozen(eq=False)
class DerivativeInfos:
    """A derivatives file: per schema, per dispatch key, in the file's order.

    View-copy operators (`{view}_copy`) are added after the file's entries, sharing
    their view's formulas, unless the file has entries of their own.
    """

    infos: Mapping[FunctionSchema, Mapping[str, DifferentiabilityInfo]]
    used_dispatch_keys: frozenset[str]  # "Default" and every key of a `dispatch:` table


@frozen(eq=False)
class NativeFunctionWithDifferentiabilityInfo:
    func: NativeFunction
    info: Mapping[str, DifferentiabilityInfo] | None
    fw_derivatives: Mapping[str, tuple[ForwardDerivative, ...]] | None

    def differentiable_outputs(self, key: str = DEFAULT_KEY) -> tuple[DifferentiableOutput, ...]:
        """`gen_differentiable_outputs(self, key)`, derived once per key (matching checks
        them, and VariableType and ADInplaceOrView kernels build on them)."""
        by_key = self._differentiable_outputs
        found = by_key.get(key)
        if found is None:
            found = by_key[key] = tuple(gen_differentiable_outputs(self, key))
        return found

    @cached
    def _differentiable_outputs(self) -> dict[str, tuple[DifferentiableOutput, ...]]:
        return {}


@frozen
class DifferentiableInput:
    name: str
    type: Type
    cpp_type: str


@frozen
class DifferentiableOutput:
    name: str
    type: Type
    cpp_type: str


def uses_ident(info: DifferentiabilityInfo | None, ident: str) -> bool:
    """Whether any backward formula of `info` mentions `ident`."""
    if info is None:
        return False
    return any(uses_name(d.formula, ident) for d in info.derivatives)


def uses_retain_variables(info: DifferentiabilityInfo | None) -> bool:
    return uses_ident(info, "retain_variables")


def uses_single_grad(info: DifferentiabilityInfo | None) -> bool:
    return uses_ident(info, "grad")


def is_foreach_func(f: NativeFunction) -> bool:
    return f.func.name.name.base.startswith("_foreach_")


def dispatch_strategy(fn: NativeFunctionWithDifferentiabilityInfo) -> str:
    """`use_derived` or `use_type`: how VariableType calls the function.

    `use_derived` unpacks the tensors and redispatches below autograd, recording
    history itself: for abstract functions (no composite kernel), and for any
    function with a formula for some dispatch key. `use_type` calls the
    function as is, and lets the functions it calls record history: for
    composite functions without formulas.
    """
    if fn.func.is_abstract or (
        fn.info is not None and any(info.has_derivatives for info in fn.info.values())
    ):
        return "use_derived"
    return "use_type"


def is_differentiable(name: str, type: Type, info: DifferentiabilityInfo | None) -> bool:
    return type.is_tensor_like() and (info is None or name not in info.non_differentiable_arg_names)


def gen_differentiable_outputs(
    fn: NativeFunctionWithDifferentiabilityInfo, key: str = DEFAULT_KEY
) -> list[DifferentiableOutput]:
    """The outputs that get gradients: `output_differentiability`'s, else the tensor-like
    ones (only the first if the formulas use `grad`, the first output's gradient)."""
    f = fn.func
    info = fn.info[key] if fn.info else None
    style = ArgumentStyle.of(f)
    outputs = [
        DifferentiableOutput(name, r.type, cpp.return_type(r, style=style).cpp_type())
        for name, r in zip(cpp.return_names(f), f.func.returns, strict=True)
    ]
    output_differentiability = info.output_differentiability if info else None
    if output_differentiability is not None:
        # The loader checked the length, and that an inplace function has no False.
        return [o for o, d in zip(outputs, output_differentiability, strict=True) if d]
    candidates = [o for o in outputs if is_differentiable(o.name, o.type, info)]
    if uses_single_grad(info):
        return candidates[:1]
    return candidates


def is_inplace(f: NativeFunction) -> bool:
    return f.func.kind is SchemaKind.inplace
