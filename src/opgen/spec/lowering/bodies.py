"""The bodies of a lowering spec, checked: names, compositions, arguments never read.

A `call:` or `code:` body is C++ whose names are checked as MLX gradient formulas are
(`opgen.spec.mlx.formulas`): every name an argument, a local the body declares, a name of
the runtime's (`opgen.api.aten_mlx.RUNTIME_NAMES`) or of `mlx::core`. A composition's
calls must name lowered operators with arguments their schemas have. And an argument
no body reads and the generated function does not handle itself would be ignored, so it
is an error for an overload the entry names, and keeps a variant from being lowered.
"""

from __future__ import annotations

import difflib
import re
from collections.abc import Callable, Mapping, Sequence

from opgen.api.aten_mlx import RUNTIME_NAMES
from opgen.diagnostics import Diagnostic, Location, did_you_mean
from opgen.frozen import frozen
from opgen.spec.keys import SchemaKind
from opgen.spec.lowering.compose import (
    Call,
    Expression,
    ListOf,
    Literal,
    Name,
    Output,
    TupleOf,
)
from opgen.spec.lowering.model import Body, BodyKind, Lowering
from opgen.spec.mlx.formulas import Scope, check_formula
from opgen.spec.mlx.type_mapping import DTYPE_NAMES
from opgen.spec.native import NativeFunction
from opgen.spec.yaml.located import WrittenText

# Names every body has besides the arguments.
BODY_NAMES = frozenset({"op", "promote"})
# The statements' words a `code:` body may use besides an expression's.
STATEMENT_WORDS = frozenset(
    {
        "return",
        "if",
        "else",
        "for",
        "while",
        "do",
        "switch",
        "case",
        "default",
        "break",
        "continue",
        "throw",
        "try",
        "catch",
        "this",
        "mutable",
        "constexpr",
        "static",
        "inline",
        "using",
        "namespace",
    }
)
# Declarations in a `code:` body: `auto x =`, `const array& y =`, `int i;`, `for (int k`.
_DECLARED = re.compile(
    r"(?:\b(?:auto|bool|int|double|float|size_t|std::size_t|std::int64_t|int64_t|"
    r"array|mlx::core::\w+|[A-Z]\w*)\b|>)"
    r"\s*(?:const\s*)?[&*]?\s*(?P<name>[A-Za-z_]\w*)\s*(?:[=;({\[:,)]|$)"
)
_BINDINGS = re.compile(r"\[\s*(?P<names>[A-Za-z_]\w*(?:\s*,\s*[A-Za-z_]\w*)*)\s*\]\s*=")


@frozen
class BodyCheck:
    """What checking a body found."""

    diagnostics: tuple[Diagnostic, ...]
    # The names the body writes that nothing declares: typos, mostly, of an argument the
    # body then never reads (which a diagnostic about the typo already says).
    unknown: frozenset[str]


def body_problems(
    op: str,
    functions: Sequence[NativeFunction],
    variants: Sequence[NativeFunction],
    body: Body,
    written: WrittenText,
    by_name: Mapping[str, Lowering],
    mlx: frozenset[str] | None,
    released: Callable[[str], bool] | None = None,
) -> BodyCheck:
    """Every mistake of the body of the entry `op` lowering `functions` (and `variants`):
    a name no one declares, a composition of an operator nobody lowers. `mlx`: the names
    `mlx::core` declares (None: C++ bodies are not checked); `released`: whether the
    release has an operator."""
    found: list[Diagnostic] = []
    unknown: set[str] = set()
    names: set[str] = set()
    for f in functions:
        names.update(a.name for a in f.func.arguments.flat_all)
        if "reduction" in f.tags or any("reduction" in v.tags for v in variants):
            names.add("axes")
    if body.kind is BodyKind.COMPOSE:
        assert body.composition is not None
        for f in functions:
            own = {a.name for a in f.func.arguments.flat_all}
            _check_composition(
                op, written, body.composition, own, by_name, released, found, unknown
            )
        return BodyCheck(tuple(dict.fromkeys(found)), frozenset(unknown))
    if mlx is None:
        return BodyCheck((), frozenset())
    if body.kind is BodyKind.CODE:
        names.update(_declared_names(body.text))
        names.update(STATEMENT_WORDS)
    scope = Scope(frozenset(names | BODY_NAMES | RUNTIME_NAMES), mlx, "aten_mlx", frozenset(), None)
    for problem in check_formula(body.text, scope, f"the lowering of '{op}'"):
        found.append(Diagnostic(written.at(problem.offset, problem.length), problem.message))
        text = body.text[problem.offset : problem.offset + problem.length]
        if IDENTIFIER.fullmatch(text):
            unknown.add(text)
    return BodyCheck(tuple(found), frozenset(unknown))


