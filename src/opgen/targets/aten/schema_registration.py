"""RegisterSchema.cpp: the `m.def(...)` of every selected operator schema (sources part).

Rules (torchgen.gen's RegisterSchema and get_native_function_schema_registrations):
- functions are grouped by namespace, namespaces in order of first appearance;
  `aten` fills the template's `TORCH_LIBRARY(aten, m)` block, every other
  namespace gets its own block (`TORCH_LIBRARY_FRAGMENT` for the predefined
  namespaces `quantized` and `quantized_decomposed`, else `TORCH_LIBRARY`),
  one block per namespace, the last-seen namespace's statements joined by tabs;
- a function is registered only if the selection selects it, unless
  `--force_schema_registration` (then every function is);
- the schema is a C++ string literal; a function with tags passes
  `tags_<i>`, a `std::vector<at::Tag>` declared on the first use of that
  exact (sorted) tag set in its namespace's block (each block declares its own,
  counting from 0);
- `--skip_dispatcher_op_registration` empties both template slots.
"""

from __future__ import annotations

from collections.abc import Sequence

from opgen.api.cpp_literals import cpp_string
from opgen.spec.native import NativeFunction
from opgen.spec.selection import OperatorSelection
from opgen.targets.aten.run import AtenRun
from opgen.targets.emitters import Emitted

# Namespaces torch defines itself, so generated code may only add to them.
_FRAGMENT_NAMESPACES = frozenset({"quantized", "quantized_decomposed"})


def _registrations(
    functions: Sequence[NativeFunction], selection: OperatorSelection, known_tags: dict[str, int]
) -> list[str]:
    """One `m.def` statement (with its tag vector, if new) per selected function."""
    statements = []
    for f in functions:
        if not selection.is_native_function_selected(f):
            continue
        schema = cpp_string(str(f.func))
        if not f.tags:
            statements.append(f"m.def({schema}, {{}});\n")
            continue
        tags = "{" + ", ".join(f"at::Tag::{tag}" for tag in sorted(f.tags)) + "}"
        declaration = ""
        index = known_tags.get(tags)
        if index is None:
            index = known_tags[tags] = len(known_tags)
            declaration = f"const std::vector<at::Tag> tags_{index} = {tags};\n"
        statements.append(f"{declaration}m.def({schema}, tags_{index});\n")
    return statements


def schema_registrations(
    functions: Sequence[NativeFunction], selection: OperatorSelection
) -> tuple[list[str], str]:
    """(the aten statements, the other namespaces' library blocks)."""
    by_namespace: dict[str, list[NativeFunction]] = {}
    for f in functions:
        by_namespace.setdefault(f.namespace, []).append(f)
    aten: list[str] = []
    blocks = ""
    for namespace, members in by_namespace.items():
        statements = _registrations(members, selection, {})
        if namespace == "aten":
            aten = statements
            continue
        macro = "TORCH_LIBRARY_FRAGMENT" if namespace in _FRAGMENT_NAMESPACES else "TORCH_LIBRARY"
        blocks += f"\n{macro}({namespace}, m) {{\n  {chr(9).join(statements)}\n}};"
    return aten, blocks


def emit_schema_registration(run: AtenRun) -> Emitted:
    """RegisterSchema.cpp (AtenPart.sources)."""
    options = run.options
    selection = run.selection
    if options.force_schema_registration:
        selection = OperatorSelection.everything()

    def env() -> dict[str, object]:
        if options.skip_dispatcher_op_registration:
            return {"aten_schema_registrations": [], "schema_registrations": []}
        aten, others = schema_registrations(run.spec.functions, selection)
        return {"aten_schema_registrations": aten, "schema_registrations": others}

    outputs = run.outputs()
    outputs.cpu.add_template("RegisterSchema.cpp", env)
    return outputs.emitted()
