"""Reading a kernel YAML against an ATen spec: `load_executorch_yaml`.

Upstream's codegen (`executorch.codegen.gen.parse_yaml_files`) reads a
functions YAML by rewriting it as a `native_functions.yaml` (each `op:`
replaced by its schema from the ATen spec) and reading that with torchgen,
and a custom-ops YAML as it is. Here each entry becomes the native entry it
stands for (`entries.native_entry`) and is read by `opgen.spec.entry.read_entry`,
the reader of a spec's entries, so every rule of the spec language holds and
every error points into the file as written; its kernels are read beside it
(`kernels.read_kernels`), then the rules between entries are checked
(`across_entries`). As upstream, a file in which no entry has `kernels:`
keeps the kernels of its `dispatch:` tables (and the implied
CompositeImplicitAutograd kernel of an entry without one), each under the
default key; where some entry has `kernels:`, `dispatch:` tables give none,
which is a warning.

An empty file has no operators, as upstream reads it. Errors are collected over
the file, up to `MAX_ERRORS`.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from opgen.diagnostics import Diagnostic, SpecError
from opgen.frozen import frozen
from opgen.releases import NEWEST, Release
from opgen.spec.backend import BackendIndex, BackendMetadata
from opgen.spec.dispatch_table import Dispatch
from opgen.spec.entry import EntryOptions, read_entry
from opgen.spec.executorch.across_entries import check_across_entries
from opgen.spec.executorch.entries import native_entry
from opgen.spec.executorch.kernels import Kernels, read_kernels
from opgen.spec.executorch.model import ETKernelIndex, ETParsedYaml
from opgen.spec.keys import DispatchKey
from opgen.spec.model import Spec
from opgen.spec.native import NativeFunction
from opgen.spec.schema import FunctionSchema, OperatorName
from opgen.spec.yaml.load import YamlDocument, YamlList, YamlMap, load_yaml

MAX_ERRORS = 20


@frozen
class ETReadOptions:
    # A custom-ops YAML (upstream's `--custom-ops-yaml-path`): `func:` entries only, and
    # `arg_meta` arguments in the order written; else a functions YAML
    # (`--functions-yaml-path`), whose `arg_meta` arguments upstream orders by name.
    custom_ops: bool = False
    release: Release = NEWEST  # the torch release whose rules entries are read by


def load_executorch_yaml(
    path: str, spec: Spec, options: ETReadOptions | None = None
) -> ETParsedYaml:
    """Read and check the kernel YAML `path` against the ATen spec `spec`; raises
    SpecError with every problem found."""
    return read_executorch_yaml(load_yaml(path), spec, options)


def read_executorch_yaml(
    doc: YamlDocument,
    spec: Spec,
    options: ETReadOptions | None = None,
    *,
    schemas: Mapping[str, FunctionSchema] | None = None,
) -> ETParsedYaml:
    """Check a kernel YAML already read against `spec`; `schemas`, if given, are the
    ATen operators' schemas by namespaced name (`aten::add.out`) instead of `spec`'s,
    which then only gives the tags."""
    options = options or ETReadOptions()
    entries = _entries(doc)
    if schemas is None:
        schemas = {f"{f.namespace}::{f.func.name}": f.func for f in spec.functions}
    entry_options = EntryOptions(valid_tags=frozenset(spec.tags), release=options.release)
    functions: list[NativeFunction] = []
    dispatches: list[Dispatch] = []
    kernels_of: list[Kernels] = []
    from_aten: set[OperatorName] = set()
    errors: list[Diagnostic] = []
    for entry in entries:
        read = _read(entry, schemas, entry_options, options.custom_ops, errors)
        func = None if read is None else read[0].func
        kernels, problems = read_kernels(entry, func, sort_arg_meta=not options.custom_ops)
        errors.extend(problems)
        if read is not None:
            functions.append(read[0])
            dispatches.append(read[1])
            kernels_of.append(kernels)
            if "op" in entry:
                from_aten.add(read[0].func.name)
        if len(errors) >= MAX_ERRORS:
            break
    if not errors:
        errors = check_across_entries(functions)
    if errors:
        raise SpecError.of(_limited(errors))
    backend_indices = _backend_indices(functions, dispatches)
    warnings: list[Diagnostic] = []
    if any("kernels" in entry for entry in entries):
        pairs = zip(functions, kernels_of, strict=True)
        index = ETKernelIndex({f.func.name: kernels for f, kernels in pairs if kernels})
        warnings = _ignored_dispatch_tables(entries)
    else:
        index = ETKernelIndex.from_backend_indices(backend_indices)
    return ETParsedYaml(
        path=doc.path,
        native_functions=tuple(functions),
        kernel_index=index,
        backend_indices=backend_indices,
        from_aten=frozenset(from_aten),
        custom_ops=options.custom_ops,
        location=doc.location,
        warnings=tuple(warnings),
    )


def _read(
    entry: YamlMap,
    schemas: Mapping[str, FunctionSchema],
    options: EntryOptions,
    custom_ops: bool,
    errors: list[Diagnostic],
) -> tuple[NativeFunction, Dispatch] | None:
    """The entry's operator and dispatch table; None after an error (added to `errors`)."""
    try:
        return read_entry(native_entry(entry, schemas, custom_ops=custom_ops), options)
    except SpecError as error:
        errors.extend(error.diagnostics)
        return None


def _entries(doc: YamlDocument) -> list[YamlMap]:
    root = doc.root
    if root is None:
        return []
    if not isinstance(root, YamlList):
        raise SpecError(
            "a kernel YAML is a list of entries ('- op: add.out' or '- func: ...'), not "
            + ("a mapping" if isinstance(root, dict) else "a scalar"),
            doc.location,
        )
    errors = [
        Diagnostic(
            root.item_locations[i],
            "an entry must be a mapping ('op: add.out' or 'func: ...', with its 'kernels:')",
        )
        for i, entry in enumerate(root)
        if not isinstance(entry, YamlMap)
    ]
    if errors:
        raise SpecError.of(_limited(errors))
    return [entry for entry in root if isinstance(entry, YamlMap)]


def _backend_indices(
    functions: Sequence[NativeFunction], dispatches: Sequence[Dispatch]
) -> tuple[BackendIndex, ...]:
    """The dispatch tables per key, keys in the order they first appear (as torchgen's)."""
    tables: dict[DispatchKey, dict[OperatorName, BackendMetadata]] = {}
    for f, dispatch in zip(functions, dispatches, strict=True):
        for key, metadata in dispatch.items():
            tables.setdefault(key, {})[f.func.name] = metadata
    return tuple(BackendIndex.in_tree(key, index) for key, index in tables.items())


def _ignored_dispatch_tables(entries: Sequence[YamlMap]) -> list[Diagnostic]:
    return [
        Diagnostic(
            entry.key_location("dispatch"),
            "'dispatch:' gives no kernel in a file whose entries have 'kernels:'; "
            "list this kernel under 'kernels:' (with 'arg_meta: null' for the default one)",
            "warning",
        )
        for entry in entries
        if isinstance(entry.get("dispatch"), dict) and entry["dispatch"]
    ]


def _limited(errors: list[Diagnostic]) -> list[Diagnostic]:
    if len(errors) <= MAX_ERRORS:
        return errors
    return [*errors[:MAX_ERRORS], Diagnostic(None, "too many errors; stopping")]