def _check_composition(
    op: str,
    written: WrittenText,
    expression: Expression,
    own: set[str],
    by_name: Mapping[str, Lowering],
    released: Callable[[str], bool] | None,
    found: list[Diagnostic],
    unknown: set[str],
) -> None:
    at = written.at

    def error(location: Location, message: str) -> None:
        found.append(Diagnostic(location, message))

    if isinstance(expression, Name):
        if expression.text not in own and expression.text not in DTYPE_NAMES:
            hint = did_you_mean(expression.text, own)
            error(
                at(expression.offset, expression.length),
                f"'{expression.text}' is no argument of '{op}'{hint}",
            )
            unknown.add(expression.text)
        return
    if isinstance(expression, Literal):
        return
    if isinstance(expression, ListOf | TupleOf):
        for item in expression.items:
            _check_composition(op, written, item, own, by_name, released, found, unknown)
        return
    if isinstance(expression, Output):
        _check_composition(op, written, expression.of, own, by_name, released, found, unknown)
        return
    assert isinstance(expression, Call)
    callee = composed_operator(expression.op, by_name, released)
    where = at(expression.offset, len(expression.op))
    if isinstance(callee, str):
        error(where, callee)
    else:
        schema = callee.function.func
        name = str(schema.name)
        arguments = [a.name for a in schema.arguments.flat_all]
        if len(expression.positional) > len(arguments):
            extra = expression.positional[len(arguments)]
            count = f"{len(arguments)} argument{'' if len(arguments) == 1 else 's'}"
            error(
                at(extra.offset, extra.length),
                f"'{name}' takes {count}, not {len(expression.positional)}",
            )
        given = set(arguments[: len(expression.positional)])
        for i, (keyword, _) in enumerate(expression.keywords):
            if keyword not in arguments:
                hint = did_you_mean(keyword, arguments)
                offsets = expression.keyword_offsets
                place = at(offsets[i], len(keyword)) if i < len(offsets) else where
                error(place, f"'{name}' has no argument '{keyword}'{hint}")
            given.add(keyword)
        missing = [
            a.name
            for a in schema.arguments.flat_all
            if a.default is None and a.name not in given and not a.is_write
        ]
        if missing:
            listed = ", ".join(repr(m) for m in missing)
            error(where, f"'{name}' needs argument{'s' if len(missing) > 1 else ''} {listed}")
    for argument in (*expression.positional, *(e for _, e in expression.keywords)):
        _check_composition(op, written, argument, own, by_name, released, found, unknown)


# Arguments the generated function itself honours or refuses, whatever the body reads.
HANDLED = frozenset({"layout", "device", "pin_memory", "memory_format", "generator"})
IDENTIFIER = re.compile(r"[A-Za-z_]\w*")


def unused_arguments(body: Body, f: NativeFunction, tags: frozenset[str]) -> list[str]:
    """The arguments of `f` that `body` never names and the generated function does not
    handle itself (its out= arguments, an in-place `self`, a reduction's `dtype`, the
    placement arguments, a generator); a reduction's `dim` is read as `axes`."""
    names = set(IDENTIFIER.findall(body.text))
    if "axes" in names and "reduction" in tags:
        names.add("dim")
    if "reduction" in tags:
        names.add("dtype")
    func = f.func
    handled = {a.name for a in func.arguments.out}
    if func.kind is SchemaKind.inplace:
        handled.add("self")
    return [
        a.name
        for a in func.arguments.flat_all
        if a.name not in names and a.name not in handled and a.name not in HANDLED
    ]


def composed_operator(
    op: str, by_name: Mapping[str, Lowering], released: Callable[[str], bool] | None = None
) -> Lowering | str:
    """The lowering a composition's call names, or why there is none; `released`: whether
    the release has an operator (`add.Tensor`, `add`), to tell an unlowered one from a typo."""
    name = op.removeprefix("aten::")
    found = by_name.get(f"aten::{name}")
    if found is not None:
        return found
    if "." not in name:
        overloads = [
            lowering for key, lowering in by_name.items() if key.startswith(f"aten::{name}.")
        ]
        if len(overloads) == 1:
            return overloads[0]
        if overloads:
            names = ", ".join(sorted(str(o.function.func.name) for o in overloads))
            return f"'{name}' has several lowered overloads ({names}): name one"
    if released is not None and released(name):
        return f"'{name}' is not lowered: a composition calls lowered operators only"
    close = difflib.get_close_matches(f"aten::{name}", list(by_name), n=1)
    hint = f"; did you mean '{close[0].removeprefix('aten::')}'?" if close else ""
    return f"no lowering computes '{name}'{hint}"


def _declared_names(code: str) -> set[str]:
    found = {m.group("name") for m in _DECLARED.finditer(code)}
    for m in _BINDINGS.finditer(code):
        found.update(n.strip() for n in m.group("names").split(","))
    return found
