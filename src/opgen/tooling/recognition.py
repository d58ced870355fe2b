"""Telling which dialect of the spec language a file is written in, when reading it by
another dialect's rules failed (`opgen.tooling.dialects.read_as`; imported only then).

`recognise` looks at the file's entries for what only one dialect has:

- MLX: library settings (`- namespace: mlxlib`), entries written `name:` (MLX's own
  dialect), or a key only MLX specs have (`grad:`, `shape:`, `python_name:`, ...);
- a library: a key only library specs have (`fake:`, `python_dispatch:`); read as
  MLX's, a kernel for a dispatch key MLX has no kernels for (`Meta`,
  `CompositeImplicitAutograd`, ...) in a spec with namespaced operators; read as
  PyTorch's, also `doc:`, or every operator in a namespace of one level other than
  `aten` (`toy::lerp3`), which MLX's operators have too;
- PyTorch's: a key that drives ATen's own code generation (`structured:`, `variants:`,
  ...), which read as another dialect must be in a spec none of whose operators has a
  namespace of its own.

A file that shows something of the dialect it was read as keeps its own errors.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING

from opgen.diagnostics import Location, SpecError
from opgen.frozen import frozen

if TYPE_CHECKING:
    from opgen.spec.yaml.load import YamlMap
    from opgen.tooling.dialects import Dialect

_NAMES: dict[Dialect, str] = {
    "pytorch": "a PyTorch spec",
    "library": "a library spec",
    "mlx": "an MLX spec",
}


def flagged(command: str, dialect: Dialect) -> str:
    """The command line that reads `dialect`: `opgen dump --library`."""
    return f"opgen {command}" + ("" if dialect == "pytorch" else f" --{dialect}")


def misread(error: SpecError, path: str, dialect: Dialect, command: str) -> SpecError | None:
    """One error naming the flag that reads the spec at `path`, if reading it as `dialect`
    failed with `error` and its entries show another dialect; else None."""
    # Errors in another file (the tags, the derivatives) are that file's, whatever the spec.
    if any(d.location is not None and d.location.file != path for d in error.diagnostics):
        return None
    evidence = recognise(path, dialect)
    if evidence is None:
        return None
    if evidence.dialect == "pytorch":
        advice = f"read it with `{flagged(command, 'pytorch')}`, without --{dialect}"
    else:
        advice = f"read it with `{flagged(command, evidence.dialect)}`"
    return SpecError(
        f"this is {_NAMES[evidence.dialect]} ({evidence.reason}); {advice}", evidence.location
    )


@frozen
class Evidence:
    """What shows a file's dialect, and where."""

    dialect: Dialect
    reason: str  # why: "operators in namespace 'toy'"
    location: Location


def recognise(path: str, reading: Dialect) -> Evidence | None:
    """The dialect other than `reading` that the spec at `path` is written in, if its
    entries show one and nothing of `reading`'s; None for a file that is not a YAML list
    of entries, or that shows none."""
    from opgen.spec.yaml.load import YamlMap, load_yaml

    try:
        doc = load_yaml(path)
    except SpecError:  # not YAML: the reader's own error says so
        return None
    if not isinstance(doc.root, list):
        return None
    entries = [entry for entry in doc.root if isinstance(entry, YamlMap)]
    mlx = _mlx(entries)
    if reading == "pytorch":
        if _aten_key(entries) is not None:
            return None
        return mlx or _namespaced(entries) or _library(entries, reading)
    library = _library(entries, reading)
    if reading == "library":
        return None if library else mlx or _pytorch(entries)
    return None if mlx else library or _pytorch(entries)


