"""`opgen.api.translate` against upstream torchgen's `translate`, live, on torch's packaged spec.

Generated code calls one convention from another, and `translate` writes the argument
expressions of each such call. For every function of torch's spec this compares the
expressions opgen and torchgen write for the calls the generators make: each C++ API
overload calling the dispatcher, each native signature's `dispatcher_exprs()`, the
dispatcher calling a native kernel (and an out-of-tree kernel without SymInts), and, for
every structured group, each variant's wrapper calling `meta()` and `impl()` the way
torchgen's `register_dispatch_key` builds the context. The torchgen side runs inside
`native_function_manager`, which sets the per-function options opgen's `ArgumentStyle`
passes explicitly. Small hand-made cases at the end pin the interesting rules to exact
strings, checked against both implementations.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
import torchgen.api.structured as tg_structured
import torchgen.api.translate as tg_translate
import torchgen.api.types as tgt
import torchgen.model as tgm
from torchgen.context import native_function_manager

import opgen.api.types as ot
import opgen.spec.groups as og
import opgen.spec.native as on
from opgen.api import structured
from opgen.api.cpp import CppSignatureGroup
from opgen.api.dispatcher import DispatcherSignature
from opgen.api.native import NativeSignature
from opgen.api.translate import UnsatError, translate
from opgen.spec.keys import Variant

from .live_specs import LiveSpecs, live_specs

UNSAT = "UnsatError"


@pytest.fixture(scope="module")
def specs(torchgen_native_dir: Path) -> LiveSpecs:
    return live_specs(torchgen_native_dir)


def _exprs(es: Sequence[ot.Expr] | Sequence[tgt.Expr]) -> list[str]:
    return [e.expr for e in es]


# -- every function --------------------------------------------------------------------


def _cpp_calls_ours(f: on.NativeFunction) -> dict[tuple[bool, bool, bool], list[str]]:
    goals = DispatcherSignature.from_schema(f.func, style=ot.ArgumentStyle.of(f)).arguments()
    methods = [False, True] if Variant.method in f.variants else [False]
    return {
        (method, sig.faithful, sig.symint): _exprs(translate(sig.arguments(), goals, method=method))
        for method in methods
        for sig in CppSignatureGroup.from_native_function(
            f, method=method, fallback_binding=f.manual_cpp_binding
        ).signatures()
    }


def _cpp_calls_theirs(f: tgm.NativeFunction) -> dict[tuple[bool, bool, bool], list[str]]:
    with native_function_manager(f):
        goals = tgt.DispatcherSignature.from_schema(f.func).arguments()
        methods = [False, True] if tgm.Variant.method in f.variants else [False]
        return {
            (method, sig.faithful, sig.symint): _exprs(
                tg_translate.translate(sig.arguments(), goals, method=method)
            )
            for method in methods
            for sig in tgt.CppSignatureGroup.from_native_function(
                f, method=method, fallback_binding=f.manual_cpp_binding
            ).signatures()
        }


def test_cpp_api_to_dispatcher(specs: LiveSpecs) -> None:
    mismatches = []
    compared = 0
    for ours, theirs in specs.functions():
        o, t = _cpp_calls_ours(ours), _cpp_calls_theirs(theirs)
        compared += len(t)
        if o != t:
            mismatches.append((str(ours.func.name), o, t))
    assert mismatches == []
    assert compared > 5000  # every C++ overload of ~3100 functions


def _symint_options(has_symint: bool) -> list[bool]:
    return [False, True] if has_symint else [False]


def test_native_dispatcher_exprs(specs: LiveSpecs) -> None:
    mismatches = []
    compared = 0
    for ours, theirs in specs.functions():
        style = ot.ArgumentStyle.of(ours)
        for symint in _symint_options(ours.func.has_symint()):
            o = _exprs(NativeSignature(ours.func, symint, style).dispatcher_exprs())
            with native_function_manager(theirs):
                t = _exprs(tgt.NativeSignature(theirs.func, symint=symint).dispatcher_exprs())
            compared += 1
            if o != t:
                mismatches.append((str(ours.func.name), symint, o, t))
    assert mismatches == []
    assert compared > 3000


def test_dispatcher_to_native_and_external_kernels(specs: LiveSpecs) -> None:
    """The dispatcher calling an in-tree (native) kernel and an out-of-tree one without SymInts."""
    mismatches = []
    compared = 0
    for ours, theirs in specs.functions():
        style = ot.ArgumentStyle.of(ours)
        context = DispatcherSignature.from_schema(ours.func, style=style).arguments()
        with native_function_manager(theirs):
            tg_context = tgt.DispatcherSignature.from_schema(theirs.func).arguments()
        for symint in _symint_options(ours.func.has_symint()):
            o = {
                "native": _exprs(
                    translate(context, NativeSignature(ours.func, symint, style).arguments())
                ),
                "external": _exprs(
                    translate(
                        context,
                        DispatcherSignature.from_schema(
                            ours.func, style=style, symint=symint
                        ).arguments(),
                    )
                ),
            }
            with native_function_manager(theirs):
                native_goals = tgt.NativeSignature(theirs.func, symint=symint).arguments()
                external_goals = tgt.DispatcherSignature.from_schema(
                    theirs.func, symint=symint
                ).arguments()
                t = {
                    "native": _exprs(tg_translate.translate(tg_context, native_goals)),
                    "external": _exprs(tg_translate.translate(tg_context, external_goals)),
                }
            compared += 1
            if o != t:
                mismatches.append((str(ours.func.name), symint, o, t))
    assert mismatches == []
    assert compared > 3000


# -- structured kernels ----------------------------------------------------------------


def _solve(
    solver: Callable[..., Sequence[Any]],
    bindings: Sequence[Any],
    goals: Sequence[Any],
    *,
    method: bool = False,
) -> list[str] | str:
    """`solver(bindings, goals)`'s expressions (either side's `translate`), or UNSAT."""
    try:
        return _exprs(solver(bindings, goals, method=method))
    except (UnsatError, tg_translate.UnsatError):
        return UNSAT


def _structured_calls_ours(
    g: og.NativeFunctionsGroup, f: on.NativeFunction
) -> dict[str, list[str] | str]:
    """What the structured wrapper of `f` passes to `meta()` and `impl()`."""
    style = ot.ArgumentStyle.of(f)
    context: list[ot.Binding | ot.Expr] = list(
        DispatcherSignature.from_schema(f.func, style=style).arguments()
    )
    meta = _solve(translate, context, structured.meta_arguments(g))
    precomputed = g.out.precomputed
    if precomputed is not None:
        for args in (*precomputed.replace.values(), precomputed.add):
            context.extend(
                ot.Expr(f"precompute.{a.name}", structured.argument_type(a, binds=a.name))
                for a in args
            )
    for i, out in enumerate(structured.out_arguments(g)):
        expr = f"op.maybe_get_output({i})" if f is g.out else f"op.outputs_[{i}]"
        context.append(ot.Expr(expr, ot.NamedCType(out.nctype.name, ot.MUT_TENSOR_REF)))
    impl = _solve(translate, context, structured.impl_arguments(g))
    return {"meta": meta, "impl": impl}


def _structured_calls_theirs(
    g: tgm.NativeFunctionsGroup, f: tgm.NativeFunction
) -> dict[str, list[str] | str]:
    with native_function_manager(f):
        context: list[tgt.Binding | tgt.Expr] = list(
            tgt.DispatcherSignature.from_schema(f.func).arguments()
        )
        meta = _solve(tg_translate.translate, context, tg_structured.meta_arguments(g))
        precomputed = g.out.precomputed
        if precomputed is not None:
            for args in (*precomputed.replace.values(), precomputed.add):
                context.extend(
                    tgt.Expr(f"precompute.{a.name}", tg_structured.argument_type(a, binds=a.name))
                    for a in args
                )
        for i, out in enumerate(tg_structured.out_arguments(g)):
            expr = f"op.maybe_get_output({i})" if f is g.out else f"op.outputs_[{i}]"
            mut_tensor = tgt.MutRefCType(tgt.BaseCType(tgt.tensorT))
            context.append(tgt.Expr(expr, tgt.NamedCType(out.nctype.name, mut_tensor)))
        impl = _solve(tg_translate.translate, context, tg_structured.impl_arguments(g))
        return {"meta": meta, "impl": impl}


def test_structured_meta_and_impl_calls(specs: LiveSpecs) -> None:
    mismatches = []
    compared = 0
    for ours, theirs in specs.groups():
        if not ours.structured:
            continue
        tg_by_name = {str(f.func.name): f for f in theirs.functions()}
        for f in ours.functions():
            o = _structured_calls_ours(ours, f)
            t = _structured_calls_theirs(theirs, tg_by_name[str(f.func.name)])
            compared += 1
            if o != t:
                mismatches.append((str(f.func.name), o, t))
    assert mismatches == []
    assert compared > 500  # functional, inplace and out variants of ~275 groups


def test_functional_dispatcher_to_meta_and_out_dispatcher_to_impl(specs: LiveSpecs) -> None:
    """The two direct translations: nothing in scope but one variant's parameters."""
    mismatches = []
    compared = 0
    for ours, theirs in specs.groups():
        if not ours.structured:
            continue
        functional = DispatcherSignature.from_schema(
            ours.functional.func, style=ot.ArgumentStyle.of(ours.functional)
        ).arguments()
        out = DispatcherSignature.from_schema(
            ours.out.func, style=ot.ArgumentStyle.of(ours.out)
        ).arguments()
        o = {
            "meta": _solve(translate, functional, structured.meta_arguments(ours)),
            "impl": _solve(translate, out, structured.impl_arguments(ours)),
        }
        with native_function_manager(theirs.functional):
            tg_functional = tgt.DispatcherSignature.from_schema(theirs.functional.func).arguments()
        with native_function_manager(theirs.out):
            tg_out = tgt.DispatcherSignature.from_schema(theirs.out.func).arguments()
        with native_function_manager(theirs):
            t = {
                "meta": _solve(
                    tg_translate.translate, tg_functional, tg_structured.meta_arguments(theirs)
                ),
                "impl": _solve(
                    tg_translate.translate, tg_out, tg_structured.impl_arguments(theirs)
                ),
            }
        compared += 1
        if o != t:
            mismatches.append((str(ours.out.func.name), o, t))
    assert mismatches == []
    assert compared > 250


