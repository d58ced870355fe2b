"""The operator names of an ExecuTorch kernel YAML (`--ops_schema_yaml_path`).

A kernel YAML (`functions.yaml`, `custom_ops.yaml`) is a list of entries, each naming
its operator in one of two ways: `op: add.out` (an ATen operator, `aten::` added unless
the name has a namespace) or `func:` with the operator's schema
(`my_ops::mul3.out(Tensor input, *, Tensor(a!) output) -> Tensor(a!)`; namespace `aten`
unless written). Only the names are read: the schema is parsed, so a bad one is an error
at its place, but the entry's other keys (`kernels:`, `type_alias:`, ...) are not.
Every bad entry is reported, each at its place in the file.
"""

from __future__ import annotations

from opgen.diagnostics import Diagnostic, SpecError
from opgen.releases import NAMED_DIMENSIONS, Release
from opgen.spec.entry_fields import describe
from opgen.spec.schema import FunctionSchema
from opgen.spec.syntax import SchemaError
from opgen.spec.yaml.load import YamlList, YamlMap, load_yaml
from opgen.spec.yaml.located import written


def kernel_yaml_operators(path: str, release: Release) -> tuple[str, ...]:
    """The operators the kernel YAML at `path` names: its `op:` entries', then its
    `func:` entries', each in file order (as gen_oplist lists them)."""
    doc = load_yaml(path)
    entries = doc.root
    if not isinstance(entries, YamlList):
        what = "empty" if entries is None else f"{describe(entries)}, not a list"
        raise SpecError(
            f"the kernel YAML is {what}; expected a list of entries ('- op: ...' or '- func: ...')",
            doc.location,
        )
    ops: list[str] = []
    funcs: list[str] = []
    errors: list[Diagnostic] = []
    named_dimensions = release.has(NAMED_DIMENSIONS)
    for i, entry in enumerate(entries):
        try:
            if not isinstance(entry, YamlMap):
                raise SpecError(
                    f"an entry must be a mapping with 'op:' or 'func:', not {describe(entry)}",
                    entries.item_locations[i],
                )
            if "op" in entry:
                ops.append(_op_name(entry))
            else:
                funcs.append(_func_name(entry, named_dimensions))
        except SpecError as e:
            errors.extend(e.diagnostics)
    if errors:
        raise SpecError.of(errors)
    return (*ops, *funcs)


def _op_name(entry: YamlMap) -> str:
    op = entry["op"]
    if not isinstance(op, str):
        raise SpecError(
            f"'op' must be an operator name, not {describe(op)}", entry.value_location("op")
        )
    return op if "::" in op else f"aten::{op}"


def _func_name(entry: YamlMap, named_dimensions: bool) -> str:
    if "func" not in entry:
        raise SpecError("an entry needs 'op:' or 'func:'", entry.location)
    text = entry["func"]
    if not isinstance(text, str):
        raise SpecError(
            f"'func' must be a schema string, not {describe(text)}", entry.value_location("func")
        )
    namespace, separator, _ = text.partition("(")[0].rpartition("::")
    skip = len(namespace) + len(separator)
    value = written(entry, "func")
    if "::" in namespace or (separator and not namespace):
        raise SpecError(
            f"operator namespace '{namespace}' must be one name", value.at(0, max(skip, 1))
        )
    try:
        schema = FunctionSchema.parse(text[skip:], named_dimensions=named_dimensions)
    except SchemaError as error:
        raise value.place(error, skip) from None
    return f"{namespace or 'aten'}::{schema.name}"
