"""The changes between two schemas that break neither direction, reported for information.

torch's checks pass them, but a reader of the diff wants to know: an argument
added at the end with a default, a type torch treats as the same (`int` and
`SymInt`, `int` and `ScalarType`: the same fake type, but a different C++ or
Python signature), a type that got wider (compatible backward, reported by
the forward rules when it is not), a default written differently with the same
value, a keyword-only argument made positional, a return narrowed. Arguments
are matched by name here, and a subject already reported as a break is skipped.
"""

from __future__ import annotations

from opgen.spec.arguments import Argument
from opgen.spec.compat.changes import Part, SchemaChange
from opgen.spec.compat.values import default_value, is_subtype, list_size
from opgen.spec.schema import FunctionSchema


def compatible_changes(
    old: FunctionSchema, new: FunctionSchema, reported: set[str]
) -> list[SchemaChange]:
    """The compatible changes; `reported`: the subjects already reported as breaks."""
    changes: list[SchemaChange] = []
    old_args = {a.name: (i, a) for i, a in enumerate(old.arguments.flat_all)}
    old_kwarg_only = len(old.arguments.flat_positional)
    new_kwarg_only = len(new.arguments.flat_positional)
    for j, n in enumerate(new.arguments.flat_all):
        if n.name in reported:
            continue
        new_part: Part = ("argument", j)
        found = old_args.get(n.name)
        if found is None:
            message = f"new argument '{n}'"
            changes.append(SchemaChange("argument-added", n.name, message, (), None, new_part))
            continue
        i, o = found
        old_part: Part = ("argument", i)
        for rule, message in _argument_notes(o, n, i >= old_kwarg_only, j >= new_kwarg_only):
            changes.append(SchemaChange(rule, n.name, message, (), old_part, new_part))
    if len(old.returns) == len(new.returns):
        for k, (o_ret, n_ret) in enumerate(zip(old.returns, new.returns, strict=True)):
            subject = f"return {k}"
            if subject in reported or o_ret.type == n_ret.type:
                continue
            how = "is the same type as" if is_subtype(o_ret.type, n_ret.type) else "narrows"
            message = f"return {k} type {n_ret.type} {how} {o_ret.type}"
            rule = "return-type-equivalent" if how.startswith("is") else "return-type-narrowed"
            part: Part = ("return", k)
            changes.append(SchemaChange(rule, subject, message, (), part, part))
    return changes


def _argument_notes(
    o: Argument, n: Argument, old_kwarg_only: bool, new_kwarg_only: bool
) -> list[tuple[str, str]]:
    notes: list[tuple[str, str]] = []
    same_size = list_size(o.type) == list_size(n.type)
    equivalent = is_subtype(o.type, n.type) and is_subtype(n.type, o.type)
    if o.type != n.type and same_size and equivalent:
        message = (
            f"argument '{o.name}' type {o.type} is now {n.type}, the same type to the "
            "dispatcher (the C++ or Python signature may differ)"
        )
        notes.append(("argument-type-equivalent", message))
    if old_kwarg_only and not new_kwarg_only:
        notes.append(("argument-made-positional", f"argument '{o.name}' is now positional"))
    if _respelled(o, n):
        message = f"argument '{o.name}' default {o.default} is now written {n.default}"
        notes.append(("default-respelled", message))
    return notes


def _respelled(o: Argument, n: Argument) -> bool:
    """A default written differently, with the same value."""
    if o.default is None or n.default is None or o.default == n.default:
        return False
    return default_value(o.type, o.default) == default_value(n.type, n.default)