def _mlx(entries: list[YamlMap]) -> Evidence | None:
    from opgen.spec.mlx.mlx_dialect import MLX_KEYS
    from opgen.spec.mlx.operators import SHARED_KEYS
    from opgen.spec.mlx.spec_language import BOUND_SPEC_KEYS

    # Keys of MLX entries that no other dialect has (`doc:` and `dispatch:` are shared).
    own = {*MLX_KEYS, *SHARED_KEYS, *BOUND_SPEC_KEYS} - {"name", "doc", "dispatch", "variants"}
    for entry in entries:
        if "func" not in entry and "name" not in entry:
            for key in ("namespace", "module"):
                if key in entry:
                    reason = f"it opens with the library settings '{key}:'"
                    return Evidence("mlx", reason, entry.key_location(key))
        if "name" in entry and "func" not in entry:
            reason = "its entries are written 'name:', in MLX's own dialect"
            return Evidence("mlx", reason, entry.key_location("name"))
        found = _first(entry, own)
        if found is not None:
            reason = f"'{found}:' is a key of MLX specs"
            return Evidence("mlx", reason, entry.key_location(found))
    return None


def _namespaced(entries: list[YamlMap]) -> Evidence | None:
    """Every operator in a namespace of one level other than `aten`: an extension's."""
    import re

    operators = [entry for entry in entries if isinstance(entry.get("func"), str)]
    namespaces = [_namespace(entry) for entry in operators]
    if not namespaces or not all(
        re.fullmatch(r"[A-Za-z_]\w*", namespace) and namespace != "aten" for namespace in namespaces
    ):
        return None
    at = operators[0].value_location("func").shifted(0, len(namespaces[0]))
    return Evidence("library", f"operators in namespace '{namespaces[0]}'", at)


def _library(entries: list[YamlMap], reading: Dialect) -> Evidence | None:
    """A key only library specs have (read as PyTorch's, `doc:` too, which MLX's have);
    read as MLX's, a kernel for a dispatch key MLX has none for."""
    from opgen.spec.library import EXTENSION_KEYS, LIBRARY_DISPATCH_KEYS
    from opgen.spec.yaml.load import YamlMap

    own = EXTENSION_KEYS if reading == "pytorch" else EXTENSION_KEYS - {"doc"}
    # (`CPU` and `CUDA` may be MLX's `cpu` and `gpu` misspelt.)
    kernels = {str(key) for key in LIBRARY_DISPATCH_KEYS} - {"CPU", "CUDA"}
    namespaced = reading == "mlx" and any(_namespace(entry) for entry in entries)
    for entry in entries:
        found = _first(entry, own)
        if found is not None:
            reason = f"'{found}:' is a key of library specs"
            return Evidence("library", reason, entry.key_location(found))
        dispatch = entry.get("dispatch")
        if namespaced and isinstance(dispatch, YamlMap):
            key = _first(dispatch, kernels)
            if key is not None:
                reason = f"'{key}' is a dispatch key of library specs"
                return Evidence("library", reason, dispatch.key_location(key))
    return None


def _pytorch(entries: list[YamlMap]) -> Evidence | None:
    if any(_namespace(entry) not in ("", "aten") for entry in entries):
        return None
    return _aten_key(entries)


def _aten_key(entries: list[YamlMap]) -> Evidence | None:
    """The first key that drives ATen's own code generation, which only PyTorch's spec has."""
    from opgen.spec.entry import KNOWN_KEYS
    from opgen.spec.library import LIBRARY_KEYS

    for entry in entries:
        key = _first(entry, KNOWN_KEYS - LIBRARY_KEYS)
        if key is not None:
            reason = f"'{key}:' drives ATen's own code generation"
            return Evidence("pytorch", reason, entry.key_location(key))
    return None


def _first(entry: YamlMap, keys: Iterable[object]) -> str | None:
    wanted = frozenset(keys)
    return next((str(key) for key in entry if key in wanted), None)


def _namespace(entry: YamlMap) -> str:
    """The namespace of the entry's operator, as written ('' without one)."""
    func = entry.get("func")
    if not isinstance(func, str):
        return ""
    return func.partition("(")[0].rpartition("::")[0].strip()
