"""Function schemas: `ns::name.overload(Type arg=default, *, Type(a!) out) -> Return`.

Every class here is a frozen dataclass whose `__str__` prints the canonical
text it was parsed from; `parse()` checks that printing the result gives back
the input exactly, so any text the model cannot represent is rejected rather
than silently normalised.

Types live in `types.py`, arguments and returns in `arguments.py`, and the
shared syntax pieces (`SchemaError`, canonical-form check) in `syntax.py`.
"""

from __future__ import annotations

import itertools
import re
from collections.abc import Iterator, Sequence

from opgen.cached import cached
from opgen.frozen import frozen, replace
from opgen.spec.arguments import (
    Argument,
    Arguments,
    Return,
    parse_arguments,
)
from opgen.spec.keys import SchemaKind
from opgen.spec.syntax import IDENTIFIER, OVERLOAD, SchemaError, memoized_parse, split_items
from opgen.spec.types import TENSOR, annotated_str

_KIND_PHRASES = {
    SchemaKind.functional: "a functional operator",
    SchemaKind.inplace: "an inplace operator",
    SchemaKind.out: "an out= operator",
    SchemaKind.mutable: "a mutable operator",
    SchemaKind.scratch: "a scratch operator",
}


# Python's augmented assignments (PEP 203): `__iadd__` is the inplace `__add__`.
AUGMENTED_ASSIGNMENT_NAMES = frozenset(
    {"add", "sub", "mul", "div", "mod", "pow", "lshift", "rshift", "and", "xor", "or"}
)
_DUNDER = r"__([^_]+)__\Z"  # compiled where used: few names are dunders
_FUNCTIONAL_SUFFIX = "_functional"
_VIEW_COPY_SUFFIXES = ("_copy", "_scatter")  # stripped by view_signature()


@frozen
class BaseOperatorName:
    """An operator name without its overload: `add`, `add_` (inplace), `__iand__`.

    `functional_overload` marks `foo_functional`, the functional variant of a
    mutable operator `foo`, which is a base name of its own rather than an
    overload so that it cannot be confused with `foo` when resolving overloads.
    """

    base: str  # the name without its inplace and dunder marks: `add_` -> add, `__iand__` -> and
    inplace: bool  # `add_`, `__iand__`: the operator mutates `self`
    dunder_method: bool  # written as `__name__`: a Python operator method such as `__iand__`
    functional_overload: bool = False  # `foo_functional`, the functional variant of `foo`

    @staticmethod
    def parse(text: str, offset: int = 0) -> BaseOperatorName:
        return memoized_parse(_parse_base_operator_name, text, offset)

    def __str__(self) -> str:
        return self._text

    @cached
    def _text(self) -> str:
        if self.dunder_method:
            return f"__{'i' if self.inplace else ''}{self.base}__"
        if self.inplace:
            return f"{self.base}_"
        if self.functional_overload:
            return f"{self.base}{_FUNCTIONAL_SUFFIX}"
        return self.base


def _parse_base_operator_name(text: str) -> BaseOperatorName:
    if not IDENTIFIER.match(text):
        raise SchemaError(f"invalid operator name '{text}'", 0, max(len(text), 1))
    if text.endswith("_out"):
        raise SchemaError(
            f"operator name '{text}' ends in '_out', which is reserved; "
            "did you mean an 'out' overload name?",
            len(text) - 4,
            4,
        )
    dunder = re.match(_DUNDER, text) if text.startswith("__") else None
    if dunder is not None:
        base = dunder.group(1)
        inplace = base[0] == "i" and base[1:] in AUGMENTED_ASSIGNMENT_NAMES
        if inplace:
            base = base[1:]
        elif base[0] == "i":
            raise SchemaError(
                f"dunder method '{text}' starts with 'i' but is not an augmented assignment",
                0,
                len(text),
            )
    else:
        inplace = text.endswith("_")
        base = text[:-1] if inplace else text
    functional = base.endswith(_FUNCTIONAL_SUFFIX)
    if functional:
        if dunder is not None or inplace:
            raise SchemaError(
                f"'{text}' cannot be both a functional variant and a dunder or inplace name",
                0,
                len(text),
            )
        base = base[: -len(_FUNCTIONAL_SUFFIX)]
    return BaseOperatorName(base, inplace, dunder is not None, functional)


