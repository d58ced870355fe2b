"""A pure-Python reader for the block YAML that spec files are written in.

`read_subset` gives exactly what `full.read_full` (PyYAML's safe loader)
gives, values, types and every location alike, for documents in the subset
below, and None for any other document, which the caller then hands to PyYAML.
It never reports an error: a document with one is not in the subset, so
PyYAML's path produces every diagnostic, unchanged.

The subset, enough for torch's `native_functions.yaml`, `tags.yaml` and
`derivatives.yaml`:

- block mappings and block sequences nested by indentation, including
  `- key: value` entries and a sequence at its key's indentation;
- keys: one-line plain scalars, at most 1,000 characters (YAML allows 1,024);
- values and items: one-line plain scalars; single- and double-quoted scalars,
  also over several lines (double-quoted ones without `\\` escapes); literal
  block scalars (`|`, `|-`, `|+`) whose indentation is found from their first
  line; flow sequences of one-line scalars on one line (`[a, 'b']`, `[]`); the
  empty flow mapping `{}`;
- comments, blank lines, LF or CRLF line ends, no tab anywhere.

Plain scalars are typed as PyYAML's resolver (YAML 1.1) types them: a plain
scalar can be anything but a string only if it starts with one of
`yYnNtTfFoO~<=-+.0123456789` (the first characters PyYAML's resolver tries:
booleans, null, numbers, timestamps, `<<` and `=`). Booleans, null and decimal
ints are read here; a scalar that may be any other number or a timestamp, or
is `<<` or `=`, puts the document outside the subset. So do anchors, aliases
and tags, directives and document markers, complex keys, other flow
collections, folded scalars, multi-line plain scalars, duplicate keys and any
line the reader does not expect.

Speed: one regex, matched by `finditer` over the whole text, splits each
content line into its indentation, `-`, key and rest, skipping blank lines and
comments on the way; the Python work per line is a handful of operations.
Locations are not computed while reading: each key records its line's match,
from which `_TextPositions` derives a `Location` when one is asked for.
"""

from __future__ import annotations

import re
from bisect import bisect_right
from collections.abc import Callable
from itertools import accumulate

from opgen.cached import cached
from opgen.diagnostics import Location
from opgen.spec.yaml.values import YamlDocument, YamlList, YamlMap

Line = re.Match[str]

# One content line: the groups are the indentation, a block sequence entry's
# `-` with the spaces after it, a plain key (maybe with spaces before its ':'),
# and the rest of the line. Blank lines and comment lines before it are
# skipped. Every position matches (all parts are optional), so on a text that
# ends with a line break `finditer` yields each content line in turn, then one
# empty match at the end of the text. (Each construct here costs time on every
# line: keys are checked further only when first seen, trailing spaces are
# left to the rare values that have them, an empty line is tried first, as a
# part of a spec is mostly empty lines.)
_LINE = re.compile(
    r"""
    (?:\n|[ ]*(?:\#[^\n]*)?\n)*
    ([ ]*)
    (-(?:[ ]+|(?=\n)))?
    (?:([^-?:,\[\]{}\#&*!|>'"%@`\ \n][^:\#\n]*):(?:[ ]+|(?=\n)))?
    ([^\n]*)
    """,
    re.VERBOSE,
)
_INDENT, _DASH, _KEY, _REST = 1, 2, 3, 4

# An item of a one-line flow sequence, then ',' or ']'. Plain items exclude
# ':', '?' and '#', whose meaning inside flow collections varies with the
# libyaml version.
_FLOW_ITEM = re.compile(
    r"""
    [ ]*
    (?:
        ([^-?:,\[\]{}\#&*!|>'"%@`\ ](?:[^?:,\[\]{}\#]*[^?:,\[\]{}\#\ ])?)
      | '((?:[^']|'')*)'
      | "([^"\\]*)"
    )
    [ ]*([,\]])
    """,
    re.VERBOSE,
)
_EMPTY_FLOW = re.compile(r"\[[ ]*\]|\{[ ]*\}")
# Patterns that most documents never need are kept as text and compiled where
# used (`re` caches them): compiling them all costs every run about 1 ms.
# Quoted scalars, also over several lines when matched on the text.
_SINGLE_QUOTED = r"'((?:[^']|'')*)'(?!')"
_DOUBLE_QUOTED = r'"([^"\\]*)"'
_LITERAL_HEADER = re.compile(r"\|([-+]?)(?:[ ]+(?:\#.*)?)?")
_COMMENT_ONLY = re.compile(r"(?:[ ]+(?:\#.*)?)?")  # what may follow a value on its line

