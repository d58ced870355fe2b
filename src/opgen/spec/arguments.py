"""Arguments and returns: `Tensor(a!) self`, `Scalar alpha=1`, `(Tensor values, Tensor indices)`.

`Arguments` splits the flat argument list into the groups that calling
conventions treat differently: positional arguments before and after `self`,
keyword-only arguments before and after the four TensorOptions arguments
(dtype, layout, device, pin_memory), and the out arguments (mutable
keyword-only arguments, always last).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TypeVar

from opgen.cached import cached
from opgen.frozen import field, frozen
from opgen.spec.syntax import IDENTIFIER, SchemaError, memoized_parse
from opgen.spec.types import (
    Annotation,
    BaseTy,
    BaseType,
    OptionalType,
    Type,
    annotated_str,
    parse_annotated_type,
)


@frozen
class Argument:
    name: str  # the name callers use
    type: Type  # its schema type
    default: str | None  # the default as written (`1`, `None`, `[0, 1]`); None: required
    annotation: Annotation | None  # its alias annotation, `(a!)` in `Tensor(a!) self`
    # Set by __post_init__: every argument is printed (parsing checks the text)
    # and asked whether it is written, many times over. Fields rather than
    # `cached` attributes, which CPython 3.11 reads slowly even once set.
    is_write: bool = field(init=False, repr=False, compare=False)
    _text: str = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        values = self.__dict__
        annotation = self.annotation
        values["is_write"] = annotation is not None and annotation.is_write
        text = f"{annotated_str(self.type, annotation)} {self.name}"
        values["_text"] = text if self.default is None else f"{text}={self.default}"

    @staticmethod
    def parse(text: str, offset: int = 0, *, named_dimensions: bool = False) -> Argument:
        """`named_dimensions`: also read `Dimname` (`releases.NAMED_DIMENSIONS`)."""
        parse = _parse_named_argument if named_dimensions else _parse_argument
        return memoized_parse(parse, text, offset)

    def __str__(self) -> str:
        return self._text

    def __hash__(self) -> int:
        # Arguments key the API layers' conversion memo; the text says everything.
        return hash(self._text)

    @cached
    def _unannotated(self) -> Argument:
        """The argument without its alias annotation, as in signatures.

        Parsed from its text, so that it is the very object every unannotated
        occurrence is (`memoized_parse`): signatures then compare by identity.
        """
        if self.annotation is None:
            return self
        return _shared(Argument(self.name, self.type, self.default, None), _parse_argument)

    @cached
    def as_self(self) -> SelfArgument:
        """This argument as `self`, one object for every schema it is the self of: the
        API layers convert each argument object once (`BindingMemo`)."""
        return SelfArgument(self)


def _parse_named_argument(text: str) -> Argument:
    return _parse_argument(text, named_dimensions=True)


def _parse_argument(text: str, named_dimensions: bool = False) -> Argument:
    """`named_dimensions`: also read `Dimname` (`releases.NAMED_DIMENSIONS`)."""
    if "=" in text:
        if text.count("=") != 1:
            second = text.index("=", text.index("=") + 1)
            raise SchemaError(f"argument '{text}' has more than one '='", second)
        declaration, default = text.split("=")
        if default == "":
            raise SchemaError(f"argument '{text}' has an empty default", len(text))
    else:
        declaration, default = text, None
    type_text, space, name = declaration.rpartition(" ")
    if not space:
        raise SchemaError(
            f"argument '{text}' needs a type and a name, separated by a space", 0, len(text)
        )
    if not IDENTIFIER.match(name):
        raise SchemaError(f"invalid argument name '{name}'", len(type_text) + 1, max(len(name), 1))
    type, annotation = parse_annotated_type(type_text, 0, named_dimensions)
    return Argument(name, type, default, annotation)


@frozen
class Return:
    name: str | None  # the name of a named return (a named-tuple field); None if unnamed
    type: Type  # its schema type
    annotation: Annotation | None  # its alias annotation: which argument it aliases
    # Set by __post_init__, as `Argument`'s.
    is_write: bool = field(init=False, repr=False, compare=False)
    _text: str = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        values = self.__dict__
        annotation = self.annotation
        values["is_write"] = annotation is not None and annotation.is_write
        text = annotated_str(self.type, annotation)
        values["_text"] = text if self.name is None else f"{text} {self.name}"

    @staticmethod
    def parse(text: str, offset: int = 0, *, named_dimensions: bool = False) -> Return:
        """`named_dimensions`: also read `Dimname` (`releases.NAMED_DIMENSIONS`)."""
        parse = parse_named_return if named_dimensions else _parse_return
        return memoized_parse(parse, text, offset)

    def __str__(self) -> str:
        return self._text

    @cached
    def _plain(self) -> Return:
        """The return without name and alias annotation, as in signatures."""
        if self.annotation is None and self.name is None:
            return self
        return shared(Return(None, self.type, None))  # as in `_unannotated`


P = TypeVar("P", Argument, Return)


def shared(value: P) -> P:
    """The parsed object equal to `value`, else `value`, for code that builds arguments
    and returns: the API layers convert each argument object once (`BindingMemo`), so an
    object shared with the parsed schemas is converted once for all of them."""
    named = value.type.base_ty is BaseTy.Dimname  # parsed by the named-dimension reading
    if isinstance(value, Argument):
        return _shared(value, _parse_named_argument if named else _parse_argument)
    return _shared(value, parse_named_return if named else _parse_return)


def _shared(value: P, parse: Callable[[str], P]) -> P:
    """The parsed object equal to `value` (the one the memo hands out), else `value`."""
    try:
        parsed = memoized_parse(parse, value._text, 0)
    except SchemaError:
        return value
    return parsed if parsed == value else value


def parse_named_return(text: str) -> Return:
    """A return that may be a `Dimname` (`releases.NAMED_DIMENSIONS`); for `memoized_parse`."""
    return _parse_return(text, named_dimensions=True)


def _parse_return(text: str, named_dimensions: bool = False) -> Return:
    arrow = text.find(" -> ")
    if arrow >= 0 and text.startswith("Tensor("):
        close = text.find(")", arrow)
        written = text[len("Tensor(") : close if close >= 0 else len(text)]
        raise SchemaError(
            f"invalid alias annotation '{written}' on a return: '-> ...' (what an argument "
            "aliases after the call) is allowed only on arguments",
            len("Tensor("),
            len(written),
        )
    type_text, space, name = text.rpartition(" ")
    if not space:
        type_text, name_or_none = text, None
    else:
        if not IDENTIFIER.match(name):
            raise SchemaError(
                f"invalid return name '{name}'", len(type_text) + 1, max(len(name), 1)
            )
        name_or_none = name
    type, annotation = parse_annotated_type(type_text, 0, named_dimensions)
    return Return(name_or_none, type, annotation)


@frozen
class SelfArgument:
    """The `self` argument: the Tensor a method is called on."""

    argument: Argument  # the argument itself, named `self`


@frozen
class TensorOptionsArguments:
    """dtype, layout, device and pin_memory, which the C++ API packs into one value."""

    dtype: Argument  # ScalarType or ScalarType?
    layout: Argument  # Layout or Layout?
    device: Argument  # Device or Device?
    pin_memory: Argument  # bool or bool?

    def all(self) -> tuple[Argument, ...]:
        """The four arguments, in schema order."""
        return (self.dtype, self.layout, self.device, self.pin_memory)


_TENSOR_OPTIONS = (
    ("dtype", BaseType(BaseTy.ScalarType)),
    ("layout", BaseType(BaseTy.Layout)),
    ("device", BaseType(BaseTy.Device)),
    ("pin_memory", BaseType(BaseTy.bool)),
)


def _is_tensor_option(arg: Argument, name: str, type: Type) -> bool:
    return arg.name == name and (arg.type == type or arg.type == OptionalType(type))


def parse_arguments(
    text: str, offset: int = 0, named_dimensions: bool = False
) -> tuple[Arguments, bool]:
    """The arguments, and whether each is written as it prints (so the whole list is:
    '*' and the order of the arguments always print as written). `named_dimensions`
    also reads `Dimname` (`releases.NAMED_DIMENSIONS`)."""
    if named_dimensions:
        return memoized_parse(_parse_named_argument_list, text, offset)
    return memoized_parse(_parse_argument_list, text, offset)


def _parse_named_argument_list(text: str) -> tuple[Arguments, bool]:
    return _parse_argument_list(text, named_dimensions=True)


def _parse_argument_list(text: str, named_dimensions: bool = False) -> tuple[Arguments, bool]:
    parse_argument = _parse_named_argument if named_dimensions else _parse_argument
    positional: list[Argument] = []
    kwarg_only: list[Argument] = []
    out: list[Argument] = []
    section = positional
    star_seen = False
    canonical = True
    seen_names: dict[str, int] = {}
    pieces = text.split(", ") if text else []
    last = len(pieces) - 1
    next_at = 0
    for index, piece in enumerate(pieces):
        at, next_at = next_at, next_at + len(piece) + 2
        if piece == "":
            where = "trailing comma" if index == last else "empty argument"
            raise SchemaError(f"{where} in argument list", at - 2 if index else at)
        if piece == "*":
            if star_seen:
                raise SchemaError("the keyword-only marker '*' may appear only once", at)
            star_seen = True
            section = kwarg_only
            continue
        if "," in piece:
            trailing = index == last and piece.endswith(",")
            comma = len(piece) - 1 if trailing else piece.partition("=")[0].find(",")
            if comma >= 0:  # commas in defaults, as in `int[2] stride=[1,1]`, are fine
                raise SchemaError(
                    "trailing comma in argument list"
                    if trailing
                    else "arguments are separated by ', ' (a comma and a space)",
                    at + comma,
                )
        arg = memoized_parse(parse_argument, piece, at)
        name = arg.name
        if name in seen_names:
            declaration = piece.partition("=")[0]
            raise SchemaError(
                f"duplicate argument name '{name}'",
                at + len(declaration) - len(name),
                len(name),
            )
        seen_names[name] = at
        if arg.is_write:
            if section is kwarg_only:
                section = out
        elif section is out:
            raise SchemaError(
                f"argument '{name}' is not mutable, so it cannot follow the out arguments",
                at,
                len(piece),
            )
        section.append(arg)
        if canonical and arg._text != piece:
            canonical = False
    if star_seen and not kwarg_only and not out:
        raise SchemaError(
            "the keyword-only marker '*' must be followed by arguments",
            text.rindex("*"),
        )
    return Arguments._group(positional, kwarg_only, out, 0), canonical


def _group_tensor_options(
    kwarg_only: list[Argument], post_options: list[Argument], offset: int
) -> tuple[list[Argument], TensorOptionsArguments | None]:
    """Find the four TensorOptions arguments; the rest go before or after them."""
    pre_options: list[Argument] = []
    options: TensorOptionsArguments | None = None
    i = 0
    width = len(_TENSOR_OPTIONS)
    while i < len(kwarg_only):
        window = kwarg_only[i : i + width]
        if len(window) == width and all(
            _is_tensor_option(a, name, type)
            for a, (name, type) in zip(window, _TENSOR_OPTIONS, strict=True)
        ):
            if options is not None:
                raise SchemaError("TensorOptions arguments may appear only once", offset)
            options = TensorOptionsArguments(*window)
            i += width
            continue
        (pre_options if options is None else post_options).append(kwarg_only[i])
        i += 1
    return pre_options, options


@frozen
class Arguments:
    pre_self_positional: tuple[Argument, ...]  # positional arguments before `self`
    self_arg: SelfArgument | None  # `self`, if an argument is so named and positional
    post_self_positional: tuple[Argument, ...]  # positional arguments after `self`
    pre_tensor_options_kwarg_only: tuple[Argument, ...]  # keyword-only, before the options
    tensor_options: TensorOptionsArguments | None  # dtype, layout, device, pin_memory
    post_tensor_options_kwarg_only: tuple[Argument, ...]  # keyword-only, after the options
    out: tuple[Argument, ...]  # keyword-only, mutable, always last
    # The flat views, TensorOptions spread out. Every function needs them (checks,
    # kinds, signatures, every API layer), so __post_init__ builds them; fields
    # rather than `cached` attributes, which CPython 3.11 reads slowly even once set.
    flat_positional: Sequence[Argument] = field(init=False, repr=False, compare=False)
    # Keyword-only arguments, not counting the out arguments.
    flat_kwarg_only: Sequence[Argument] = field(init=False, repr=False, compare=False)
    flat_non_out: Sequence[Argument] = field(init=False, repr=False, compare=False)
    flat_all: Sequence[Argument] = field(init=False, repr=False, compare=False)
    # The arguments but the out ones, self and TensorOptions as groups: what every
    # calling convention converts, one by one.
    non_out: Sequence[Argument | SelfArgument | TensorOptionsArguments] = field(
        init=False, repr=False, compare=False
    )

    def __post_init__(self) -> None:
        assert self.self_arg is not None or not self.pre_self_positional
        assert self.tensor_options is not None or not self.post_tensor_options_kwarg_only
        positional = [*self.pre_self_positional]
        if self.self_arg is not None:
            positional.append(self.self_arg.argument)
        positional += self.post_self_positional
        kwarg_only = [*self.pre_tensor_options_kwarg_only]
        if self.tensor_options is not None:
            kwarg_only += self.tensor_options.all()
        kwarg_only += self.post_tensor_options_kwarg_only
        values = self.__dict__
        values["flat_positional"] = positional
        values["flat_kwarg_only"] = kwarg_only
        values["flat_non_out"] = positional + kwarg_only
        values["flat_all"] = positional + kwarg_only + [*self.out]
        values["non_out"] = (*self.positional, *self.kwarg_only)

    @staticmethod
    def parse(text: str, offset: int = 0) -> Arguments:
        return parse_arguments(text, offset)[0]

    @staticmethod
    def _group(
        positional: list[Argument], kwarg_only: list[Argument], out: list[Argument], offset: int
    ) -> Arguments:
        self_index = None
        for i, a in enumerate(positional):
            if a.name == "self":
                self_index = i
                break
        if self_index is None:
            pre_self, self_arg, post_self = [], None, positional
        else:
            pre_self = positional[:self_index]
            self_arg = positional[self_index].as_self
            post_self = positional[self_index + 1 :]
        for a in pre_self:
            if a.is_write:
                raise SchemaError(
                    f"argument '{a.name}' before 'self' cannot be mutable",
                    offset + sum(len(str(b)) + 2 for b in positional[: positional.index(a)]),
                    len(str(a)),
                )

        pre_options: list[Argument] = kwarg_only
        options: TensorOptionsArguments | None = None
        post_options: list[Argument] = []
        if any(a.name == "dtype" for a in kwarg_only):  # else no TensorOptions to find
            pre_options, options = _group_tensor_options(kwarg_only, post_options, offset)
        return Arguments(
            pre_self_positional=tuple(pre_self),
            self_arg=self_arg,
            post_self_positional=tuple(post_self),
            pre_tensor_options_kwarg_only=tuple(pre_options),
            tensor_options=options,
            post_tensor_options_kwarg_only=tuple(post_options),
            out=tuple(out),
        )

    @property
    def post_self_positional_mutable(self) -> Sequence[Argument]:
        return [a for a in self.post_self_positional if a.is_write]

    @property
    def positional(self) -> Sequence[Argument | SelfArgument]:
        self_args = [self.self_arg] if self.self_arg is not None else []
        return [*self.pre_self_positional, *self_args, *self.post_self_positional]

    @property
    def kwarg_only(self) -> Sequence[Argument | TensorOptionsArguments]:
        options = [self.tensor_options] if self.tensor_options is not None else []
        return [*self.pre_tensor_options_kwarg_only, *options, *self.post_tensor_options_kwarg_only]

    @property
    def all(self) -> Sequence[Argument | SelfArgument | TensorOptionsArguments]:
        return [*self.non_out, *self.out]

    def mutable_arg_names(self) -> list[str]:
        return [a.name for a in self.flat_all if a.is_write]

    @cached
    def _has_write(self) -> bool:
        """Whether any argument is written (annotated `!`)."""
        return any(a.is_write for a in self.flat_all)

    def _has_non_out(self, base: BaseTy) -> bool:
        return base in self._non_out_base_tys

    @cached
    def _non_out_base_tys(self) -> tuple[BaseTy | None, ...]:
        # A tuple: `in` compares enum members by identity, while a set would
        # hash them (`Enum.__hash__` is Python code).
        return tuple([a.type.base_ty for a in self.flat_non_out])

    def has_tensor_arg(self) -> bool:
        """Any Tensor-like input (out arguments do not count)."""
        return self._has_non_out(BaseTy.Tensor)

    def has_symint_arg(self) -> bool:
        return self._has_non_out(BaseTy.SymInt)

    def has_generator_arg(self) -> bool:
        return BaseTy.Generator in self._non_out_base_tys

    def signature(self, *, strip_default: bool = False) -> Arguments:
        """Annotations, TensorOptions and out arguments removed (see FunctionSchema.signature)."""
        if not strip_default:
            return self._signature
        return self._derive_signature(strip_default)

    @cached
    def _signature(self) -> Arguments:
        return self._mapped(lambda a: a._unannotated)

    def _derive_signature(self, strip_default: bool) -> Arguments:
        def plain(a: Argument) -> Argument:
            if a.annotation is None and (a.default is None or not strip_default):
                return a
            return Argument(a.name, a.type, None if strip_default else a.default, None)

        return self._mapped(plain)

    def _mapped(self, plain: Callable[[Argument], Argument]) -> Arguments:
        """`plain` applied to every argument, without TensorOptions grouping or out arguments."""
        return Arguments(
            pre_self_positional=tuple(map(plain, self.pre_self_positional)),
            self_arg=plain(self.self_arg.argument).as_self if self.self_arg else None,
            post_self_positional=tuple(map(plain, self.post_self_positional)),
            pre_tensor_options_kwarg_only=tuple(
                map(plain, self.pre_tensor_options_kwarg_only + self.post_tensor_options_kwarg_only)
            ),
            tensor_options=None,
            post_tensor_options_kwarg_only=(),
            out=(),
        )

    def remove_self_annotation(self) -> Arguments:
        assert self.self_arg is not None
        plain_self = self.self_arg.argument._unannotated
        return self._replace(self_arg=plain_self.as_self)

    def with_out_args(self, outs: Sequence[Argument]) -> Arguments:
        assert not self.out
        return self._replace(out=tuple(outs))

    def _replace(
        self, *, self_arg: SelfArgument | None = None, out: tuple[Argument, ...] | None = None
    ) -> Arguments:
        """`dataclasses.replace` for the two fields derivations change, without its cost."""
        return Arguments(
            self.pre_self_positional,
            self.self_arg if self_arg is None else self_arg,
            self.post_self_positional,
            self.pre_tensor_options_kwarg_only,
            self.tensor_options,
            self.post_tensor_options_kwarg_only,
            self.out if out is None else out,
        )

    def __str__(self) -> str:
        return self._text

    @cached
    def _text(self) -> str:
        parts = [a._text for a in self.flat_positional]
        if self.flat_kwarg_only or self.out:
            parts.append("*")
        parts += [a._text for a in self.flat_kwarg_only]
        parts += [a._text for a in self.out]
        return ", ".join(parts)


# -- operator names ----------------------------------------------------------------
