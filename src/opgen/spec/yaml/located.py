"""Strings read from a YAML file, with where each of their characters is.

Schemas, signatures and formulas are languages inside YAML strings, and their
errors point inside them: at the type in a schema, at the name in a formula. A
YAML value's `Location` is where its text starts (inside the quotes of a
quoted scalar); an offset into the text is an offset on that line only when
the value is written on one line exactly as read: a plain or quoted scalar
without escapes. A value written over several lines is placed line by line,
when its lines joined as YAML joins them give back its text exactly: a block
scalar's (`|`, `>`, as long formulas are written) by a newline for `|` and a
space for `>`; a plain or quoted scalar's, wrapped onto more lines, by a space
(their lines stripped). Otherwise (an escape, a blank or more-indented line)
errors point at the whole value.

Placing is for errors: readers call `written` when they have one to report, or
for the values they parse with their own grammar (formulas, MLX signatures). The
lines are the document's, split once (`Positions.lines`).
"""

from __future__ import annotations

from collections.abc import Sequence

from opgen.diagnostics import Location, SpecError
from opgen.frozen import frozen
from opgen.spec.syntax import SchemaError
from opgen.spec.yaml.load import YamlMap


@frozen
class WrittenText:
    """A string value and where it is."""

    text: str
    location: Location  # where the value starts
    exact: bool  # whether offsets into `text` are columns on the value's line
    # A value over several lines: where each line starts in the text, its line and column.
    lines: tuple[tuple[int, int, int], ...] = ()
    block: str = ""  # a block scalar's indicator, '|' or '>'

    def at(self, offset: int, length: int = 1) -> Location:
        """`length` characters at `offset` into the text; the whole value if they
        cannot be placed."""
        if self.exact:
            return self.location.shifted(offset, length)
        for start, line, col in reversed(self.lines):
            if start <= offset:
                return Location(self.location.file, line, col + offset - start, max(length, 1))
        return self.location

    def place(self, error: SchemaError, offset: int = 0) -> SpecError:
        """A SchemaError of this text (of its part from `offset` on), placed in the file."""
        return SpecError(error.message, self.at(offset + error.offset, error.length))


def written(mapping: YamlMap, key: object) -> WrittenText:
    """The string value of `key` (the caller checked that it is a string)."""
    text = mapping[key]
    assert isinstance(text, str)
    return _written_at(text, mapping.value_location(key), mapping.positions.lines)


def _written_at(text: str, at: Location, lines: Sequence[str]) -> WrittenText:
    line = lines[at.line - 1] if 0 < at.line <= len(lines) else ""
    start = (at.col or 1) - 1
    exact = "\n" not in text and line[start : start + len(text)] == text
    if exact:
        return WrittenText(text, at, exact)
    indicator = line[start : start + 1]
    if indicator in ("|", ">"):
        placed = _block_lines(text, at.line, lines, indicator)
        return WrittenText(text, at, False, placed, indicator)
    quote = line[start - 1 : start] if start else ""
    quoted = quote in ("'", '"')
    placed = _wrapped_lines(text, at, lines, quote if quoted else "") if line else ()
    return WrittenText(text, at, False, placed)


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
    return _placed(content, separator, text.rstrip("\n"))


def _wrapped_lines(
    text: str, at: Location, lines: Sequence[str], quote: str
) -> tuple[tuple[int, int, int], ...]:
    """Where each line of a plain or quoted scalar wrapped from line `at.line` onto the
    next ones is, if its stripped lines joined by spaces give back `text` (else none)."""
    start = (at.col or 1) - 1
    first = lines[at.line - 1].rstrip("\r")[start:].rstrip(" ")
    content = [(first, at.line, start + 1)]
    length = len(first)
    for number in range(at.line + 1, len(lines) + 1):
        if length >= len(text):
            break
        source = lines[number - 1].rstrip("\r")
        stripped = source.strip(" ")
        if not stripped:
            return ()  # a blank line folds to a line break: not followed here
        content.append((stripped, number, len(source) - len(source.lstrip(" ")) + 1))
        length += 1 + len(stripped)
    if len(content) < 2:
        return ()  # on one line, yet not exact: an escape
    if quote:  # the last line ends with the closing quote, and may go on after it
        last, number, col = content[-1]
        end = last.rfind(quote)
        if end < 0:
            return ()
        content[-1] = (last[:end], number, col)
    return _placed(content, " ", text)


def _placed(
    content: Sequence[tuple[str, int, int]], separator: str, text: str
) -> tuple[tuple[int, int, int], ...]:
    """The lines' places, if joining their texts by `separator` gives back `text`."""
    if separator.join(c[0] for c in content) != text:
        return ()
    placed: list[tuple[int, int, int]] = []
    offset = 0
    for piece, number, col in content:
        placed.append((offset, number, col))
        offset += len(piece) + 1
    return tuple(placed)
