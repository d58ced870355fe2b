"""The operator sets `opgen coverage` compares, from the kinds of file that list them.

- A spec (`native_functions.yaml`): a YAML list of entries. Its operators are its
  functions, derived ones included (they are registered operators a backend may
  implement), each with its tags (from the entry and the implied ones: `core`,
  `pointwise`, `inplace`, `out`, ...).
- With `--library`, a spec is a custom-op library spec (its operators, in its
  namespace, with the tags they are written with); with `--mlx`, an MLX extension
  spec (its operators and its bound functions, in its namespace, read as `opgen mlx`
  reads it). A spec read without the flag its dialect needs is told as such
  (`opgen.tooling.dialects`).
- A backend YAML (`backend:`, `supported:`, ...): a YAML mapping, read with
  every rule `opgen backend` applies against a spec. Its operators are the ones
  it has kernels for: `supported`, `autograd` and `full_codegen`.
- A lowering spec (`opgen aten-mlx`'s: a YAML list whose first entry is `op:`,
  `left_out:` or `module:`), one or several files read together against a spec,
  as `opgen aten-mlx` reads them (its C++ is not checked). Its operators are the
  overloads it lowers, in-place and out= variants included; the ones it leaves
  out are listed with their reasons.
- Anything else (a file not ending in .yaml or .yml): operator names, one per
  line (`add.Tensor`, `aten::relu`; `#` starts a comment).

Names are `name.overload`, qualified with their namespace outside aten. Specs
are read for comparison (`LoadOptions(for_comparison=True)`), so that older
specs load, except a spec a backend YAML is read against, which needs the
operator groups that only a full load builds.
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from typing import Literal

from opgen.diagnostics import Diagnostic, Location, SpecError
from opgen.frozen import frozen, replace
from opgen.spec.model import LoadOptions, Spec, load_spec
from opgen.spec.schema import OperatorName
from opgen.spec.syntax import SchemaError
from opgen.spec.yaml.load import read_text
from opgen.tooling.dialects import Dialect, read_as

Kind = Literal["spec", "library", "mlx", "backend", "names", "lowering"]
# The keys a lowering spec's entries open with (a spec's open with `func:`).
LOWERING_KEYS = ("op", "left_out", "module")


@frozen
class LeftOutOperators:
    """Operators a lowering spec leaves out, and why."""

    op: str  # as written: an overload or a base name
    reason: str
    overloads: tuple[str, ...]  # the overloads it leaves out


@frozen
class OperatorSet:
    path: str
    kind: Kind
    names: tuple[str, ...]  # in file order, without repeats
    tags: Mapping[str, frozenset[str]]  # each operator's tags (specs only)
    tag_order: tuple[str, ...]  # the tags file's order (specs only)
    locations: Mapping[str, Location]  # where each name is written
    left_out: tuple[LeftOutOperators, ...] = ()  # what a lowering spec leaves out


def kind_of(path: str, dialect: Dialect = "pytorch") -> Kind:
    """The kind of file `path` is, from its name and, for YAML, its top level; a YAML list
    is a spec of `dialect`, or, for PyTorch's, a lowering spec if its first key says so."""
    if not path.endswith((".yaml", ".yml")):
        return "names"
    for line in read_text(path).splitlines():  # the first line of content says which
        content = line.partition("#")[0].rstrip()
        if not content:
            continue
        if not content.startswith("-"):
            return "backend"
        if dialect != "pytorch":
            return dialect
        key = content[1:].strip().partition(":")[0].strip()
        return "lowering" if key in LOWERING_KEYS else "spec"
    raise SpecError(
        "the file is empty; expected a spec (a list of '- func:' entries) or a backend YAML "
        "(a mapping with 'backend:'); a list of operator names is a file not ending in .yaml",
        Location(path, 1),
    )


def read_spec(path: str, tags: str | None, full: bool) -> Spec:
    """A spec; `full`: with every check and its groups (a backend YAML is read against it)."""
    tags = _tags(path, tags)
    options = None if full else LoadOptions(for_comparison=True)
    return read_as("pytorch", path, "coverage", lambda: load_spec(path, tags, options))


