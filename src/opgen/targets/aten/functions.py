"""The public C++ API over `at::_ops`: functions, Tensor methods and redispatch functions.

Every C++ API overload of an operator (convenience, faithful, and their
`_symint` forms) is an inline wrapper whose body calls the operator's
`at::_ops` entry point with the arguments translated from the C++ API to the
dispatcher convention:
- `Functions.h` (or `ops/<root>.h`): `at::<name>(...)` for operators with a
  function variant, and for every operator with SymInts the
  `at::symint::<name><T>(...)` template that picks the SymInt or int64_t form
  by its template argument (even for method-only operators);
- `core/TensorBody.h`: the Tensor method declarations inside the class and
  their inline definitions after it (`self` is `*this`);
- `RedispatchFunctions.h`: `at::redispatch::<name>(dispatchKeySet, ...)` for
  every operator, calling `redispatch`.

`manual_cpp_binding` operators keep their generated wrappers, named
`__dispatch_<name>`, for the hand-written ones to call.

`Functions.cpp` and `core/TensorMethods.cpp` are their templates alone
(emitter `emit_functions_sources`, part `sources`).
"""

from __future__ import annotations

from opgen.api.cpp import CppSignature
from opgen.api.signatures import FunctionSignatures
from opgen.api.translate import translate
from opgen.api.types import CONST_TENSOR_REF, MUT_TENSOR_REF, Parameters
from opgen.spec.keys import Variant
from opgen.targets.aten.run import AtenRun
from opgen.targets.emitters import Emitted


class ArgumentTranslations:
    """The arguments of calls from one convention into another, translated once per run.

    Used for C++ API -> dispatcher (the wrappers' bodies) and dispatcher -> C++
    API (static dispatch). Parameter lists are shared among functions with the
    same arguments, so a translation is kept by (source list, goal list,
    method); most goals are parameters of the same name and type, found
    without `translate`.
    """

    def __init__(self) -> None:
        self._exprs: dict[tuple[int, int, bool], tuple[Parameters, Parameters, str]] = {}

    def arguments(self, sigs: FunctionSignatures, sig: CppSignature) -> str:
        """The arguments of the `at::_ops` call in the body of C++ API function `sig`."""
        return self.translated(sig.parameters, sigs.dispatcher.parameters, method=sig.method)

    def translated(self, source: Parameters, goals: Parameters, *, method: bool = False) -> str:
        """`translate(source, goals)`'s expressions, comma-separated."""
        key = (id(source), id(goals), method)
        found = self._exprs.get(key)
        if found is None:
            # The entry keeps both lists alive, so their ids are never reused while cached.
            found = self._exprs[key] = (source, goals, _translated(source, goals, method))
        return found[2]


def _translated(source: Parameters, goals: Parameters, method: bool) -> str:
    # Most goals are a parameter of the same name and type, which `translate`
    # would pass as it is; look those up by name (cheaper than hashing types)
    # and translate only lists with another goal.
    by_name = {b.nctype.name: b for b in source.bindings}
    names = []
    for goal in goals.bindings:
        wanted = goal.nctype
        if method and wanted.name == "self" and wanted.type in _THIS_TYPES:
            names.append(_THIS)
            continue
        found = by_name.get(wanted.name)
        if found is None or found.nctype != wanted:
            exprs = translate(source.bindings, goals.bindings, method=method)
            return ", ".join([e.expr for e in exprs])
        names.append(found.name)
    return ", ".join(names)


# Inside a Tensor method, `self` is `*this`.
_THIS = "const_cast<Tensor&>(*this)"
_THIS_TYPES = (MUT_TENSOR_REF, CONST_TENSOR_REF)


