"""Function schemas: `ns::name.overload(Type arg=default, *, Type(a!) out) -> Return`.

Every class here is a frozen dataclass whose `__str__` prints the canonical
text it was parsed from; `parse()` checks that printing the result gives back
the input exactly, so any text the model cannot represent is rejected rather
than silently normalised.

Parse errors are `SchemaError`s: a `SpecError` without a file location but with
an offset into the parsed text. The caller that knows where the text came from
turns the offset into a file location (see `SchemaError.at`).

Structure, as the rest of opgen sees it:
- `Arguments` splits the flat argument list into the groups that calling
  conventions treat differently: positional arguments before and after `self`,
  keyword-only arguments before and after the four TensorOptions arguments
  (dtype, layout, device, pin_memory), and the out arguments (mutable
  keyword-only arguments, always last).
- `Annotation` is an alias annotation: `a` (a view of alias set a), `a!`
  (written), `a -> *` (wildcard after), `a|b` (alias set).
"""

from __future__ import annotations

import dataclasses
import functools
import itertools
import re
import string
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from enum import Enum
from typing import TypeVar, cast

from opgen.cached import cached
from opgen.diagnostics import Location, SpecError
from opgen.spec.keys import SchemaKind

_KIND_PHRASES = {
    SchemaKind.functional: "a functional operator",
    SchemaKind.inplace: "an inplace operator",
    SchemaKind.out: "an out= operator",
    SchemaKind.mutable: "a mutable operator",
    SchemaKind.scratch: "a scratch operator",
}


class SchemaError(SpecError):
    """A syntax or validity error at `offset` characters into the schema text."""

    def __init__(self, message: str, offset: int = 0, length: int = 1, item: int = 0) -> None:
        super().__init__(message)
        self.offset = offset
        self.length = length
        self.item = item  # which item of a list value (a precomputed line, say)

    def at(self, origin: Location) -> SpecError:
        """The same error, placed in a file: `origin` is where the text starts."""
        return SpecError(self.message, origin.shifted(self.offset, self.length))


_IDENTIFIER = re.compile(r"[A-Za-z_][A-Za-z0-9_]*\Z")
_OVERLOAD = re.compile(r"[A-Za-z0-9_]*\Z")


def _check_canonical(parsed: object, text: str, offset: int, what: str) -> None:
    printed = parsed._render() if isinstance(parsed, FunctionSchema) else str(parsed)
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


def _split(text: str, offset: int) -> Iterator[tuple[str, int]]:
    """Split on ', ' and yield each piece with its offset."""
    start = 0
    while True:
        end = text.find(", ", start)
        if end < 0:
            yield text[start:], offset + start
            return
        yield text[start:end], offset + start
        start = end + 2


# -- annotations ---------------------------------------------------------------

_ANNOTATION = re.compile(r"([a-z](?:\|[a-z])?)(!?)(?: -> (\*|[a-z](?:\|[a-z])*))?\Z")


@dataclass(frozen=True)
class Annotation:
    """An alias annotation. `alias_set` has one name, or two for `a|b`."""

    alias_set: tuple[str, ...]
    is_write: bool
    alias_set_after: tuple[str, ...]

    @staticmethod
    def parse(text: str, offset: int = 0) -> Annotation:
        m = _ANNOTATION.match(text)
        if m is None:
            raise SchemaError(
                f"invalid alias annotation '{text}'; expected e.g. 'a', 'a!', 'a|b' or 'a -> *'",
                offset,
                len(text),
            )
        alias_set = tuple(m.group(1).split("|"))
        is_write = m.group(2) == "!"
        after = tuple(m.group(3).split("|")) if m.group(3) else ()
        if is_write and len(alias_set) > 1:
            raise SchemaError(f"alias set '{m.group(1)}' cannot be written ('!')", offset)
        if len(alias_set) > 1 and len(after) > 1:
            raise SchemaError(
                f"alias annotation '{text}' has alias sets of several names on both sides",
                offset,
                len(text),
            )
        return Annotation(alias_set, is_write, after)

    def __str__(self) -> str:
        text = "|".join(self.alias_set) + ("!" if self.is_write else "")
        if self.alias_set_after:
            text += " -> " + "|".join(self.alias_set_after)
        return text


