"""Reading a derivatives file into `DerivativesEntry` entries, in either dialect.

The reader checks what the file alone can tell, against the spec: the
document's shape, each entry's keys, the operator it names, the names its
formula keys list (inputs that can have gradients, outputs that can have
tangents, each once), `output_differentiability` (one value per output),
`dispatch:` tables (autograd keys only). Errors are collected per entry, so
one run reports every bad entry.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Collection, Iterable, Sequence
from typing import Generic

from opgen.diagnostics import Diagnostic, Location, SpecError, did_you_mean
from opgen.spec.derivatives.entry import (
    DEFAULT_KEY,
    DerivativesEntry,
    DerivativesFile,
    Dialect,
    Differentiable,
    F,
    Formula,
    FormulaHeader,
    argument_names,
)
from opgen.spec.derivatives.library_rules import check_library_formula
from opgen.spec.derivatives.operators import LibraryOperators, TorchOperators
from opgen.spec.derivatives.torch_rules import check_torch_formulas
from opgen.spec.keys import BACKEND_COMPONENTS
from opgen.spec.native import NativeFunction
from opgen.spec.syntax import IDENTIFIER
from opgen.spec.yaml.load import YamlDocument, YamlList, YamlMap, load_yaml
from opgen.spec.yaml.located import written

# The keys a `dispatch:` table may name besides "Default" (upstream's AUTOGRAD_KEYS).
AUTOGRAD_KEYS = ("AutogradNestedTensor", *(f"Autograd{c}" for c in BACKEND_COMPONENTS))

_NAME = "name"
_OUTPUT_DIFFERENTIABILITY = "output_differentiability"
_DISPATCH = "dispatch"
_INCLUDE = "include"
# A header name as `#include` takes it, without the quotes: `a/b.h` or `<a/b.h>`.
_HEADER = re.compile(r'<[^\s<>"][^<>"\n]*(?<!\s)>|[^\s<>"][^<>"\n]*(?<!\s)')
_MAX_ERRORS = 20


def load_library_derivatives(
    path: str, functions: Iterable[F], dialect: Dialect = Dialect.LIBRARY
) -> DerivativesFile[F]:
    """A library's derivatives file (or an MLX extension's, `Dialect.MLX`), whose entries
    name operators of `functions`; raises SpecError with every diagnostic found."""
    return _read(path, _LibraryReader(functions, dialect).read, dialect)


def read_derivatives(
    path: str, functions: Iterable[NativeFunction]
) -> tuple[DerivativesEntry[NativeFunction], ...]:
    """Read PyTorch's `path`, whose entries name operators of `functions`, which must be in
    the order of the spec's view grouping (see `TorchOperators`); raises SpecError."""
    return _read(path, _TorchReader(functions).read, Dialect.TORCH).derivatives


def _read(
    path: str, read: Callable[[YamlMap], DerivativesEntry[F]], dialect: Dialect
) -> DerivativesFile[F]:
    doc = load_yaml(path)
    derivatives: list[DerivativesEntry[F]] = []
    headers: list[FormulaHeader] = []
    errors: list[Diagnostic] = []
    seen: dict[int, DerivativesEntry[F]] = {}
    for entry in _entries(doc):
        try:
            if dialect is Dialect.MLX and _INCLUDE in entry:
                raise SpecError(
                    "'include:' entries are for `opgen torch-library`: MLX formulas call "
                    "mlx::core operations and the extension's operators",
                    entry.key_location(_INCLUDE),
                )
            if dialect is Dialect.LIBRARY and _INCLUDE in entry:
                headers.append(_header(entry))
                continue
            d = read(entry)
            first = seen.setdefault(id(d.function), d)
            if first is not d:
                raise SpecError(_second_entry(d, first, dialect), d.location)
            derivatives.append(d)
        except SpecError as e:
            errors.extend(e.diagnostics)
    if errors:
        raise SpecError.of(errors[:_MAX_ERRORS])
    return DerivativesFile(tuple(derivatives), tuple(headers))


def _header(entry: YamlMap) -> FormulaHeader:
    """`- include: header`, a header for the C++ formulas (library dialect)."""
    for key in entry:
        if key != _INCLUDE:
            raise SpecError(
                f"an 'include' entry names a header and nothing else; '{key}' belongs in "
                "an entry of its own",
                entry.key_location(key),
            )
    name = entry[_INCLUDE]
    if not isinstance(name, str) or not _HEADER.fullmatch(name):
        raise SpecError(
            "'include' names a C++ header as #include takes it: 'mylib/helpers.h', or "
            "'<mylib/helpers.h>' for the system search path",
            entry.value_location(_INCLUDE),
        )
    return FormulaHeader(name, entry.value_location(_INCLUDE))


def _second_entry(d: DerivativesEntry[F], first: DerivativesEntry[F], dialect: Dialect) -> str:
    f = d.function
    if dialect is not Dialect.TORCH:
        return f"a second derivatives entry for '{f.namespace}::{f.func.name}'"
    return (
        f"a second derivatives entry for '{f.func.name}' (the first is on line "
        f"{first.location.line})"
    )