# What the first character of a value says about it (absent: a plain string).
_TYPED, _DASH_START, _SINGLE, _DOUBLE, _FLOW_SEQUENCE, _FLOW_MAPPING, _LITERAL, _COMMENT = range(8)
_OUTSIDE = -1
# The first characters of plain scalars PyYAML's resolver may type as other than strings.
_TYPED_FIRST = frozenset("yYnNtTfFoO~<=-+.0123456789")
_FIRST = {
    **dict.fromkeys(_TYPED_FIRST - {"-"}, _TYPED),
    "-": _DASH_START,
    "'": _SINGLE,
    '"': _DOUBLE,
    "[": _FLOW_SEQUENCE,
    "{": _FLOW_MAPPING,
    "|": _LITERAL,
    "#": _COMMENT,
    **dict.fromkeys("?:,]}&*!>%@`", _OUTSIDE),
}
_NUMERIC_FIRST = frozenset("-+.0123456789")
_NOT_A_WORD = object()
_WORDS: dict[str, object] = {
    **dict.fromkeys(("yes", "Yes", "YES", "true", "True", "TRUE", "on", "On", "ON"), True),
    **dict.fromkeys(("no", "No", "NO", "false", "False", "FALSE", "off", "Off", "OFF"), False),
    **dict.fromkeys(("~", "null", "Null", "NULL"), None),
}
_DECIMAL = r"[-+]?(?:0|[1-9][0-9]*)"
# Every character of PyYAML's int, float and timestamp patterns: a scalar made
# of others only is none of them.
_NUMBER_LIKE = r"[-+.0-9_:a-fA-FxXiInNtTZ ]*"
# Characters that no document in the subset contains (tabs; CR once CRLF is
# made LF; other controls), and the lines that start directives or markers.
_ASCII_OUTSIDE = tuple(chr(c) for c in (*range(0x20), 0x7F) if c != 0x0A)
_NON_ASCII_OUTSIDE = "[\x80-\x9f\u2028\u2029\ufeff\ufffe\uffff\ud800-\udfff]"
_MARKERS = ("---", "...", "%")
_MARKER_LINE = re.compile(r"\n(?:---|\.\.\.|%)")


class _NotInSubset(Exception):
    """The document uses YAML outside the subset: PyYAML must read it."""


def read_subset(path: str, text: str) -> YamlDocument | None:
    """The document, if it is in the subset; else None (read it with PyYAML)."""
    source = text.replace("\r\n", "\n") if "\r" in text else text  # same lines, columns, values
    if not _in_subset_characters(source):
        return None
    added_break = not source.endswith("\n")
    if added_break:
        source += "\n"  # changes no line or column
    positions = _TextPositions(path, source)
    try:
        document = _Reader(source, positions, added_break).document()
    except (_NotInSubset, RecursionError):
        return None
    if document is None:
        return YamlDocument(path, text, None, Location(path, 1))
    root, line = document
    return YamlDocument(path, text, root, Location(path, line, 1))


def _in_subset_characters(text: str) -> bool:
    if any(c in text for c in _ASCII_OUTSIDE):
        return False
    if not text.isascii() and re.search(_NON_ASCII_OUTSIDE, text):
        return False
    return not (text.startswith(_MARKERS) or _MARKER_LINE.search(text))


def _resolve(text: str) -> object:
    """The value of plain scalar `text`, which starts with a character in `_TYPED_FIRST`."""
    word = _WORDS.get(text, _NOT_A_WORD)
    if word is not _NOT_A_WORD:
        return word
    if text[0] in _NUMERIC_FIRST:
        if re.fullmatch(_DECIMAL, text):
            return int(text)
        if re.fullmatch(_NUMBER_LIKE, text):
            raise _NotInSubset  # maybe a float, an octal or hex int, a timestamp...
    elif text in ("<<", "="):
        raise _NotInSubset  # a merge key, or PyYAML's value tag
    return text


def _key(name: str) -> object:
    """The key that `name`, a key group of `_LINE`, reads as."""
    if len(name) > 1000:
        raise _NotInSubset  # YAML allows keys of up to 1,024 characters, ':' included
    name = name.rstrip(" ")
    return _resolve(name) if name[0] in _TYPED_FIRST else name


def _plain(rest: str) -> object:
    """A one-line plain scalar in block context, from the rest of its line."""
    cut = rest.find(" #")
    rest = (rest[:cut] if cut >= 0 else rest).rstrip(" ")
    if ": " in rest or rest[-1] == ":":
        raise _NotInSubset  # a mapping inside a value
    return _resolve(rest) if rest[0] in _TYPED_FIRST else rest