# -- hand-made cases -------------------------------------------------------------------

_POSSIBLY_REDUNDANT = "possibly_redundant_memory_format"


def _tg_ctype(t: ot.CType) -> tgt.CType:
    """The torchgen CType spelled like opgen's `t` (only the constructors the cases use)."""
    if isinstance(t, ot.BaseCType):
        ns, _, name = t.name.rpartition("::")
        return tgt.BaseCType(tgt.BaseCppType(ns, name))
    if isinstance(t, ot.ConstRefCType):
        return tgt.ConstRefCType(_tg_ctype(t.elem))
    if isinstance(t, ot.MutRefCType):
        return tgt.MutRefCType(_tg_ctype(t.elem))
    if isinstance(t, ot.OptionalCType):
        return tgt.OptionalCType(_tg_ctype(t.elem))
    if isinstance(t, ot.VectorCType):
        return tgt.VectorCType(_tg_ctype(t.elem))
    if isinstance(t, ot.ArrayRefCType):
        return tgt.ArrayRefCType(_tg_ctype(t.elem))
    if isinstance(t, ot.ListCType):
        return tgt.ListCType(_tg_ctype(t.elem))
    raise NotImplementedError(t)


def _ours(name: str, t: ot.CType) -> ot.NamedCType:
    if name == _POSSIBLY_REDUNDANT:
        return ot.NamedCType(ot.SpecialArgName.possibly_redundant_memory_format, t)
    return ot.NamedCType(name, t)


