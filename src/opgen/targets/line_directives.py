"""`#line` directives: code written in a spec, compiled as if it stood there.

`opgen torch-library` and `opgen mlx` emit each gradient formula on lines of its own
behind `#line <its line> "<the spec>"`, at its column there, so that a compiler error
in it points at the spec. The directive back to the generated file needs the line it
lands on, which only the rendered file knows: it is emitted as `LINE_RESTORE` and
numbered by `resolve_line_restores` once the file is rendered.
"""

from __future__ import annotations

from opgen.api.cpp_literals import cpp_string
from opgen.diagnostics import Location

# Stands for `#line <its own line + 1> "<the generated file>"` until the file is rendered.
LINE_RESTORE = "#line OPGEN_GENERATED_LINE"


def placed_lines(text: str, at: Location, as_written: bool, suffix: str) -> list[str]:
    """`text` (then `suffix`) behind a `#line` to `at`, then `LINE_RESTORE`.

    Text over several lines (a `|` block scalar) starts on the line after `at`, where it
    starts in the file; one-line text starts at `at`'s column if it is `as_written` there
    (not folded or wrapped, whose line breaks are gone), else at the line's start.
    """
    line, column = at.line, 1
    if "\n" in text:
        line += 1
    elif as_written:
        column = at.col or 1
    code = " " * (column - 1) + text + suffix
    return [f"#line {line} {cpp_string(at.file)}", *code.split("\n"), LINE_RESTORE]


def resolve_line_restores(text: str, generated_file: str) -> str:
    """`text` with each `LINE_RESTORE` line numbered: back to `generated_file`, where it is."""
    lines = text.split("\n")
    for i, line in enumerate(lines):
        if line == LINE_RESTORE:
            lines[i] = f"#line {i + 2} {cpp_string(generated_file)}"
    return "\n".join(lines)
