"""What a backward node saves, inferred from a formula's text.

A backward formula runs long after the forward call, so whatever it uses of
the call's inputs and outputs the node must save when it is built. Saving a
whole tensor is expensive where the formula needs only a property of it, so
these uses are replaced by a value computed at build time, and saved instead:

    self.sym_sizes()   -> self_sym_sizes          (c10::SymIntArrayRef)
    zeros_like(self)   -> self_info.zeros()       (saves a TypeAndSize)
    self.sym_size(-1)  -> self_sym_argsize_minus_1

and so on for each rule of `_RULES`, tried in order for each input (then for
each output); a name the formula still uses after that is saved whole. The
patterns, and their quirks, are upstream's: the `.` before a method is any
character, and a name is not anchored on its left (`{name}.dim()` also finds
`other_self.dim()` for `self`). `.sizes()`, `.size(int)` and `.strides()`
are refused: formulas must use the SymInt forms.

`FormulaPatterns` compiles each name's patterns once per run.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence

from opgen.api.types import (
    BOOL,
    INT64,
    LAYOUT,
    SCALAR_TYPE,
    STRING_VIEW,
    SYM_INT,
    SYM_INT_ARRAY_REF,
    TENSOR_GEOMETRY,
    TENSOR_OPTIONS,
    TYPE_AND_SIZE,
    CType,
    NamedCType,
    OptionalCType,
    SpecialArgName,
    VectorCType,
)
from opgen.autograd.model import SavedAttribute
from opgen.diagnostics import SpecError
from opgen.frozen import frozen
from opgen.spec.derivatives import Formula

_OPTIONAL_STRING = OptionalCType(STRING_VIEW)
_OPTIONAL_SYM_INT_ARRAY_REF = OptionalCType(SYM_INT_ARRAY_REF)


@frozen
class _Rule:
    """`pattern` (with `{}` for the name) becomes the saved `name + suffix`."""

    pattern: str
    needle: str  # text every match contains: the rule is skipped for formulas without it
    suffix: str | Callable[[re.Match[str]], str]
    ctype: CType
    expr: Callable[[str], str] | None = None  # what is saved; default: the matched text
    replacement: Callable[[str], str] | None = None  # default: the saved name


def _argsize_suffix(m: re.Match[str]) -> str:
    return "_sym_argsize_" + m.group(1).replace("-", "minus_")


_RULES = (
    _Rule(r"{}.sym_sizes\(\)", "sym_sizes()", "_sym_sizes", SYM_INT_ARRAY_REF),
    _Rule(
        r"{}->sym_sizes\(\)",
        "->sym_sizes()",
        "_sym_sizes_opt",
        _OPTIONAL_SYM_INT_ARRAY_REF,
        expr=lambda name: (
            f"{name}.has_value() ? std::optional<c10::SymIntArrayRef>({name}->sym_sizes()) "
            ": std::nullopt"
        ),
    ),
    _Rule(
        r"{}.sym_blocksize\(\)",
        "sym_blocksize()",
        "_self_sym_blocksize_opt",
        _OPTIONAL_SYM_INT_ARRAY_REF,
        expr=lambda name: f"at::sparse_csr::getSymIntBlockSize({name})",
    ),
    _Rule(r"{}.options\(\)", "options()", "_options", TENSOR_OPTIONS),
    _Rule(
        r"zeros_like\({}\)",
        "zeros_like(",
        "_info",
        TYPE_AND_SIZE,
        expr=lambda name: name,
        replacement=lambda name: f"{name}_info.zeros()",
    ),
    _Rule(r"{}.sym_size\((-?\w+)\)", "sym_size(", _argsize_suffix, SYM_INT),
    _Rule(r"{}.numel\(\)", "numel()", "_numel", INT64),
    _Rule(r"{}.sym_numel\(\)", "sym_numel()", "_sym_numel", SYM_INT),
    _Rule(r"to_args_sizes\({}\)", "to_args_sizes(", "_args_sizes", VectorCType(VectorCType(INT64))),
    _Rule(
        r"to_args_sizes_symint\({}\)",
        "to_args_sizes_symint(",
        "_args_sizes_symint",
        VectorCType(VectorCType(SYM_INT)),
    ),
    _Rule(
        r"to_args_scalartypes\({}\)",
        "to_args_scalartypes(",
        "_args_scalartypes",
        VectorCType(SCALAR_TYPE),
    ),
    _Rule(r"TensorGeometry\({}\)", "TensorGeometry(", "_geometry", TENSOR_GEOMETRY),
    _Rule(r"{}.scalar_type\(\)", "scalar_type()", "_scalar_type", SCALAR_TYPE),
    _Rule(r"{}.dim\(\)", "dim()", "_dim", INT64),
    # `expr` is filled in by `_strides_expr`, which checks the formula's inputs.
    _Rule(r"{}.sym_strides\(\)", "sym_strides()", "_sym_strides", SYM_INT_ARRAY_REF),
    _Rule(r"{}.layout\(\)", "layout()", "_layout", LAYOUT),
    _Rule(r"{}.is_conj\(\)", "is_conj()", "_conjugate", BOOL),
)
_STRIDES_RULE = _RULES[14]

_SIZE_INT = re.compile(r"(?:\.|->)size\(-?\d+\)")


class FormulaPatterns:
    """The compiled patterns of formula names, each compiled once per run, when first needed."""

    def __init__(self) -> None:
        self._rules: dict[tuple[int, str], re.Pattern[str]] = {}
        self._identifiers: dict[str, re.Pattern[str]] = {}
        self._words: dict[str, re.Pattern[str]] = {}

    def rule(self, index: int, name: str) -> re.Pattern[str]:
        found = self._rules.get((index, name))
        if found is None:
            found = self._rules[index, name] = re.compile(_RULES[index].pattern.format(name))
        return found

    @staticmethod
    def uses(text: str, name: str) -> bool:
        """Whether `name` occurs in `text` as a whole word (upstream's `IDENT_REGEX` search)."""
        end = len(text)
        at = text.find(name)
        while at >= 0:
            after = at + len(name)
            if (at == 0 or not _is_word(text[at - 1])) and (
                after == end or not _is_word(text[after])
            ):
                return True
            at = text.find(name, at + 1)
        return False

    def identifier(self, name: str) -> re.Pattern[str]:
        """`name` with the non-word character (or end) on each side, which a match consumes.

        Substituting with it, as upstream does, leaves the second of two uses
        separated by one character (`grad*grad`) unchanged.
        """
        found = self._identifiers.get(name)
        if found is None:
            found = self._identifiers[name] = re.compile(rf"(^|\W){name}($|\W)")
        return found

    def replace(self, text: str, name: str, replacement: str) -> str:
        """Upstream's `re.sub(IDENT_REGEX.format(name), ...)`: uses of `name` by `replacement`."""
        if name not in text:
            return text
        return self.identifier(name).sub(lambda m: f"{m.group(1)}{replacement}{m.group(2)}", text)

    def count(self, text: str, name: str) -> int:
        """Upstream's `len(re.findall(IDENT_REGEX.format(name), text))`."""
        if name not in text:
            return 0
        return len(self.identifier(name).findall(text))

    def word(self, name: str) -> re.Pattern[str]:
        found = self._words.get(name)
        if found is None:
            found = self._words[name] = re.compile(rf"\b{name}\b")
        return found


def _is_word(c: str) -> bool:
    """Whether `c` is a regex word character (`\\w`): alphanumeric or `_`."""
    return c.isalnum() or c == "_"


def check_size_methods(formula: Formula) -> None:
    """`.sizes()`, `.size(int)` and `.strides()` are refused: their SymInt forms save better."""
    text = formula.text
    _refuse(formula, _find(text, ".sizes()", "->sizes()"), "'.sym_sizes()' (c10::SymIntArrayRef)")
    match = _SIZE_INT.search(text)
    if match is not None:
        _refuse(formula, (match.start(), match.group(0)), "'.sym_size(dim)' (c10::SymInt)")
    found = _find(text, ".strides()", "->strides()")
    _refuse(formula, found, "'.sym_strides()' (c10::SymIntArrayRef)")


def _find(text: str, *spellings: str) -> tuple[int, str] | None:
    for spelling in spellings:
        at = text.find(spelling)
        if at >= 0:
            return at, spelling
    return None


def _refuse(formula: Formula, found: tuple[int, str] | None, instead: str) -> None:
    if found is not None:
        at, spelling = found
        raise SpecError(
            f"formulas use {instead}, not '{spelling}'", formula.span(at, len(spelling))
        )


def saved_values(
    text: str,
    nctypes: Sequence[NamedCType],
    var_names: tuple[str, ...],
    formula: Formula,
    patterns: FormulaPatterns,
) -> tuple[str, tuple[SavedAttribute, ...]]:
    """`text` with the uses of `nctypes`' names replaced, and the values to save, in order."""
    saved: list[SavedAttribute] = []
    for nctype in nctypes:
        name = nctype.name.name if isinstance(nctype.name, SpecialArgName) else nctype.name
        if name not in text:
            continue  # every rule's pattern, and a use, contains the name
        for index, rule in enumerate(_RULES):
            if rule.needle in text:
                substitute = _substitution(rule, name, var_names, formula, saved)
                text = patterns.rule(index, name).sub(substitute, text)
        if nctype.type == _OPTIONAL_STRING:
            # Backward nodes store std::optional<std::string>; formulas take string views.
            view = (
                f"{name}.has_value() ? std::optional<std::string_view>({name}.value()) "
                ": std::nullopt"
            )
            text = patterns.word(name).sub(view, text)
        if patterns.uses(text, name):
            saved.append(SavedAttribute(nctype, name))
    return text, tuple(saved)


def _substitution(
    rule: _Rule,
    name: str,
    var_names: tuple[str, ...],
    formula: Formula,
    saved: list[SavedAttribute],
) -> Callable[[re.Match[str]], str]:
    def substitute(m: re.Match[str]) -> str:
        suffix = rule.suffix if isinstance(rule.suffix, str) else rule.suffix(m)
        if rule is _STRIDES_RULE:
            expr = _strides_expr(name, var_names, formula)
        else:
            expr = m.group(0) if rule.expr is None else rule.expr(name)
        saved.append(SavedAttribute(NamedCType(name + suffix, rule.ctype), expr))
        return name + suffix if rule.replacement is None else rule.replacement(name)

    return substitute


def _strides_expr(name: str, var_names: tuple[str, ...], formula: Formula) -> str:
    if var_names != (name,):
        raise SpecError(
            f"'{name}.sym_strides()' is supported only in the formula of '{name}' alone "
            f"(the key is '{formula.key}')",
            formula.location,
        )
    return f'strides_or_error({name}, "{name}")'
