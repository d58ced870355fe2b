"""Two schemas of one operator: every change, and whether it breaks compatibility.

`compare_schemas(old, new)` mirrors PyTorch's `FunctionSchema::isBackwardCompatibleWith`
(new callers of the old schema still work: arguments are covariant, returns
contravariant) and `isForwardCompatibleWith` (programs written against the new
schema still run on the old one) check for check, in torch's order and by
torch's indices:

- both: the same number of returns; arguments compared index by index (name,
  list size, alias annotation, never a positional argument made keyword-only,
  a type relation, the default), the out arguments aligned by their own index;
- backward: at least as many arguments; each return is a subtype of the old one
  with the same name and annotation; arguments after the old ones have defaults;
  the old default, if any, is kept; the old type is a subtype of the new one;
- forward: the same number of out arguments; a new argument has a default that
  is not a list; no default appears where there was none; the new type is a
  subtype of the old one.

torch stops at the first failed check; opgen reports every one, as a `Break`
with a direction and a rule name that says what changed (an argument renamed,
removed, inserted or moved explains a name that differs at an index), and
merges the breaks of one rule and subject into one `SchemaChange`. So the
verdicts are torch's exactly: a direction is compatible when no change breaks
it. Changes that break nothing (an argument added with a default at the end,
`int` become `SymInt`, a default respelled) are reported too, with no breaks.
"""

from __future__ import annotations

from collections.abc import Sequence

from opgen.frozen import frozen
from opgen.spec.arguments import Argument, Return
from opgen.spec.compat import notes
from opgen.spec.compat.changes import Direction, Part, SchemaChange
from opgen.spec.compat.names import NameChanges
from opgen.spec.compat.values import (
    alias_key,
    default_value,
    is_container,
    is_subtype,
    list_size,
    render_value,
)
from opgen.spec.schema import FunctionSchema
from opgen.spec.types import annotated_str


@frozen
class Break:
    """One failed check of one direction."""

    direction: Direction  # the direction whose check failed
    rule: str  # what changed, as a name; breaks of one rule and subject merge into one change
    subject: str  # the argument or return it is about; "" for the schema
    message: str  # the failure in a sentence, for the report
    old: Part | None  # where it is in the old schema; None when it is not there
    new: Part | None  # where it is in the new schema; None when it is not there


def compare_schemas(old: FunctionSchema, new: FunctionSchema) -> tuple[SchemaChange, ...]:
    """Every change from `old` to `new`: the breaks, merged, then the compatible changes."""
    comparison = _Comparison(old, new)
    merged: dict[tuple[str, str], SchemaChange] = {}
    for b in (*comparison.backward(), *comparison.forward()):
        key = (b.rule, b.subject)
        seen = merged.get(key)
        if seen is None:
            merged[key] = SchemaChange(b.rule, b.subject, b.message, (b.direction,), b.old, b.new)
        elif b.direction not in seen.breaks:
            directions = (*seen.breaks, b.direction)
            merged[key] = SchemaChange(
                seen.rule, seen.subject, seen.message, directions, seen.old, seen.new
            )
    changes = list(merged.values())
    changes += comparison.compatible_changes({c.subject for c in changes})
    if not changes and old.text != new.text:
        changes.append(
            SchemaChange(
                "schema-respelled", "", f"schema respelled: {old} -> {new}", (), None, None
            )
        )
    return tuple(changes)


def is_backward_compatible(changes: Sequence[SchemaChange]) -> bool:
    return not any("backward" in c.breaks for c in changes)


def is_forward_compatible(changes: Sequence[SchemaChange]) -> bool:
    return not any("forward" in c.breaks for c in changes)


