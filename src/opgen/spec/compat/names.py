"""Why two schemas have different argument names at one index.

torch compares arguments by index, so one removed argument makes every later
index differ. To report the cause rather than each symptom, the names of both
argument lists are compared once: names only in the old list are *removed*,
names only in the new one *inserted*; a removed and an inserted name at the
same index (of the non-out arguments, or of the out arguments) are a *rename*;
common names out of their old relative order are *moved* (those outside a
longest common subsequence). A difference at an index is then explained by
the first of: a rename there, a move, a removal, an insertion; a difference
between two names that kept their order is a shift, blamed on the first
removal or insertion.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from opgen.frozen import frozen


@frozen
class NameChanges:
    old_names: tuple[str, ...]  # the old schema's argument names, in order
    new_names: tuple[str, ...]  # the new schema's argument names, in order
    old_index: Mapping[str, int]  # each old name's index
    new_index: Mapping[str, int]  # each new name's index
    removed: tuple[str, ...]  # in old order
    inserted: tuple[str, ...]  # in new order
    renamed: Mapping[str, str]  # old name to new name
    moved: frozenset[str]  # names in both whose order relative to the others changed

    @staticmethod
    def of(old: Sequence[str], new: Sequence[str], old_out: int, new_out: int) -> NameChanges:
        """`old_out`, `new_out`: where each list's out arguments start."""
        old_index = {name: i for i, name in enumerate(old)}
        new_index = {name: i for i, name in enumerate(new)}
        renamed: dict[str, str] = {}
        pairs = [*zip(old[:old_out], new[:new_out], strict=False)]
        pairs += zip(old[old_out:], new[new_out:], strict=False)
        for o, n in pairs:
            if o not in new_index and n not in old_index:
                renamed[o] = n
        common_old = [name for name in old if name in new_index]
        common_new = [name for name in new if name in old_index]
        kept = _longest_common_subsequence(common_old, common_new)
        return NameChanges(
            old_names=tuple(old),
            new_names=tuple(new),
            old_index=old_index,
            new_index=new_index,
            removed=tuple(name for name in old if name not in new_index and name not in renamed),
            inserted=tuple(
                name for name in new if name not in old_index and name not in renamed.values()
            ),
            renamed=renamed,
            moved=frozenset(common_old) - kept,
        )

    def explain(self, i: int, j: int) -> tuple[str, str, str]:
        """Rule, subject and message for old argument `i` and new argument `j` differing."""
        o, n = self.old_names[i], self.new_names[j]
        if self.renamed.get(o) == n:
            return "argument-renamed", o, f"argument '{o}' is renamed to '{n}'"
        for name in (o, n):
            if name in self.moved:
                return "argument-reordered", name, self.moved_message(name)
        if o in self.old_index and o not in self.new_index and o not in self.renamed:
            return "argument-removed", o, f"argument '{o}' is removed"
        if n in self.inserted:
            return "argument-inserted", n, self._inserted_message(n)
        return self._first_cause(o)

    def shifted(self, name: str) -> tuple[str, str, str]:
        """Rule, subject and message for an old argument found past the old ones."""
        if name in self.moved:
            return "argument-reordered", name, self.moved_message(name)
        return self._first_cause(name)

    def moved_message(self, name: str) -> str:
        old, new = self.old_index[name], self.new_index[name]
        return f"argument '{name}' moved from position {old + 1} to {new + 1}"

    def _inserted_message(self, name: str) -> str:
        return (
            f"argument '{name}' is inserted before existing arguments "
            "(only arguments added after them keep old calls working)"
        )

    def _first_cause(self, fallback: str) -> tuple[str, str, str]:
        """An argument that only shifted: blame the first removal, insertion or rename."""
        if self.removed:
            name = self.removed[0]
            return "argument-removed", name, f"argument '{name}' is removed"
        if self.inserted:
            return "argument-inserted", self.inserted[0], self._inserted_message(self.inserted[0])
        for old, new in self.renamed.items():
            return "argument-renamed", old, f"argument '{old}' is renamed to '{new}'"
        return "argument-reordered", fallback, self.moved_message(fallback)


def _longest_common_subsequence(a: Sequence[str], b: Sequence[str]) -> frozenset[str]:
    """The names of one longest common subsequence of `a` and `b` (distinct names)."""
    lengths = [[0] * (len(b) + 1) for _ in range(len(a) + 1)]
    for x in range(len(a) - 1, -1, -1):
        for y in range(len(b) - 1, -1, -1):
            if a[x] == b[y]:
                lengths[x][y] = lengths[x + 1][y + 1] + 1
            else:
                lengths[x][y] = max(lengths[x + 1][y], lengths[x][y + 1])
    kept: set[str] = set()
    x = y = 0
    while x < len(a) and y < len(b):
        if a[x] == b[y]:
            kept.add(a[x])
            x, y = x + 1, y + 1
        elif lengths[x + 1][y] >= lengths[x][y + 1]:
            x += 1
        else:
            y += 1
    return frozenset(kept)
