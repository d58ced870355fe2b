"""PyYAML's syntax errors in plain words, at the character they are about.

libyaml, PyYAML's C parser, stops at a syntax error with two marks: the
problem mark, at the token it could not take, and the context mark, where the
construct it was reading starts (the mapping, the list, the quote). It words
the error in its grammar's terms ("did not find expected key", "mapping values
are not allowed in this context"), and its problem mark may be past the
mistake: an unclosed '[' is reported at the next token, maybe lines later.

`syntax_error` gives the diagnostics a spec's author reads: the error at the
offending character, in words, then a note where the construct starts when
that is on another line. A hint is added only where the text around the marks
shows the mistake for sure: a key indented more than the keys before it, an
entry without its '- ', a tab, an unclosed quote or bracket, a ': ' inside a
plain value. Other errors keep libyaml's words, at its marks. Only a document
that fails to read comes here.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence

import yaml

from opgen.diagnostics import Diagnostic, Location, SpecError
from opgen.frozen import frozen

# YAML 1.1's line breaks, by which libyaml counts lines.
_LINE_BREAK = re.compile(r"\r\n|[\r\n\x85\u2028\u2029]")
# Where a line's content starts: after spaces, tabs and the '- ' of list items.
_INDENTATION = re.compile(r"(?:[ \t]|-(?=[ \t]))*")
# Keys as spec files write them: names, maybe several separated by commas
# (`CPU, CUDA:`, `self, other:`); a line read as part of a value is taken for an
# over-indented key only if it starts with one.
_NAMES = r"[A-Za-z_][\w.]*(?:,[ ]*[A-Za-z_][\w.]*)*"
_NAMES_KEY = re.compile(rf"({_NAMES})[ ]*:(?:[ \t]|$)")
_ANY_KEY = re.compile(r"([^-?:,\[\]{}#&*!|>'\"%@` \t][^#]*?)[ ]*:(?:[ \t]|$)")
_LIST_ITEM = re.compile(r"-(?:[ \t]|$)")
_WORD = re.compile(r"[^ \t#]+")
_COMMENT = re.compile(r"[ \t]#.*")
_OPENING = {"]": "[", "}": "{"}
_CONSTRUCT = re.compile(r"while (?:parsing|scanning) an? (.*)")
_CONSTRUCTS = {
    "block mapping": "the mapping",
    "flow mapping": "the mapping",
    "block collection": "the list",
    "flow sequence": "the list",
    "quoted scalar": "the quoted value",
    "plain scalar": "the value",
    "block node": "the value",
    "flow node": "the value",
    "simple key": "the key",
}
_LONGEST_QUOTED = 40  # longer text is not repeated in a message: the caret shows it


@frozen
class _Marks:
    """A syntax error: its marks (0-based line and column), its texts, the document's lines."""

    path: str
    lines: tuple[str, ...]
    line: int
    col: int
    problem: str
    context_at: tuple[int, int] | None
    context: str

    def text(self, line: int) -> str:
        return self.lines[line] if 0 <= line < len(self.lines) else ""

    def error(self, message: str, line: int, col: int, length: int = 1) -> Diagnostic:
        return Diagnostic(
            Location(self.path, line + 1, col + 1, length), f"invalid YAML: {message}"
        )

    def note(self, message: str, line: int, col: int) -> Diagnostic:
        return Diagnostic(Location(self.path, line + 1, col + 1), message, "note")

    def starts_here(self, error_line: int) -> list[Diagnostic]:
        """The note at the start of the mapping the error is in, if that is on another line."""
        if self.context_at is None or self.context_at[0] == error_line:
            return []
        return [_holder_note(self, *self.context_at)]


_Explainer = Callable[[_Marks], list[Diagnostic] | None]


