"""What the C++ and the Python signatures of the MLX dialect share: parameters and lists.

Both signature readers (`cpp_signature`, `python_signature`) split a
parameter list at its top-level commas (not those inside brackets, braces or
string literals) and give each parameter as a `Parameter`: its name, type
and default as written, each with its offset in the signature string, so
that an error can point inside the YAML value. Errors are `SchemaError`s,
offsets into the string; the entry reader places them in the file.
"""

from __future__ import annotations

from opgen.frozen import frozen
from opgen.spec.syntax import SchemaError

_CLOSERS = {"(": ")", "[": "]", "{": "}", "<": ">"}
_OPENERS = {v: k for k, v in _CLOSERS.items()}


@frozen
class Parameter:
    """One parameter of a signature, as written; offsets are into the signature string."""

    name: str | None  # None: an unnamed C++ parameter (`const array&`)
    name_offset: int
    type_text: str | None  # None: a Python parameter without annotation
    type_offset: int
    default: str | None  # as written, in the signature's language
    default_offset: int
    keyword_only: bool  # after a Python `*`
    offset: int  # the whole parameter
    length: int


def _skip_string(text: str, start: int) -> int:
    """The index after the string literal that starts at `start`."""
    quote = text[start]
    i = start + 1
    while i < len(text):
        if text[i] == "\\":
            i += 2
            continue
        if text[i] == quote:
            return i + 1
        i += 1
    raise SchemaError("a string literal is never closed", start, len(text) - start)


def matching_close(text: str, start: int, *, angles: bool) -> int:
    """The index of the bracket that closes the one at `start`; SchemaError if none does.

    `angles`: `<` and `>` nest (C++ templates); in Python they are operators.
    """
    stack: list[int] = []
    i = start
    while i < len(text):
        c = text[i]
        if c in "\"'":
            i = _skip_string(text, i)
            continue
        if c in _CLOSERS and (angles or c != "<"):
            stack.append(i)
        elif c in _OPENERS and (angles or c != ">"):
            if not stack or text[stack[-1]] != _OPENERS[c]:
                raise SchemaError(f"'{c}' closes nothing", i)
            stack.pop()
            if not stack:
                return i
        i += 1
    opener = stack[-1] if stack else start
    raise SchemaError(f"'{text[opener]}' is never closed", opener)


def split_top_level(
    text: str, offset: int, separator: str, *, angles: bool
) -> list[tuple[str, int]]:
    """`text` split at the `separator`s outside brackets and strings, each piece with its
    offset (`offset` is the offset of `text`) and stripped of surrounding spaces."""
    pieces: list[tuple[str, int]] = []
    start = 0
    i = 0
    while i <= len(text):
        if i == len(text) or text[i] == separator:
            pieces.append(_stripped(text[start:i], offset + start))
            start = i + 1
            i += 1
            continue
        c = text[i]
        if c in "\"'":
            i = _skip_string(text, i)
        elif c in _CLOSERS and (angles or c != "<"):
            i = matching_close(text, i, angles=angles) + 1
        elif c in _OPENERS and (angles or c != ">"):
            raise SchemaError(f"'{c}' closes nothing", i)
        else:
            i += 1
    return pieces


def split_once(
    text: str, offset: int, separator: str, *, angles: bool
) -> tuple[tuple[str, int], tuple[str, int] | None]:
    """`text` split at its first top-level `separator`: before and (if there is one) after."""
    pieces = split_top_level(text, offset, separator, angles=angles)
    if len(pieces) == 1:
        return pieces[0], None
    first = pieces[0]
    rest_start = text.index(separator, first[1] - offset + len(first[0])) + 1
    return first, _stripped(text[rest_start:], offset + rest_start)


def _stripped(text: str, offset: int) -> tuple[str, int]:
    lead = len(text) - len(text.lstrip())
    return text.strip(), offset + lead