@frozen
class OperatorName:
    name: BaseOperatorName  # the name before the dot
    overload_name: str  # the overload after the dot, `Tensor` in `add.Tensor`; "" for none

    @staticmethod
    def parse(text: str, offset: int = 0) -> OperatorName:
        base, dot, overload = text.partition(".")
        if dot and not (overload and OVERLOAD.match(overload)):
            raise SchemaError(
                f"invalid overload name '{overload}'", offset + len(base) + 1, max(len(overload), 1)
            )
        return OperatorName(BaseOperatorName.parse(base, offset), overload)

    def __str__(self) -> str:
        return self._text

    def __hash__(self) -> int:
        # Names key the kernel indices; the text's hash is computed once per string.
        return hash(self._text)

    def __eq__(self, other: object) -> bool:
        # Equal names have equal texts (and the text is cached): one comparison, not a
        # field-by-field one through BaseOperatorName.
        if other.__class__ is not OperatorName:
            return NotImplemented
        assert isinstance(other, OperatorName)
        return self._text == other._text

    @cached
    def _text(self) -> str:
        return f"{self.name}.{self.overload_name}" if self.overload_name else str(self.name)

    def unambiguous_name(self) -> str:
        """`op_overload`, the name of the operator's C++ struct in at::_ops."""
        return f"{self.name}_{self.overload_name}" if self.overload_name else str(self.name)

    def remove_inplace(self) -> OperatorName:
        return OperatorName(
            BaseOperatorName(self.name.base, False, self.name.dunder_method), self.overload_name
        )

    def with_overload(self, overload: str) -> OperatorName:
        return OperatorName(
            BaseOperatorName(self.name.base, False, self.name.dunder_method), overload
        )


def _check_canonical(printed: str, text: str, offset: int, what: str) -> None:
    if printed == text:
        return
    at = next(
        (i for i, (a, b) in enumerate(zip(printed, text, strict=False)) if a != b),
        min(len(printed), len(text)),
    )
    raise SchemaError(
        f"{what} '{text}' is not written in canonical form; expected '{printed}'",
        offset + at,
    )


# -- function schemas ----------------------------------------------------------------


