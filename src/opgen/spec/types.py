"""Schema types and alias annotations: `Tensor(a!)?`, `int[2]`, `SymInt[]`, `Scalar?`.

Every class is a frozen dataclass whose `__str__` prints the canonical text it
was parsed from. `Annotation` is an alias annotation: `a` (a view of alias set
a), `a!` (written), `a -> *` (wildcard after), `a|b` (alias set).
"""

from __future__ import annotations

import re
from enum import Enum

from opgen.cached import cached
from opgen.diagnostics import did_you_mean
from opgen.frozen import frozen
from opgen.spec.syntax import SchemaError, memoized_parse

# -- annotations ---------------------------------------------------------------

_ANNOTATION = re.compile(r"([a-z](?:\|[a-z])?)(!?)(?: -> (\*|[a-z](?:\|[a-z])*))?\Z")


@frozen
class Annotation:
    """An alias annotation. `alias_set` has one name, or two for `a|b`."""

    alias_set: tuple[str, ...]  # the names before `!` or `->`: what the value aliases
    is_write: bool  # written with `!`: the operator writes to it
    alias_set_after: tuple[str, ...]  # the names after `->` (`*`: any); () when not written

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
    # A named dimension (named tensors): read only for a release with
    # `releases.NAMED_DIMENSIONS` (torch 2.13 removed it) or for comparison.
    Dimname = "Dimname"


# The base types every reading accepts, and those a reading with named dimensions does.
_BASE_TYPES = {t.value: t for t in BaseTy if t is not BaseTy.Dimname}
_NAMED_BASE_TYPES = {t.value: t for t in BaseTy}
_CUSTOM_CLASS_PREFIX = "__torch__.torch.classes."
_CUSTOM_CLASS_NAME = r"[a-zA-Z0-9_.]+\Z"  # compiled where used: custom classes are rare


@frozen
class Type:
    """A schema type: a `BaseType`, `OptionalType`, `ListType` or `CustomClassType`."""

    @staticmethod
    def parse(text: str, offset: int = 0, *, named_dimensions: bool = False) -> Type:
        """`named_dimensions`: also read `Dimname` (`releases.NAMED_DIMENSIONS`)."""
        if named_dimensions:
            return memoized_parse(_parse_named_type_text, text, offset)
        return memoized_parse(_parse_type_text, text, offset)

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

    @cached
    def base_ty(self) -> BaseTy | None:
        """The element type, looking through `?` and `[]`; None for a custom class."""
        type = self
        while isinstance(type, OptionalType | ListType):
            type = type.elem
        return type.name if isinstance(type, BaseType) else None

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


def _parse_type_text(text: str) -> Type:
    return _parse_type(text, 0)


def _parse_named_type_text(text: str) -> Type:
    return _parse_type(text, 0, named_dimensions=True)


def _parse_type(text: str, offset: int, named_dimensions: bool = False) -> Type:
    if text.endswith("?") and len(text) > 1:
        return OptionalType(_parse_type(text[:-1], offset, named_dimensions))
    if text.endswith("]"):
        bracket = text.rfind("[")
        size = text[bracket + 1 : -1]
        if bracket > 0 and (size == "" or (size.isascii() and size.isdigit())):
            elem = _parse_type(text[:bracket], offset, named_dimensions)
            if size.startswith("0"):
                raise SchemaError(
                    f"invalid list size '{size}' (an unsized list is written '[]')",
                    offset + bracket + 1,
                    len(size),
                )
            return ListType(elem, int(size) if size else None)
    if text.startswith(_CUSTOM_CLASS_PREFIX):
        name = text[len(_CUSTOM_CLASS_PREFIX) :]
        if re.match(_CUSTOM_CLASS_NAME, name):
            return CustomClassType(name)
    known = _NAMED_BASE_TYPES if named_dimensions else _BASE_TYPES
    base = known.get(text)
    if base is None:
        hint = did_you_mean(text, known) if text.isidentifier() else ""
        raise SchemaError(f"unknown type '{text}'{hint}", offset, max(len(text), 1))
    return BaseType(base)


