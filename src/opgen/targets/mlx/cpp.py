"""Small pieces of C++ text every MLX emitter shares: calls, functions, literals."""

from __future__ import annotations

from collections.abc import Sequence

WIDTH = 100  # wrap a declaration's parameters one per line beyond this


def function_head(head: str, params: Sequence[str], tail: str, indent: str = "") -> str:
    """`head(params)tail` on one line, or with one parameter per line when too long."""
    one_line = f"{indent}{head}({', '.join(params)}){tail}"
    if len(one_line) <= WIDTH or not params:
        return one_line
    inner = f",\n{indent}    ".join(params)
    return f"{indent}{head}(\n{indent}    {inner}){tail}"


def string_literal(text: str) -> str:
    """`text` as a C++ string literal, escaped."""
    out = []
    for c in text:
        if c in '\\"':
            out.append("\\" + c)
        elif c == "\n":
            out.append("\\n")
        elif c == "\t":
            out.append("\\t")
        elif ord(c) < 0x20:
            out.append(f"\\{ord(c):03o}")  # octal: never runs into the next character
        else:
            out.append(c)
    return '"' + "".join(out) + '"'


def unnamed_unless(used: bool, declaration: str, name: str) -> str:
    """A parameter declaration, its name commented out when the body does not use it."""
    return declaration if used else declaration[: -len(name)] + f"/* {name} */"
