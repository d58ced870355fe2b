"""The composition language: an operator computed from other lowered ATen operators.

    compose: mul.Tensor(self, sigmoid(self))
    compose: div.Tensor(sum.dim_IntList(self, dim, keepdim), 4)
    compose: max.dim(self, dim)[0]

An expression is a call of an ATen operator (`name`, `name.overload` or
`aten::name.overload`), with positional arguments then keyword arguments named as the
callee's schema names them; an argument is an expression, a name (one of the operator's
own arguments, or a dtype such as `float32`), a number, a string in quotes, `True`,
`False`, `None`, a list `[...]`, a tuple `(a, b)` (what an operator with several outputs
returns), or an output of a call, `call(...)[i]`. Arguments a call leaves out take the
callee's defaults. This module reads the text into a tree with offsets; which operators
and names exist is checked by the reader, against the spec.
"""

from __future__ import annotations

import re

from opgen.frozen import frozen


@frozen
class Expression:
    offset: int  # where it starts in the text
    length: int


@frozen
class Name(Expression):
    text: str


@frozen
class Literal(Expression):
    """A number, string (its value, unquoted), True, False or None."""

    kind: str  # "int", "float", "str", "bool", "none"
    value: str  # the number's text, the string's value, "True"/"False", "None"


@frozen
class ListOf(Expression):
    items: tuple[Expression, ...]


@frozen
class TupleOf(Expression):
    items: tuple[Expression, ...]


@frozen
class Call(Expression):
    op: str  # as written: `mul`, `mul.Tensor`, `aten::mul.Tensor`
    positional: tuple[Expression, ...]
    keywords: tuple[tuple[str, Expression], ...]
    keyword_offsets: tuple[int, ...] = ()  # where each keyword's name is written


@frozen
class Output(Expression):
    """`call(...)[index]`: one output of an operator with several."""

    of: Expression
    index: int


class ComposeError(Exception):
    def __init__(self, message: str, offset: int, length: int = 1) -> None:
        super().__init__(message)
        self.message = message
        self.offset = offset
        self.length = length


_TOKEN = re.compile(
    r"""(?P<space>\s+)
    |(?P<number>-?(?:\d+\.\d*|\.\d+|\d+)(?:[eE][-+]?\d+)?)
    |(?P<string>'[^'\\\n]*'|"[^"\\\n]*")
    |(?P<name>(?:aten::)?[A-Za-z_]\w*(?:\.[A-Za-z_]\w*)?)
    |(?P<punct>[()\[\],=])""",
    re.VERBOSE,
)


def parse_composition(text: str) -> Expression:
    """The expression `text`; ComposeError at the first mistake."""
    tokens = _tokenize(text)
    parser = _Parser(tokens, len(text))
    expression = parser.expression()
    if parser.position < len(tokens):
        _, value, offset = tokens[parser.position]
        raise ComposeError(f"unexpected '{value}' after the expression", offset, len(value))
    return expression


def _tokenize(text: str) -> list[tuple[str, str, int]]:
    tokens: list[tuple[str, str, int]] = []
    position = 0
    while position < len(text):
        m = _TOKEN.match(text, position)
        if m is None:
            raise ComposeError(f"unexpected character '{text[position]}'", position)
        kind = m.lastgroup
        assert kind is not None
        if kind != "space":
            tokens.append((kind, m.group(), position))
        position = m.end()
    return tokens


class _Parser:
    def __init__(self, tokens: list[tuple[str, str, int]], end: int) -> None:
        self.tokens = tokens
        self.position = 0
        self.end = end

    def _peek(self) -> tuple[str, str, int] | None:
        return self.tokens[self.position] if self.position < len(self.tokens) else None

    def _take(self, expected: str | None = None) -> tuple[str, str, int]:
        token = self._peek()
        if token is None:
            wanted = f"'{expected}'" if expected else "an expression"
            raise ComposeError(f"the expression ends where {wanted} is expected", self.end)
        if expected is not None and token[1] != expected:
            raise ComposeError(
                f"expected '{expected}', found '{token[1]}'", token[2], len(token[1])
            )
        self.position += 1
        return token

    def expression(self) -> Expression:
        found = self._primary()
        while (token := self._peek()) is not None and token[1] == "[":
            self._take("[")
            kind, value, offset = self._take()
            if kind != "number" or not value.isdigit():
                raise ComposeError("an output is selected by a number: call(...)[0]", offset)
            close = self._take("]")
            found = Output(found.offset, close[2] + 1 - found.offset, found, int(value))
        return found

    def _primary(self) -> Expression:
        kind, value, offset = self._take()
        if kind == "number":
            is_float = any(c in value for c in ".eE")
            return Literal(offset, len(value), "float" if is_float else "int", value)
        if kind == "string":
            return Literal(offset, len(value), "str", value[1:-1])
        if kind == "name":
            following = self._peek()
            if following is not None and following[1] == "(":
                return self._call(value, offset)
            if value in ("True", "False"):
                return Literal(offset, len(value), "bool", value)
            if value == "None":
                return Literal(offset, len(value), "none", value)
            if "." in value or "::" in value:
                raise ComposeError(f"'{value}' names an operator: call it", offset, len(value))
            return Name(offset, len(value), value)
        if value == "[":
            items, close = self._items("]")
            return ListOf(offset, close + 1 - offset, items)
        if value == "(":
            items, close = self._items(")")
            if len(items) == 1:
                return items[0]
            return TupleOf(offset, close + 1 - offset, items)
        raise ComposeError(f"unexpected '{value}'", offset, len(value))

    def _items(self, closing: str) -> tuple[tuple[Expression, ...], int]:
        items: list[Expression] = []
        while (token := self._peek()) is not None and token[1] != closing:
            items.append(self.expression())
            if (after := self._peek()) is not None and after[1] == ",":
                self._take(",")
            elif after is None or after[1] != closing:
                break
        close = self._take(closing)
        return tuple(items), close[2]

    def _call(self, op: str, offset: int) -> Call:
        self._take("(")
        positional: list[Expression] = []
        keywords: list[tuple[str, Expression]] = []
        keyword_offsets: list[int] = []
        while (token := self._peek()) is not None and token[1] != ")":
            following = (
                self.tokens[self.position + 1] if self.position + 1 < len(self.tokens) else None
            )
            if token[0] == "name" and following is not None and following[1] == "=":
                self.position += 2
                if any(name == token[1] for name, _ in keywords):
                    raise ComposeError(
                        f"argument '{token[1]}' is given twice", token[2], len(token[1])
                    )
                keyword_offsets.append(token[2])
                keywords.append((token[1], self.expression()))
            else:
                if keywords:
                    raise ComposeError(
                        "a positional argument after keyword arguments", token[2], len(token[1])
                    )
                positional.append(self.expression())
            if (after := self._peek()) is not None and after[1] == ",":
                self._take(",")
            elif after is None or after[1] != ")":
                break
        close = self._take(")")
        return Call(
            offset,
            close[2] + 1 - offset,
            op,
            tuple(positional),
            tuple(keywords),
            tuple(keyword_offsets),
        )
