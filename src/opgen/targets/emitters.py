"""Emitters and the one runner of emitter tables.

An emitter is a pure function from a target's model to what it makes: `Emitted`, its
files (fresh `OutputSet`s, by the name of the set they belong to), notes and warnings.
It changes nothing it was given. A target lists its emitters in a table, in the order
its upstream writes the files, and `run_emitters` runs the ones a run asks for and
gathers what they made into one set per name, in that order: the files are the ones
the emitters made, added in the order they made them.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import TYPE_CHECKING, TypeVar

from opgen.frozen import field, frozen

if TYPE_CHECKING:
    from opgen.diagnostics import Diagnostic
    from opgen.output import OutputSet

ModelT = TypeVar("ModelT")


@frozen(eq=False)
class Emitted:
    """What one emitter made, or what a table of them made together."""

    files: Mapping[str, OutputSet] = field(default_factory=dict)  # by the set's name
    notes: Sequence[str] = ()  # lines for stdout
    warnings: Sequence[Diagnostic] = ()  # located, for stderr


Emitter = Callable[[ModelT], Emitted]


def run_emitters(
    model: ModelT, emitters: Iterable[Emitter[ModelT]], sets: Mapping[str, OutputSet]
) -> Emitted:
    """Every emitter's files added to `sets` (empty sets, one per name an emitter may
    use, which the caller made for this run), and their notes and warnings, in order."""
    notes: list[str] = []
    warnings: list[Diagnostic] = []
    for emit in emitters:
        emitted = emit(model)
        for name, files in emitted.files.items():
            sets[name].extend(files)
        notes.extend(emitted.notes)
        warnings.extend(emitted.warnings)
    return Emitted(sets, tuple(notes), tuple(warnings))