def syntax_error(path: str, text: str, error: yaml.MarkedYAMLError) -> SpecError:
    """The error in words at the character it is about; a note where its construct starts."""
    mark = error.problem_mark or error.context_mark
    words = error.problem or error.context or "a syntax error"
    if mark is None:
        return SpecError(f"invalid YAML: {words}", Location(path, 1))
    context = error.context_mark if error.problem_mark is not None else None
    marks = _Marks(
        path,
        tuple(_LINE_BREAK.split(text)),
        mark.line,
        mark.column,
        words,
        (context.line, context.column) if context is not None else None,
        error.context or "",
    )
    if marks.text(marks.line)[marks.col : marks.col + 1] == "\t":
        explain: _Explainer | None = _tab
    else:
        explain = next((f for start, f in _EXPLAINERS if words.startswith(start)), None)
    diagnostics = explain(marks) if explain is not None else None
    return SpecError.of(diagnostics or _as_libyaml_says(marks))


def unreadable_character(path: str, text: str, error: yaml.reader.ReaderError) -> SpecError:
    """A character YAML does not allow (a control character), where it is."""
    code = error.character if isinstance(error.character, int) else ord(error.character)
    # libyaml counts in UTF-8 bytes, PyYAML's Python reader in characters
    offset = len(text.encode("utf-8")[: error.position].decode("utf-8", "ignore"))
    if not (offset < len(text) and ord(text[offset]) == code):
        offset = error.position
    line = text.count("\n", 0, offset) + 1
    col = offset - text.rfind("\n", 0, offset)
    message = f"invalid YAML: the character U+{code:04X} is not allowed in YAML"
    return SpecError(message, Location(path, line, col))


def _tab(m: _Marks) -> list[Diagnostic]:
    line = m.text(m.line)
    if _INDENTATION.fullmatch(line, 0, m.col):
        return [m.error("a tab character: YAML indents with spaces only", m.line, m.col)]
    return [m.error("a tab character where YAML allows only spaces", m.line, m.col)]


def _colon_in_value(m: _Marks) -> list[Diagnostic] | None:
    """': ' where a plain value goes on: after a key on the same line, or on a line that
    continues the value of the line before (a key indented more than the keys before it)."""
    line = m.text(m.line)
    start = _content_col(line)
    body = line[start : m.col].rstrip(" \t")
    if re.search(r":[ \t]", body):
        return [m.error("a ': ' inside a plain value; put the value in quotes", m.line, m.col)]
    if len(body) > 1024:
        return [m.error("a key may be at most 1024 characters long", m.line, start, len(body))]
    previous = _previous_content_line(m.lines, m.line)
    if previous is not None and re.fullmatch(_NAMES, body):
        before = m.text(previous)
        key_col = _content_col(before)
        if key_col == start and not re.search(":[ \t]", before):
            unspaced = _unspaced_key(m, previous, key_col)
            if unspaced is not None:
                return unspaced
        if key_col < start and _NAMES_KEY.match(before, key_col):
            message = f"the key '{body}' is indented more than the keys before it"
            error = m.error(message, m.line, start, len(body))
            return [error, _holder_note(m, _mapping_start(m.lines, previous, key_col), key_col)]
    message = "a ': ' inside a plain value that goes on from the line before; quote the value"
    return [m.error(message, m.line, m.col)]


def _unspaced_key(m: _Marks, line: int, col: int) -> list[Diagnostic] | None:
    """`key:value`, which YAML reads as one plain value, at `col` of `line`."""
    key = re.compile(rf"({_NAMES}):[^ \t:]").match(m.text(line), col)
    if key is None:
        return None
    message = f"the key '{key.group(1)}' needs a space after its ':'"
    return [m.error(message, line, key.end(1))]


def _list_on_key_line(m: _Marks) -> list[Diagnostic] | None:
    if m.text(m.line)[m.col : m.col + 1] != "-":
        return None
    message = "a list cannot start on the line of its key: start it on the next line"
    return [m.error(message, m.line, m.col)]