def _theirs(name: str, t: ot.CType) -> tgt.NamedCType:
    if name == _POSSIBLY_REDUNDANT:
        return tgt.NamedCType(tgt.SpecialArgName.possibly_redundant_memory_format, _tg_ctype(t))
    return tgt.NamedCType(name, _tg_ctype(t))


@dataclass(frozen=True)
class Case:
    id: str
    bindings: Sequence[tuple[str, str, ot.CType]]  # expression, argument name, type
    goals: Sequence[tuple[str, ot.CType]]
    expected: list[str] | str  # the expressions, or UNSAT
    method: bool = False


_OPT_SCALAR_TYPE = ot.OptionalCType(ot.SCALAR_TYPE)
_OPT_LAYOUT = ot.OptionalCType(ot.LAYOUT)
_OPT_DEVICE = ot.OptionalCType(ot.DEVICE)
_OPT_BOOL = ot.OptionalCType(ot.BOOL)
_OPT_MEMORY_FORMAT = ot.OptionalCType(ot.MEMORY_FORMAT)
_OPTIONS = ot.ConstRefCType(ot.TENSOR_OPTIONS)
_OPTION_PARTS = [
    ("dtype", _OPT_SCALAR_TYPE),
    ("layout", _OPT_LAYOUT),
    ("device", _OPT_DEVICE),
    ("pin_memory", _OPT_BOOL),
]