# -- types -----------------------------------------------------------------------


class BaseTy(Enum):
    Generator = "Generator"
    ScalarType = "ScalarType"
    Tensor = "Tensor"
    int = "int"
    DimVector = "DimVector"
    float = "float"
    str = "str"
    bool = "bool"
    Layout = "Layout"
    Device = "Device"
    DeviceIndex = "DeviceIndex"
    Scalar = "Scalar"
    MemoryFormat = "MemoryFormat"
    QScheme = "QScheme"
    Storage = "Storage"
    Stream = "Stream"
    SymInt = "SymInt"
    SymBool = "SymBool"
    GraphModule = "GraphModule"


_BASE_TYPES = {t.value: t for t in BaseTy}
_CUSTOM_CLASS_PREFIX = "__torch__.torch.classes."
_CUSTOM_CLASS_NAME = re.compile(r"[a-zA-Z0-9_.]+\Z")


@dataclass(frozen=True)
class Type:
    """A schema type: a `BaseType`, `OptionalType`, `ListType` or `CustomClassType`."""

    @staticmethod
    def parse(text: str, offset: int = 0) -> Type:
        return _parse_type(text, offset)

    @cached
    def _text(self) -> str:
        return self._render()

    def __str__(self) -> str:
        return self._text

    def _render(self) -> str:
        raise NotImplementedError

    def is_base_ty_like(self, base: BaseTy) -> bool:
        """Whether `base` is the element type, looking through `?` and `[]`."""
        raise NotImplementedError

    def is_nullable(self) -> bool:
        """Whether None is a value (an optional, or a list of optionals)."""
        raise NotImplementedError

    def is_list_like(self) -> ListType | None:
        """The list type, looking through `?`; None for other types."""
        raise NotImplementedError

    def is_tensor_like(self) -> bool:
        return self.is_base_ty_like(BaseTy.Tensor)

    def is_symint_like(self) -> bool:
        return self.is_base_ty_like(BaseTy.SymInt)

    def is_generator_like(self) -> bool:
        return self.is_base_ty_like(BaseTy.Generator)


def _parse_type(text: str, offset: int) -> Type:
    if text.endswith("?") and len(text) > 1:
        return OptionalType(_parse_type(text[:-1], offset))
    if text.endswith("]"):
        bracket = text.rfind("[")
        size = text[bracket + 1 : -1]
        if bracket > 0 and (size == "" or (size.isascii() and size.isdigit())):
            elem = _parse_type(text[:bracket], offset)
            if size.startswith("0"):
                raise SchemaError(
                    f"invalid list size '{size}' (an unsized list is written '[]')",
                    offset + bracket + 1,
                    len(size),
                )
            return ListType(elem, int(size) if size else None)
    if text.startswith(_CUSTOM_CLASS_PREFIX):
        name = text[len(_CUSTOM_CLASS_PREFIX) :]
        if _CUSTOM_CLASS_NAME.match(name):
            return CustomClassType(name)
    base = _BASE_TYPES.get(text)
    if base is None:
        raise SchemaError(f"unknown type '{text}'", offset, max(len(text), 1))
    return BaseType(base)


@dataclass(frozen=True)
class BaseType(Type):
    name: BaseTy

    def _render(self) -> str:
        return self.name.value

    def is_base_ty_like(self, base: BaseTy) -> bool:
        return self.name is base

    def is_nullable(self) -> bool:
        return False

    def is_list_like(self) -> ListType | None:
        return None


@dataclass(frozen=True)
class OptionalType(Type):
    elem: Type

    def _render(self) -> str:
        return f"{self.elem}?"

    def is_base_ty_like(self, base: BaseTy) -> bool:
        return self.elem.is_base_ty_like(base)

    def is_nullable(self) -> bool:
        return True

    def is_list_like(self) -> ListType | None:
        return self.elem.is_list_like()


@dataclass(frozen=True)
class CustomClassType(Type):
    """A TorchScript custom class, `__torch__.torch.classes.ns.Name`."""

    class_name: str

    def _render(self) -> str:
        return f"{_CUSTOM_CLASS_PREFIX}{self.class_name}"

    def is_base_ty_like(self, base: BaseTy) -> bool:
        return False

    def is_nullable(self) -> bool:
        return False

    def is_list_like(self) -> ListType | None:
        return None