def _key_without_colon(m: _Marks) -> list[Diagnostic] | None:
    if m.context_at is None:
        return None
    line, col = m.context_at
    unspaced = _unspaced_key(m, line, col)
    if unspaced is not None:
        return unspaced
    text = _COMMENT.sub("", m.text(line))[col:].rstrip(" \t")
    if not text:
        return None
    return [m.error(f"expected ':' after {_quoted(text)}", line, col, len(text))]


def _unclosed_quote(m: _Marks) -> list[Diagnostic] | None:
    if m.context_at is None or not m.context.startswith("while scanning a quoted scalar"):
        return None
    line, col = m.context_at
    quote = m.text(line)[col : col + 1]
    return [m.error(f"the {quote} that opens this value is never closed", line, col)]


def _unknown_escape(m: _Marks) -> list[Diagnostic] | None:
    escape = m.text(m.line)[m.col : m.col + 2]
    if escape[:1] != "\\":
        return None
    message = (
        f"'{escape}' is not an escape of a double-quoted value; "
        "write '\\\\' for a backslash, or quote the value with ' instead"
    )
    return [m.error(message, m.line, m.col, len(escape))]


def _reserved_character(m: _Marks) -> list[Diagnostic] | None:
    char = m.text(m.line)[m.col : m.col + 1]
    if char not in ("@", "`", "%", "|", ">"):  # '%' off a line's start; '|', '>' in [...] or {...}
        return None
    message = f"a plain value cannot start with '{char}'; put the value in quotes"
    return [m.error(message, m.line, m.col)]


def _in_mapping(m: _Marks) -> list[Diagnostic] | None:
    """A block mapping met a token that is not its next key."""
    if m.context_at is None:
        return None
    line = m.text(m.line)
    if line[m.col : m.col + 1] in _OPENING:
        return _unmatched(m)
    if line[m.col : m.col + 1] == ":":
        return [m.error("a ':' with no key before it", m.line, m.col)]
    token, length = _token(line, m.col)
    if _content_col(line) < m.col:  # the token follows something on its line
        last = line[: m.col].rstrip(" \t")[-1:]
        if last in ("'", '"'):
            message = f"text after the closing {last} of a quoted value; quote the whole value"
        elif last in ("]", "}"):
            message = f"text after the closing '{last}' of the value"
        else:
            return None
        return [m.error(message, m.line, m.col, length)]
    keys = m.context_at[1]
    if m.col > keys:
        previous = _previous_content_line(m.lines, m.line)
        before = m.text(previous) if previous is not None else ""
        deeper = len(before) - len(before.lstrip(" "))
        if previous is not None and previous >= m.context_at[0] and deeper > m.col:
            message = (
                f"{token} at column {m.col + 1} lines up with neither the keys of its "
                f"mapping (column {keys + 1}) nor the line before it (column {deeper + 1})"
            )
        else:
            message = f"{token} is indented more than the keys before it"
    elif m.col == keys and _LIST_ITEM.match(line, m.col):
        message = "a list item where the mapping expects a key"
    else:
        return None
    return [m.error(message, m.line, m.col, length), *m.starts_here(m.line)]


def _in_list(m: _Marks) -> list[Diagnostic] | None:
    """A block list met a token that is not its next '- ' item."""
    line = m.text(m.line)
    if line[m.col : m.col + 1] in _OPENING:
        return _unmatched(m)
    if m.context_at is None or line[: m.col].strip(" "):
        return None
    token, length = _token(line, m.col)
    is_key = _ANY_KEY.match(line, m.col) is not None
    if m.col > m.context_at[1] and is_key:
        return _between_entries(m, token, length)
    if m.col != m.context_at[1]:
        return None
    if is_key:
        message = (
            "a key where the list expects its next item; "
            "did you leave out the '- ' that starts an entry?"
        )
    else:
        message = f"{token} where the list expects its next item ('- ')"
    error = m.error(message, m.line, m.col, length)
    if m.context_at[0] == m.line:
        return [error]
    return [error, m.note("the list starts here", *m.context_at)]


