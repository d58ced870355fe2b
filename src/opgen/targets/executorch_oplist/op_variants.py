"""`selected_op_variants.h`, as ExecuTorch's `gen_selected_op_variants` writes it.

The header defines `should_include_kernel_dtype(operator_name, scalar_type)`, which a
dtype-selective build of the portable kernels asks before compiling each dtype's code
path. It is read from the `et_kernel_metadata` of a `selected_operators.yaml`, operator
by operator in file order: an operator's kernel keys are read until the first that is
`default` or has no `/` (a kernel for any dtype); the dtypes of the tensors of those
read (`v1/6;0,1|3;0` has Float and Int) are the ones kept, by ScalarType name, sorted.
An operator with none keeps every dtype (`true`). Each operator is named without its
`aten::` namespace. The other keys of the file are not read, as upstream reads none.

Where upstream iterates a value that is not a list, it gets its characters (a string)
or keys (a mapping), and so does opgen, with a warning.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from opgen.diagnostics import Diagnostic, Location, SpecError
from opgen.spec.entry_fields import describe
from opgen.spec.yaml.load import YamlList, YamlMap, load_yaml

HEADER_NAME = "selected_op_variants.h"
GENERATOR = "executorch/codegen/tools/gen_selected_op_variants.py"

# ExecuTorch's ScalarType numbers to the enumerators the header names, spelled as
# gen_selected_op_variants spells them (runtime/core/portable_type/scalar_type.h).
SCALAR_TYPE_NAMES: dict[str, str] = {
    "0": "Byte", "1": "Char", "2": "Short", "3": "Int", "4": "Long", "5": "Half",
    "6": "Float", "7": "Double", "8": "ComplexHalf", "9": "ComplexFloat",
    "10": "ComplexDouble", "11": "Bool", "12": "QInt8", "13": "QUInt8", "14": "QInt32",
    "15": "BFloat16", "16": "QUInt4x2", "17": "QUInt2x4", "18": "Bits1x8", "19": "Bits2x4",
    "20": "Bits4x2", "21": "Bits8", "22": "Bits16", "23": "Float8_e5m2",
    "24": "Float8_e4m3fn", "25": "Float8_e5m2fnuz", "26": "Float8_e4m3fnuz",
    "27": "UInt16", "28": "UInt32", "29": "Uint64",
}  # fmt: skip


def kept_dtypes(path: str) -> tuple[list[tuple[str, list[str] | None]], list[Diagnostic]]:
    """Each operator of the file's `et_kernel_metadata`, in order, with the ScalarType
    names of the dtypes its kernels keep (None: every dtype); and the warnings."""
    doc = load_yaml(path)
    root = doc.root
    if not isinstance(root, YamlMap):
        what = "empty" if root is None else f"{describe(root)}, not a mapping"
        raise SpecError(f"the selected operators file is {what}", doc.location)
    metadata = root.get("et_kernel_metadata", YamlMap())
    if not isinstance(metadata, YamlMap):
        raise SpecError(
            "'et_kernel_metadata' must be a mapping from operator names to kernel keys, "
            f"not {describe(metadata)}",
            root.value_location("et_kernel_metadata"),
        )
    warnings: list[Diagnostic] = []
    operators = []
    for op, keys in metadata.items():
        if not isinstance(op, str):
            raise SpecError(f"an operator name must be a string, not {describe(op)}",
                            metadata.key_location(op))  # fmt: skip
        where = metadata.value_location(op)
        if not isinstance(keys, list):
            warnings.append(_iterated(keys, op, where))
        operators.append((op, _dtypes(op, _items(keys, where), where)))
    return operators, warnings


def _iterated(keys: object, op: str, where: Location) -> Diagnostic:
    kind = "string" if isinstance(keys, str) else "mapping" if isinstance(keys, Mapping) else ""
    if not kind:
        raise SpecError(f"the kernel keys of '{op}' must be a list, not {describe(keys)}", where)
    parts = "characters" if kind == "string" else "keys"
    message = f"the kernel keys of '{op}' should be a list; this {kind} is read as its {parts}"
    return Diagnostic(where, message, "warning")


def _items(keys: object, where: Location) -> list[tuple[object, Location]]:
    if isinstance(keys, YamlList):
        return [(key, keys.item_locations[i]) for i, key in enumerate(keys)]
    assert isinstance(keys, str | Mapping)
    return [(key, where) for key in keys]


def _dtypes(op: str, keys: list[tuple[object, Location]], where: Location) -> list[str] | None:
    numbers: set[str] = set()
    for key, at in keys:
        if not isinstance(key, str):
            raise SpecError(f"a kernel key of '{op}' must be a string, not {describe(key)}", at)
        if key == "default" or "/" not in key:
            break
        for tensor in key.split("/")[1].split("|"):
            number = tensor.split(";")[0]
            if number not in SCALAR_TYPE_NAMES:
                raise SpecError(
                    f"kernel key '{key}' of '{op}' has dtype '{number}', which is not a "
                    "ScalarType number (0 to 29)",
                    at,
                )
            numbers.add(number)
    return sorted(SCALAR_TYPE_NAMES[n] for n in numbers) if numbers else None


def op_variants_header(operators: Sequence[tuple[str, Sequence[str] | None]]) -> str:
    """The header's text."""
    checks = [
        f'((std::string_view(operator_name).compare("{op.replace("aten::", "")}") == 0)\n'
        f"        && ({_dtype_condition(dtypes)}))"
        for op, dtypes in operators
    ]
    body = "\n || ".join(checks) or "true"
    return (
        f"#pragma once\n/**\n * Generated by {GENERATOR}\n */\n\n"
        "inline constexpr bool should_include_kernel_dtype(\n"
        "  const char *operator_name,\n"
        "  executorch::aten::ScalarType scalar_type\n"
        f") {{\n  return {body};\n}}\n"
    )


def _dtype_condition(dtypes: Sequence[str] | None) -> str:
    if dtypes is None:
        return "true"
    return " || ".join(f"scalar_type == executorch::aten::ScalarType::{d}" for d in dtypes)
