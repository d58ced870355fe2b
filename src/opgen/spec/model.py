"""The whole spec: every operator, derived ones included, its backends and groups.

`load_spec` is the entry point: it reads `native_functions.yaml` and
`tags.yaml`, builds one `NativeFunction` per entry (reporting the errors of
every bad entry, up to `MAX_ERRORS`), checks the rules that relate entries to
each other, derives `autogen` operators, and groups operators. The `Spec` it
returns is immutable and fully validated: emitters trust it.
"""

from __future__ import annotations

import keyword
from collections.abc import Callable, Mapping, Sequence, Set
from types import MappingProxyType

from opgen.cached import cached
from opgen.diagnostics import Diagnostic, SpecError
from opgen.frozen import field, frozen
from opgen.releases import NEWEST, Release
from opgen.spec.arguments import Argument
from opgen.spec.autogen import derive_functions, pre_group
from opgen.spec.backend import BackendIndex, BackendMetadata
from opgen.spec.entry import EntryOptions, read_entry
from opgen.spec.groups import (
    NativeFunctionsGroup,
    NativeFunctionsViewGroup,
    PreGroup,
    group_functions,
    group_views,
)
from opgen.spec.keys import DispatchKey
from opgen.spec.native import NativeFunction
from opgen.spec.partial import only_families
from opgen.spec.schema import BaseOperatorName, OperatorName
from opgen.spec.tags import read_tags
from opgen.spec.torch_tags import torch_tags
from opgen.spec.yaml.load import YamlDocument, YamlList, YamlMap, load_yaml, parse_yaml, read_text

MAX_ERRORS = 20

# Arguments of PyTorch's own operators that are Python keywords, accepted as
# exceptions to the rule that argument names must be usable from Python.
KEYWORD_ARGUMENT_EXCEPTIONS = frozenset(
    {("_has_compatible_shallow_copy_type", "from"), ("random_.from", "from"), ("uniform_", "from")}
)

# Inplace-view operators without an out-of-place view of the same name.
INPLACE_VIEW_EXCEPTIONS = frozenset({"resize_", "resize_as_"})


@frozen
class Spec:
    functions: tuple[NativeFunction, ...]  # entries in spec order, then derived ones
    backend_indices: Mapping[DispatchKey, BackendIndex]  # the kernels of each dispatch key
    # The functions in groups of variants where there is one, else alone; in spec order.
    grouped: tuple[NativeFunction | NativeFunctionsGroup, ...]
    # The functions in view groups where there is one, else alone; in spec order.
    view_grouped: tuple[NativeFunction | NativeFunctionsViewGroup, ...]
    tags: Mapping[str, str]  # valid tags and their descriptions
    entry_count: int  # the entries read; `functions` holds them, then the derived ones
    sources: Mapping[str, str] = field(repr=False)  # file text by path, for diagnostics
    warnings: tuple[Diagnostic, ...] = ()  # what the spec does that upstream accepts

    @property
    def groups(self) -> list[NativeFunctionsGroup]:
        return [g for g in self.grouped if isinstance(g, NativeFunctionsGroup)]

    @property
    def view_groups(self) -> list[NativeFunctionsViewGroup]:
        return [g for g in self.view_grouped if isinstance(g, NativeFunctionsViewGroup)]

    def kernels(self, f: NativeFunction) -> Mapping[DispatchKey, BackendMetadata]:
        """The kernel of `f` for every dispatch key that has one, in dispatch-key order."""
        return self._kernels_by_name.get(f.func.name, _NO_KERNELS)

    @cached
    def _kernels_by_name(self) -> dict[OperatorName, dict[DispatchKey, BackendMetadata]]:
        table: dict[OperatorName, dict[DispatchKey, BackendMetadata]] = {}
        for key, index in self.backend_indices.items():
            for name, metadata in index.index.items():
                table.setdefault(name, {})[key] = metadata
        return table


_NO_KERNELS: Mapping[DispatchKey, BackendMetadata] = MappingProxyType({})


def empty_spec() -> Spec:
    """A spec without operators, to read what extends a spec by its own rules alone."""
    return Spec(
        functions=(),
        backend_indices={},
        grouped=(),
        view_grouped=(),
        tags={},
        entry_count=0,
        sources={},
    )


