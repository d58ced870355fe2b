"""What a comparison of two schemas reports: `SchemaChange`, the directions it breaks,
and the part of each schema it points at.

`schemas` finds the changes that break a direction and `notes` those that break
neither; both report them in these terms.
"""

from __future__ import annotations

from typing import Literal

from opgen.frozen import frozen

Direction = Literal["backward", "forward"]
# What a change points at in each schema: an argument (schema order) or a return, by index.
Part = tuple[Literal["argument", "return"], int]


@frozen
class SchemaChange:
    """One change between two schemas, with the directions it breaks (none: compatible)."""

    rule: str  # what changed, as a name (`argument-removed`, `return-type-changed`, ...)
    subject: str  # the argument or return it is about; "" for the whole schema
    message: str  # the change in a sentence, for the report
    breaks: tuple[Direction, ...]  # the directions whose check it fails, in torch's order
    old: Part | None  # where it is in the old schema; None when it is not there
    new: Part | None  # where it is in the new schema; None when it is not there
