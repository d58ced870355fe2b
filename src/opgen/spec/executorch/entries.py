"""One entry of a kernel YAML, as the `native_functions.yaml` entry it stands for.

An entry is either `op: add.out`, an ATen operator whose schema the ATen spec
gives, or `func: my_ops::foo.out(...) -> ...`, an operator of its own; beside
it are ExecuTorch's keys (`kernels`, `type_alias`, `dim_order_alias`) and any
key of `native_functions.yaml`. Upstream's codegen (`translate_native_yaml`)
rewrites the file as a `native_functions.yaml`, with each `op:` replaced by
`func:` and the schema, and reads that; `native_entry` gives the same entry
without the rewrite: a `YamlMap` of the entry's own keys, whose `func:` is
located at the `op:` value for an `op:` entry, so that
`opgen.spec.entry.read_entry` reads it and every error points into the file as
written. Only the schema comes from the ATen spec: not its tags, dispatch table
or variants (a random operator such as `rand.out` must be tagged
`nondeterministic_seeded` again).
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping

from opgen.diagnostics import Diagnostic, SpecError, did_you_mean
from opgen.spec.entry import KNOWN_KEYS
from opgen.spec.entry_fields import describe
from opgen.spec.schema import FunctionSchema
from opgen.spec.yaml.load import YamlMap

# ExecuTorch's keys, which upstream strips before torchgen reads an entry.
ET_FIELDS = ("kernels", "type_alias", "dim_order_alias")
ENTRY_KEYS = frozenset({*KNOWN_KEYS, "op", *ET_FIELDS})


def native_entry(
    entry: YamlMap, schemas: Mapping[str, FunctionSchema], *, custom_ops: bool
) -> YamlMap:
    """The `native_functions.yaml` entry `entry` stands for; SpecError with its problems.

    `schemas`: the ATen spec's operators by namespaced name (`aten::add.out`).
    `custom_ops`: a custom-ops YAML, which upstream reads without the ATen spec, so
    that it has `func:` entries only.
    """
    errors = list(_unknown_keys(entry))
    func: str | None = None
    if "op" in entry and "func" in entry:
        errors.append(
            Diagnostic(
                entry.key_location("op"),
                "an entry has 'op:' (an ATen operator, whose schema the ATen spec gives) or "
                "'func:' (a schema), not both",
            )
        )
    elif "op" in entry and custom_ops:
        errors.append(
            Diagnostic(
                entry.key_location("op"),
                "a custom-ops YAML is read without the ATen spec, so its entries give "
                "their schema with 'func:', not an operator name with 'op:'",
            )
        )
    elif "op" in entry:
        try:
            func = _schema_of(entry, schemas)
        except SpecError as error:
            errors.extend(error.diagnostics)
    elif "func" not in entry:
        errors.append(
            Diagnostic(
                entry.location,
                "an entry needs 'op:', the name of an ATen operator (such as 'add.out'), or "
                "'func:', the schema of an operator of its own (such as "
                "'my_ops::foo.out(Tensor x, *, Tensor(a!) out) -> Tensor(a!)')",
            )
        )
    if errors:
        raise SpecError.of(errors)
    return _as_native(entry, func, sort_dispatch=not custom_ops)


def _unknown_keys(entry: YamlMap) -> Iterator[Diagnostic]:
    for key in entry:
        if key not in ENTRY_KEYS:
            hint = did_you_mean(str(key), ENTRY_KEYS)
            yield Diagnostic(entry.key_location(key), f"unknown key '{key}'{hint}")


def _schema_of(entry: YamlMap, schemas: Mapping[str, FunctionSchema]) -> str:
    """The schema of the ATen operator `op:` names, as text."""
    name = entry["op"]
    at = entry.value_location("op")
    if not isinstance(name, str):
        raise SpecError(
            f"'op:' must be an operator name such as 'add.out', not {describe(name)}", at
        )
    if "(" in name:
        raise SpecError(
            f"'op:' is the name of an ATen operator, without its schema: "
            f"'op: {name.partition('(')[0].strip()}' (an operator of your own has 'func:' "
            "and its schema)",
            at,
        )
    scoped = name if "::" in name else f"aten::{name}"
    func = schemas.get(scoped)
    if func is None:
        import difflib  # only for an error

        close = difflib.get_close_matches(scoped, schemas, n=1)
        hint = f"; did you mean '{close[0].removeprefix('aten::')}'?" if close else ""
        raise SpecError(
            f"'{name}' is not an operator of the ATen spec{hint} (an operator of your own "
            "has 'func:' and its schema)",
            at,
        )
    # Without its namespace, as upstream writes it: the entry's operator is in aten.
    return str(func)


def _as_native(entry: YamlMap, func: str | None, *, sort_dispatch: bool) -> YamlMap:
    """The entry without ExecuTorch's keys; with `func`, replacing `op:`, if given.

    The new mapping shares the entry's positions, so every key keeps its location
    (`func` the `op:` value's). `sort_dispatch`: order the `dispatch:` table by key,
    as upstream's rewrite with `yaml.dump` does (the order decides which kernel a
    file without `kernels:` keeps; `ETKernelIndex.from_backend_indices`).
    """
    native = _like(entry)
    for key, value in entry.items():
        if key == "op" or key in ET_FIELDS:
            continue
        if key == "dispatch" and sort_dispatch and isinstance(value, YamlMap):
            value = _sorted(value)
        native[key] = value
    if func is not None:
        native["func"] = func
        native.entry_at["func"] = entry.entry_at["op"]
    return native


def _sorted(mapping: YamlMap) -> YamlMap:
    """The mapping with its keys in order, if they are all strings (as `yaml.dump` sorts)."""
    if not all(isinstance(key, str) for key in mapping):
        return mapping
    ordered = _like(mapping)
    for key in sorted(mapping, key=str):
        ordered[key] = mapping[key]
    return ordered


def _like(mapping: YamlMap) -> YamlMap:
    """An empty mapping at the place of `mapping`, reading positions as it does."""
    like = YamlMap()
    like.line = mapping.line
    like.positions = mapping.positions
    like.at = mapping.at
    like.entry_at = dict(mapping.entry_at)
    return like