@frozen
class LoadOptions:
    ignore_keys: Set[DispatchKey] = frozenset()  # dispatch entries to drop, e.g. MPS
    library: bool = False  # read the library dialect (opgen.spec.library)
    # Read only the entries these operators need (`opgen.spec.partial`); None: all.
    only_operators: frozenset[str] | None = None
    # With `only_operators`, whether the entries read include the views that their `_copy`
    # and `_scatter` variants group with: a reader that needs only the operators' schemas
    # (derived ones included) does without them.
    view_families: bool = True
    # Read to compare with another spec (`opgen diff`): what older PyTorch specs allowed
    # and later ones forbid is accepted (`EntryOptions.for_comparison`), only the checks
    # that matching operators needs run across entries (no duplicate names), derivation
    # skips what it cannot derive, and nothing is grouped (`grouped` lists the functions).
    for_comparison: bool = False
    # The torch release whose rules the spec is read by (`opgen.releases`).
    release: Release = NEWEST
    # Whether to group views with their copies (`view_grouped`), checking the rules that
    # relate them; without, `view_grouped` lists the functions, as gen_backend_stubs,
    # which never groups views, reads the spec.
    group_views: bool = True


def load_spec(
    native_path: str,
    tags_path: str | None,
    options: LoadOptions | None = None,
    *,
    native_text: str | None = None,
) -> Spec:
    """Read and validate a spec; raises SpecError with every diagnostic found.

    `native_text` is the text of `native_path` if the caller has read it already, whole
    or with some entries blanked out by `only_families`.
    """
    options = options or LoadOptions()
    sources: dict[str, str] = {}
    tags: Mapping[str, str] = {}
    if tags_path is not None:
        tags_doc = _load(tags_path, sources)
        tags = read_tags(tags_doc)
    if native_text is None and options.only_operators is None:
        doc = _load(native_path, sources)
    else:
        text = read_text(native_path) if native_text is None else native_text
        if options.only_operators is not None:
            text = only_families(text, options.only_operators, options.view_families)
        doc = parse_yaml(native_path, text)
        sources[native_path] = text
    return _build(doc, tags, options, sources)


def _load(path: str, sources: dict[str, str]) -> YamlDocument:
    doc = load_yaml(path)
    sources[path] = doc.text
    return doc


def _build(
    doc: YamlDocument, tags: Mapping[str, str], options: LoadOptions, sources: Mapping[str, str]
) -> Spec:
    entries = _entries(doc)
    entry_options = EntryOptions(
        valid_tags=frozenset(tags).union(torch_tags(options.release) if options.library else ()),
        ignore_keys=options.ignore_keys,
        library=options.library,
        for_comparison=options.for_comparison,
        release=options.release,
        namespace_hint=_library_namespace(entries) if options.library else "mylib",
    )
    functions: list[NativeFunction] = []
    kernels: dict[DispatchKey, dict[OperatorName, BackendMetadata]] = {}
    errors: list[Diagnostic] = []
    for entry in entries:
        try:
            f, dispatch = read_entry(entry, entry_options)
        except SpecError as e:
            errors.extend(e.diagnostics)
            if len(errors) >= MAX_ERRORS:
                break
            continue
        functions.append(f)
        for key, metadata in dispatch.items():
            kernels.setdefault(key, {})[f.func.name] = metadata
    if errors:
        raise SpecError.of(_limited(once_each(errors)))
    _check_across_entries(functions, options.for_comparison)
    if options.library:  # no derived operators, and groups are ATen's business
        return _ungrouped(functions, kernels, tags, len(entries), sources)
    pre_groups = list(pre_group(functions).values())
    names = {f.func.name for f in functions}
    for group, f, metadata in derive_functions(
        pre_groups, lenient=options.for_comparison, release=options.release
    ):
        if options.for_comparison and f.func.name in names:  # derived twice, or an entry's
            continue
        names.add(f.func.name)
        group[f.func.kind] = f
        functions.append(f)
        kernels.setdefault(DispatchKey.CompositeExplicitAutograd, {})[f.func.name] = metadata
    if options.for_comparison:
        return _ungrouped(functions, kernels, tags, len(entries), sources)
    return Spec(
        functions=tuple(functions),
        backend_indices={k: BackendIndex.in_tree(k, v) for k, v in kernels.items()},
        grouped=tuple(group_functions(pre_groups)),
        view_grouped=tuple(group_views(functions) if options.group_views else functions),
        tags=tags,
        entry_count=len(entries),
        sources=sources,
        warnings=tuple(_unused_autogen_names(pre_groups)),
    )