class _Reader:
    """Reads one document; each method takes and returns the current content line."""

    def __init__(self, text: str, positions: _TextPositions, added_break: bool) -> None:
        self.text = text
        self.added_break = added_break  # the text's last line break is not in the file
        self.positions = positions
        self.next_line: Callable[[], Line] = _LINE.finditer(text).__next__
        self.counted = 0  # the line breaks before this offset are counted in `line`
        self.line = 1
        self.keys: dict[str, object] = {}  # keys by text
        self.typed: dict[str, object] = {}  # values that may not be strings, by text

    def line_at(self, offset: int) -> int:
        """The line of `offset`; offsets must come in increasing order."""
        self.line += self.text.count("\n", self.counted, offset)
        self.counted = offset
        return self.line

    def document(self) -> tuple[YamlMap | YamlList, int] | None:
        """The root collection and its line, or None if there is nothing but comments."""
        m = self.next_line()
        if m.start(_INDENT) == len(self.text):
            return None
        indent, dash, key, _ = m.groups()
        root: YamlMap | YamlList
        if indent:
            raise _NotInSubset
        if dash is not None:
            line = self.line_at(m.start(_DASH))
            root, m = self.sequence(0, m)
        elif key is not None:
            root, m = self.mapping(0, m)
            line = root.line
        else:
            raise _NotInSubset  # a scalar document
        if m.start(_INDENT) != len(self.text):
            raise _NotInSubset  # a line the root does not take
        return root, line

    def block(self, column: int, m: Line) -> tuple[YamlMap | YamlList, Line]:
        """The collection that starts on line `m`, at `column` (its indentation)."""
        if m.group(_DASH) is not None:
            return self.sequence(column, m)
        if m.group(_KEY) is not None:
            return self.mapping(column, m)
        raise _NotInSubset  # a scalar on a line of its own

    def mapping(self, column: int, m: Line) -> tuple[YamlMap, Line]:
        """The block mapping whose first key, on line `m`, is at `column`."""
        at = m.start(_KEY)
        line = self.line_at(at)
        values: dict[object, object] = {}  # a plain dict is faster to fill than a YamlMap
        entry_at: dict[object, object] = {}
        next_line = self.next_line
        keys = self.keys
        typed = self.typed
        kind_of = _FIRST.get
        indent, dash, name, rest = m.groups()
        while True:
            key = keys.get(name, _NOT_A_WORD)
            if key is _NOT_A_WORD:
                key = keys[name] = _key(name)
            if key in values:
                raise _NotInSubset  # a duplicate: PyYAML's path reports it
            entry_at[key] = m
            kind = kind_of(rest[0]) if rest else _COMMENT
            if kind is None:  # a plain string, the common case
                if " #" in rest or ": " in rest or rest[-1] in ": ":
                    values[key] = _plain(rest)
                else:
                    values[key] = rest
                m = next_line()
            elif kind == _TYPED:
                value = typed.get(rest, _NOT_A_WORD)
                if value is _NOT_A_WORD:
                    value = typed[rest] = _plain(rest)
                values[key] = value
                m = next_line()
            elif kind == _COMMENT:  # the value is on the next lines, or empty
                m = next_line()
                below = len(m.group(_INDENT))
                if below > column:
                    values[key], m = self.block(below, m)
                elif below == column and m.group(_DASH) is not None:
                    values[key], m = self.sequence(column, m)
                else:
                    values[key] = None
            else:
                values[key], m = self.special(kind, rest, m, column)
            indent, dash, name, rest = m.groups()
            if len(indent) != column or dash is not None or name is None:
                if len(indent) > column:
                    raise _NotInSubset
                mapping = YamlMap(values)
                mapping.line = line
                mapping.positions = self.positions
                mapping.at = at
                mapping.entry_at = entry_at
                return mapping, m

    def sequence(self, column: int, m: Line) -> tuple[YamlList, Line]:
        """The block sequence whose first `-`, on line `m`, is at `column`."""
        items = YamlList()
        items.positions = self.positions
        items.at = m.start(_DASH)
        item_at: list[object] = []
        items.item_at = item_at
        next_line = self.next_line
        indent, dash, key, rest = m.groups()
        value: object
        while True:
            item_at.append(m)
            if key is not None:
                value, m = self.mapping(column + len(dash), m)
            elif not rest or rest[0] == "#":  # the item is on the next lines, or empty
                m = next_line()
                below = len(m.group(_INDENT))
                if below > column:
                    value, m = self.block(below, m)
                else:
                    value = None
            else:
                kind = _FIRST.get(rest[0])
                if kind is None:
                    value = _plain(rest)
                    m = next_line()
                else:
                    value, m = self.special(kind, rest, m, column)
            items.append(value)
            indent, dash, key, rest = m.groups()
            if len(indent) != column or dash is None:
                if len(indent) > column:
                    raise _NotInSubset
                return items, m

    def special(self, kind: int, rest: str, m: Line, parent: int) -> tuple[object, Line]:
        """A value that does not start as plain strings do; `parent` is its collection's column."""
        if kind == _TYPED:
            return _plain(rest), self.next_line()
        if kind == _DASH_START:
            if len(rest) == 1 or rest[1] == " ":
                raise _NotInSubset  # a block sequence where a value should be
            return _plain(rest), self.next_line()
        if kind == _FLOW_SEQUENCE:
            return self.flow_sequence(rest, m), self.next_line()
        if kind == _FLOW_MAPPING:
            empty = _EMPTY_FLOW.match(rest)
            if empty is None or not _COMMENT_ONLY.fullmatch(rest, empty.end()):
                raise _NotInSubset
            mapping = YamlMap()
            at = m.start(_REST)
            mapping.line = self.line_at(at)
            mapping.positions = self.positions
            mapping.at = at
            mapping.entry_at = {}
            return mapping, self.next_line()
        if kind in (_SINGLE, _DOUBLE):
            quoted = re.match(_SINGLE_QUOTED if kind == _SINGLE else _DOUBLE_QUOTED, rest)
            if quoted is None:
                return self.multiline_quoted(kind, m)
            if not _COMMENT_ONLY.fullmatch(rest, quoted.end()):
                raise _NotInSubset
            return _unquoted(kind, quoted.group(1)), self.next_line()
        if kind == _LITERAL:
            return self.literal(rest, m, parent)
        raise _NotInSubset

    def flow_sequence(self, rest: str, m: Line) -> YamlList:
        """A flow sequence of scalars on one line; items are located by (offset, length)."""
        start = m.start(_REST)
        items = YamlList()
        items.positions = self.positions
        items.at = start
        item_at: list[object] = []
        items.item_at = item_at
        empty = _EMPTY_FLOW.match(rest)
        if empty is not None:
            end = empty.end()
        else:
            end = 1  # after the '['
            separator = ","
            while separator == ",":
                item = _FLOW_ITEM.match(rest, end)
                if item is None:
                    raise _NotInSubset
                plain, single, double, separator = item.groups()
                if plain is not None:
                    items.append(_resolve(plain) if plain[0] in _TYPED_FIRST else plain)
                    item_at.append((start + item.start(1), len(plain)))
                elif single is not None:
                    items.append(single.replace("''", "'"))
                    item_at.append((start + item.start(2), max(1, len(single))))
                else:
                    items.append(double)
                    item_at.append((start + item.start(3), max(1, len(double))))
                end = item.end()
        if not _COMMENT_ONLY.fullmatch(rest, end):
            raise _NotInSubset
        return items

    def multiline_quoted(self, kind: int, m: Line) -> tuple[str, Line]:
        """A quoted scalar that ends on a later line: its lines are folded."""
        text = self.text
        start = m.start(_REST)
        pattern = re.compile(_SINGLE_QUOTED if kind == _SINGLE else _DOUBLE_QUOTED)
        quoted = pattern.match(text, start)
        if quoted is None or "\n" not in quoted.group(1):
            raise _NotInSubset  # unclosed, or a '\' escape
        close = quoted.end()
        line_end = text.find("\n", close)
        if line_end < 0:
            line_end = len(text)
        if not _COMMENT_ONLY.fullmatch(text, close, line_end):
            raise _NotInSubset
        m = self.next_line()
        while m.start(_INDENT) < line_end:
            m = self.next_line()
        return _unquoted(kind, _folded(quoted.group(1))), m

    def literal(self, rest: str, m: Line, parent: int) -> tuple[str, Line]:
        """A literal block scalar, from its header `|` on line `m`."""
        header = _LITERAL_HEADER.fullmatch(rest)
        if header is None:
            raise _NotInSubset  # an indentation indicator, or a comment without a space
        text = self.text
        pos = m.end() + 1
        lines: list[str] = []
        indent = 0  # of the content, once its first line is seen
        leading = 0  # the widest blank line before that
        while pos < len(text):
            end = text.index("\n", pos)
            line = text[pos:end]
            width = len(line) - len(line.lstrip(" "))
            if width == len(line):  # blank
                if not indent:
                    leading = max(leading, width)
                lines.append(line[indent:] if indent and width > indent else "")
            else:
                if not indent:
                    if width <= parent or width < leading:
                        raise _NotInSubset  # an empty scalar, or a blank line too wide
                    indent = width
                elif width < indent:
                    break
                lines.append(line[indent:])
            pos = end + 1
        if not indent or (pos == len(text) and self.added_break):
            raise _NotInSubset  # no content, or a last line without a line break
        trailing = 0
        while not lines[-1]:
            lines.pop()
            trailing += 1
        value = "\n".join(lines)
        chomping = header.group(1)
        if chomping == "":
            value += "\n"
        elif chomping == "+":
            value += "\n" * (trailing + 1)
        m = self.next_line()
        while m.start(_INDENT) < pos:
            m = self.next_line()
        return value, m