def library_operators(path: str, tags: str | None) -> OperatorSet:
    """A library spec's operators, read for comparison."""
    tags = _tags(path, tags)
    options = LoadOptions(library=True, for_comparison=True)
    spec = read_as("library", path, "coverage", lambda: load_spec(path, tags, options))
    return replace(spec_operators(path, spec), kind="library")


def mlx_operators(path: str) -> OperatorSet:
    """An MLX spec's operators and bound functions, read as `opgen mlx` reads it: a
    function of a submodule by its namespace (`mlx::core::linalg::norm`), the methods of
    `array` not at all (they are the functions' variants)."""
    from opgen.spec.mlx.model import BoundAs
    from opgen.spec.mlx.reader import load_mlx_library

    library = read_as("mlx", path, "coverage", lambda: load_mlx_library(path))
    locations = {f"{library.namespace}::{op.func.name}": op.location for op in library.operators}
    for function in library.bound:
        if function.bound_as is BoundAs.FUNCTION:
            name = function.qualified_name.replace(".", "::")
            locations.setdefault(f"{library.namespace}::{name}", function.location)
    return OperatorSet(path, "mlx", tuple(locations), {}, (), locations)


def _tags(path: str, tags: str | None) -> str | None:
    """`tags`, else the tags.yaml beside `path`, if there is one."""
    if tags is None:
        beside = os.path.join(os.path.dirname(path), "tags.yaml")
        tags = beside if os.path.isfile(beside) else None
    return tags


def spec_operators(path: str, spec: Spec) -> OperatorSet:
    names: dict[str, frozenset[str]] = {}
    locations: dict[str, Location] = {}
    for f in spec.functions:
        name = qualified(f.namespace, str(f.func.name))
        names[name] = f.tags
        locations[name] = f.loc
    return OperatorSet(path, "spec", tuple(names), names, tuple(spec.tags), locations)


def backend_operators(path: str, spec: Spec) -> OperatorSet:
    from opgen.spec.external_backend import load_external_backend

    backend = load_external_backend(path, spec)
    locations: dict[str, Location] = {}
    for listed in (*backend.supported, *backend.autograd, *backend.full_codegen):
        locations.setdefault(qualified("aten", str(listed.name)), listed.location)
    return OperatorSet(path, "backend", tuple(locations), {}, (), locations)


def lowering_operators(paths: Sequence[str], spec: Spec) -> OperatorSet:
    """The overloads the lowering spec in `paths` lowers and leaves out, read against
    `spec` (read in full: the reader needs its groups)."""
    from opgen.spec.lowering.reader import read_lowering

    lowering = read_lowering(paths, spec, mlx=None)
    locations = {
        qualified(lowered.function.namespace, str(lowered.function.func.name)): lowered.entry
        for lowered in lowering.lowerings
    }
    left_out = tuple(
        LeftOutOperators(
            out.op,
            out.reason,
            tuple(qualified(f.namespace, str(f.func.name)) for f in out.functions),
        )
        for out in lowering.left_out
    )
    return OperatorSet(
        lowering_path(paths), "lowering", tuple(locations), {}, (), locations, left_out
    )


def lowering_path(paths: Sequence[str]) -> str:
    """How reports name a lowering spec: its file, or how many files and where."""
    if len(paths) == 1:
        return paths[0]
    return f"{len(paths)} lowering files in {os.path.commonpath(paths) or '.'}"


def names_operators(path: str) -> OperatorSet:
    """Operator names, one per line; a located error for a line that is not one."""
    locations: dict[str, Location] = {}
    errors: list[Diagnostic] = []
    for number, line in enumerate(read_text(path).splitlines(), start=1):
        text = line.partition("#")[0].strip()
        if not text:
            continue
        col = line.index(text) + 1
        namespace, _, name = text.rpartition("::")
        try:
            OperatorName.parse(name)
        except SchemaError as error:
            at = col + len(text) - len(name) + error.offset
            errors.append(Diagnostic(Location(path, number, at, error.length), error.message))
            continue
        locations.setdefault(
            qualified(namespace or "aten", name), Location(path, number, col, len(text))
        )
    if errors:
        raise SpecError.of(errors)
    return OperatorSet(path, "names", tuple(locations), {}, (), locations)


def qualified(namespace: str, name: str) -> str:
    return name if namespace == "aten" else f"{namespace}::{name}"