@dataclass(frozen=True)
class ListType(Type):
    """`T[]`, or `T[N]` with a fixed size (a size of 0 is written `T[]`)."""

    elem: Type
    size: int | None

    def _render(self) -> str:
        return f"{self.elem}[{self.size or ''}]"

    def is_base_ty_like(self, base: BaseTy) -> bool:
        return self.elem.is_base_ty_like(base)

    def is_nullable(self) -> bool:
        return self.elem.is_nullable()

    def is_list_like(self) -> ListType | None:
        return self


TENSOR = BaseType(BaseTy.Tensor)


# -- arguments and returns ---------------------------------------------------------

# An alias annotation binds to `Tensor`, before any `?` or `[]`: `Tensor(a!)?`.
_ANNOTATED_TENSOR = re.compile(r"Tensor\((.+)\)(.*)\Z")
_ANNOTATABLE = ("Tensor", "Tensor?", "Tensor[]")


def _parse_annotated_type(text: str, offset: int) -> tuple[Type, Annotation | None]:
    m = _ANNOTATED_TENSOR.match(text)
    if m is None:
        paren = text.find("(")
        if paren > 0 and text[:paren] in _BASE_TYPES:
            raise SchemaError(
                "alias annotations are allowed only on Tensor types (Tensor, Tensor?, Tensor[]), "
                f"not on '{text[:paren]}'",
                offset + paren,
                len(text) - paren,
            )
        return Type.parse(text, offset), None
    suffix = m.group(2)
    if suffix not in ("", "?", "[]"):
        raise SchemaError(
            f"an alias-annotated Tensor may only be followed by '?' or '[]', not '{suffix}'",
            offset + m.start(2),
            len(suffix),
        )
    annotation = Annotation.parse(m.group(1), offset + m.start(1))
    return Type.parse("Tensor" + suffix), annotation


def _annotated_str(type: Type, annotation: Annotation | None) -> str:
    text = str(type)
    if annotation is None:
        return text
    assert text in _ANNOTATABLE, f"annotation on non-Tensor type {text}"
    return text.replace("Tensor", f"Tensor({annotation})", 1)


@dataclass(frozen=True)
class Argument:
    name: str
    type: Type
    default: str | None
    annotation: Annotation | None

    @staticmethod
    def parse(text: str, offset: int = 0) -> Argument:
        return _memoized(_parse_argument, text, offset)

    @property
    def is_write(self) -> bool:
        return self.annotation is not None and self.annotation.is_write

    def __str__(self) -> str:
        return self._text

    @cached
    def _text(self) -> str:
        text = f"{_annotated_str(self.type, self.annotation)} {self.name}"
        return text if self.default is None else f"{text}={self.default}"


def _parse_argument(text: str) -> Argument:
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
    if not _IDENTIFIER.match(name):
        raise SchemaError(f"invalid argument name '{name}'", len(type_text) + 1, max(len(name), 1))
    type, annotation = _parse_annotated_type(type_text, 0)
    return Argument(name, type, default, annotation)


@dataclass(frozen=True)
class Return:
    name: str | None
    type: Type
    annotation: Annotation | None

    @staticmethod
    def parse(text: str, offset: int = 0) -> Return:
        return _memoized(_parse_return, text, offset)

    @property
    def is_write(self) -> bool:
        return self.annotation is not None and self.annotation.is_write

    def __str__(self) -> str:
        return self._text

    @cached
    def _text(self) -> str:
        text = _annotated_str(self.type, self.annotation)
        return text if self.name is None else f"{text} {self.name}"


def _parse_return(text: str) -> Return:
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
        if not _IDENTIFIER.match(name):
            raise SchemaError(
                f"invalid return name '{name}'", len(type_text) + 1, max(len(name), 1)
            )
        name_or_none = name
    type, annotation = _parse_annotated_type(type_text, 0)
    return Return(name_or_none, type, annotation)


T = TypeVar("T")