def _between_entries(m: _Marks, token: str, length: int) -> list[Diagnostic] | None:
    """A key indented less than the keys of the entry before it, more than the list's '-'."""
    assert m.context_at is not None
    previous = _previous_content_line(m.lines, m.line)
    if previous is None:
        return None
    before = m.text(previous)
    keys = _content_col(before)
    if keys <= m.col or not _ANY_KEY.match(before, keys):
        return None
    message = (
        f"{token} at column {m.col + 1} lines up with neither the keys before it "
        f"(column {keys + 1}) nor the list's '-' (column {m.context_at[1] + 1})"
    )
    error = m.error(message, m.line, m.col, length)
    return [error, _holder_note(m, _mapping_start(m.lines, previous, keys), keys)]


def _unclosed_flow(m: _Marks) -> list[Diagnostic] | None:
    """A '[' list or a '{' mapping not closed: the problem mark is at the token after."""
    if m.context_at is None:
        return None
    line, col = m.context_at
    opening = m.text(line)[col : col + 1]
    if opening not in ("[", "{"):
        return None
    closing = "]" if opening == "[" else "}"
    if m.line == line:  # a token inside the brackets, not a ',' or the closing one
        token, length = _token(m.text(m.line), m.col)
        return [m.error(f"expected ',' or '{closing}' before {token}", m.line, m.col, length)]
    last = _previous_content_line(m.lines, m.line)
    if last is None or last < line:
        return None
    end = len(_COMMENT.sub("", m.text(last)).rstrip(" \t"))
    which = f" at column {col + 1}" if m.text(line).count(opening) > 1 else ""
    error = m.error(f"expected '{closing}' to close the '{opening}'{which}", last, end)
    if last == line:
        return [error]
    what = "list" if opening == "[" else "mapping"
    return [error, m.note(f"the {what} starts here", line, col)]


def _unmatched(m: _Marks) -> list[Diagnostic]:
    closing = m.text(m.line)[m.col]
    message = f"a '{closing}' with no '{_OPENING[closing]}' before it"
    return [m.error(message, m.line, m.col)]


def _undefined_alias(m: _Marks) -> list[Diagnostic] | None:
    alias = re.match(r"\*([^\s,\[\]{}]+)", m.text(m.line)[m.col :])
    if alias is None:
        return None
    name = alias.group(1)
    message = f"the alias '*{name}' names no anchor: '&{name}' is not defined before it"
    return [m.error(message, m.line, m.col, len(alias.group()))]


def _duplicate_anchor(m: _Marks) -> list[Diagnostic] | None:
    anchor = re.match(r"&[^\s,\[\]{}]+", m.text(m.line)[m.col :])
    if anchor is None:
        return None
    error = m.error(
        f"the anchor '{anchor.group()}' is defined twice", m.line, m.col, len(anchor.group())
    )
    if m.context_at is None or m.context_at[0] == m.line:
        return [error]
    return [error, m.note("it is first defined here", *m.context_at)]


def _after_the_document(m: _Marks) -> list[Diagnostic]:
    """More text after the document's top-level value, which is complete."""
    line = m.text(m.line)
    if line[m.col : m.col + 1] in _OPENING:
        return _unmatched(m)
    message = "text after the end of the document's top-level value"
    return [m.error(message, m.line, m.col, _token(line, m.col)[1])]


def _missing_value(m: _Marks) -> list[Diagnostic] | None:
    line = m.text(m.line)
    if line[m.col : m.col + 1] in _OPENING:
        return _unmatched(m)
    return None


def _second_document(m: _Marks) -> list[Diagnostic]:
    message = "a second document: a spec file holds one YAML document"
    return [m.error(message, m.line, m.col, 3)]