@frozen
class BaseType(Type):
    name: BaseTy  # which of the schema language's base types

    def _render(self) -> str:
        return self.name.value

    def is_base_ty_like(self, base: BaseTy) -> bool:
        return self.name is base

    def is_nullable(self) -> bool:
        return False

    def is_list_like(self) -> ListType | None:
        return None


@frozen
class OptionalType(Type):
    elem: Type  # the type without `?`

    def _render(self) -> str:
        return f"{self.elem}?"

    def is_base_ty_like(self, base: BaseTy) -> bool:
        return self.elem.is_base_ty_like(base)

    def is_nullable(self) -> bool:
        return True

    def is_list_like(self) -> ListType | None:
        return self.elem.is_list_like()


@frozen
class _OpaqueType(Type):
    """A type known only by its name: no base type, not nullable, not a list."""

    def is_base_ty_like(self, base: BaseTy) -> bool:
        return False

    def is_nullable(self) -> bool:
        return False

    def is_list_like(self) -> ListType | None:
        return None


@frozen
class CustomClassType(_OpaqueType):
    """A TorchScript custom class, `__torch__.torch.classes.ns.Name`."""

    class_name: str  # the name after `__torch__.torch.classes.`: `ns.Name`

    def _render(self) -> str:
        return f"{_CUSTOM_CLASS_PREFIX}{self.class_name}"


@frozen
class ListType(Type):
    """`T[]`, or `T[N]` with a fixed size (a size of 0 is written `T[]`)."""

    elem: Type  # the type of each element
    size: int | None  # N of `T[N]`; None for `T[]`

    def _render(self) -> str:
        return f"{self.elem}[{self.size or ''}]"

    def is_base_ty_like(self, base: BaseTy) -> bool:
        return self.elem.is_base_ty_like(base)

    def is_nullable(self) -> bool:
        return self.elem.is_nullable()

    def is_list_like(self) -> ListType | None:
        return self


TENSOR = BaseType(BaseTy.Tensor)


# -- alias-annotated types ---------------------------------------------------------

# An alias annotation binds to `Tensor`, before any `?` or `[]`: `Tensor(a!)?`.
_ANNOTATED_TENSOR = re.compile(r"Tensor\((.+)\)(.*)\Z")
_ANNOTATABLE = ("Tensor", "Tensor?", "Tensor[]")


def parse_annotated_type(
    text: str, offset: int, named_dimensions: bool = False
) -> tuple[Type, Annotation | None]:
    """The type and alias annotation of `text`; `named_dimensions` also reads `Dimname`."""
    m = _ANNOTATED_TENSOR.match(text)
    if m is None:
        paren = text.find("(")
        known = _NAMED_BASE_TYPES if named_dimensions else _BASE_TYPES
        if paren > 0 and text[:paren] in known:
            raise SchemaError(
                "alias annotations are allowed only on Tensor types (Tensor, Tensor?, Tensor[]), "
                f"not on '{text[:paren]}'",
                offset + paren,
                len(text) - paren,
            )
        return Type.parse(text, offset, named_dimensions=named_dimensions), None
    suffix = m.group(2)
    if suffix not in ("", "?", "[]"):
        raise SchemaError(
            f"an alias-annotated Tensor may only be followed by '?' or '[]', not '{suffix}'",
            offset + m.start(2),
            len(suffix),
        )
    annotation = Annotation.parse(m.group(1), offset + m.start(1))
    return Type.parse("Tensor" + suffix), annotation


def annotated_str(type: Type, annotation: Annotation | None) -> str:
    text = str(type)
    if annotation is None:
        return text
    assert text in _ANNOTATABLE, f"annotation on non-Tensor type {text}"
    return text.replace("Tensor", f"Tensor({annotation})", 1)
