"""Two specs, operator by operator: the findings of `opgen diff`.

Operators are matched by namespace, name and overload, derived ones (`autogen:`)
included, since they are registered operators too. A matched pair whose schemas
differ is compared by `opgen.spec.compat` (torch's two compatibility checks,
each failure named); everything else that changed is informational: tags
(those written, not the implied `out`, `inplace` and `pt2_compliant_tag`),
kernels per dispatch key, `structured` / `structured_delegate`, `autogen`
and `variants`, and a library's Python kernels (`python_dispatch`) and `fake`
kernel. An operator only in the old spec is backward-incompatible; one only in
the new spec is informational.

Each finding carries the location of what it is about in both files: the
argument or return in each schema, else the key, else the operator's name; a
derived operator has no text of its own and points at the `autogen:` that
derives it. Findings come in the new spec's order, then the removed operators
in the old spec's.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Literal

from opgen.diagnostics import Location
from opgen.frozen import frozen
from opgen.spec.compat import Part, SchemaChange, compare_schemas
from opgen.spec.model import Spec
from opgen.spec.native import NativeFunction

Category = Literal["backward-incompatible", "forward-incompatible", "informational"]
FAILING_CATEGORIES: tuple[Category, ...] = ("backward-incompatible", "forward-incompatible")
# Tags every operator of a kind gets without writing them (opgen.spec.entry).
IMPLIED_TAGS = frozenset({"pt2_compliant_tag", "out", "inplace"})


@frozen
class Finding:
    name: str  # `name.overload`, namespace-qualified outside aten
    category: Category
    rule: str
    message: str
    old: Location | None
    new: Location | None
    breaks: tuple[str, ...] = ()  # the compatibility directions it breaks


def diff_specs(old: Spec, new: Spec) -> list[Finding]:
    """Every finding from `old` to `new`, in the order described above."""
    old_side, new_side = _Side(old), _Side(new)
    findings: list[Finding] = []
    for key, n in new_side.functions.items():
        o = old_side.functions.get(key)
        if o is None:
            findings.append(_added(new_side, old_side, n))
        else:
            findings += _changed(old_side, new_side, o, n)
    for key, o in old_side.functions.items():
        if key not in new_side.functions:
            findings.append(_removed(old_side, new_side, o))
    return findings


def display_name(f: NativeFunction) -> str:
    name = str(f.func.name)
    return name if f.namespace == "aten" else f"{f.namespace}::{name}"


class _Side:
    """One spec, with its functions by (namespace, name) and the locations of derived ones."""

    def __init__(self, spec: Spec) -> None:
        self.spec = spec
        self.functions = {(f.namespace, str(f.func.name)): f for f in spec.functions}
        self.bases = {(f.namespace, f.func.name.name.base) for f in spec.functions}
        # Derived operators keep the line of the entry that derives them.
        self.deriving = {
            (f.loc.file, f.loc.line): f for f in spec.functions if f.autogen and _written(f)
        }

    def name_location(self, f: NativeFunction) -> Location:
        if _written(f):
            return f.schema_location(0, len(str(f.func.name)))
        return self._deriving_location(f)

    def key_location(self, f: NativeFunction, key: str) -> Location:
        if _written(f):
            return f.location_of(key)
        return self._deriving_location(f)

    def part_location(self, f: NativeFunction, part: Part | None) -> Location:
        if part is None or not _written(f):
            return self.name_location(f)
        kind, index = part
        func = f.func
        if kind == "argument":
            return f.schema_location(*func.span(func.arguments.flat_all[index]))
        offset = func.span(func.returns)[0] + (len(func.returns) != 1)
        for r in func.returns[:index]:
            offset += len(str(r)) + 2
        return f.schema_location(offset, len(str(func.returns[index])))

    def _deriving_location(self, f: NativeFunction) -> Location:
        base = self.deriving.get((f.loc.file, f.loc.line))
        return base.location_of("autogen") if base is not None else f.loc


def _written(f: NativeFunction) -> bool:
    """Whether `f` is an entry of the file (with field locations), not derived."""
    return len(f.field_locations) > 0  # a lazy mapping: `in` would compute a location


def _added(new: _Side, old: _Side, f: NativeFunction) -> Finding:
    overload = (f.namespace, f.func.name.name.base) in old.bases
    rule = "overload-added" if overload else "operator-added"
    message = f"new {'overload' if overload else 'operator'}: {f.func}"
    return Finding(display_name(f), "informational", rule, message, None, new.name_location(f))


def _removed(old: _Side, new: _Side, f: NativeFunction) -> Finding:
    overload = (f.namespace, f.func.name.name.base) in new.bases
    rule = "overload-removed" if overload else "operator-removed"
    what = "overload" if overload else "operator"
    message = f"{what} removed: {f.func}"
    return Finding(
        display_name(f),
        "backward-incompatible",
        rule,
        message,
        old.name_location(f),
        None,
        ("backward",),
    )


def _changed(old: _Side, new: _Side, o: NativeFunction, n: NativeFunction) -> list[Finding]:
    findings: list[Finding] = []
    name = display_name(n)
    if o.func.text != n.func.text:
        for change in compare_schemas(o.func, n.func):
            findings.append(_schema_finding(name, change, old, new, o, n))
    for key, rule, message in _metadata_changes(old.spec, new.spec, o, n):
        findings.append(
            Finding(
                name,
                "informational",
                rule,
                message,
                old.key_location(o, key),
                new.key_location(n, key),
            )
        )
    return sorted(findings, key=_position)


def _position(finding: Finding) -> tuple[int, int]:
    """Where in the new spec a finding of a changed operator points: its order there."""
    assert finding.new is not None
    return finding.new.line, finding.new.col or 0


def category_of(change: SchemaChange) -> Category:
    """A schema change's category: the first direction it breaks, else informational."""
    if "backward" in change.breaks:
        return "backward-incompatible"
    if "forward" in change.breaks:
        return "forward-incompatible"
    return "informational"