class _Comparison:
    """The two schemas as torch's checks see them: flat argument lists and out starts."""

    def __init__(self, old: FunctionSchema, new: FunctionSchema) -> None:
        self.old, self.new = old, new
        self.old_args: Sequence[Argument] = old.arguments.flat_all
        self.new_args: Sequence[Argument] = new.arguments.flat_all
        self.old_out = len(old.arguments.flat_non_out)  # torch's findFirstOutArg
        self.new_out = len(new.arguments.flat_non_out)
        self.old_positional = len(old.arguments.flat_positional)
        self.new_positional = len(new.arguments.flat_positional)
        self.names = NameChanges.of(
            [a.name for a in self.old_args],
            [a.name for a in self.new_args],
            self.old_out,
            self.new_out,
        )

    def backward(self) -> list[Break]:
        breaks = self._return_count("backward")
        if not breaks:
            for i in range(len(self.old.returns)):
                breaks += self._return_breaks(i)
        if len(self.new_args) < len(self.old_args):
            breaks += [self._removed("backward", name) for name in self.names.removed]
        for i in range(min(self.old_out, len(self.new_args))):
            breaks += self._argument_breaks("backward", i, i)
        breaks += self._added_breaks("backward")
        for i in range(self.old_out, len(self.old_args)):
            j = i - self.old_out + self.new_out
            if j >= len(self.new_args):  # torch: an index out of range, so not compatible
                breaks += self._out_count("backward")
                break
            breaks += self._argument_breaks("backward", i, j)
        return breaks

    def forward(self) -> list[Break]:
        breaks = self._return_count("forward")
        same_outs = len(self.old_args) - self.old_out == len(self.new_args) - self.new_out
        if not same_outs:
            breaks += self._out_count("forward")
        for i in range(min(self.old_out, self.new_out)):
            breaks += self._argument_breaks("forward", i, i)
        breaks += self._added_breaks("forward")
        if same_outs:
            for i in range(self.old_out, len(self.old_args)):
                breaks += self._argument_breaks("forward", i, i - self.old_out + self.new_out)
        return breaks

    def _return_count(self, direction: Direction) -> list[Break]:
        old, new = len(self.old.returns), len(self.new.returns)
        if old == new:
            return []
        message = f"returns {new} value{'s' * (new != 1)} instead of {old}"
        return [Break(direction, "return-count-changed", "", message, None, None)]

    def _out_count(self, direction: Direction) -> list[Break]:
        old, new = len(self.old_args) - self.old_out, len(self.new_args) - self.new_out
        message = f"has {new} out argument{'s' * (new != 1)} instead of {old}"
        return [Break(direction, "out-arguments-changed", "", message, None, None)]

    def _removed(self, direction: Direction, name: str) -> Break:
        i = self.names.old_index[name]
        part: Part = ("argument", i)
        return Break(
            direction, "argument-removed", name, f"argument '{name}' is removed", part, None
        )

    def _added_breaks(self, direction: Direction) -> list[Break]:
        """The arguments after the old ones (before the out arguments) need a default, and
        going forward one that is not a list."""
        breaks: list[Break] = []
        for i in range(self.old_out, self.new_out):
            a = self.new_args[i]
            if a.default is None:
                rule, message = (
                    "argument-added-without-default",
                    f"new argument '{a}' has no default",
                )
            elif direction == "forward" and is_container(default_value(a.type, a.default)):
                rule = "argument-added-with-list-default"
                message = f"new argument '{a}' has a list default, which older versions cannot read"
            else:
                continue
            subject = a.name
            if a.name in self.names.old_index:  # an old argument, moved or shifted here
                rule, subject, message = self.names.shifted(a.name)
            breaks.append(Break(direction, rule, subject, message, None, ("argument", i)))
        return breaks

    def _argument_breaks(self, direction: Direction, i: int, j: int) -> list[Break]:
        """torch's Argument checks of old argument `i` against new argument `j`."""
        o, n = self.old_args[i], self.new_args[j]
        parts: tuple[Part, Part] = (("argument", i), ("argument", j))
        if o.name != n.name:
            rule, subject, message = self.names.explain(i, j)
            return [Break(direction, rule, subject, message, *parts)]
        same = o is n  # parsing shares one object among equal arguments
        found = [] if same else _shared_checks(o, n)
        if j >= self.new_positional and i < self.old_positional:
            found.append(("argument-made-keyword-only", f"argument '{o.name}' is now keyword-only"))
        if not same:
            found += _type_checks(direction, o, n)
            found += _default_checks(direction, o, n)
        return [Break(direction, rule, o.name, message, *parts) for rule, message in found]

    def _return_breaks(self, i: int) -> list[Break]:
        """torch's check of old return `i` against the new one (backward only)."""
        o, n = self.old.returns[i], self.new.returns[i]
        subject = f"return {i}"
        found: list[tuple[str, str]] = []
        if (o.name or "") != (n.name or ""):
            found.append(("return-renamed", f"return {i} is named {_name(n)}, not {_name(o)}"))
        if list_size(o.type) != list_size(n.type) or not is_subtype(n.type, o.type):
            found.append(("return-type-changed", f"return {i} is {_typed(n)}, not {_typed(o)}"))
        if alias_key(o.annotation) != alias_key(n.annotation):
            rule = (
                "return-mutability-changed" if o.is_write != n.is_write else "return-alias-changed"
            )
            found.append((rule, f"return {i} is {_typed(n)}, not {_typed(o)}"))
        parts: tuple[Part, Part] = (("return", i), ("return", i))
        return [Break("backward", rule, subject, message, *parts) for rule, message in found]

    def compatible_changes(self, reported: set[str]) -> list[SchemaChange]:
        """What changed without breaking either direction, for subjects not yet reported."""
        renamed_to = set(self.names.renamed.values())
        return notes.compatible_changes(self.old, self.new, reported | renamed_to)


