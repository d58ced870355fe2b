"""Whole-spec lists: ATenOpList.cpp, aten_interned_strings.h, enum_tag.h and
RegistrationDeclarations.h.

Each file lists every function of the spec (selection plays no part):
- ATenOpList.cpp (sources): `{"aten::<name>", "<overload>"},` per function,
  in spec order (the namespace is always written `aten`).
- core/aten_interned_strings.h (headers): `_(aten, <name>)` for every
  operator name and every base name (inplace `_` dropped), minus the C++
  alternative operator tokens (`and`, `not`, ...); `_(attr, <name>)` for
  every argument name; each list sorted, joined by ` \\` line continuations.
- enum_tag.h (headers, header-only root; core before torch 2.12): the valid
  tags, sorted, one per line.
- RegistrationDeclarations.h (headers): the dispatcher declaration of every
  function, with a JSON comment giving its schema, whether it needs a
  backend kernel (`dispatch`: its kernel keys are not just the implicit
  composite ones) and whether it has a composite (possibly generated) kernel.
"""

from __future__ import annotations

import json

from opgen.api.signatures import FunctionSignatures
from opgen.spec.keys import DispatchKey, SchemaKind
from opgen.spec.native import NativeFunction
from opgen.targets.aten.run import AtenRun
from opgen.targets.emitters import Emitted

# C++'s alternative operator tokens cannot be symbol names.
_CPP_KEYWORDS = frozenset(
    {"and", "and_eq", "bitand", "bitor", "compl", "not", "not_eq", "or", "or_eq", "xor", "xor_eq"}
)

_IMPLICIT_ONLY = (
    frozenset({DispatchKey.CompositeImplicitAutograd}),
    frozenset(
        {DispatchKey.CompositeImplicitAutograd, DispatchKey.CompositeImplicitAutogradNestedTensor}
    ),
)


def emit_aten_op_list(run: AtenRun) -> Emitted:
    """core/ATenOpList.cpp (AtenPart.sources)."""

    def env() -> dict[str, object]:
        ops = [
            f'{{"aten::{f.func.name.name}", "{f.func.name.overload_name}"}},'
            for f in run.spec.functions
        ]
        return {"aten_ops": ops}

    outputs = run.outputs()
    outputs.core.add_template("ATenOpList.cpp", env)
    return outputs.emitted()


def interned_strings_env(functions: tuple[NativeFunction, ...]) -> dict[str, object]:
    names: set[str] = set()
    attrs: set[str] = set()
    for f in functions:
        name = f.func.name.name
        names.add(str(name))
        names.add(name.base)  # a symbol even without a functional variant
        attrs.update(a.name for a in f.func.schema_order_arguments())
    names -= _CPP_KEYWORDS
    return {
        "aten_symbols": " \\\n".join([f"_(aten, {n})" for n in sorted(names)]),
        "attr_symbols": " \\\n".join([f"_(attr, {n})" for n in sorted(attrs)]),
    }


def emit_interned_strings(run: AtenRun) -> Emitted:
    """core/aten_interned_strings.h (AtenPart.headers)."""
    outputs = run.outputs()
    outputs.core.add_template(
        "aten_interned_strings.h", lambda: interned_strings_env(run.spec.functions)
    )
    return outputs.emitted()


def emit_tag_enum(run: AtenRun) -> Emitted:
    """enum_tag.h in the header-only root, else in core (AtenPart.headers)."""
    outputs = run.outputs()
    out = outputs.headeronly if run.options.headeronly_root else outputs.core
    out.add_template(
        "enum_tag.h", lambda: {"enum_of_valid_tags": ",\n".join(sorted(run.spec.tags))}
    )
    return outputs.emitted()


def _has_generated_composite_kernel(f: NativeFunction) -> bool:
    """Structured functional and inplace variants get a generated composite kernel."""
    return f.part_of_structured_group and f.func.kind in (
        SchemaKind.functional,
        SchemaKind.inplace,
    )


def registration_declaration(sigs: FunctionSignatures, kernel_keys: frozenset[DispatchKey]) -> str:
    f = sigs.f
    dispatch = kernel_keys not in _IMPLICIT_ONLY
    default = f.has_composite_kernel or _has_generated_composite_kernel(f)
    comment = (
        f'{{"schema": {json.dumps(f"aten::{f.func}")}, '
        f'"dispatch": "{dispatch}", "default": "{default}"}}'
    )
    return f"{sigs.dispatcher.decl()}; // {comment}\n"


def emit_registration_declarations(run: AtenRun) -> Emitted:
    """RegistrationDeclarations.h (AtenPart.headers)."""

    def env() -> dict[str, object]:
        spec = run.spec
        declarations = [
            registration_declaration(run.signatures.of(f), frozenset(spec.kernels(f)))
            for f in spec.functions
        ]
        return {"registration_declarations": declarations}

    outputs = run.outputs()
    outputs.cpu.add_template("RegistrationDeclarations.h", env)
    return outputs.emitted()