def _unquoted(kind: int, body: str) -> str:
    return body.replace("''", "'") if kind == _SINGLE else body


def _folded(body: str) -> str:
    """A quoted scalar's text over several lines, as YAML folds it.

    Each line break, with the spaces around it, becomes one space; each blank
    line after the first break becomes a line break instead.
    """
    parts = body.split("\n")
    folded = parts[0].rstrip(" ")
    last = len(parts) - 1
    blank = 0
    for i in range(1, last + 1):
        part = parts[i].strip(" ") if i < last else parts[i].lstrip(" ")
        if not part and i < last:
            blank += 1
            continue
        folded += ("\n" * blank if blank else " ") + part
        blank = 0
    return folded


class _TextPositions:
    """Positions in the (LF) text: offsets, or the regex match of a line.

    A collection's position is its start offset; a key's, the match of its
    line; a value or an item on that line is found again in the match when its
    location is asked for; a flow sequence's item has (offset, length).
    """

    def __init__(self, path: str, text: str) -> None:
        self.path = path
        self.text = text

    @cached
    def lines(self) -> list[str]:
        return self.text.split("\n")

    @cached
    def _line_starts(self) -> list[int]:
        return list(accumulate((len(line) + 1 for line in self.text.split("\n")), initial=0))

    def _location(self, offset: int, length: int) -> Location:
        starts = self._line_starts
        line = bisect_right(starts, offset)
        return Location(self.path, line, offset - starts[line - 1] + 1, length)

    def _location_in(self, mapping: YamlMap, offset: int, length: int) -> Location:
        """`_location` of an offset in `mapping`, counted from the mapping's first line:
        a spec's few warnings then scan a few lines each, not the whole text once (which
        a text that is mostly blank lines, as `opgen.spec.partial` leaves it, makes long)."""
        at = mapping.at
        if not isinstance(at, int) or offset < at:
            return self._location(offset, length)
        line = mapping.line + self.text.count("\n", at, offset)
        return Location(self.path, line, offset - self.text.rfind("\n", 0, offset), length)

    def of_collection(self, at: object) -> Location:
        assert isinstance(at, int)
        return self._location(at, 1)

    def of_key(self, mapping: YamlMap, key: object) -> Location:
        m = mapping.entry_at[key]
        assert isinstance(m, re.Match)
        return self._location_in(mapping, m.start(_KEY), len(m.group(_KEY).rstrip(" ")))

    def of_value(self, mapping: YamlMap, key: object) -> Location:
        value = mapping[key]
        if isinstance(value, YamlMap | YamlList):
            return value.location
        m = mapping.entry_at[key]
        assert isinstance(m, re.Match)
        return self._location_in(mapping, *self._scalar(m))

    def of_item(self, items: YamlList, index: int) -> Location:
        value = items[index]
        if isinstance(value, YamlMap | YamlList):
            return value.location
        at = items.item_at[index]
        if isinstance(at, tuple):
            return self._location(*at)
        assert isinstance(at, re.Match)
        return self._location(*self._scalar(at))

    def _scalar(self, m: Line) -> tuple[int, int]:
        """Offset and length of the scalar value or item on line `m`, as PyYAML marks it."""
        rest = m.group(_REST)
        start = m.start(_REST)
        if not rest or rest[0] == "#":  # empty: PyYAML marks it after the ':' or the '-'
            if m.group(_KEY) is not None:
                return self.text.index(":", m.end(_KEY)) + 1, 1
            return m.start(_DASH) + 1, 1
        first = rest[0]
        if first == "'" or first == '"':
            quoted = re.match(_SINGLE_QUOTED if first == "'" else _DOUBLE_QUOTED, rest)
            if quoted is None:  # it ends on a later line
                return start + 1, 1
            return start + 1, max(1, quoted.end() - 2)
        if first == "|":
            return start, 1
        cut = rest.find(" #")
        return start, len((rest[:cut] if cut >= 0 else rest).rstrip(" "))
