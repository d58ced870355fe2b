"""Checking the C++ expressions of an MLX spec: gradient formulas and `shape:` rules.

A formula is a C++ expression over `mlx::core` operations. opgen does not
parse C++; it tokenizes the expression (names, `::`-qualified names, numbers,
string and character literals, punctuation; comments skipped) and checks two
things a compiler would otherwise report in generated code:

1. Brackets balance: every `(`, `[` and `{` is closed, by its own kind.
2. Every free name is known. A name after `.` or `->` is a member
   (`x.shape()`, `x.dtype()`) and is not checked. Known are:
   - the scope's own names (`Scope.locals`): for a gradient formula the
     operator's arguments, `grad`/`cotangent`, `result`/`output`, `s` (the
     stream) and, for an operator with several outputs, `grads`, `results`
     and `outputs`;
   - C++ keywords and built-in types that expressions use (`true`,
     `nullptr`, `static_cast`, `int64_t`, ...) and anything in `std::`;
   - `mlx::core`'s names (`Scope.mlx`, from `mlx_headers.mlx_names()` or
     the caller's set), bare (`exp`), qualified (`mlx::core::exp`), in a
     nested namespace (`fast::rms_norm`, `mlx::core::linalg::inv`), or
     members of a type MLX declares (`Dtype::Val::float32`);
   - the library's own operators, bare or qualified with its namespace.

An unknown name is reported at its column with the nearest known name. For
a multi-output operator, `grads[i]` and `results[i]` must index an output.
"""

from __future__ import annotations

import re
from collections.abc import Iterator

from opgen.diagnostics import did_you_mean
from opgen.frozen import frozen

# Keywords and built-in names an expression may use.
CPP_WORDS = frozenset(
    {
        "true",
        "false",
        "nullptr",
        "sizeof",
        "alignof",
        "decltype",
        "static_cast",
        "const_cast",
        "reinterpret_cast",
        "dynamic_cast",
        "auto",
        "const",
        "int",
        "float",
        "double",
        "bool",
        "char",
        "long",
        "short",
        "unsigned",
        "signed",
        "void",
        "size_t",
        "and",
        "or",
        "not",
        *(f"{u}int{n}_t" for u in ("", "u") for n in (8, 16, 32, 64)),
    }
)
MULTI_OUTPUT_NAMES = ("grads", "results", "outputs")
_TOKEN = re.compile(
    r"""(?P<space>\s+|//[^\n]*|/\*.*?\*/)
    |(?P<string>"(?:\\.|[^"\\\n])*"|'(?:\\.|[^'\\\n])*')
    |(?P<number>(?:\d|\.\d)(?:[eEpP][-+]|[\w.'])*)
    |(?P<name>(?:::)?[A-Za-z_]\w*(?:\s*::\s*[A-Za-z_]\w*)*)
    |(?P<punct>->|::|[-+*/%<>=!&|^~?:;,.()\[\]{}])""",
    re.VERBOSE | re.DOTALL,
)
_BRACKETS = {"(": ")", "[": "]", "{": "}"}
_INDEX = re.compile(r"\s*\[\s*(\d+)\s*\]")


@frozen
class Scope:
    """What a formula may name."""

    locals: frozenset[str]
    mlx: frozenset[str]  # mlx::core's names, nested namespaces' qualified (`fast::rms_norm`)
    namespace: str  # the library's C++ namespace
    operators: frozenset[str]  # the library's operators
    outputs: int | None  # how many outputs `grads[i]` may index; None: not known


@frozen
class Problem:
    """A mistake at `offset` (`length` characters) into the formula."""

    offset: int
    length: int
    message: str


@frozen
class _Token:
    kind: str
    text: str
    offset: int


def check_formula(text: str, scope: Scope, what: str) -> list[Problem]:
    """Every problem of the expression `text`; `what` names it in messages ("the gradient
    formula of 'x'")."""
    tokens: list[_Token] = []
    for token in _tokens(text):
        if isinstance(token, Problem):
            return [token]
        tokens.append(token)
    problems = _bracket_problems(tokens)
    for i, token in enumerate(tokens):
        if token.kind != "name":
            continue
        if i > 0 and tokens[i - 1].text in (".", "->"):
            continue  # a member
        if i > 0 and tokens[i - 1].text == ">" and token.text.startswith("::"):
            continue  # a member of a template's specialization: numeric_limits<float>::max
        name = "".join(token.text.split()).removeprefix("::")
        message = _name_problem(name, scope, what)
        if message is None:
            message = _index_problem(name, text, token, scope)
        if message is not None:
            problems.append(Problem(token.offset, len(token.text), message))
    return problems


