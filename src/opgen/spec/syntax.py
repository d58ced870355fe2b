"""Pieces of the schema syntax shared by types, arguments and schemas.

Parse errors are `SchemaError`s: a `SpecError` without a file location but with
an offset into the parsed text. The caller that knows where the text came from
turns the offset into a file location (see `SchemaError.at`).
"""

from __future__ import annotations

import functools
import re
from collections.abc import Callable, Iterator
from typing import Any, TypeVar

from opgen.diagnostics import Location, SpecError


class SchemaError(SpecError):
    """A syntax or validity error at `offset` characters into the schema text."""

    def __init__(self, message: str, offset: int = 0, length: int = 1, item: int = 0) -> None:
        super().__init__(message)
        self.offset = offset
        self.length = length
        self.item = item  # which item of a list value (a precomputed line, say)

    def at(self, origin: Location) -> SpecError:
        """The same error, placed in a file: `origin` is where the text starts."""
        return SpecError(self.message, origin.shifted(self.offset, self.length))


T = TypeVar("T")


@functools.lru_cache(maxsize=8192)
def _memo(parse: Callable[[str], object], text: str) -> Any:
    return parse(text)


def memoized_parse(parse: Callable[[str], T], text: str, offset: int) -> T:
    """`parse(text)`, reusing earlier results, with errors shifted by `offset`.

    A spec repeats the same few types, arguments and returns thousands of
    times ('Tensor', 'Tensor self', 'Scalar alpha=1'), and half of its argument
    lists and operator names; their parsed objects are immutable, so one object
    serves every occurrence (and computes its text and signature once). This
    memo of a pure function is the only cache in the parser, and nothing
    depends on its contents.
    """
    try:
        parsed: T = _memo(parse, text)  # typed by assignment: `cast` would cost a call
    except SchemaError as error:
        error.offset += offset
        raise
    return parsed


IDENTIFIER = re.compile(r"[A-Za-z_][A-Za-z0-9_]*\Z")
OVERLOAD = re.compile(r"[A-Za-z0-9_]*\Z")


def split_items(text: str, offset: int) -> Iterator[tuple[str, int]]:
    """Split on ', ' and yield each piece with its offset."""
    start = 0
    while True:
        end = text.find(", ", start)
        if end < 0:
            yield text[start:], offset + start
            return
        yield text[start:end], offset + start
        start = end + 2