def function_definitions(sigs: FunctionSignatures, calls: ArgumentTranslations) -> str:
    """The `at::` functions and `at::symint::` templates of one operator (may be empty)."""
    f = sigs.f
    op = f.func.name.unambiguous_name()
    is_function = Variant.function in f.variants
    has_symint = f.func.has_symint()
    parts: list[str] = []
    for sig in sigs.cpp.signatures():
        exprs = calls.arguments(sigs, sig)
        if is_function:
            parts.append(
                f"""
// aten::{f.func}
inline {sig.decl()} {{
    return at::_ops::{op}::call({exprs});
}}"""
            )
        if has_symint:
            intlike = "c10::SymInt" if sig.symint else "int64_t"
            parts.append(
                f"""
namespace symint {{
  template <typename T, typename = std::enable_if_t<std::is_same_v<T, {intlike}>>>
  {sig.decl(suppress_symint_suffix=True)} {{
    return at::_ops::{op}::call({exprs});
  }}
}}
"""
            )
    return "".join(parts)


def method_declarations(sigs: FunctionSignatures) -> str | None:
    """The Tensor class's declarations of one operator's methods; None if it has none."""
    group = sigs.cpp_method
    if group is None:
        return None
    return "".join([f"{sig.decl()} const;\n" for sig in group.signatures()])


def method_definitions(sigs: FunctionSignatures, calls: ArgumentTranslations) -> str | None:
    """The inline definitions of one operator's Tensor methods; None if it has none."""
    group = sigs.cpp_method
    if group is None:
        return None
    f = sigs.f
    op = f.func.name.unambiguous_name()
    return "".join(
        [
            f"""
// aten::{f.func}
inline {sig.defn(prefix="Tensor::")} const {{
    return at::_ops::{op}::call({calls.arguments(sigs, sig)});
}}
"""
            for sig in group.signatures()
        ]
    )


def redispatch_definitions(sigs: FunctionSignatures, calls: ArgumentTranslations) -> str:
    """The `at::redispatch::` functions of one operator."""
    f = sigs.f
    op = f.func.name.unambiguous_name()
    parts = []
    for sig in sigs.cpp.signatures():
        exprs = calls.arguments(sigs, sig)
        exprs = f"dispatchKeySet, {exprs}" if exprs else "dispatchKeySet"
        parts.append(
            f"""
// aten::{f.func}
inline {sig.decl(is_redispatching_fn=True)} {{
    return at::_ops::{op}::redispatch({exprs});
}}
"""
        )
    return "".join(parts)


def emit_tensor_body(run: AtenRun, calls: ArgumentTranslations) -> Emitted:
    """`core/TensorBody.h`: the Tensor class's methods."""
    signatures = run.signatures
    functions = run.spec.functions

    def env() -> dict[str, list[str]]:
        declarations, definitions = [], []
        for f in functions:
            sigs = signatures.of(f)
            declared = method_declarations(sigs)
            if declared is not None:
                declarations.append(declared)
                defined = method_definitions(sigs, calls)
                assert defined is not None
                definitions.append(defined)
        return {
            "tensor_method_declarations": declarations,
            "tensor_method_definitions": definitions,
        }

    outputs = run.outputs()
    outputs.core.add_template("TensorBody.h", env)
    return outputs.emitted()


def emit_redispatch_functions(run: AtenRun, calls: ArgumentTranslations) -> Emitted:
    """`RedispatchFunctions.h`."""
    signatures = run.signatures
    functions = run.spec.functions
    outputs = run.outputs()
    outputs.cpu.add_template(
        "RedispatchFunctions.h",
        lambda: {
            "function_redispatch_definitions": [
                redispatch_definitions(signatures.of(f), calls) for f in functions
            ]
        },
    )
    return outputs.emitted()


def emit_functions_sources(run: AtenRun) -> Emitted:
    """`Functions.cpp` and `core/TensorMethods.cpp`, their templates alone (part: sources)."""
    outputs = run.outputs()
    outputs.cpu.add_template("Functions.cpp", {})
    outputs.core.add_template("TensorMethods.cpp", {})
    return outputs.emitted()
