"""Strings read from a YAML file, with where each of their characters is.

Signatures and formulas are languages inside YAML strings, and their errors
point inside them: at the type in a signature, at the name in a formula. A
YAML value's `Location` is where its text starts (inside the quotes of a
quoted scalar); an offset into the text is an offset on that line only when
the value is written on one line exactly as read: a plain or quoted scalar
without escapes. A block scalar (`|`, `>`, as long formulas are written) is
placed line by line, when its lines joined as YAML joins them (a newline for
`|`, a space for `>`) give back its text exactly. Otherwise (an escape, a
folded scalar with blank or more-indented lines) errors point at the whole
value.
"""

from __future__ import annotations

from collections.abc import Sequence

from opgen.diagnostics import Location, SpecError
from opgen.frozen import frozen
from opgen.spec.load import YamlMap
from opgen.spec.syntax import SchemaError


@frozen
class WrittenText:
    """A string value and where it is."""

    text: str
    location: Location  # where the value starts
    exact: bool  # whether offsets into `text` are columns on the value's line
    # A block scalar's lines: where each starts in the text, its line and its column.
    block_lines: tuple[tuple[int, int, int], ...] = ()

    def at(self, offset: int, length: int = 1) -> Location:
        """`length` characters at `offset` into the text; the whole value if not exact."""
        if self.exact:
            return self.location.shifted(offset, length)
        for start, line, col in reversed(self.block_lines):
            if start <= offset:
                return Location(self.location.file, line, col + offset - start, max(length, 1))
        return self.location

    def place(self, error: SchemaError) -> SpecError:
        """A SchemaError of this text, placed in the file."""
        return SpecError(error.message, self.at(error.offset, error.length))


def written(mapping: YamlMap, key: object, lines: Sequence[str]) -> WrittenText:
    """The string value of `key` (the caller checked that it is a string)."""
    text = mapping[key]
    assert isinstance(text, str)
    return written_at(text, mapping.value_location(key), lines)


def written_at(text: str, at: Location, lines: Sequence[str]) -> WrittenText:
    line = lines[at.line - 1] if 0 < at.line <= len(lines) else ""
    start = (at.col or 1) - 1
    exact = "\n" not in text and line[start : start + len(text)] == text
    indicator = line[start : start + 1]
    if exact or indicator not in ("|", ">"):
        return WrittenText(text, at, exact)
    return WrittenText(text, at, False, _block_lines(text, at.line, lines, indicator))


def _block_lines(
    text: str, first: int, lines: Sequence[str], indicator: str
) -> tuple[tuple[int, int, int], ...]:
    """Where each line of a block scalar starting after line `first` is, if its lines
    give back `text` (else none)."""
    content: list[tuple[str, int, int]] = []  # text, line, column
    indent: int | None = None
    for number in range(first + 1, len(lines) + 1):
        source = lines[number - 1].rstrip("\r")
        stripped = source.lstrip(" ")
        if not stripped:
            break  # a blank line: folding rules that this reading does not follow
        own = len(source) - len(stripped)
        indent = own if indent is None else indent
        if own < indent:
            break
        content.append((source[indent:], number, indent + 1))
    separator = "\n" if indicator == "|" else " "
    if separator.join(c[0] for c in content) != text.rstrip("\n"):
        return ()
    placed: list[tuple[int, int, int]] = []
    offset = 0
    for piece, number, col in content:
        placed.append((offset, number, col))
        offset += len(piece) + 1
    return tuple(placed)