def _ungrouped(
    functions: list[NativeFunction],
    kernels: Mapping[DispatchKey, Mapping[OperatorName, BackendMetadata]],
    tags: Mapping[str, str],
    entry_count: int,
    sources: Mapping[str, str],
) -> Spec:
    """A spec whose operators are not grouped: a library's, or one read for comparison."""
    return Spec(
        functions=tuple(functions),
        backend_indices={k: BackendIndex.in_tree(k, v) for k, v in kernels.items()},
        grouped=tuple(functions),
        view_grouped=tuple(functions),
        tags=tags,
        entry_count=entry_count,
        sources=sources,
    )


def _library_namespace(entries: list[YamlMap]) -> str:
    """The namespace the first namespaced operator of a library names (for hints)."""
    for entry in entries:
        func = entry.get("func")
        if isinstance(func, str):
            namespace, colons, _ = func.partition("(")[0].partition("::")
            if colons and namespace.isidentifier():
                return namespace
    return "mylib"


def once_each(errors: list[Diagnostic]) -> list[Diagnostic]:
    """Each message once, where it first occurs, with a note listing the lines of the
    others (a key misspelt in every entry is one mistake, not one per entry)."""
    lines: dict[str, list[Diagnostic]] = {}
    for d in errors:
        lines.setdefault(d.message, []).append(d)
    if len(lines) == len(errors):
        return errors
    kept: list[Diagnostic] = []
    for d in errors:
        same = lines[d.message]
        if same[0] is not d:
            continue
        kept.append(d)
        if len(same) > 1 and same[1].location is not None:
            kept.append(Diagnostic(same[1].location, _also_on(same[1:]), "note"))
    return kept


def _also_on(others: list[Diagnostic]) -> str:
    shown = [str(d.location.line) for d in others[:5] if d.location is not None]
    more = f" and {len(others) - len(shown)} more" if len(others) > len(shown) else ""
    where = "line " if len(shown) == 1 and not more else "lines "
    return f"the same error is on {where}{', '.join(shown)}{more}"


def _limited(errors: list[Diagnostic]) -> list[Diagnostic]:
    if len(errors) <= MAX_ERRORS:
        return errors
    return [*errors[:MAX_ERRORS], Diagnostic(None, "too many errors; stopping")]


def _entries(doc: YamlDocument) -> list[YamlMap]:
    if doc.root is None:
        raise SpecError(
            "the spec is empty; expected a list of operator entries ('- func: ...')", doc.location
        )
    if not isinstance(doc.root, list):
        raise SpecError(
            "the spec must be a list of operator entries ('- func: ...'), not a "
            + ("mapping" if isinstance(doc.root, dict) else "scalar"),
            doc.location,
        )
    entries: list[YamlMap] = []
    errors: list[Diagnostic] = []
    for i, entry in enumerate(doc.root):
        if isinstance(entry, YamlMap):
            entries.append(entry)
        else:
            where = doc.root.item_locations[i] if isinstance(doc.root, YamlList) else None
            errors.append(Diagnostic(where, "an operator entry must be a mapping ('func: ...')"))
    if errors:
        raise SpecError.of(_limited(errors))
    return entries


def _check_across_entries(functions: list[NativeFunction], only_names: bool = False) -> None:
    """The rules that relate entries; `only_names`: only that names are unique."""
    by_name, by_base, errors = index_entries(functions, _already_defined)
    if only_names:
        if errors:
            raise SpecError.of(_limited(errors))
        return
    errors.extend(rules_between_entries(functions, by_name, by_base))
    if errors:
        raise SpecError.of(_limited(errors))


def _already_defined(f: NativeFunction, first: NativeFunction) -> Diagnostic:
    return Diagnostic(
        f.location_of("func"),
        f"operator '{f.func.name}' is already defined on line {first.loc.line}",
    )


def index_entries(
    functions: Sequence[NativeFunction],
    duplicate: Callable[[NativeFunction, NativeFunction], Diagnostic],
) -> tuple[
    dict[OperatorName, NativeFunction],
    dict[BaseOperatorName, list[NativeFunction]],
    list[Diagnostic],
]:
    """The entries by name and by base name, and `duplicate(f, first)` for each entry
    whose name an earlier one has (the first is kept)."""
    errors: list[Diagnostic] = []
    by_name: dict[OperatorName, NativeFunction] = {}
    by_base: dict[BaseOperatorName, list[NativeFunction]] = {}
    for f in functions:
        first = by_name.setdefault(f.func.name, f)
        if first is not f:
            errors.append(duplicate(f, first))
        by_base.setdefault(f.func.name.name, []).append(f)
    return by_name, by_base, errors