def _as_libyaml_says(m: _Marks) -> list[Diagnostic]:
    """libyaml's own words at its marks, for the errors not explained here."""
    problem = re.sub(r"^did not find (?:the )?expected ", "expected ", m.problem)
    problem = problem.replace("found unexpected end of stream", "unexpected end of the file")
    problem = problem.replace("expected node content", "expected a value")
    error = m.error(problem, m.line, m.col)
    if m.context_at is None or m.context_at[0] == m.line or not m.context:
        return [error]
    construct = _CONSTRUCT.fullmatch(m.context)
    if construct is None:
        return [error, m.note(m.context, *m.context_at)]
    kind = construct.group(1)
    what = _CONSTRUCTS.get(kind, f"the {kind}")
    return [error, m.note(f"{what} starts here", *m.context_at)]


_EXPLAINERS: tuple[tuple[str, _Explainer], ...] = (
    ("mapping values are not allowed", _colon_in_value),
    ("block sequence entries are not allowed", _list_on_key_line),
    ("could not find expected ':'", _key_without_colon),
    ("found unexpected end of stream", _unclosed_quote),
    ("found unexpected document indicator", _unclosed_quote),
    ("found unknown escape character", _unknown_escape),
    ("found character that cannot start any token", _reserved_character),
    ("did not find expected key", _in_mapping),
    ("did not find expected '-' indicator", _in_list),
    ("did not find expected ',' or", _unclosed_flow),
    ("found undefined alias", _undefined_alias),
    ("second occurrence", _duplicate_anchor),
    ("but found another document", _second_document),
    ("did not find expected <document start>", _after_the_document),
    ("did not find expected node content", _missing_value),
)


def _holder_note(m: _Marks, line: int, col: int) -> Diagnostic:
    """'the entry starts here' at the '-' of a mapping that is a list item, else
    'the mapping that holds it starts here' at its first key."""
    text = m.text(line)
    if "-" in text[:col] and _INDENTATION.fullmatch(text, 0, col):
        return m.note("the entry starts here", line, text.rindex("-", 0, col))
    return m.note("the mapping that holds it starts here", line, col)


def _mapping_start(lines: Sequence[str], line: int, col: int) -> int:
    """The line of the first key of the block mapping that has a key at `col` on `line`."""
    start = line
    for i in range(line, -1, -1):
        text = lines[i]
        content = _content_col(text)
        if content == len(text) or text[content] == "#":
            continue  # blank, or a comment
        indent = len(text) - len(text.lstrip(" "))
        if content == col:
            start = i
            if indent < col:
                break  # `- key:`: the mapping is a list item, and starts with it
        elif indent < col:
            break
    return start


def _content_col(text: str) -> int:
    """Where `text` (a line) has more than indentation and the '- ' of list items."""
    indentation = _INDENTATION.match(text)
    return indentation.end() if indentation is not None else 0


def _previous_content_line(lines: Sequence[str], line: int) -> int | None:
    """The nearest line before `line` that holds more than spaces and a comment."""
    for i in range(min(line, len(lines)) - 1, -1, -1):
        text = lines[i].lstrip(" \t")
        if text and text[0] != "#":
            return i
    return None


def _token(line: str, col: int) -> tuple[str, int]:
    """How to name what starts at `col` of `line`, and its length."""
    if _LIST_ITEM.match(line, col):
        return "the list item", 1
    if line[col : col + 1] in ("[", "]", "{", "}", ","):
        return f"'{line[col]}'", 1
    key = _ANY_KEY.match(line, col)
    if key is not None:
        return f"the key {_quoted(key.group(1), '')}".rstrip(), len(key.group(1))
    word = _WORD.match(line, col)
    if word is None:
        return "the end of the line", 1
    return _quoted(word.group()), len(word.group())


def _quoted(text: str, otherwise: str = "this") -> str:
    return f"'{text}'" if len(text) <= _LONGEST_QUOTED else otherwise