def _tokens(text: str) -> Iterator[_Token | Problem]:
    position = 0
    while position < len(text):
        m = _TOKEN.match(text, position)
        if m is None:
            if text[position] in "\"'":
                yield Problem(position, len(text) - position, "a literal that is never closed")
            else:
                yield Problem(position, 1, f"unexpected character '{text[position]}'")
            return
        kind = m.lastgroup
        assert kind is not None
        if kind != "space":
            yield _Token(kind, m.group(), position)
        position = m.end()


def _bracket_problems(tokens: list[_Token]) -> list[Problem]:
    open_brackets: list[_Token] = []
    for token in tokens:
        if token.text in _BRACKETS:
            open_brackets.append(token)
        elif token.text in _BRACKETS.values():
            if not open_brackets:
                return [Problem(token.offset, 1, f"'{token.text}' closes nothing")]
            opener = open_brackets.pop()
            if _BRACKETS[opener.text] != token.text:
                return [
                    Problem(
                        token.offset,
                        1,
                        f"'{token.text}' closes a '{opener.text}'; expected "
                        f"'{_BRACKETS[opener.text]}'",
                    )
                ]
    if open_brackets:
        opener = open_brackets[-1]
        return [Problem(opener.offset, 1, f"'{opener.text}' is never closed")]
    return []


def _name_problem(name: str, scope: Scope, what: str) -> str | None:
    parts = name.split("::")
    if parts[0] == "std" and len(parts) > 1:
        return None
    if len(parts) == 1 and name in scope.operators and name in scope.mlx - scope.locals:
        return (
            f"'{name}' names an operator of the library and an mlx::core function, and C++ "
            f"finds both for MLX arrays: write '{scope.namespace}::{name}' or "
            f"'mlx::core::{name}'"
        )
    if len(parts) == 1 and (
        name in scope.locals or name in CPP_WORDS or name in scope.mlx or name in scope.operators
    ):
        return None
    if parts[:2] == ["mlx", "core"] and len(parts) > 2:
        return None if _is_mlx(parts[2:], scope.mlx) else _unknown(name, scope, what)
    if parts[0] == scope.namespace and len(parts) > 1:
        if len(parts) == 2 and parts[1] in scope.operators:
            return None
        hint = did_you_mean(parts[-1], scope.operators)
        return f"'{name}' is not an operator of the library{hint}"
    if name in MULTI_OUTPUT_NAMES and "grad" in scope.locals:
        return (
            f"'{name}' is for operators with several outputs, and this one has one: "
            f"use '{'grad' if name == 'grads' else 'result'}'"
        )
    if len(parts) > 1 and _is_mlx(parts, scope.mlx):
        return None
    return _unknown(name, scope, what)


def _is_mlx(parts: list[str], mlx: frozenset[str]) -> bool:
    """`fast::rms_norm`, `exp`, or a member of an MLX type (`Dtype::Val::float32`)."""
    if "::".join(parts) in mlx:
        return True
    namespaces = {n.partition("::")[0] for n in mlx if "::" in n}
    return len(parts) > 1 and parts[0] in mlx and parts[0] not in namespaces


def _unknown(name: str, scope: Scope, what: str) -> str:
    last = name.rpartition("::")[2]
    hint = did_you_mean(name, scope.locals)
    if not hint:
        known = scope.mlx | scope.operators | CPP_WORDS
        hint = did_you_mean(name if "::" in name else last, known)
    return f"unknown name '{name}' in {what}{hint}"


def _index_problem(name: str, text: str, token: _Token, scope: Scope) -> str | None:
    if name not in MULTI_OUTPUT_NAMES or scope.outputs is None:
        return None
    m = _INDEX.match(text, token.offset + len(token.text))
    if m is None or int(m.group(1)) < scope.outputs:
        return None
    return f"'{name}[{m.group(1)}]' is out of range: the operator has {scope.outputs} outputs"
