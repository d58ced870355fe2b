"""Source locations, the error type of bad input, and how errors are shown.

Every stage that reads user input raises `SpecError`. A `SpecError` holds one
or more `Diagnostic`s, each tied to a `Location` in a source file. Rendering
happens in exactly one place, `render()`, so that every error looks alike:

    path:line:col: error: message
      offending source line
            ^~~~

`assert` is reserved for internal invariants; a failed assert is an opgen bug,
never a user error.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Literal, TextIO

from opgen.frozen import frozen


@frozen
class Location:
    """A 1-based position in a source file; `col` and `length` are optional. Line 0
    stands for the whole file (a binary one, say), shown as its path alone."""

    file: str
    line: int
    col: int | None = None
    length: int = 1

    def __str__(self) -> str:
        if self.line == 0:
            return self.file
        if self.col is None:
            return f"{self.file}:{self.line}"
        return f"{self.file}:{self.line}:{self.col}"

    def shifted(self, offset: int, length: int = 1) -> Location:
        """The location `offset` characters to the right (same line)."""
        col = (self.col or 1) + offset
        return Location(self.file, self.line, col, max(length, 1))


@frozen
class Diagnostic:
    location: Location | None
    message: str
    severity: Literal["error", "warning", "note"] = "error"

    def __str__(self) -> str:
        prefix = f"{self.location}: " if self.location is not None else ""
        return f"{prefix}{self.severity}: {self.message}"


class SpecError(Exception):
    """Bad input. Carries one or more located diagnostics."""

    def __init__(self, message: str, location: Location | None = None) -> None:
        super().__init__(message)
        self.diagnostics: tuple[Diagnostic, ...] = (Diagnostic(location, message),)

    @classmethod
    def of(cls, diagnostics: Iterable[Diagnostic]) -> SpecError:
        diags = tuple(diagnostics)
        assert diags, "SpecError.of needs at least one diagnostic"
        error = cls(diags[0].message, diags[0].location)
        error.diagnostics = diags
        return error

    @property
    def message(self) -> str:
        return self.diagnostics[0].message

    @property
    def location(self) -> Location | None:
        return self.diagnostics[0].location

    def __str__(self) -> str:
        return "\n".join(str(d) for d in self.diagnostics)


def did_you_mean(
    word: str, choices: Iterable[str], *, listed_up_to: int = 0, cutoff: float = 0.6
) -> str:
    """The hint for a misspelt `word`: "; did you mean 'X'?" with the nearest of `choices`,
    if one is near (difflib's ratio at least `cutoff`); else, when there are at most
    `listed_up_to` choices, "; expected one of A, B, C" (sorted); else ''. Only errors
    need it, so difflib is imported here."""
    import difflib

    options = sorted(set(choices))
    close = difflib.get_close_matches(word, options, n=1, cutoff=cutoff)
    if close:
        return f"; did you mean '{close[0]}'?"
    if 0 < len(options) <= listed_up_to:
        return "; expected one of " + ", ".join(options)
    return ""


def render(diagnostic: Diagnostic, sources: Mapping[str, Sequence[str]]) -> str:
    """`file:line:col: error: message`, then the source line and a caret.

    `sources` holds the lines of each file (`text.splitlines()`), split once for
    all the diagnostics in it: a spec is long, and a run may warn many times.
    """
    lines = [str(diagnostic)]
    loc = diagnostic.location
    if loc is None:
        return lines[0]
    source_lines = sources.get(loc.file)
    if source_lines is None:
        return lines[0]
    if not 1 <= loc.line <= len(source_lines):
        return lines[0]
    source = source_lines[loc.line - 1].rstrip("\r\n")
    lines.append(f"  {source}")
    if loc.col is not None and 1 <= loc.col <= len(source) + 1:
        # Keep tabs in the indentation so the caret lines up under them.
        pad = "".join(c if c == "\t" else " " for c in source[: loc.col - 1])
        width = max(1, min(loc.length, len(source) - loc.col + 1))
        lines.append(f"  {pad}^{'~' * (width - 1)}")
    return "\n".join(lines)


def write_diagnostics(diagnostics: Iterable[Diagnostic], err: TextIO) -> None:
    """Write each diagnostic rendered with its source line, reading each file once (a
    whole-file location reads nothing: it may be a model of gigabytes)."""
    sources: dict[str, list[str]] = {}
    for d in diagnostics:
        if d.location is not None and d.location.line > 0 and d.location.file not in sources:
            sources[d.location.file] = _read_for_display(d.location.file).splitlines()
        err.write(render(d, sources) + "\n")


def _read_for_display(path: str) -> str:
    try:
        with open(path, encoding="utf-8", errors="replace") as f:
            return f.read()
    except OSError:
        return ""
