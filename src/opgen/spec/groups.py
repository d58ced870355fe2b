"""Groups of related operators.

- `NativeFunctionsGroup`: the functional, out= and optional inplace and mutable
  variants of one operator (same `signature()`). Structured kernels are defined
  per group: the out= variant is structured, the others delegate to it.
- `NativeFunctionsViewGroup`: a view operator (`foo`, returns an alias), its
  optional inplace view (`foo_`) and its `foo_copy` variant, which computes
  the same values without aliasing (same `view_signature()`).

Constructing a group checks that its members agree; errors point at the
member at fault.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Sequence

from opgen.diagnostics import SpecError
from opgen.frozen import frozen
from opgen.spec.keys import SchemaKind, ViewSchemaKind
from opgen.spec.native import NativeFunction
from opgen.spec.schema import BaseOperatorName, FunctionSchema, OperatorName

# The variants of one operator (one `signature()`) by kind, before they are grouped:
# the spec's own, then those derived for them (`opgen.spec.autogen`).
PreGroup = dict[SchemaKind, NativeFunction]


@frozen(eq=False)
class NativeFunctionsGroup:
    functional: NativeFunction  # `op`, or derived `op_functional` for a mutable op
    inplace: NativeFunction | None  # `op_`
    mutable: NativeFunction | None  # `op` with mutable positional arguments
    out: NativeFunction  # `op.out`

    @property
    def structured(self) -> bool:
        """Whether the group has a meta function (its out= variant is structured)."""
        return self.out.structured

    def __post_init__(self) -> None:
        for f in self.functions():
            if f.part_of_structured_group != self.structured:
                culprit = f if f.part_of_structured_group else self.out
                raise SpecError(
                    f"'{f.func.name}' and '{self.out.func.name}' are variants of one operator, "
                    "but only one of them is structured (structured / structured_delegate)",
                    culprit.location_of("func"),
                )
            if f.namespace != self.functional.namespace:
                raise SpecError(
                    f"'{f.func.name}' is in namespace '{f.namespace}', but its functional variant "
                    f"is in '{self.functional.namespace}'",
                    f.location_of("func"),
                )
        if self.mutable is not None and not self.functional.func.name.name.functional_overload:
            raise SpecError(
                f"the functional variant of mutable operator '{self.mutable.func.name}' must be "
                f"named '{self.mutable.func.name.name.base}_functional'",
                self.functional.location_of("func"),
            )
        if self.structured:
            self._check_structured()
        self._check_autogen()

    def _check_structured(self) -> None:
        out = self.out
        if out.has_composite_implicit_autograd_kernel or (
            out.has_composite_implicit_autograd_nested_tensor_kernel
        ):
            raise SpecError(
                "a structured operator cannot have a CompositeImplicitAutograd kernel",
                out.location_of("dispatch"),
            )
        for f in (self.functional, self.inplace):
            if f is not None and f.structured_delegate != out.func.name:
                raise SpecError(
                    f"'{f.func.name}' delegates to '{f.structured_delegate}', but its out= "
                    f"variant is '{out.func.name}'",
                    f.location_of("structured_delegate"),
                )

    def _check_autogen(self) -> None:
        functions = list(self.functions())
        generated = sorted([str(f.func.name) for f in functions if "generated" in f.tags])
        requested = sorted({str(n) for f in functions for n in f.autogen})
        if generated == requested:
            return
        owner = next((f for f in self.functions() if f.autogen), None)
        owner = owner or next(f for f in self.functions() if "generated" not in f.tags)
        expected = ", ".join(generated)
        raise SpecError(
            f"'autogen' must list exactly the derived operators: 'autogen: {expected}'"
            if generated
            else "'autogen' names operators that are not derived for this operator",
            owner.location_of("autogen"),
        )

    def functions(self) -> Iterator[NativeFunction]:
        """functional, out, then inplace and mutable where present."""
        members = (self.functional, self.out, self.inplace, self.mutable)
        return (f for f in members if f is not None)

    def signature(self) -> FunctionSchema:
        return self.out.func.signature()

    @property
    def root_name(self) -> str:
        return self.functional.root_name

    @staticmethod
    def from_pre_group(group: PreGroup) -> NativeFunctionsGroup | None:
        """The group, or None for operators without an out= variant."""
        if len(group) == 1:
            return None
        functional = group.get(SchemaKind.functional)
        out = group.get(SchemaKind.out)
        if functional is None:
            f = next(iter(group.values()))
            raise SpecError(
                f"'{f.func.name}' has other variants but no functional variant; add one, "
                "or derive one with 'autogen'",
                f.location_of("func"),
            )
        if out is None:
            return None
        if SchemaKind.scratch in group:
            f = group[SchemaKind.scratch]
            raise SpecError(
                f"scratch operator '{f.func.name}' cannot be grouped with other variants",
                f.location_of("func"),
            )
        return NativeFunctionsGroup(
            functional, group.get(SchemaKind.inplace), group.get(SchemaKind.mutable), out
        )


def group_functions(pre_groups: Iterable[PreGroup]) -> list[NativeFunction | NativeFunctionsGroup]:
    """Groups where an operator has an out= and a functional variant, else single functions."""
    result: list[NativeFunction | NativeFunctionsGroup] = []
    for pre in pre_groups:
        group = NativeFunctionsGroup.from_pre_group(pre)
        if group is not None:
            result.append(group)
            continue
        for f in pre.values():
            if "generated" in f.tags:
                raise SpecError(
                    f"derived operator '{f.func.name}' could not be grouped", f.location_of("func")
                )
        result.extend(pre.values())
    return result


def grouped_lines(grouped: Sequence[NativeFunction | NativeFunctionsGroup]) -> list[int]:
    """For each item of a grouped spec, the line of the first entry of its operator (the
    functions of one `signature()`): the items of any spec holding whole operators (all of
    them, or some families, `opgen.spec.partial`) are in the order of these lines, and the
    items of one operator are next to each other.

    A group holds its operator's functions; the functions of an operator that is not a
    group are consecutive single items, the first entry first (`group_functions`).
    """
    lines: list[int] = []
    previous: NativeFunction | None = None  # the item before, if a single function
    for item in grouped:
        if isinstance(item, NativeFunctionsGroup):
            lines.append(min(f.loc.line for f in item.functions()))
            previous = None
            continue
        same_operator = (
            previous is not None
            and previous.func.name.name.base == item.func.name.name.base
            and previous.func.signature() == item.func.signature()
        )
        lines.append(lines[-1] if same_operator else item.loc.line)
        previous = item
    return lines


@frozen(eq=False)
class NativeFunctionsViewGroup:
    view: NativeFunction  # `foo`, which returns an alias of its input
    view_copy: NativeFunction | None  # absent for composite views
    view_inplace: NativeFunction | None  # `foo_`, the view that changes `self`'s metadata

    def __post_init__(self) -> None:
        view = self.view
        if self.view_copy is None:
            if gets_generated_view_copy(view):
                raise SpecError(
                    f"'{view.func.name}' is a view operator, so it needs a copy variant "
                    f"'{view_copy_name(view)}' (tagged view_copy) in the spec",
                    view.location_of("func"),
                )
        else:
            copy = self.view_copy
            if not copy.func.name.name.base.endswith(("_copy", "_scatter")):
                raise SpecError(
                    f"the copy variant of view '{view.func.name}' must be named "
                    f"'..._copy' or '..._scatter', not '{copy.func.name}'",
                    copy.location_of("func"),
                )
            if "view_copy" not in copy.tags:
                raise SpecError(
                    f"'{copy.func.name}' is the copy variant of view '{view.func.name}', "
                    "so it must be tagged 'view_copy'",
                    copy.location_of("tags"),
                )
        inplace = self.view_inplace
        if inplace is not None:
            # A composite view's inplace view must be composite too (each kind separately).
            implicit = view.has_composite_implicit_autograd_kernel <= (
                inplace.has_composite_implicit_autograd_kernel
            )
            nested = view.has_composite_implicit_autograd_nested_tensor_kernel <= (
                inplace.has_composite_implicit_autograd_nested_tensor_kernel
            )
            if not implicit or not nested:
                raise SpecError(
                    f"'{view.func.name}' and '{inplace.func.name}' must both have composite "
                    "(implicit autograd) kernels, or neither",
                    inplace.location_of("func"),
                )

    def functions(self, *, include_copy: bool = True) -> Iterator[NativeFunction]:
        """view, then the inplace view and (unless excluded) the copy, where present."""
        members = (self.view, self.view_inplace, self.view_copy if include_copy else None)
        return (f for f in members if f is not None)

    @property
    def root_name(self) -> str:
        return self.view.root_name

    @property
    def composite(self) -> bool:
        return self.view.has_composite_implicit_autograd_kernel


def gets_generated_view_copy(f: NativeFunction) -> bool:
    """Whether view `f` needs a `_copy` variant: composite, inplace and `_inverse` views don't."""
    return (
        f.is_view_op
        and not f.has_composite_implicit_autograd_kernel
        and "inplace_view" not in f.tags
        and not f.func.name.name.base.endswith("_inverse")
    )


