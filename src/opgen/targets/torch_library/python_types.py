"""Schema types and defaults as Python annotations and literals, for the generated wrappers.

The wrappers take what `torch.ops` accepts for each schema type (`Tensor`,
`int`, `float`, `Sequence[int]`, `torch.dtype`, ...) and return what it
returns (a `Tensor`, a `tuple` for several outputs, a `list` for `Tensor[]`),
except that outputs that all have names (`-> (Tensor min, Tensor max)`) come
as a `NamedTuple` with those fields, as PyTorch's own operators return them.
Defaults are the schema's, spelled in Python (`[1, 2]` becomes `(1, 2)`, so
no default is a mutable list).
"""

from __future__ import annotations

import keyword

from opgen.frozen import frozen
from opgen.spec.arguments import Argument
from opgen.spec.native import NativeFunction
from opgen.spec.types import BaseTy, BaseType, ListType, OptionalType, Type


class UnsupportedType(ValueError):
    """A schema type the generated Python API cannot express."""


_BASE = {
    BaseTy.Tensor: "Tensor",
    BaseTy.int: "int",
    BaseTy.SymInt: "int",
    BaseTy.float: "float",
    BaseTy.bool: "bool",
    BaseTy.str: "str",
    BaseTy.Scalar: "float | int | bool",
    BaseTy.ScalarType: "torch.dtype",
    BaseTy.Layout: "torch.layout",
    BaseTy.Device: "torch.device | str",
    BaseTy.MemoryFormat: "torch.memory_format",
    BaseTy.Generator: "torch.Generator",
}
_RETURNS = {
    t: _BASE[t]
    for t in (BaseTy.Tensor, BaseTy.int, BaseTy.SymInt, BaseTy.float, BaseTy.bool, BaseTy.Scalar)
}
# Enum-like defaults, by schema spelling.
_NAMED_DEFAULTS = {
    "contiguous_format": "torch.contiguous_format",
    "preserve_format": "torch.preserve_format",
    "channels_last": "torch.channels_last",
    "strided": "torch.strided",
    "long": "torch.int64",
    "int": "torch.int32",
    "float": "torch.float32",
    "double": "torch.float64",
    "bool": "torch.bool",
    "inf": "math.inf",
    "-inf": "-math.inf",
}


@frozen
class LibraryPythonParameter:
    name: str
    annotation: str
    default: str | None  # a Python expression
    keyword_only: bool

    def __str__(self) -> str:
        text = f"{self.name}: {self.annotation}"
        return text if self.default is None else f"{text} = {self.default}"


@frozen
class LibraryPythonSignature:
    parameters: tuple[LibraryPythonParameter, ...]
    returns: str

    def parameter_list(self) -> str:
        """`x: Tensor, *, alpha: float = 1`: the `def` line's parameters."""
        texts: list[str] = []
        star = False
        for p in self.parameters:
            if p.keyword_only and not star:
                texts.append("*")
                star = True
            texts.append(str(p))
        return ", ".join(texts)

    def call_arguments(self) -> str:
        """How the wrapper passes its parameters on to the operator."""
        return ", ".join(
            f"{p.name}={p.name}" if p.keyword_only else p.name for p in self.parameters
        )


@frozen
class ResultClass:
    """The NamedTuple an operator with named outputs returns: `SortDescResult` for `sort_desc`."""

    name: str
    fields: tuple[tuple[str, str], ...]  # (name, annotation) per output


def result_class(f: NativeFunction) -> ResultClass | None:
    """The result class of an operator whose outputs (two or more) all have names, or None."""
    returns = f.func.returns
    if len(returns) < 2 or not all(r.name for r in returns):
        return None
    fields = []
    for r in returns:
        assert r.name is not None
        if keyword.iskeyword(r.name) or r.name.startswith("_"):
            raise UnsupportedType(
                f"'{f.func.name}': output name '{r.name}' cannot name a field of the Python "
                "result (a NamedTuple); rename the output"
            )
        fields.append((r.name, _return_annotation(r.type, f)))
    words = f"{f.func.name.name}_{f.func.name.overload_name}".split("_")
    return ResultClass("".join(w[:1].upper() + w[1:] for w in words) + "Result", tuple(fields))


def python_signature(f: NativeFunction) -> LibraryPythonSignature:
    """The wrapper's signature; UnsupportedType if a type has no Python form."""
    arguments = f.func.arguments
    kw_only = {a.name for a in arguments.flat_kwarg_only} | {a.name for a in arguments.out}
    params = tuple(
        LibraryPythonParameter(a.name, annotation(a.type, f), _default(a), a.name in kw_only)
        for a in arguments.flat_all
    )
    return LibraryPythonSignature(params, returns_annotation(f))


def annotation(t: Type, f: NativeFunction) -> str:
    if isinstance(t, BaseType) and t.name in _BASE:
        return _BASE[t.name]
    if isinstance(t, OptionalType):
        return f"{annotation(t.elem, f)} | None"
    if isinstance(t, ListType) and not isinstance(t.elem, ListType):
        return f"Sequence[{annotation(t.elem, f)}]"
    raise UnsupportedType(f"'{f.func.name}': type '{t}' has no Python form in a library")


def returns_annotation(f: NativeFunction, *, named: bool = True) -> str:
    """What the wrapper returns; with `named=False`, what `torch.ops` returns."""
    result = result_class(f) if named else None
    if result is not None:
        return result.name
    types = [_return_annotation(r.type, f) for r in f.func.returns]
    if not types:
        return "None"
    if len(types) == 1:
        return types[0]
    return f"tuple[{', '.join(types)}]"


def _return_annotation(t: Type, f: NativeFunction) -> str:
    if isinstance(t, BaseType) and t.name in _RETURNS:
        return _RETURNS[t.name]
    if isinstance(t, ListType) and t.elem == BaseType(BaseTy.Tensor):
        return "list[Tensor]"
    raise UnsupportedType(f"'{f.func.name}': return type '{t}' has no Python form in a library")


def _default(a: Argument) -> str | None:
    d = a.default
    if d is None:
        return None
    if d in _NAMED_DEFAULTS:
        return _NAMED_DEFAULTS[d]
    if isinstance(a.type, ListType) and not a.type.is_base_ty_like(BaseTy.Tensor):
        if d.startswith("["):
            items = [x.strip() for x in d[1:-1].split(",") if x.strip()]
        else:  # `int[2] stride=1` repeats the one value
            items = [d] * (a.type.size or 1)
        return f"({', '.join(items)}{',' if len(items) == 1 else ''})"
    return d  # None, True, False, numbers and quoted strings are Python already