def _schema_finding(
    name: str,
    change: SchemaChange,
    old: _Side,
    new: _Side,
    o: NativeFunction,
    n: NativeFunction,
) -> Finding:
    return Finding(
        name,
        category_of(change),
        change.rule,
        change.message,
        old.part_location(o, change.old),
        new.part_location(n, change.new),
        tuple(change.breaks),
    )


def _metadata_changes(
    old_spec: Spec, new_spec: Spec, o: NativeFunction, n: NativeFunction
) -> Iterator[tuple[str, str, str]]:
    """(key, rule, message) of each informational change."""
    if o.tags != n.tags:
        old_tags, new_tags = o.tags - IMPLIED_TAGS, n.tags - IMPLIED_TAGS
        if old_tags != new_tags:
            yield "tags", "tags-changed", "tags: " + set_change(old_tags, new_tags)
    if old_spec.kernels(o) != new_spec.kernels(n):
        old_kernels, new_kernels = _kernels(old_spec, o), _kernels(new_spec, n)
        if old_kernels != new_kernels:
            message = "dispatch: " + kernel_change(old_kernels, new_kernels)
            yield "dispatch", "dispatch-changed", message
    if (o.structured, o.structured_delegate) != (n.structured, n.structured_delegate):
        key = (
            "structured_delegate"
            if n.structured_delegate or o.structured_delegate
            else "structured"
        )
        message = f"structured: {_structured(o)} -> {_structured(n)}"
        yield key, "structured-changed", message
    if o.autogen != n.autogen:
        old_autogen, new_autogen = {str(a) for a in o.autogen}, {str(a) for a in n.autogen}
        yield "autogen", "autogen-changed", "autogen: " + set_change(old_autogen, new_autogen)
    if o.variants != n.variants:
        old_v, new_v = {v.value for v in o.variants}, {v.value for v in n.variants}
        yield "variants", "variants-changed", "variants: " + set_change(old_v, new_v)
    # A PyTorch spec's functions share one empty `extensions`: one identity test each.
    if o.extensions is not n.extensions:
        old_python, new_python = o.extensions.python_kernels, n.extensions.python_kernels
        if old_python != new_python:
            message = "python_dispatch: " + kernel_change(
                {str(k): str(v) for k, v in old_python.items()},
                {str(k): str(v) for k, v in new_python.items()},
            )
            yield "python_dispatch", "python-dispatch-changed", message
        old_fake, new_fake = o.extensions.fake, n.extensions.fake
        if str(old_fake) != str(new_fake):
            message = f"fake: {old_fake or 'none'} -> {new_fake or 'none'}"
            yield "fake", "fake-changed", message


def _kernels(spec: Spec, f: NativeFunction) -> dict[str, str]:
    kernels: dict[str, str] = {}
    for key, metadata in spec.kernels(f).items():
        namespace = "" if metadata.cpp_namespace == "at::native" else f"{metadata.cpp_namespace}::"
        kernels[str(key)] = namespace + metadata.kernel
    return kernels


def kernel_change(old: Mapping[str, str], new: Mapping[str, str]) -> str:
    """`+CUDA (add_cuda), -CPU, Meta: a -> b`: kernels by key, added, removed, changed."""
    parts = [f"+{key} ({new[key]})" for key in new if key not in old]
    parts += [f"-{key}" for key in old if key not in new]
    parts += [
        f"{key}: {old[key]} -> {new[key]}" for key in new if key in old and old[key] != new[key]
    ]
    return ", ".join(parts)


def set_change(old: set[str] | frozenset[str], new: set[str] | frozenset[str]) -> str:
    parts = [f"+{item}" for item in sorted(new - old)] + [f"-{item}" for item in sorted(old - new)]
    return ", ".join(parts) if parts else "reordered"


def _structured(f: NativeFunction) -> str:
    if f.structured_delegate is not None:
        return f"delegate {f.structured_delegate}"
    return "structured" if f.structured else "not structured"
