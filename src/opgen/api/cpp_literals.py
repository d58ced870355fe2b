"""C++ literals: a schema's default values as C++ expressions, and strings as C++ literals.

Defaults are written in schema syntax (`True`, `[0,1]`, `None`, `'mean'`,
`contiguous_format`) and are translated for the C++ API's signatures, the native
functions' declarations and the bindings' argument parser alike: `true`, `{0,1}`,
`::std::nullopt` (`{}` for an undefined `Tensor?`), `"mean"`,
`c10::MemoryFormat::Contiguous`. A single value of a fixed-size list stands for every
element (`int[2] stride=1`).
"""

from __future__ import annotations

from opgen.spec.types import BaseTy, BaseType, ListType, OptionalType, Type

_TENSOR = BaseType(BaseTy.Tensor)
_STR = BaseType(BaseTy.str)
_SYMINT = BaseType(BaseTy.SymInt)

_DEFAULTS = {
    "False": "false",
    "True": "true",
    "None": "::std::nullopt",
    "Mean": "at::Reduction::Mean",
    "[]": "{}",
    "contiguous_format": "c10::MemoryFormat::Contiguous",
    "long": "at::kLong",
}


def default_expr(d: str, t: Type, *, symint: bool) -> str:
    """The C++ expression for schema default `d` of an argument of type `t`.

    An optional's `None` is `{}` for `Tensor?` (an undefined tensor) and
    `::std::nullopt` for the others; its other defaults are its element's.
    """
    if isinstance(t, OptionalType):
        if d != "None":
            return default_expr(d, t.elem, symint=symint)
        return "{}" if t.elem == _TENSOR else "::std::nullopt"
    if isinstance(t, ListType):
        return _list_default(d, t, symint=symint)
    if t == _STR and len(d) >= 2 and d[0] == d[-1] == "'":
        return _cpp_string_literal(d[1:-1])
    return _DEFAULTS.get(d, d)


def _list_default(d: str, t: ListType, *, symint: bool) -> str:
    """`[a, b]` becomes a braced list; a single value stands for every element.

    Only fixed-size lists may have a single value (`int[2] stride=1`), except
    a digit for a `SymInt[]`, which the SymInt API must wrap.
    """
    if d.startswith("[") and d.endswith("]"):
        return "{" + d[1:-1] + "}"
    symbolic = symint and d.isdigit() and t.elem == _SYMINT
    if t.size is None and not symbolic:
        raise ValueError(f"a list default must be written '[...]', not '{d}'")
    return f"c10::SymInt({d})" if symbolic else _DEFAULTS.get(d, d)


def _cpp_string_literal(body: str) -> str:
    """A single-quoted schema string's body as a double-quoted C++ literal."""
    out: list[str] = []
    i = 0
    while i < len(body):
        c = body[i]
        if c == "\\" and i + 1 < len(body):
            nxt = body[i + 1]
            out.append("'" if nxt == "'" else c + nxt)
            i += 2
            continue
        out.append('\\"' if c == '"' else c)
        i += 1
    return '"' + "".join(out) + '"'


# The escapes of a C++ string literal, applied in this order (backslash first).
_STRING_ESCAPES = (
    ("\\", "\\\\"),
    ('"', '\\"'),
    ("\a", "\\a"),
    ("\b", "\\b"),
    ("\f", "\\f"),
    ("\n", "\\n"),
    ("\v", "\\v"),
    ("\t", "\\t"),
)


def cpp_string(s: str) -> str:
    """`s` as a C++ string literal (backslash, quote and control-character escapes)."""
    for raw, escaped in _STRING_ESCAPES:
        if raw in s:
            s = s.replace(raw, escaped)
    return f'"{s}"'
