"""Text templates with `$name` placeholders, rendering exactly as torchgen's `CodeTemplate`.

Syntax. A placeholder is `$` and an identifier (`$name`), or the identifier in
braces (`${name}`) so that it can touch the text after it. An identifier is a
word character that is not a digit, then any word characters (Unicode rules, as
in Python's `re`). Anything else beginning with `$` (`$1`, `${ name}`, `${`, a
lone `$`) is literal text; there is no escape, so `$$name` is a `$` followed by
the placeholder `$name`.

A placeholder is a *block* when only whitespace stands between the start of its
line (after a `\n`, or the start of the text) and the `$`; column 0 counts.
Its value is rendered as lines (split at every line break `str.splitlines`
knows): a list contributes the lines of each element, anything else the lines
of its own text. Each line that is not blank is indented by the whitespace in
front of the placeholder, every line loses its trailing whitespace, blank lines
become empty, and trailing blank lines are dropped, so the block never ends in
a newline of its own: the text after the placeholder, normally the line's
newline, follows its last line. An empty list renders as nothing, indent
included, leaving an empty line.

Any other placeholder is *inline*. A list becomes its elements joined by
`, `; anything else becomes `str(value)` unchanged, newlines and all. In braces,
a comma before or after the name (`${,name}`, `${name,}`, `${,name,}`) adds
`, ` on that side, but only for a non-empty list; on non-list values and on
block placeholders the commas are ignored.

Only `list` counts as a list; a tuple or other sequence is rendered with
`str()`. Values are looked up in the keyword arguments of `substitute`, then
in its mapping; a name found in neither raises `TemplateKeyError` (a
`KeyError`) with the placeholder's location.

A template is parsed once, into literal text and placeholders, when it is
built; `substitute` then only renders the values and joins the pieces.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterable, Mapping
from itertools import chain, repeat
from types import MappingProxyType

from opgen.diagnostics import Diagnostic, Location
from opgen.frozen import field, frozen

__all__ = ["Placeholder", "Template", "TemplateKeyError"]

# `(?!\d)\w+` is an identifier: a word character that is not a digit, then word characters.
_PLACEHOLDER = re.compile(
    r"""
    \$ (?:
        (?P<bare> (?!\d)\w+ )                                    # $name
      | \{ (?P<lead>,?) (?P<name> (?!\d)\w+ ) (?P<trail>,?) \}   # ${name}, ${,name,}, ...
    )
    """,
    re.VERBOSE,
)
_NO_VALUES: Mapping[str, object] = MappingProxyType({})
_concat = chain.from_iterable

# For `_render_ascii_block`: the ASCII whitespace (`str.isspace`) that is no line break.
_ASCII_SPACES = " \t\x1f"


@frozen
class Placeholder:
    """One `$name` of a template, where it is and how it renders."""

    name: str
    location: Location
    block: bool
    indent: str
    """The whitespace in front of a block placeholder; empty for an inline one."""
    comma_before: bool
    comma_after: bool


class TemplateKeyError(KeyError):
    """A placeholder of a template has no value; `args[0]` is its name, as with `KeyError`."""

    def __init__(self, placeholder: Placeholder, missing: tuple[str, ...]) -> None:
        super().__init__(placeholder.name)
        self.name = placeholder.name
        self.location = placeholder.location
        self.missing = missing
        """Every name of the template without a value, in order of first use."""

    def __str__(self) -> str:
        message = f"no value for template placeholder '{self.name}'"
        others = [n for n in self.missing if n != self.name]
        if others:
            message += " (also missing: " + ", ".join(f"'{n}'" for n in others) + ")"
        return str(Diagnostic(self.location, message))


def _block_prefix(indent: str) -> str:
    """What a block puts in front of each non-blank line, given the placeholder's indent.

    The indent is normally spaces and tabs. torchgen splits the indented text into
    lines again, so line-breaking whitespace in the indent (form feed, `\\r`, `\\x1c`,
    ...) turns into newlines; everything after the last one stays as the indent.
    """
    pieces = (indent + ".").splitlines()
    return "\n" * (len(pieces) - 1) + pieces[-1][:-1]


def _render_ascii_block(prefix: str, texts: list[str]) -> str | None:
    """`_render_block` of elements with these texts, which are exactly `str`, by
    whole-text operations; None if the two might differ.

    They agree when the texts are ASCII, "\n" is their only line break and the
    prefix has none: then an element's lines are its text split at "\n", less one
    final "\n" if it has one (`""` has none), and trailing whitespace is made of
    `_ASCII_SPACES`. Each step is a C-level pass, with no string per line.
    """
    if "\n" in prefix:
        return None
    if "" in texts:
        texts = list(filter(None, texts))
    text = "\n".join(map(str.removesuffix, texts, repeat("\n")))
    # ASCII line breaks of `str.splitlines` besides "\n" (the others are not ASCII).
    if not text.isascii() or (
        "\r" in text
        or "\x0b" in text
        or "\x0c" in text
        or "\x1c" in text
        or "\x1d" in text
        or "\x1e" in text
    ):
        return None
    # Trailing blank lines and the last line's trailing whitespace go first. Then every
    # other line with trailing whitespace is made to end in " \n", and the text is split
    # there, the ends of the pieces stripped and the pieces joined again.
    text = text.rstrip()
    if "\t" in text:
        text = text.replace("\t\n", " \n")
    if "\x1f" in text:
        text = text.replace("\x1f\n", " \n")
    if " \n" in text:
        text = "\n".join(map(str.rstrip, text.split(" \n"), repeat(_ASCII_SPACES)))
    if not prefix or not text:
        return text
    # Prefix every line, then unprefix the blank ones, which are now exactly `prefix`
    # (the others end in non-whitespace). A pass of `replace` skips a blank line whose
    # "\n" before it ended the previous match, never two lines running, so two suffice.
    text = prefix + text.replace("\n", "\n" + prefix)
    blank = "\n" + prefix + "\n"
    text = text.replace(blank, "\n\n").replace(blank, "\n\n")
    return text[len(prefix) :] if text.startswith(prefix + "\n") else text


def _render_block(prefix: str, value: object) -> str:
    if isinstance(value, list):
        if {*map(type, value)} <= {str}:
            fast = _render_ascii_block(prefix, value)
            if fast is not None:
                return fast
        texts = list(map(str, value))
    else:
        text = str(value)
        if "\n" not in text:
            split = text.splitlines()
            if len(split) <= 1:  # the common short value, without building lists
                line = split[0].rstrip() if split else ""
                return prefix + line if line else line
        if type(text) is str:
            fast = _render_ascii_block(prefix, [text])
            if fast is not None:
                return fast
        texts = [text]
    # Lines of each element, trailing whitespace stripped (a blank line strips to "").
    lines: Iterable[str] = map(str.rstrip, _concat(map(str.splitlines, texts)))
    if prefix:
        lines = [prefix + line if line else line for line in lines]
    # The last non-blank line ends in non-whitespace: this only drops trailing blank lines.
    return "\n".join(lines).rstrip()


def indented(indent: str, value: object) -> str:
    """What a block placeholder standing at `indent` becomes for `value` (a text or a
    list of texts): its lines, each non-blank one prefixed, trailing whitespace and
    trailing blank lines dropped; "" for nothing. For emitters that build a
    snippet with an f-string rather than a `Template`."""
    return _render_block(_block_prefix(indent), value)


@frozen(eq=False)
class Template:
    """A parsed template. Build it once; `substitute` as often as needed."""

    text: str
    filename: str = "<template>"
    placeholders: tuple[Placeholder, ...] = field(init=False, repr=False)
    names: tuple[str, ...] = field(init=False, repr=False)
    """The placeholder names, each once, in order of first use."""
    # The output's pieces: literal text, with "" where a placeholder's text goes.
    _pieces: tuple[str, ...] = field(init=False, repr=False)
    # Per placeholder: (index in _pieces, name, block prefix or None if inline, before, after).
    _slots: tuple[tuple[int, str, str | None, str, str], ...] = field(init=False, repr=False)

    def __post_init__(self) -> None:
        placeholders: list[Placeholder] = []
        pieces: list[str] = []
        slots: list[tuple[int, str, str | None, str, str]] = []
        text = self.text
        start = 0
        line, counted = 1, 0
        for m in _PLACEHOLDER.finditer(text):
            dollar = m.start()
            line += text.count("\n", counted, dollar)
            counted = dollar
            line_start = text.rfind("\n", 0, dollar) + 1
            indent = text[line_start:dollar]
            block = indent == "" or indent.isspace()
            name = m["bare"] or m["name"]
            placeholder = Placeholder(
                name=name,
                location=Location(self.filename, line, dollar - line_start + 1, m.end() - dollar),
                block=block,
                indent=indent if block else "",
                comma_before=m["lead"] == ",",
                comma_after=m["trail"] == ",",
            )
            placeholders.append(placeholder)
            # A block's indent is part of what it replaces.
            pieces.append(text[start:line_start] if block else text[start:dollar])
            slots.append(
                (
                    len(pieces),
                    name,
                    _block_prefix(indent) if block else None,
                    ", " if placeholder.comma_before else "",
                    ", " if placeholder.comma_after else "",
                )
            )
            pieces.append("")
            start = m.end()
        pieces.append(text[start:])
        object.__setattr__(self, "placeholders", tuple(placeholders))
        object.__setattr__(self, "names", tuple(dict.fromkeys(p.name for p in placeholders)))
        object.__setattr__(self, "_pieces", tuple(pieces))
        object.__setattr__(self, "_slots", tuple(slots))

    @staticmethod
    def from_file(path: str | os.PathLike[str]) -> Template:
        """The template in a UTF-8 file (newlines normalized to `\\n`, as torchgen reads it)."""
        with open(path, encoding="utf-8") as f:
            return Template(f.read(), os.fspath(path))

    def substitute(self, env: Mapping[str, object] | None = None, **kwargs: object) -> str:
        """The text with every placeholder replaced; keyword arguments win over `env`."""
        values = _NO_VALUES if env is None else env
        out = list(self._pieces)
        for index, name, prefix, before, after in self._slots:
            if name in kwargs:
                value = kwargs[name]
            else:
                try:
                    value = values[name]
                except KeyError:
                    raise self._missing(index, values, kwargs) from None
            if prefix is not None:
                out[index] = _render_block(prefix, value)
            elif isinstance(value, list):
                out[index] = before + ", ".join(map(str, value)) + after if value else ""
            else:
                out[index] = str(value)
        return "".join(out)

    def _missing(
        self, index: int, values: Mapping[str, object], kwargs: Mapping[str, object]
    ) -> TemplateKeyError:
        first = next(
            p for p, s in zip(self.placeholders, self._slots, strict=True) if s[0] == index
        )
        missing = tuple(n for n in self.names if n not in kwargs and n not in values)
        return TemplateKeyError(first, missing)