def _entries(doc: YamlDocument) -> list[YamlMap]:
    if not isinstance(doc.root, YamlList):
        raise SpecError("a derivatives file must be a list of entries", doc.location)
    errors = [
        Diagnostic(doc.root.item_locations[i], "a derivatives entry must be a mapping")
        for i, entry in enumerate(doc.root)
        if not isinstance(entry, YamlMap)
    ]
    if errors:
        raise SpecError.of(errors[:_MAX_ERRORS])
    return [e for e in doc.root if isinstance(e, YamlMap)]


def _name(entry: YamlMap) -> tuple[str, Location]:
    """The `name:` of an entry, and where it is written."""
    if _NAME not in entry:
        raise SpecError("a derivatives entry needs 'name:', the operator's schema", entry.location)
    name = entry[_NAME]
    at = entry.value_location(_NAME)
    if not isinstance(name, str):
        raise SpecError("'name:' must be the operator's schema, a string", at)
    return name, at


class _LibraryReader(Generic[F]):
    """Reads the entries of a library's (or an MLX extension's) file, one at a time."""

    def __init__(self, functions: Iterable[F], dialect: Dialect) -> None:
        self.dialect = dialect
        self._operators = LibraryOperators(functions, dialect)

    def read(self, entry: YamlMap) -> DerivativesEntry[F]:
        name, at = _name(entry)
        f = self._operators.resolve(name, at)
        covered: set[str] = set()
        formulas = []
        mlx = self.dialect is Dialect.MLX
        for key in entry:
            if key == _NAME or (key == _OUTPUT_DIFFERENTIABILITY and not mlx):
                continue
            formula = mlx_formula(entry, key) if mlx else _formula(entry, key, (), self.dialect)
            check_library_formula(formula, f, covered)
            formulas.append(formula)
        if not formulas:
            raise SpecError(f"the derivatives entry for '{f.func.name}' has no formula", at)
        given = None if mlx else _output_differentiability(entry, f, self.dialect, False)
        values = (True,) * len(f.func.returns) if given is None else given[0]
        return DerivativesEntry(
            f, {DEFAULT_KEY: tuple(formulas)}, values, at, str(f.func.name.name)
        )


class _TorchReader:
    """Reads the entries of PyTorch's derivatives.yaml, one at a time."""

    def __init__(self, functions: Iterable[NativeFunction]) -> None:
        self._operators = TorchOperators(functions)

    def read(self, entry: YamlMap) -> DerivativesEntry[NativeFunction]:
        name, at = _name(entry)
        f, base = self._operators.resolve(name, at)
        _check_argument_names(f, at)
        formulas = self._formula_tables(entry, f)
        given = _output_differentiability(entry, f, Dialect.TORCH, _DISPATCH in entry)
        values, conditions = given or ((True,) * len(f.func.returns), None)
        return DerivativesEntry(
            function=f,
            formulas_by_key=formulas,
            output_differentiability=values,
            location=at,
            name=base,
            output_differentiability_conditions=conditions,
            output_differentiability_location=(
                None if given is None else entry.value_location(_OUTPUT_DIFFERENTIABILITY)
            ),
        )

    def _formula_tables(self, entry: YamlMap, f: Differentiable) -> dict[str, tuple[Formula, ...]]:
        keys = [k for k in entry if k not in (_NAME, _OUTPUT_DIFFERENTIABILITY, _DISPATCH)]
        if _DISPATCH not in entry:
            return {DEFAULT_KEY: self._table(entry, keys, f)}
        if keys:
            raise SpecError(
                "formulas beside 'dispatch:' are ignored; move them into the table, under "
                "'Default:'",
                entry.key_location(keys[0]),
            )
        table = entry[_DISPATCH]
        if not isinstance(table, YamlMap):
            raise SpecError(
                "'dispatch:' must map autograd dispatch keys ('Default', 'AutogradCUDA', ...) "
                "to formulas",
                entry.value_location(_DISPATCH),
            )
        tables: dict[str, tuple[Formula, ...]] = {}
        for key, formulas in table.items():
            _check_autograd_key(key, table.key_location(key))
            if not isinstance(formulas, YamlMap):
                raise SpecError(
                    f"the formulas for '{key}' must be a mapping, one key per input or output",
                    table.value_location(key),
                )
            tables[str(key)] = self._table(formulas, list(formulas), f)
        return tables

    def _table(
        self, mapping: YamlMap, keys: Sequence[object], f: Differentiable
    ) -> tuple[Formula, ...]:
        arguments = argument_names(f)
        formulas = tuple(_formula(mapping, key, arguments, Dialect.TORCH) for key in keys)
        check_torch_formulas(formulas, f, arguments)
        return formulas