def view_copy_name(f: NativeFunction) -> OperatorName:
    name = f.func.name
    base = BaseOperatorName(f"{name.name.base}_copy", False, name.name.dunder_method)
    return OperatorName(base, name.overload_name)


def group_views(
    functions: Sequence[NativeFunction],
) -> list[NativeFunction | NativeFunctionsViewGroup]:
    """View groups, in order of first appearance; other functions stay single."""
    by_view: dict[FunctionSchema, dict[SchemaKind | ViewSchemaKind, NativeFunction]] = {}
    for f in functions:
        members = by_view.setdefault(f.func.view_signature(), {})
        view_kind = f.view_schema_kind
        kind: SchemaKind | ViewSchemaKind = (
            f.func.kind if view_kind is ViewSchemaKind.non_aliasing else view_kind
        )
        if kind in members:
            other = members[kind]
            raise SpecError(
                f"'{f.func.name}' and '{other.func.name}' (line {other.loc.line}) have the same "
                "signature once a '_copy' suffix is ignored; rename one of them",
                f.location_of("func"),
            )
        members[kind] = f
    result: list[NativeFunction | NativeFunctionsViewGroup] = []
    for members in by_view.values():
        if ViewSchemaKind.aliasing in members:
            view = members.pop(ViewSchemaKind.aliasing)
            inplace = members.pop(ViewSchemaKind.aliasing_inplace, None)
            copy = members.pop(SchemaKind.functional, None)
            result.append(NativeFunctionsViewGroup(view, copy, inplace))
        result.extend(members.values())
    return result