@frozen
class FunctionSchema:
    name: OperatorName  # `name.overload`, before the parenthesis
    arguments: Arguments  # the arguments, by the part of the list each is in
    returns: tuple[Return, ...]  # after `->`: none for `()`, several for a tuple

    @staticmethod
    def parse(
        text: str, *, library: bool = False, named_dimensions: bool = False
    ) -> FunctionSchema:
        """Parse and validate `text`; `library` applies PyTorch's rules for custom operators
        (mutated arguments are never returned) instead of ATen's; `named_dimensions` also
        reads `Dimname`, which torch removed in 2.13 (`releases.NAMED_DIMENSIONS`)."""
        open_paren = text.find("(")
        arrow = text.rfind(") -> ")
        if open_paren <= 0 or arrow < open_paren:
            raise SchemaError(
                "expected a schema of the form 'name.overload(arguments) -> returns'",
                0,
                len(text),
            )
        if "\n" in text:
            raise SchemaError("a schema must be written on one line", text.index("\n"))
        name_text = text[:open_paren]
        name = OperatorName.parse(name_text, 0)
        arguments, canonical = parse_arguments(
            text[open_paren + 1 : arrow], open_paren + 1, named_dimensions
        )
        returns, returns_canonical = _parse_returns(text[arrow + 5 :], arrow + 5, named_dimensions)
        schema = FunctionSchema(name, arguments, returns)
        # A safety net: the parts parse exactly. The schema prints as its name, its
        # arguments and its returns, each printed as written when every piece is;
        # only otherwise is the whole schema printed and compared.
        if not (canonical and returns_canonical and name._text == name_text):
            _check_canonical(schema._render(), text, 0, "schema")
        values = schema.__dict__
        values["text"] = text  # prime the cached properties
        values["kind"] = schema._validate(library)
        return schema

    def validate(self) -> None:
        """The invariants every schema of an operator must satisfy; raises SchemaError.

        Errors point into the canonical text, which is the parsed text.
        """
        self._validate()

    def _validate(self, library: bool = False) -> SchemaKind:
        """`validate()`, returning the schema's kind, which it needs anyway."""
        args = self.arguments
        returns = self.returns
        if library:
            for r in returns:
                if r.annotation is not None:
                    raise SchemaError(
                        f"a custom operator cannot return an alias of an input ('{r}'): "
                        "torch.compile cannot functionalize it; an operator that mutates "
                        "its arguments returns nothing ('-> ()')",
                        *self.span(r),
                    )
        if args.out and not library:
            for arg, ret in zip(args.out, returns, strict=False):
                if arg.annotation != ret.annotation:
                    raise SchemaError(
                        f"return '{ret}' must alias out argument '{arg.name}' (the i-th return "
                        "corresponds to the i-th out argument)",
                        *self.span(ret),
                    )
        for a in args.post_self_positional:
            if a.is_write and any(a.annotation == r.annotation for r in returns):
                raise SchemaError(
                    f"mutable positional argument '{a.name}' must not be returned", *self.span(a)
                )
        mutable_returns = []
        for r in returns:
            if r.is_write:
                mutable_returns.append(r)
        if mutable_returns and len(mutable_returns) != len(returns):
            raise SchemaError(
                "returns must be either all mutable (aliasing written arguments) or all immutable",
                *self.span(returns),
            )
        if mutable_returns:
            out_and_self = [*args.out, *(a for a in args.flat_positional if a.name == "self")]
            for r in mutable_returns:
                if not any(r.annotation == a.annotation for a in out_and_self):
                    raise SchemaError(
                        f"mutable return '{r}' must alias a keyword-only out argument or 'self'; "
                        "did you forget to mark an out argument as keyword-only?",
                        *self.span(r),
                    )
        if args.out and not library:
            if any(a.type != TENSOR for a in args.out):
                if self.returns:
                    raise SchemaError(
                        "an out= operator whose out arguments are not all plain Tensors "
                        "must return nothing",
                        *self.span(self.returns),
                    )
            else:
                real_outs = [a for a in args.out if not a.name.startswith("_scratch_")]
                if len(real_outs) != len(self.returns):
                    raise SchemaError(
                        f"an out= operator whose out arguments are plain Tensors must return "
                        f"its {len(real_outs)} non-scratch out "
                        f"argument{'' if len(real_outs) == 1 else 's'}, "
                        f"not {len(self.returns)} value{'' if len(self.returns) == 1 else 's'}",
                        *self.span(self.returns),
                    )
        if self.name.name.inplace:
            self._validate_inplace(library)
        kind = self._compute_kind()
        options = args.tensor_options
        if options is not None and kind is not SchemaKind.functional:
            start = self.span(options.dtype)[0]
            end = sum(self.span(options.pin_memory))
            raise SchemaError(
                "TensorOptions arguments (dtype, layout, device, pin_memory) are allowed "
                f"only in functional (factory) operators, not in {_KIND_PHRASES[kind]}",
                start,
                end - start,
            )
        if "functional" in self.name.overload_name and kind is not SchemaKind.functional:
            raise SchemaError(  # is_functional_fn(), inline: this runs for every schema
                f"overload name '{self.name.overload_name}' contains 'functional', which is "
                f"reserved for functional operators, not {_KIND_PHRASES[kind]}",
                len(str(self.name.name)) + 1,
                len(self.name.overload_name),
            )
        return kind

    def _validate_inplace(self, library: bool) -> None:
        args = self.arguments
        self_arg = args.self_arg.argument if args.self_arg is not None else None
        if self_arg is None or not self_arg.is_write:
            raise SchemaError(
                f"inplace operator '{self.name}' needs a mutable 'self' argument, "
                "e.g. 'Tensor(a!) self'",
                *(self.span(self_arg) if self_arg is not None else (0, len(str(self.name)))),
            )
        if library:
            pass  # returns nothing, checked by `_validate`
        elif self_arg.type == TENSOR:
            if len(self.returns) != 1 or self.returns[0].annotation != self_arg.annotation:
                raise SchemaError(
                    f"inplace operator '{self.name}' with a Tensor 'self' must return self, "
                    f"written '{annotated_str(self_arg.type, self_arg.annotation)}'",
                    *self.span(self.returns),
                )
        elif self.returns:
            raise SchemaError(
                f"inplace operator '{self.name}' whose 'self' is not a Tensor must return nothing",
                *self.span(self.returns),
            )
        if args.out:
            raise SchemaError(
                f"operator '{self.name}' cannot be both inplace and out=", *self.span(args.out[0])
            )

    def span(self, part: Argument | Return | tuple[Return, ...]) -> tuple[int, int]:
        """Offset and length of an argument, a return or all returns in the schema text."""
        offset = len(str(self.name)) + 1
        args = self.arguments
        pieces: list[object] = [*args.flat_positional]
        if args.flat_kwarg_only or args.out:
            pieces.append("*")
        pieces += [*args.flat_kwarg_only, *args.out]
        for piece in pieces:
            if piece is part:
                return offset, len(str(piece))
            offset += len(str(piece)) + 2
        offset += 3 if pieces else 5  # past ") -> " (the loop added ", " after the last piece)
        returns_text = str(self).rpartition(") -> ")[2]
        if isinstance(part, tuple):
            return offset, len(returns_text)
        offset += len(self.returns) != 1  # "("
        for r in self.returns:
            if r is part:
                return offset, len(str(r))
            offset += len(str(r)) + 2
        raise AssertionError(f"{part} is not part of {self}")

    def _compute_kind(self) -> SchemaKind:
        args = self.arguments
        if self.name.name.inplace:
            return SchemaKind.inplace
        if args.out:
            for a in args.out:
                if a.name.startswith("_scratch_"):
                    return SchemaKind.scratch
            return SchemaKind.out
        for a in args.post_self_positional:
            if a.is_write:
                return SchemaKind.mutable
        return SchemaKind.functional

    @cached
    def kind(self) -> SchemaKind:
        """functional (fresh result), inplace (`name_`), out (`out=`), mutable or scratch."""
        return self._compute_kind()

    def is_out_fn(self) -> bool:
        return bool(self.arguments.out)

    def is_functional_fn(self) -> bool:
        return "functional" in self.name.overload_name

    @property
    def is_mutable(self) -> bool:
        return any(a.is_write for a in self.arguments.flat_all)

    @property
    def modifies_arguments(self) -> bool:
        return self.kind in (SchemaKind.inplace, SchemaKind.out, SchemaKind.mutable)

    def has_symint(self) -> bool:
        return self.arguments.has_symint_arg()

    def schema_order_arguments(self) -> Iterator[Argument]:
        a = self.arguments
        return itertools.chain(a.flat_positional, a.flat_kwarg_only, a.out)

    def returns_are_aliased(self) -> bool:
        return any(r.is_write for r in self.returns)

    def aliased_return_names(self) -> list[str | None]:
        """For each return, the name of the argument it aliases, if any."""
        names: list[str | None] = []
        for r in self.returns:
            aliased = [
                a.name
                for a in self.arguments.flat_all
                if a.annotation is not None and a.annotation == r.annotation
            ]
            assert len(aliased) <= 1, f"return {r} aliases several arguments: {aliased}"
            names.append(aliased[0] if aliased else None)
        return names

    def __hash__(self) -> int:
        # Schemas key the grouping dictionaries; hashing the (cached) text is much
        # cheaper than hashing the nested dataclasses, and agrees with __eq__.
        return hash(self.text)

    @cached
    def text(self) -> str:
        """The canonical schema text, `str(self)`, computed once."""
        return self._render()

    @cached
    def _signature(self) -> FunctionSchema:
        return self._derive_signature(False, False, False)

    @cached
    def _view_signature(self) -> FunctionSchema:
        if not self.name.name.base.endswith(_VIEW_COPY_SUFFIXES):
            return self._signature  # nothing to strip
        return self._derive_signature(False, True, False)

    def signature(
        self,
        *,
        strip_default: bool = False,
        strip_view_copy_name: bool = False,
        keep_return_names: bool = False,
    ) -> FunctionSchema:
        """The part shared by the functional, inplace, out and mutable variants of one op.

        Drops the overload name, inplace-ness, out arguments, TensorOptions and
        alias annotations; mutable arguments that are not returned become
        returns (self, then out arguments, then other positionals). Return names
        are dropped unless `keep_return_names`, in which case returns made from
        mutable arguments are named `{arg}_out`. With `strip_view_copy_name`,
        `foo_copy` becomes `foo` and `foo_scatter` becomes `foo_inverse`, pairing
        view operators with their copy variants.
        """
        if not (strip_default or keep_return_names):
            if strip_view_copy_name and self.name.name.base.endswith(_VIEW_COPY_SUFFIXES):
                return self._view_signature
            return self._signature  # also the view signature when there is nothing to strip
        return self._derive_signature(strip_default, strip_view_copy_name, keep_return_names)

    def _derive_signature(
        self, strip_default: bool, strip_view_copy_name: bool, keep_return_names: bool
    ) -> FunctionSchema:
        base = self.name.name.base
        if strip_view_copy_name:
            if base.endswith("_copy"):
                base = base.replace("_copy", "")
            elif base.endswith("_scatter"):
                base = base.replace("scatter", "inverse")
        args = self.arguments
        from_mutable: tuple[Return, ...] = ()
        if args._has_write:
            self_args = [args.self_arg.argument] if args.self_arg is not None else []
            from_mutable = tuple(
                Return(f"{a.name}_out" if keep_return_names else None, a.type, None)
                for a in (*self_args, *args.out, *args.post_self_positional)
                if a.is_write and not any(a.annotation == r.annotation for r in self.returns)
            )
        if keep_return_names:
            kept = tuple(
                r if r.annotation is None else Return(r.name, r.type, None) for r in self.returns
            )
        else:
            kept = tuple([r._plain for r in self.returns])
        arguments = args.signature(strip_default=True) if strip_default else args._signature
        if self.name._text == "bernoulli.p":
            # bernoulli.p has no default for p, but bernoulli_.float has one;
            # giving it one lets the two variants pair up.
            arguments = _with_default(arguments, "p", "0.5")
        name = self.name
        plain_base = not (name.name.inplace or name.name.functional_overload)
        if plain_base and base == name.name.base:
            if name.overload_name:
                name = OperatorName(name.name, "")
        else:
            name = OperatorName(BaseOperatorName(base, False, name.name.dunder_method), "")
        return FunctionSchema(name, arguments, kept + from_mutable)

    def view_signature(self) -> FunctionSchema:
        return self.signature(strip_view_copy_name=True)

    def with_name(self, name: OperatorName) -> FunctionSchema:
        return FunctionSchema(name, self.arguments, self.returns)

    def __str__(self) -> str:
        return self.text

    def _render(self) -> str:
        # `_text` rather than `str()`: every part has its text cached.
        if len(self.returns) == 1:
            returns = self.returns[0]._text
        else:
            returns = f"({', '.join([r._text for r in self.returns])})"
        return f"{self.name._text}({self.arguments._text}) -> {returns}"