def _formula(
    mapping: YamlMap, key: object, arguments: Collection[str], dialect: Dialect
) -> Formula:
    key_at = mapping.key_location(key)
    if not isinstance(key, str):
        raise SpecError(
            "a formula's key must name inputs or outputs ('self', 'self, other', 'result')",
            key_at,
        )
    names, offsets = _split_names(key, key_at)
    if not isinstance(mapping[key], str):
        raise SpecError("a formula must be a string", mapping.value_location(key))
    # Upstream tells the two kinds apart by the first name alone.
    forward = dialect is Dialect.TORCH and names[0] not in arguments
    return Formula(key, names, written(mapping, key), key_at, offsets, forward=forward)


def mlx_formula(mapping: YamlMap, key: object) -> Formula:
    """One formula of an MLX operator, in a derivatives entry or a spec's `grad:` mapping:
    the gradient of one array input, a C++ expression."""
    key_at = mapping.key_location(key)
    if isinstance(key, str) and "," in key:
        raise SpecError(
            f"'{key}': a formula gives the gradient of one input; write one key per input", key_at
        )
    if not isinstance(key, str) or not IDENTIFIER.match(key):
        raise SpecError("a formula's key names the array input it is for", key_at)
    value = mapping[key]
    if not isinstance(value, str) or not value.strip():
        raise SpecError(
            f"the gradient of '{key}' must be a C++ expression, a non-empty string",
            mapping.value_location(key),
        )
    return Formula(key, (key,), written(mapping, key), key_at, (0,))


def mlx_formulas(mapping: YamlMap) -> tuple[Formula, ...]:
    """The formulas of an MLX spec entry's `grad:` mapping; SpecError with every bad one."""
    formulas: list[Formula] = []
    errors: list[Diagnostic] = []
    for key in mapping:
        try:
            formulas.append(mlx_formula(mapping, key))
        except SpecError as e:
            errors.extend(e.diagnostics)
    if errors:
        raise SpecError.of(errors)
    return tuple(formulas)


def _split_names(key: str, at: Location) -> tuple[tuple[str, ...], tuple[int, ...]]:
    names: list[str] = []
    offsets: list[int] = []
    start = 0
    for piece in key.split(","):
        name = piece.strip()
        offset = start + len(piece) - len(piece.lstrip())
        if not name:
            raise SpecError("an empty name in a formula's key", at.shifted(offset))
        names.append(name)
        offsets.append(offset)
        start += len(piece) + 1
    return tuple(names), tuple(offsets)


def _check_argument_names(f: Differentiable, at: Location) -> None:
    for name in ("grad_input_mask", "result"):
        if any(a.name == name for a in f.func.arguments.flat_all):
            raise SpecError(
                f"'{f.func.name}' has an argument named '{name}', a name formulas reserve "
                "for themselves; rename the argument in the spec",
                at,
            )


def _check_autograd_key(key: object, at: Location) -> None:
    if key == DEFAULT_KEY or key in AUTOGRAD_KEYS:
        return
    hint = did_you_mean(str(key), [DEFAULT_KEY, *AUTOGRAD_KEYS])
    raise SpecError(
        f"'{key}' is not an autograd dispatch key: a 'dispatch:' table takes 'Default', "
        f"'AutogradNestedTensor' and 'Autograd<backend>' keys{hint}",
        at,
    )


def _output_differentiability(
    entry: YamlMap, f: Differentiable, dialect: Dialect, has_dispatch: bool
) -> tuple[tuple[bool, ...], tuple[str, ...] | None] | None:
    """The values of `output_differentiability:`, and its condition if it has one; None
    if the entry does not give it."""
    count = len(f.func.returns)
    if _OUTPUT_DIFFERENTIABILITY not in entry:
        return None
    value = entry[_OUTPUT_DIFFERENTIABILITY]
    at = entry.value_location(_OUTPUT_DIFFERENTIABILITY)
    if dialect is Dialect.LIBRARY:
        if (
            not isinstance(value, list)
            or len(value) != count
            or not all(isinstance(v, bool) for v in value)
        ):
            raise SpecError(
                f"'output_differentiability' must be a list of {count} True/False values, "
                "one per output",
                at,
            )
        return tuple(value), None
    if not isinstance(value, YamlList):
        raise SpecError(
            "'output_differentiability' must be a list: True or False per output, or a "
            "condition (a C++ expression) for a single output",
            at,
        )
    for i, item in enumerate(value):
        if not isinstance(item, bool | str):
            raise SpecError(
                "an output is differentiable (True), not (False), or if a condition holds "
                "(a string)",
                value.item_locations[i],
            )
    if not value and not has_dispatch:
        return None  # upstream reads an empty list as "not given"
    conditions = [v for v in value if isinstance(v, str)]
    if conditions and len(value) != 1:
        raise SpecError(
            "a condition in 'output_differentiability' is supported for operators with one "
            f"output only, and '{f.func.name}' has {count}",
            at,
        )
    if len(value) != count:
        raise SpecError(
            f"'output_differentiability' has {len(value)} value(s) and '{f.func.name}' has "
            f"{count} output(s)",
            at,
        )
    if conditions:
        return (True,), tuple(conditions)
    return tuple(bool(v) for v in value), None
