"""What PyTorch's schema comparison sees of a type, a default value and an alias annotation.

torch compares two schemas as its C++ `FunctionSchema` holds them, not as they
are written (`Argument::isBackwardCompatibleWith` and `isForwardCompatibleWith`
in ATen/core/function_schema_inl.h, over the parser's `Argument`s):

- A type is its *fake* type. `int`, `SymInt`, `ScalarType`, `Layout`,
  `MemoryFormat` and `DeviceIndex` are all `int`; `Dimname` (older specs) is
  `str`. A fixed list size (`int[2]`) is not part of the type but the
  argument's `N`, compared on its own.
- Subtyping (`isSubtypeOfExt`): `T <: T?`; `A? <: B?` when `A <: B`; `int` and
  `float` are subtypes of `Scalar`; lists are invariant (their elements' fake
  types must be equal). Nothing else: `bool` is not an `int`, `Tensor` is not
  a `Tensor[]`.
- A default is the value the schema parser makes of its text for the
  argument's *outer* type: `float x=1` is 1.0, but `float? x=1` is the integer
  1 (an optional reads a plain constant); `int[2] x=1` is the list [1, 1];
  `ScalarType dtype=long` is 4; `Device d="cpu"` is a device, `Device? d="cpu"`
  a string. Values compare with their kind, as `IValue`s do: 1 is not 1.0.
- An alias annotation compares as sets (`a|b` is `b|a`); without `->`, the
  sets after the call are the sets before. The `?` or `[]` around an annotated
  Tensor does not change its annotation.
"""

from __future__ import annotations

from opgen.spec.types import (
    Annotation,
    BaseTy,
    BaseType,
    CustomClassType,
    ListType,
    OptionalType,
    Type,
)

# Base types whose fake type is `int`.
_INT_LIKE = frozenset(
    {
        BaseTy.int,
        BaseTy.SymInt,
        BaseTy.ScalarType,
        BaseTy.Layout,
        BaseTy.MemoryFormat,
        BaseTy.DeviceIndex,
    }
)
_SCALAR_MEMBERS = frozenset({"int", "float"})  # and torch's `complex`, not a spec type

# The identifiers torch's schema parser reads as a default, and the integers it makes of
# them: ScalarType names (torch.dtype names; `float`, `complex` and `long` for backward
# compatibility), `strided` (Layout), `Mean` (at::Reduction) and `contiguous_format`.
_IDENTIFIERS = {
    "uint8": 0, "int8": 1, "int16": 2, "short": 2, "int32": 3, "int": 3, "int64": 4,
    "long": 4, "float16": 5, "half": 5, "float32": 6, "float": 6, "float64": 7,
    "double": 7, "complex32": 8, "chalf": 8, "complex64": 9, "cfloat": 9, "complex": 9,
    "complex128": 10, "cdouble": 10, "bool": 11, "qint8": 12, "quint8": 13, "qint32": 14,
    "bfloat16": 15, "quint4x2": 16, "quint2x4": 17, "bits1x8": 18, "bits2x4": 19,
    "bits4x2": 20, "bits8": 21, "bits16": 22, "float8_e5m2": 23, "float8_e4m3fn": 24,
    "float8_e5m2fnuz": 25, "float8_e4m3fnuz": 26, "uint16": 27, "uint32": 28,
    "uint64": 29, "strided": 0, "Mean": 1, "contiguous_format": 0,
}  # fmt: skip

# A default as torch holds it: its kind ("int", "float", "bool", "str", "none",
# "device", "list", or "text" for what the parser would not read) and its value.
Value = tuple[str, object]
NONE: Value = ("none", None)


def fake_name(t: Type) -> str:
    """The name of a base type's fake type (`SymInt` -> `int`)."""
    if isinstance(t, BaseType):
        if t.name is BaseTy.Dimname:  # a named dimension is passed as its name
            return "str"
        return "int" if t.name in _INT_LIKE else t.name.value
    assert isinstance(t, CustomClassType), f"not a base type: {t}"
    return str(t)


def same_fake_type(a: Type, b: Type) -> bool:
    """Whether `a` and `b` have the same fake type (list sizes aside)."""
    if isinstance(a, OptionalType) or isinstance(b, OptionalType):
        both = isinstance(a, OptionalType) and isinstance(b, OptionalType)
        return both and same_fake_type(_elem(a), _elem(b))
    if isinstance(a, ListType) or isinstance(b, ListType):
        both = isinstance(a, ListType) and isinstance(b, ListType)
        return both and same_fake_type(_elem(a), _elem(b))
    return fake_name(a) == fake_name(b)