def _with_default(arguments: Arguments, name: str, default: str) -> Arguments:
    def fill(a: Argument) -> Argument:
        return replace(a, default=default) if a.name == name else a

    return replace(arguments, post_self_positional=tuple(map(fill, arguments.post_self_positional)))


def _parse_returns(
    text: str, offset: int, named_dimensions: bool = False
) -> tuple[tuple[Return, ...], bool]:
    """The returns, and whether each is written as it prints (then so are all of them)."""
    if named_dimensions:
        return memoized_parse(_parse_named_returns_text, text, offset)
    return memoized_parse(_parse_returns_text, text, offset)


def _parse_named_returns_text(text: str) -> tuple[tuple[Return, ...], bool]:
    return _parse_returns_text(text, named_dimensions=True)


def _parse_returns_text(
    text: str, named_dimensions: bool = False
) -> tuple[tuple[Return, ...], bool]:
    offset = 0
    if text == "()":
        return (), True
    parenthesized = text.startswith("(") and text.endswith(")")
    if parenthesized:
        text, offset = text[1:-1], offset + 1
    returns: list[Return] = []
    canonical = True
    for piece, at in split_items(text, offset):
        if piece == "":
            if not text:
                raise SchemaError("missing return type after '->'; write '()' for none", at)
            raise SchemaError("empty return in return list", at)
        r = Return.parse(piece, at, named_dimensions=named_dimensions)
        returns.append(r)
        canonical = canonical and r._text == piece
    if parenthesized and len(returns) == 1:
        raise SchemaError("a single return is written without parentheses", offset - 1)
    if not parenthesized and len(returns) > 1:
        raise SchemaError("several returns must be written in parentheses", offset)
    return tuple(returns), canonical


def fresh_alias_names(used: Sequence[str]) -> list[str]:
    """Alias set names not in `used`, in alphabetical order."""
    return [c for c in "abcdefghijklmnopqrstuvwxyz" if c not in used]
