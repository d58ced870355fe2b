"""Pairing each native function with the derivatives it uses.

`match_differentiability_info` gives every function the infos of, in order of
preference:

1. its own entry (an exact schema match);
2. its out-of-place function's, by signature (an inplace or out= variant
   without an entry of its own; not for foreach functions);
3. for a generated out-of-place function, its mutable variant's, if that
   formula saves nothing of `self`;
4. for a foreach function, one derived from the non-foreach operator it
   loops over (`opgen.autograd.foreach_derivatives`); the derived infos join the
   set as matching proceeds, so functions are matched in the order given.

Generated out= functions get none. An inplace function that reuses a formula
gets its forward formula adapted: it writes the result into `self`, reads the
input's old value as `original_self_p`, and updates the tangent in place.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence

from opgen.autograd.foreach_derivatives import ForeachDeriver
from opgen.autograd.model import (
    DEFAULT_KEY,
    DerivativeInfos,
    DifferentiabilityInfo,
    ForwardDerivative,
    NativeFunctionWithDifferentiabilityInfo,
    is_foreach_func,
)
from opgen.autograd.saved_values import FormulaPatterns
from opgen.diagnostics import SpecError
from opgen.spec.keys import SchemaKind
from opgen.spec.native import NativeFunction
from opgen.spec.schema import FunctionSchema

InfosByKey = Mapping[str, DifferentiabilityInfo]

_SINGLE_METHOD_ON_SELF_T = re.compile(r"self_t.([\w]*)\((.*)\)")


def match_differentiability_info(
    functions: Sequence[NativeFunction], infos: DerivativeInfos
) -> list[NativeFunctionWithDifferentiabilityInfo]:
    """Each of `functions` with the infos it uses, in order; raises SpecError."""
    matcher = _Matcher(infos)
    return [matcher.match(f) for f in functions]


class _Matcher:
    def __init__(self, infos: DerivativeInfos) -> None:
        self._infos: dict[FunctionSchema, InfosByKey] = dict(infos.infos)
        # By the text of the signature without defaults (`_key`), as upstream by the signature.
        functional: dict[str, InfosByKey] = {}
        non_functional: dict[str, InfosByKey] = {}
        by_key: dict[str, FunctionSchema] = {}
        for schema, per_key in infos.infos.items():
            by_kind = functional if schema.kind is SchemaKind.functional else non_functional
            key = self._key(schema)
            by_kind[key] = per_key
            by_key.setdefault(key, schema.signature(strip_default=True))
        self._functional = functional
        self._non_functional = non_functional
        self._patterns = FormulaPatterns()
        self._foreach = ForeachDeriver(
            {by_key[k]: v for k, v in functional.items()},
            {by_key[k]: v for k, v in non_functional.items()},
        )

    @staticmethod
    def _key(schema: FunctionSchema) -> str:
        """The text of `schema.signature(strip_default=True)`, from its cached signature."""
        if schema.name.name.base == "bernoulli":  # its stripped signature keeps a default
            return str(schema.signature(strip_default=True))
        signature = schema.signature()
        args = signature.arguments  # no annotations, TensorOptions or out arguments
        parts = [f"{a.type} {a.name}" for a in args.flat_positional]
        if args.flat_kwarg_only:
            parts.append("*")
            parts += [f"{a.type} {a.name}" for a in args.flat_kwarg_only]
        returns = signature.text.rpartition(") -> ")[2]
        return f"{signature.name}({', '.join(parts)}) -> {returns}"

    def match(self, f: NativeFunction) -> NativeFunctionWithDifferentiabilityInfo:
        per_key, exact = self._find(f)
        inplace = f.func.kind is SchemaKind.inplace
        if not per_key:
            return NativeFunctionWithDifferentiabilityInfo(f, None, None)
        for info in per_key.values():
            _check_outputs(f, info)
            if inplace:
                _check_strides(f, info)
        forward: dict[str, tuple[ForwardDerivative, ...]] = {}
        for key, info in per_key.items():
            if info.forward_derivatives and inplace:
                forward[key] = (self._inplace_forward(f, info, exact),)
            else:
                forward[key] = info.forward_derivatives
        matched = NativeFunctionWithDifferentiabilityInfo(f, per_key, forward)
        for key, info in per_key.items():
            _check_differentiable_outputs(matched, key, info)
        return matched

    def _find(self, f: NativeFunction) -> tuple[InfosByKey | None, bool]:
        func = f.func
        generated = "generated" in f.tags
        if generated and func.kind is SchemaKind.out:
            return None, False
        own = self._infos.get(func)
        if own is not None:
            return own, True
        signature = self._key(func)
        foreach = is_foreach_func(f)
        functional = self._functional.get(signature)
        if functional is not None and not foreach:
            return functional, False
        mutable = self._non_functional.get(signature) if generated else None
        if mutable is not None:
            _check_reusable_mutable_formula(f, mutable)
            return mutable, False
        if not foreach:
            return None, False
        info, derived = self._foreach.derive(f)
        if info is None:
            return None, False
        per_key = {DEFAULT_KEY: info}
        if derived:
            self._infos[func] = per_key
            self._functional[func.text] = per_key  # as upstream; no later lookup can find it
        return per_key, derived

    def _inplace_forward(
        self, f: NativeFunction, info: DifferentiabilityInfo, exact: bool
    ) -> ForwardDerivative:
        """The out-of-place forward formula, written for an inplace function."""
        patterns = self._patterns
        if len(info.forward_derivatives) != 1:
            raise SpecError(
                f"'{f.func.name}' is inplace, so its entry has one forward formula, for "
                f"'self'; it has {len(info.forward_derivatives)}",
                info.forward_derivatives[1].location,
            )
        fw = info.forward_derivatives[0]
        formula = fw.formula
        if patterns.uses(formula, "self_p"):
            if exact:
                raise SpecError(
                    f"the forward formula of '{f.func.name}' uses 'self_p', the value of self "
                    "before the inplace update; use 'result' instead",
                    fw.location,
                )
            formula = patterns.replace(formula, "self_p", "original_self_p")
            formula = patterns.replace(formula, "self_t", "original_self_t")
        formula = patterns.replace(formula, "result", "self_p")
        primals = fw.required_inputs_primal
        if patterns.uses(formula, "self_p"):
            primals = (*primals, "self") if primals else ("self",)
        if not exact:
            formula = _update_tangent_in_place(formula, info.name)
        original = patterns.uses(formula, "original_self_p") or patterns.uses(
            formula, "original_self_t"
        )
        return ForwardDerivative(
            formula=formula,
            var_names=("self",),
            var_types=fw.var_types,
            required_inputs_fw_grad=fw.required_inputs_fw_grad,
            required_inputs_primal=primals,
            required_original_self_value=original,
            is_reusing_outplace_formula=not exact,
            location=fw.location,
        )


def _update_tangent_in_place(formula: str, name: str) -> str:
    """`self_t.op(args)` for op `name` becomes `self_t_raw.op_(args)`; else a copy_."""
    match = _SINGLE_METHOD_ON_SELF_T.fullmatch(formula)
    if match is not None:
        op, arguments = match.group(1), match.group(2)
        if op == name and _one_call(arguments):
            return f"self_t_raw.defined() ? self_t_raw.{op}_({arguments}) : {formula}"
    return f"self_t_raw.defined() ? self_t_raw.copy_({formula}) : {formula}"


def _one_call(arguments: str) -> bool:
    """Whether `arguments` never closes the parenthesis before it (`a) + self_t.g(b`)."""
    depth = 1
    for c in arguments:
        if c == ")":
            depth -= 1
            if depth == 0:
                return False
        elif c == "(":
            depth += 1
    return True


def _check_reusable_mutable_formula(f: NativeFunction, per_key: InfosByKey) -> None:
    for info in per_key.values():
        if any("self" in str(saved.nctype.name) for saved in info.all_saved_inputs):
            raise SpecError(
                f"the formulas of '{info.func.func.name}' save 'self', so '{f.func.name}' (its "
                "generated out-of-place variant) cannot reuse them; give it an entry",
                info.location,
            )


def _check_strides(f: NativeFunction, info: DifferentiabilityInfo) -> None:
    for derivative in info.derivatives:
        if "self" not in derivative.var_names:
            continue
        if any("strides_or_error" in saved.expr for saved in derivative.saved_inputs):
            raise SpecError(
                f"'self.sym_strides()' in the formula for 'self' is not supported for "
                f"'{f.func.name}', an inplace function that uses this entry",
                derivative.location,
            )


def _check_outputs(f: NativeFunction, info: DifferentiabilityInfo) -> None:
    values = info.output_differentiability
    if values is None:
        return
    at = info.output_differentiability_location or info.location
    count = len(f.func.returns)
    if len(values) != count:
        raise SpecError(
            f"'output_differentiability' has {len(values)} value(s) and '{f.func.name}', "
            f"which uses this entry, has {count} output(s)",
            at,
        )
    if False in values and f.func.kind is SchemaKind.inplace:
        raise SpecError(
            f"'{f.func.name}', which uses this entry, is inplace: its output is differentiable "
            "(its version counter must be updated)",
            at,
        )


def _check_differentiable_outputs(
    fn: NativeFunctionWithDifferentiabilityInfo, key: str, info: DifferentiabilityInfo
) -> None:
    """Backward formulas need a differentiable output, and forward formulas one each."""
    f = fn.func
    if not info.has_derivatives or (is_foreach_func(f) and f.func.kind is SchemaKind.inplace):
        return
    outputs = fn.differentiable_outputs(key)
    if not outputs and f.func.returns:
        raise SpecError(
            f"'{f.func.name}' has backward formulas but no differentiable output",
            info.output_differentiability_location or info.location,
        )
    forward = fn.fw_derivatives[key] if fn.fw_derivatives else ()
    written = sum(len(fw.var_names) for fw in forward)
    if outputs and forward and written != len(outputs):
        names = ", ".join(f"'{o.name}'" for o in outputs)
        raise SpecError(
            f"'{f.func.name}' has {len(outputs)} differentiable output(s) ({names}), and "
            f"forward formulas for {written}: give one for each, or none",
            forward[0].location or info.location,
        )