CASES = [
    Case(
        "pack-tensor-options",
        [(name, name, t) for name, t in _OPTION_PARTS],
        [("options", ot.TENSOR_OPTIONS)],
        ["TensorOptions().dtype(dtype).layout(layout).device(device).pinned_memory(pin_memory)"],
    ),
    Case(
        "unpack-tensor-options",
        [("options", "options", _OPTIONS)],
        _OPTION_PARTS,
        [
            "c10::optTypeMetaToScalarType(options.dtype_opt())",
            "options.layout_opt()",
            "options.device_opt()",
            "options.pinned_memory_opt()",
        ],
    ),
    Case(
        "tensor-options-from-out-tensor",
        [("out", "out", ot.MUT_TENSOR_REF)],
        _OPTION_PARTS,
        ["out.scalar_type()", "out.layout()", "out.device()", "::std::nullopt"],
    ),
    Case(
        "memory-format-checked-against-options",
        [
            ("options", "options", _OPTIONS),
            ("memory_format", _POSSIBLY_REDUNDANT, _OPT_MEMORY_FORMAT),
        ],
        [("memory_format", _OPT_MEMORY_FORMAT)],
        ["c10::impl::check_tensor_options_and_extract_memory_format(options, memory_format)"],
    ),
    Case(
        "memory-format-unchecked-when-options-passed-on",
        [
            ("options", "options", _OPTIONS),
            ("memory_format", _POSSIBLY_REDUNDANT, _OPT_MEMORY_FORMAT),
        ],
        [("options", _OPTIONS), ("memory_format", _OPT_MEMORY_FORMAT)],
        ["options", "memory_format"],
    ),
    Case(
        "int-to-symint",
        [
            ("n", "n", ot.INT64),
            ("size", "size", ot.INT_ARRAY_REF),
            ("dim", "dim", ot.OptionalCType(ot.INT64)),
            ("shape", "shape", ot.OPTIONAL_INT_ARRAY_REF),
        ],
        [
            ("n", ot.SYM_INT),
            ("size", ot.SYM_INT_ARRAY_REF),
            ("dim", ot.OptionalCType(ot.SYM_INT)),
            ("shape", ot.OPTIONAL_SYM_INT_ARRAY_REF),
        ],
        [
            "n",
            "c10::fromIntArrayRefSlow(size)",
            "dim.has_value() ? ::std::make_optional(c10::SymInt(*dim)) : ::std::nullopt",
            "shape.has_value() ? ::std::make_optional(c10::fromIntArrayRefSlow(*shape))"
            " : ::std::nullopt",
        ],
    ),
    Case(
        "symint-to-int",
        [
            ("n", "n", ot.SYM_INT),
            ("size", "size", ot.SYM_INT_ARRAY_REF),
            ("dim", "dim", ot.OptionalCType(ot.SYM_INT)),
            ("shape", "shape", ot.OPTIONAL_SYM_INT_ARRAY_REF),
        ],
        [
            ("n", ot.INT64),
            ("size", ot.INT_ARRAY_REF),
            ("dim", ot.OptionalCType(ot.INT64)),
            ("shape", ot.OPTIONAL_INT_ARRAY_REF),
        ],
        [
            "n.guard_int(__FILE__, __LINE__)",
            "C10_AS_INTARRAYREF_SLOW(size)",
            "dim.has_value() ? ::std::make_optional(dim->guard_int(__FILE__, __LINE__))"
            " : ::std::nullopt",
            "shape.has_value() ? ::std::make_optional(C10_AS_INTARRAYREF_SLOW(*shape))"
            " : ::std::nullopt",
        ],
    ),
    Case(
        "optional-tensor-ref",
        [("bias", "bias", ot.CONST_OPTIONAL_TENSOR_REF)],
        [("bias", ot.OPTIONAL_TENSOR_REF)],
        [
            "((bias.has_value() && (*bias).defined()) ? at::OptionalTensorRef(*bias)"
            " : at::OptionalTensorRef())"
        ],
    ),
    Case(
        "method-self-is-this",
        [("other", "other", ot.CONST_TENSOR_REF)],
        [("self", ot.CONST_TENSOR_REF), ("other", ot.CONST_TENSOR_REF)],
        ["const_cast<Tensor&>(*this)", "other"],
        method=True,
    ),
    Case(
        "mutable-tensor-from-const-ref",
        [("out", "out", ot.CONST_TENSOR_REF)],
        [("out", ot.MUT_TENSOR_REF)],
        ["const_cast<Tensor&>(out)"],
    ),
    Case(
        "vector-needs-expensive-conversion",
        [("size", "size", ot.INT_ARRAY_REF)],
        [("size", ot.VectorCType(ot.INT64))],
        UNSAT,
    ),
    Case(
        "names-do-not-convert",
        [("a", "a", ot.INT64)],
        [("b", ot.INT64)],
        UNSAT,
    ),
]


@pytest.mark.parametrize("case", CASES, ids=[c.id for c in CASES])
def test_hand_made_case(case: Case) -> None:
    ours = _solve(
        translate,
        [ot.Expr(e, _ours(n, t)) for e, n, t in case.bindings],
        [_ours(n, t) for n, t in case.goals],
        method=case.method,
    )
    theirs = _solve(
        tg_translate.translate,
        [tgt.Expr(e, _theirs(n, t)) for e, n, t in case.bindings],
        [_theirs(n, t) for n, t in case.goals],
        method=case.method,
    )
    assert (ours, theirs) == (case.expected, case.expected)
