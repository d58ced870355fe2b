"""Coverage: how many of a reference's operators an implementation has, group by group.

The groups, in order: `all` (every operator of the reference); one per
`--tier` file (its operators, whether or not the reference has them: a tier
is the user's list); one per tag of the reference (in its tags file's order,
then any others), with the operators carrying it, unless every operator does.
Each group counts its operators, those the implementation has, and lists the
missing ones in the reference's order; those a lowering spec leaves out (with a reason)
are listed apart from the missing ones. Names the implementation has that the reference
lacks are listed as `extra` (a typo, or an operator of another version).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Literal

from opgen.diagnostics import Diagnostic
from opgen.frozen import frozen
from opgen.tooling.coverage.sources import OperatorSet


@frozen
class Group:
    name: str
    kind: Literal["all", "tier", "tag"]
    total: int
    implemented: int
    missing: tuple[str, ...]  # neither implemented nor left out
    left_out: tuple[str, ...] = ()  # not implemented, on purpose (a lowering spec's)

    @property
    def percent(self) -> float | None:
        return None if self.total == 0 else 100.0 * self.implemented / self.total


@frozen
class Coverage:
    implementation: OperatorSet
    reference: OperatorSet
    groups: tuple[Group, ...]
    extra: tuple[str, ...]  # implemented, not in the reference


def measure(
    implementation: OperatorSet, reference: OperatorSet, tiers: Sequence[tuple[str, OperatorSet]]
) -> Coverage:
    """`tiers`: each tier's name and operators."""
    have = set(implementation.names)
    left = {name for out in implementation.left_out for name in out.overloads}
    groups = [_group("all", "all", reference.names, have, left)]
    groups += [_group(name, "tier", tier.names, have, left) for name, tier in tiers]
    by_tag: dict[str, list[str]] = {}
    for name in reference.names:
        for tag in reference.tags.get(name, ()):
            by_tag.setdefault(tag, []).append(name)
    order = [t for t in reference.tag_order if t in by_tag]
    order += sorted(t for t in by_tag if t not in reference.tag_order)
    # A tag every operator has (`pt2_compliant_tag` on aten's) would repeat `all`.
    everyone = len(reference.names)
    groups += [
        _group(tag, "tag", by_tag[tag], have, left) for tag in order if len(by_tag[tag]) < everyone
    ]
    known = set(reference.names)
    extra = tuple(name for name in implementation.names if name not in known)
    return Coverage(implementation, reference, tuple(groups), extra)


def _group(
    name: str,
    kind: Literal["all", "tier", "tag"],
    members: Sequence[str],
    have: set[str],
    left: set[str],
) -> Group:
    absent = [m for m in members if m not in have]
    missing = tuple(m for m in absent if m not in left)
    left_out = tuple(m for m in absent if m in left)
    return Group(name, kind, len(members), len(members) - len(absent), missing, left_out)


def tier_warnings(
    reference: OperatorSet, tiers: Sequence[tuple[str, OperatorSet]]
) -> list[Diagnostic]:
    """A warning for each tier operator the reference does not have (a typo, most often)."""
    known = set(reference.names)
    return [
        Diagnostic(
            tier.locations[name],
            f"'{name}' is not an operator of {reference.path}",
            "warning",
        )
        for _, tier in tiers
        for name in tier.names
        if name not in known
    ]