def rules_between_entries(
    functions: Sequence[NativeFunction],
    by_name: Mapping[OperatorName, NativeFunction],
    by_base: Mapping[BaseOperatorName, Sequence[NativeFunction]],
) -> list[Diagnostic]:
    """The rules that relate entries, but for unique names: a structured delegate is a
    structured operator, no argument is named like a Python keyword, and an inplace
    view is named as one and has an out-of-place view (torchgen's
    `error_check_native_functions`). Also checked for ExecuTorch's kernel YAMLs."""
    errors: list[Diagnostic] = []
    # Argument lists are shared between functions (see `opgen.spec.arguments`): check
    # each once.
    keyword_named: dict[int, list[Argument]] = {}
    for f in functions:
        if f.structured_delegate is not None:
            errors.extend(_check_delegate(f, by_name))
        errors.extend(_check_keyword_arguments(f, keyword_named))
        if "inplace_view" in f.tags:
            errors.extend(_check_inplace_view(f, by_base))
    return errors


def _check_delegate(
    f: NativeFunction, by_name: Mapping[OperatorName, NativeFunction]
) -> list[Diagnostic]:
    if f.structured_delegate is None:
        return []
    delegate = by_name.get(f.structured_delegate)
    if delegate is None:
        return [
            Diagnostic(
                f.location_of("structured_delegate"),
                f"structured_delegate '{f.structured_delegate}' is not defined",
            )
        ]
    if not delegate.structured:
        return [
            Diagnostic(
                f.location_of("structured_delegate"),
                f"structured_delegate '{f.structured_delegate}' is not structured; "
                f"add 'structured: True' to it (line {delegate.loc.line})",
            )
        ]
    return []


def _check_keyword_arguments(
    f: NativeFunction, keyword_named: dict[int, list[Argument]]
) -> list[Diagnostic]:
    """`keyword_named`: the arguments named like a keyword, by argument list identity."""
    arguments = f.func.arguments
    found = keyword_named.get(id(arguments))
    if found is None:
        found = [a for a in arguments.flat_all if keyword.iskeyword(a.name)]
        keyword_named[id(arguments)] = found
    return [
        Diagnostic(
            f.schema_location(f.func.span(a)[0] + len(str(a.type)) + 1, len(a.name)),
            f"argument '{a.name}' of '{f.func.name}' is a Python keyword; rename it",
        )
        for a in found
        if (str(f.func.name), a.name) not in KEYWORD_ARGUMENT_EXCEPTIONS
    ]


def _check_inplace_view(
    f: NativeFunction, by_base: Mapping[BaseOperatorName, Sequence[NativeFunction]]
) -> list[Diagnostic]:
    name = f.func.name
    if "inplace_view" not in f.tags or str(name) in INPLACE_VIEW_EXCEPTIONS:
        return []
    if str(name.name) == "set_":
        return []
    if not name.name.inplace:
        return [
            Diagnostic(
                f.location_of("tags"),
                f"'{name}' is tagged inplace_view, so its name must end in '_' like an "
                "inplace operator's",
            )
        ]
    out_of_place = BaseOperatorName(name.name.base, False, name.name.dunder_method)
    if out_of_place not in by_base:
        return [
            Diagnostic(
                f.location_of("tags"),
                f"'{name}' is tagged inplace_view, so the spec needs an out-of-place view "
                f"operator '{out_of_place}'",
            )
        ]
    return []


def _unused_autogen_names(pre_groups: list[PreGroup]) -> list[Diagnostic]:
    """Warnings for names in `autogen:` that no derivation produces.

    Upstream silently ignores them (and its own spec has some, on composite
    operators, which are never derived), so they are warnings, not errors.
    """
    warnings: list[Diagnostic] = []
    for members in pre_groups:
        naming = [f for f in members.values() if f.autogen]
        if not naming:  # most operators
            continue
        derived = {str(f.func.name) for f in members.values() if "generated" in f.tags}
        for f in naming:
            for name in f.autogen:
                if str(name) not in derived:
                    message = (
                        f"'autogen' names '{name}', which is not derived from '{f.func.name}'"
                        + _autogen_hint(derived)
                    )
                    warnings.append(Diagnostic(f.location_of("autogen"), message, "warning"))
    return warnings


def _autogen_hint(derived: set[str]) -> str:
    if derived:
        return f" (derived: {', '.join(sorted(derived))})"
    return (
        " (nothing is derived: derivation needs an out= name in the autogen of the "
        "operator's mutable, else inplace, else functional variant, and skips views and "
        "composite operators)"
    )