def is_subtype(a: Type, b: Type) -> bool:
    """Whether every value of `a` is a value of `b`, as torch decides it (fake types)."""
    if isinstance(b, OptionalType):
        return is_subtype(a.elem if isinstance(a, OptionalType) else a, b.elem)
    if isinstance(a, OptionalType):
        return False
    if isinstance(a, ListType) or isinstance(b, ListType):
        both = isinstance(a, ListType) and isinstance(b, ListType)
        return both and same_fake_type(_elem(a), _elem(b))
    fa, fb = fake_name(a), fake_name(b)
    return fa == fb or (fb == "Scalar" and fa in _SCALAR_MEMBERS)


def _elem(t: Type) -> Type:
    assert isinstance(t, OptionalType | ListType)
    return t.elem


def list_size(t: Type) -> int | None:
    """torch's `N`: the fixed size of a list type (`int[2]`, `int[2]?`), else None."""
    if isinstance(t, OptionalType):
        t = t.elem
    return t.size if isinstance(t, ListType) else None


def alias_key(annotation: Annotation | None) -> tuple[frozenset[str], bool, frozenset[str]] | None:
    """An annotation as torch's `AliasInfo` compares it: sets before, written, sets after."""
    if annotation is None:
        return None
    before = frozenset(annotation.alias_set)
    after = frozenset(annotation.alias_set_after) if annotation.alias_set_after else before
    return before, annotation.is_write, after


def default_value(t: Type, text: str) -> Value:
    """The value torch's schema parser makes of the default `text` of a `t` argument."""
    if isinstance(t, OptionalType):
        return _constant(text, floating=False)
    if isinstance(t, ListType):
        if text[:1].isalpha():  # an identifier: torch reads only None here
            return _constant(text, floating=False)
        floating = isinstance(t.elem, BaseType) and t.elem.name is BaseTy.float
        if t.size is not None and not text.startswith("["):
            return ("list", (_constant(text, floating),) * t.size)
        items = text[1:-1].split(",") if text.startswith("[") and text.endswith("]") else [text]
        return ("list", tuple(_constant(item.strip(), floating) for item in items if item.strip()))
    if isinstance(t, BaseType) and t.name is BaseTy.Device and text[:1] in "'\"":
        return ("device", _unquote(text))
    floating = isinstance(t, BaseType) and t.name is BaseTy.float
    return _constant(text, floating)


def is_container(value: Value) -> bool:
    """A list default, which torch's forward-compatibility rule refuses on a new argument."""
    return value[0] == "list"


def _constant(text: str, floating: bool) -> Value:
    """One constant; `floating`: the argument is a float, so every number is a float."""
    if text in ("True", "False"):
        return ("bool", text == "True")
    if text == "None":
        return NONE
    if text[:1] in "'\"" and len(text) >= 2 and text[-1] == text[0]:
        return ("str", _unquote(text))
    if text[:1].isalpha() or text[:1] == "_":
        value = _IDENTIFIERS.get(text)
        return ("int", value) if value is not None else ("text", text)
    try:
        if floating or "." in text or "e" in text:
            return ("float", float(text))
        return ("int", int(text))
    except ValueError:
        return ("text", text)


_ESCAPES = {"n": "\n", "t": "\t", "r": "\r", "\\": "\\", "'": "'", '"': '"', "0": "\0"}


def _unquote(text: str) -> str:
    """A quoted string literal's value (the escapes torch's lexer reads)."""
    body = text[1:-1]
    if "\\" not in body:
        return body
    out: list[str] = []
    i = 0
    while i < len(body):
        c = body[i]
        if c == "\\" and i + 1 < len(body):
            out.append(_ESCAPES.get(body[i + 1], body[i + 1]))
            i += 2
            continue
        out.append(c)
        i += 1
    return "".join(out)


def render_value(value: Value) -> str:
    """A default's value, for messages (`1`, `1.0`, `[1, 1]`, `'valid'`)."""
    kind, payload = value
    if kind == "list":
        assert isinstance(payload, tuple)
        return "[" + ", ".join(render_value(v) for v in payload) + "]"
    if kind in ("str", "device"):
        return repr(payload)
    if kind == "none":
        return "None"
    return str(payload)