@functools.lru_cache(maxsize=8192)
def _memo(parse: Callable[[str], object], text: str) -> object:
    return parse(text)


def _memoized(parse: Callable[[str], T], text: str, offset: int) -> T:
    """`parse(text)`, reusing earlier results, with errors shifted by `offset`.

    A spec repeats the same few argument and return texts thousands of times
    ('Tensor self', 'Scalar alpha=1'); their parsed objects are immutable, so
    one object serves every occurrence. This memo of a pure function is the
    only cache in the parser, and nothing depends on its contents.
    """
    try:
        return cast(T, _memo(parse, text))
    except SchemaError as error:
        error.offset += offset
        raise


@dataclass(frozen=True)
class SelfArgument:
    """The `self` argument: the Tensor a method is called on."""

    argument: Argument


@dataclass(frozen=True)
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


@dataclass(frozen=True)
class Arguments:
    pre_self_positional: tuple[Argument, ...]
    self_arg: SelfArgument | None
    post_self_positional: tuple[Argument, ...]
    pre_tensor_options_kwarg_only: tuple[Argument, ...]
    tensor_options: TensorOptionsArguments | None
    post_tensor_options_kwarg_only: tuple[Argument, ...]
    out: tuple[Argument, ...]  # keyword-only, mutable, always last

    def __post_init__(self) -> None:
        assert self.self_arg is not None or not self.pre_self_positional
        assert self.tensor_options is not None or not self.post_tensor_options_kwarg_only

    @staticmethod
    def parse(text: str, offset: int = 0) -> Arguments:
        positional: list[Argument] = []
        kwarg_only: list[Argument] = []
        out: list[Argument] = []
        section = positional
        star_seen = False
        seen_names: dict[str, int] = {}
        pieces = list(_split(text, offset)) if text else []
        for index, (piece, at) in enumerate(pieces):
            if piece == "":
                where = "trailing comma" if index == len(pieces) - 1 else "empty argument"
                raise SchemaError(f"{where} in argument list", at - 2 if index else at)
            if piece == "*":
                if star_seen:
                    raise SchemaError("the keyword-only marker '*' may appear only once", at)
                star_seen = True
                section = kwarg_only
                continue
            trailing = index == len(pieces) - 1 and piece.endswith(",")
            comma = len(piece) - 1 if trailing else piece.partition("=")[0].find(",")
            if comma >= 0:  # commas in defaults, as in `int[2] stride=[1,1]`, are fine
                raise SchemaError(
                    "trailing comma in argument list"
                    if trailing
                    else "arguments are separated by ', ' (a comma and a space)",
                    at + comma,
                )
            arg = Argument.parse(piece, at)
            if arg.name in seen_names:
                declaration = piece.partition("=")[0]
                raise SchemaError(
                    f"duplicate argument name '{arg.name}'",
                    at + len(declaration) - len(arg.name),
                    len(arg.name),
                )
            seen_names[arg.name] = at
            if arg.is_write:
                if section is kwarg_only:
                    section = out
            elif section is out:
                raise SchemaError(
                    f"argument '{arg.name}' is not mutable, so it cannot follow the out arguments",
                    at,
                    len(piece),
                )
            section.append(arg)
        if star_seen and not kwarg_only and not out:
            raise SchemaError(
                "the keyword-only marker '*' must be followed by arguments",
                offset + text.rindex("*"),
            )
        return Arguments._group(positional, kwarg_only, out, offset)

    @staticmethod
    def _group(
        positional: list[Argument], kwarg_only: list[Argument], out: list[Argument], offset: int
    ) -> Arguments:
        self_index = next((i for i, a in enumerate(positional) if a.name == "self"), None)
        if self_index is None:
            pre_self, self_arg, post_self = [], None, positional
        else:
            pre_self = positional[:self_index]
            self_arg = SelfArgument(positional[self_index])
            post_self = positional[self_index + 1 :]
        for a in pre_self:
            if a.is_write:
                raise SchemaError(
                    f"argument '{a.name}' before 'self' cannot be mutable",
                    offset + sum(len(str(b)) + 2 for b in positional[: positional.index(a)]),
                    len(str(a)),
                )

        pre_options: list[Argument] = []
        options: TensorOptionsArguments | None = None
        post_options: list[Argument] = []
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
        return Arguments(
            pre_self_positional=tuple(pre_self),
            self_arg=self_arg,
            post_self_positional=tuple(post_self),
            pre_tensor_options_kwarg_only=tuple(pre_options),
            tensor_options=options,
            post_tensor_options_kwarg_only=tuple(post_options),
            out=tuple(out),
        )

    @cached
    def flat_positional(self) -> Sequence[Argument]:
        self_args = [self.self_arg.argument] if self.self_arg is not None else []
        return [*self.pre_self_positional, *self_args, *self.post_self_positional]

    @cached
    def flat_kwarg_only(self) -> Sequence[Argument]:
        """Keyword-only arguments, not counting the out arguments."""
        options = self.tensor_options.all() if self.tensor_options is not None else []
        return [
            *self.pre_tensor_options_kwarg_only,
            *options,
            *self.post_tensor_options_kwarg_only,
        ]

    @cached
    def flat_non_out(self) -> Sequence[Argument]:
        return [*self.flat_positional, *self.flat_kwarg_only]

    @cached
    def flat_all(self) -> Sequence[Argument]:
        return [*self.flat_positional, *self.flat_kwarg_only, *self.out]

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
    def non_out(self) -> Sequence[Argument | SelfArgument | TensorOptionsArguments]:
        return [*self.positional, *self.kwarg_only]

    @property
    def all(self) -> Sequence[Argument | SelfArgument | TensorOptionsArguments]:
        return [*self.positional, *self.kwarg_only, *self.out]

    def mutable_arg_names(self) -> list[str]:
        return [a.name for a in self.flat_all if a.is_write]

    def _has_non_out(self, base: BaseTy) -> bool:
        return any(a.type.is_base_ty_like(base) for a in self.flat_non_out)

    def has_tensor_arg(self) -> bool:
        """Any Tensor-like input (out arguments do not count)."""
        return self._has_non_out(BaseTy.Tensor)

    def has_symint_arg(self) -> bool:
        return self._has_non_out(BaseTy.SymInt)

    def has_generator_arg(self) -> bool:
        return self._has_non_out(BaseTy.Generator)

    def signature(self, *, strip_default: bool = False) -> Arguments:
        """Annotations, TensorOptions and out arguments removed (see FunctionSchema.signature)."""

        def plain(a: Argument) -> Argument:
            if a.annotation is None and (a.default is None or not strip_default):
                return a
            return Argument(a.name, a.type, None if strip_default else a.default, None)

        return Arguments(
            pre_self_positional=tuple(map(plain, self.pre_self_positional)),
            self_arg=SelfArgument(plain(self.self_arg.argument)) if self.self_arg else None,
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
        plain_self = dataclasses.replace(self.self_arg.argument, annotation=None)
        return dataclasses.replace(self, self_arg=SelfArgument(plain_self))

    def with_out_args(self, outs: Sequence[Argument]) -> Arguments:
        assert not self.out
        return dataclasses.replace(self, out=tuple(outs))

    def __str__(self) -> str:
        parts = [str(a) for a in self.flat_positional]
        if self.flat_kwarg_only or self.out:
            parts.append("*")
        parts.extend(str(a) for a in self.flat_kwarg_only)
        parts.extend(str(a) for a in self.out)
        return ", ".join(parts)


# -- operator names ----------------------------------------------------------------

# Python's augmented assignments (PEP 203): `__iadd__` is the inplace `__add__`.
AUGMENTED_ASSIGNMENT_NAMES = frozenset(
    {"add", "sub", "mul", "div", "mod", "pow", "lshift", "rshift", "and", "xor", "or"}
)
_DUNDER = re.compile(r"__([^_]+)__\Z")
_FUNCTIONAL_SUFFIX = "_functional"


@dataclass(frozen=True)
class BaseOperatorName:
    """An operator name without its overload: `add`, `add_` (inplace), `__iand__`.

    `functional_overload` marks `foo_functional`, the functional variant of a
    mutable operator `foo`, which is a base name of its own rather than an
    overload so that it cannot be confused with `foo` when resolving overloads.
    """

    base: str
    inplace: bool
    dunder_method: bool
    functional_overload: bool = False

    @staticmethod
    def parse(text: str, offset: int = 0) -> BaseOperatorName:
        if not _IDENTIFIER.match(text):
            raise SchemaError(f"invalid operator name '{text}'", offset, max(len(text), 1))
        if text.endswith("_out"):
            raise SchemaError(
                f"operator name '{text}' ends in '_out', which is reserved; "
                "did you mean an 'out' overload name?",
                offset + len(text) - 4,
                4,
            )
        dunder = _DUNDER.match(text)
        if dunder is not None:
            base = dunder.group(1)
            inplace = base[0] == "i" and base[1:] in AUGMENTED_ASSIGNMENT_NAMES
            if inplace:
                base = base[1:]
            elif base[0] == "i":
                raise SchemaError(
                    f"dunder method '{text}' starts with 'i' but is not an augmented assignment",
                    offset,
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
                    offset,
                    len(text),
                )
            base = base[: -len(_FUNCTIONAL_SUFFIX)]
        return BaseOperatorName(base, inplace, dunder is not None, functional)

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


@dataclass(frozen=True)
class OperatorName:
    name: BaseOperatorName
    overload_name: str

    @staticmethod
    def parse(text: str, offset: int = 0) -> OperatorName:
        base, dot, overload = text.partition(".")
        if dot and not (overload and _OVERLOAD.match(overload)):
            raise SchemaError(
                f"invalid overload name '{overload}'", offset + len(base) + 1, max(len(overload), 1)
            )
        return OperatorName(BaseOperatorName.parse(base, offset), overload)

    def __str__(self) -> str:
        return self._text

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


# -- function schemas ----------------------------------------------------------------


@dataclass(frozen=True)
class FunctionSchema:
    name: OperatorName
    arguments: Arguments
    returns: tuple[Return, ...]

    @staticmethod
    def parse(text: str) -> FunctionSchema:
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
        name = OperatorName.parse(text[:open_paren], 0)
        arguments = Arguments.parse(text[open_paren + 1 : arrow], open_paren + 1)
        returns = _parse_returns(text[arrow + 5 :], arrow + 5)
        schema = FunctionSchema(name, arguments, returns)
        _check_canonical(schema, text, 0, "schema")  # a safety net: the parts parse exactly
        schema.__dict__["text"] = text  # prime the cached property
        schema.validate()
        return schema

    def validate(self) -> None:
        """The invariants every schema of an operator must satisfy; raises SchemaError.

        Errors point into the canonical text, which is the parsed text.
        """
        args = self.arguments
        for arg, ret in zip(args.out, self.returns, strict=False):
            if arg.annotation != ret.annotation:
                raise SchemaError(
                    f"return '{ret}' must alias out argument '{arg.name}' (the i-th return "
                    "corresponds to the i-th out argument)",
                    *self.span(ret),
                )
        for a in args.post_self_positional_mutable:
            if any(a.annotation == r.annotation for r in self.returns):
                raise SchemaError(
                    f"mutable positional argument '{a.name}' must not be returned", *self.span(a)
                )
        out_and_self = [*args.out, *(a for a in args.flat_positional if a.name == "self")]
        mutable_returns = [r for r in self.returns if r.is_write]
        if mutable_returns and len(mutable_returns) != len(self.returns):
            raise SchemaError(
                "returns must be either all mutable (aliasing written arguments) or all immutable",
                *self.span(self.returns),
            )
        for r in mutable_returns:
            if not any(r.annotation == a.annotation for a in out_and_self):
                raise SchemaError(
                    f"mutable return '{r}' must alias a keyword-only out argument or 'self'; "
                    "did you forget to mark an out argument as keyword-only?",
                    *self.span(r),
                )
        if args.out:
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
                        f"each of its {len(real_outs)} non-scratch out arguments, "
                        f"not {len(self.returns)} values",
                        *self.span(self.returns),
                    )
        if self.name.name.inplace:
            self._validate_inplace()
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
        if self.is_functional_fn() and kind is not SchemaKind.functional:
            raise SchemaError(
                f"overload name '{self.name.overload_name}' contains 'functional', which is "
                f"reserved for functional operators, not {_KIND_PHRASES[kind]}",
                len(str(self.name.name)) + 1,
                len(self.name.overload_name),
            )

    def _validate_inplace(self) -> None:
        args = self.arguments
        self_arg = args.self_arg.argument if args.self_arg is not None else None
        if self_arg is None or not self_arg.is_write:
            raise SchemaError(
                f"inplace operator '{self.name}' needs a mutable 'self' argument, "
                "e.g. 'Tensor(a!) self'",
                *(self.span(self_arg) if self_arg is not None else (0, len(str(self.name)))),
            )
        if self_arg.type == TENSOR:
            if len(self.returns) != 1 or self.returns[0].annotation != self_arg.annotation:
                raise SchemaError(
                    f"inplace operator '{self.name}' with a Tensor 'self' must return self, "
                    f"written '{_annotated_str(self_arg.type, self_arg.annotation)}'",
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
        if any(a.name.startswith("_scratch_") for a in args.out):
            return SchemaKind.scratch
        if args.out:
            return SchemaKind.out
        if any(a.is_write for a in args.post_self_positional):
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
        if not self.name.name.base.endswith(("_copy", "_scatter")):
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
            return self._view_signature if strip_view_copy_name else self._signature
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
        self_args = [args.self_arg.argument] if args.self_arg is not None else []
        from_mutable = tuple(
            Return(f"{a.name}_out" if keep_return_names else None, a.type, None)
            for a in (*self_args, *args.out, *args.post_self_positional)
            if a.is_write and not any(a.annotation == r.annotation for r in self.returns)
        )
        kept = tuple(
            r
            if r.annotation is None and (keep_return_names or r.name is None)
            else Return(r.name if keep_return_names else None, r.type, None)
            for r in self.returns
        )
        arguments = args.signature(strip_default=strip_default)
        if str(self.name) == "bernoulli.p":
            # bernoulli.p has no default for p, but bernoulli_.float has one;
            # giving it one lets the two variants pair up.
            arguments = _with_default(arguments, "p", "0.5")
        name = self.name
        if (
            name.overload_name
            or name.name.inplace
            or name.name.functional_overload
            or (base != name.name.base)
        ):
            name = OperatorName(BaseOperatorName(base, False, name.name.dunder_method), "")
        return FunctionSchema(name, arguments, kept + from_mutable)

    def view_signature(self) -> FunctionSchema:
        return self.signature(strip_view_copy_name=True)

    def with_name(self, name: OperatorName) -> FunctionSchema:
        return FunctionSchema(name, self.arguments, self.returns)

    def __str__(self) -> str:
        return self.text

    def _render(self) -> str:
        if len(self.returns) == 1:
            returns = str(self.returns[0])
        else:
            returns = f"({', '.join(map(str, self.returns))})"
        return f"{self.name}({self.arguments}) -> {returns}"


def _with_default(arguments: Arguments, name: str, default: str) -> Arguments:
    def fill(a: Argument) -> Argument:
        return dataclasses.replace(a, default=default) if a.name == name else a

    return dataclasses.replace(
        arguments, post_self_positional=tuple(map(fill, arguments.post_self_positional))
    )


def _parse_returns(text: str, offset: int) -> tuple[Return, ...]:
    if text == "()":
        return ()
    parenthesized = text.startswith("(") and text.endswith(")")
    if parenthesized:
        text, offset = text[1:-1], offset + 1
    returns: list[Return] = []
    for piece, at in _split(text, offset):
        if piece == "":
            if not text:
                raise SchemaError("missing return type after '->'; write '()' for none", at)
            raise SchemaError("empty return in return list", at)
        returns.append(Return.parse(piece, at))
    if parenthesized and len(returns) == 1:
        raise SchemaError("a single return is written without parentheses", offset - 1)
    if not parenthesized and len(returns) > 1:
        raise SchemaError("several returns must be written in parentheses", offset)
    return tuple(returns)


def fresh_alias_names(used: Sequence[str]) -> list[str]:
    """Alias set names not in `used`, in alphabetical order."""
    return [c for c in string.ascii_lowercase if c not in used]