def _shared_checks(o: Argument, n: Argument) -> list[tuple[str, str]]:
    """The checks both directions make: list size and alias annotation."""
    found: list[tuple[str, str]] = []
    if list_size(o.type) != list_size(n.type):
        message = f"argument '{o.name}' is {_typed(n)}, not {_typed(o)} (list size)"
        found.append(("argument-list-size-changed", message))
    if alias_key(o.annotation) != alias_key(n.annotation):
        rule = (
            "argument-mutability-changed" if o.is_write != n.is_write else "argument-alias-changed"
        )
        found.append((rule, f"argument '{o.name}' is {_typed(n)}, not {_typed(o)}"))
    return found


def _type_checks(direction: Direction, o: Argument, n: Argument) -> list[tuple[str, str]]:
    """Backward: the old type must be a subtype of the new; forward: the other way round."""
    widened, narrowed = is_subtype(o.type, n.type), is_subtype(n.type, o.type)
    if widened if direction == "backward" else narrowed:
        return []
    if widened:
        rule, how = "argument-type-widened", "widened"
    elif narrowed:
        rule, how = "argument-type-narrowed", "narrowed"
    else:
        rule, how = "argument-type-changed", "changed"
    return [(rule, f"argument '{o.name}' type {how} from {o.type} to {n.type}")]


def _default_checks(direction: Direction, o: Argument, n: Argument) -> list[tuple[str, str]]:
    if o.default is not None:
        if n.default is None:
            return [("default-removed", f"argument '{o.name}' lost its default ({o.default})")]
        old, new = default_value(o.type, o.default), default_value(n.type, n.default)
        if old != new:
            message = (
                f"argument '{o.name}' default changed from {render_value(old)} "
                f"to {render_value(new)}"
            )
            return [("default-changed", message)]
        return []
    if direction == "forward" and n.default is not None:
        message = f"argument '{o.name}' gained a default ({n.default}) older versions lack"
        return [("default-added", message)]
    return []


def _typed(part: Argument | Return) -> str:
    return annotated_str(part.type, part.annotation)


def _name(r: Return) -> str:
    return f"'{r.name}'" if r.name else "nothing"
