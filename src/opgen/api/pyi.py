"""Type hints for the Python bindings, as written in `torch/_C/_VariableFunctions.pyi`.

The `.pyi` stubs describe the same Python signatures as the argument parser
(see `python.py`) in PEP 484 terms, with the aliases the stub files define
(`_int`, `_bool`, `_size`, `Number`, `DeviceLikeType`...):
- argument types are as permissive as the parser (`Tensor[]` accepts a tuple
  or a list); return types are concrete (`tuple[Tensor, ...]`);
- `T?` is `T | None`, written once even where the type already allows None;
- several named returns are a "structseq", a named-tuple-like class defined
  in `torch.return_types` and referred to by name;
- a definition longer than 80 columns is split one parameter per line.

The words differ a little between torch releases (`Hints`, from `hints_for`).
"""

from __future__ import annotations

from collections.abc import Sequence

from opgen.api import cpp
from opgen.frozen import frozen
from opgen.releases import (
    EXACT_TENSOR_LIST_HINTS,
    HAS_NAMES_STUB,
    INPLACE_FOREACH_STUBS_RETURN_LISTS,
    LANCZOS_INTERPOLATION_STUB,
    OPTIONAL_ASARRAY_REQUIRES_GRAD,
    SYMBOLIC_SCALAR_HINTS,
    Release,
)
from opgen.spec.arguments import Return
from opgen.spec.schema import FunctionSchema
from opgen.spec.types import BaseTy, BaseType, ListType, OptionalType, Type

MAX_LINE = 80

_BASE_TYPES = {
    BaseTy.int: "_int",
    BaseTy.DeviceIndex: "_int",
    BaseTy.SymInt: "_int | SymInt",
    BaseTy.float: "_float",
    BaseTy.str: "str",
    BaseTy.ScalarType: "_dtype",
    BaseTy.bool: "_bool",
    BaseTy.QScheme: "_qscheme",
    BaseTy.Layout: "_layout",
    BaseTy.Device: "DeviceLikeType | None",
    BaseTy.MemoryFormat: "memory_format",
    BaseTy.Storage: "Storage | UntypedStorage",
    BaseTy.Tensor: "Tensor",
    BaseTy.Generator: "Generator",
    BaseTy.Stream: "Stream",
    BaseTy.Dimname: "str | EllipsisType | None",  # a name, `...` or None (unnamed)
}


@frozen
class Hints:
    """What differs between releases' hints, and their hand-written declarations."""

    scalar: str  # the hint of Scalar
    ordered: str  # what Tensor's <, <=, >, >= take
    matmul: str  # what Tensor's @ takes
    # Tensor?[] lists tuple[Tensor | None, ...], Tensor[] is never None, and an out of
    # any type may be None; before, only a Tensor out, and every tensor list was
    # `tuple[Tensor, ...] | list[Tensor] | None`.
    exact_tensor_lists: bool
    inplace_foreach_returns: bool  # torch._foreach_<op>_ returns its list
    has_names: bool  # Tensor declares has_names (named tensors, before torch 2.13)
    asarray_requires_grad: str  # the parameter of torch.asarray
    lanczos_interpolation: bool  # torch._C._nn declares _upsample_lanczos2d_aa


def hints_for(release: Release) -> Hints:
    if release.has(SYMBOLIC_SCALAR_HINTS):
        scalar, ordered = "Number | _complex | PySymType", "Tensor | Number | PySymType | _complex"
    else:
        scalar, ordered = "Number | _complex", "Tensor | Number | _complex"
    foreach_lists = release.has(INPLACE_FOREACH_STUBS_RETURN_LISTS)
    return Hints(
        scalar,
        ordered,
        "Tensor" if foreach_lists else "Tensor | Number | _complex",
        release.has(EXACT_TENSOR_LIST_HINTS),
        foreach_lists,
        release.has(HAS_NAMES_STUB),
        (
            "requires_grad: _bool | None = None"
            if release.has(OPTIONAL_ASARRAY_REQUIRES_GRAD)
            else "requires_grad: _bool = False"
        ),
        release.has(LANCZOS_INTERPOLATION_STUB),
    )


def returns_its_list(name: str, hints: Hints) -> bool:
    """Whether a function that returns nothing is declared to return its tensor list:
    an inplace foreach operator (`_foreach_add_`), from torch 2.15."""
    inplace = name.endswith("_") and not name.endswith("__")
    return hints.inplace_foreach_returns and inplace and name.startswith("_foreach_")


def or_none(type_str: str) -> str:
    """`T | None`, without doubling a `| None` that `T` already ends with."""
    return f"{type_str} | None".replace(" | None | None", " | None")


def argument_type_str(t: Type, hints: Hints) -> str:
    """The hint of an argument: what the parser accepts for schema type `t`."""
    optional = isinstance(t, OptionalType)
    if isinstance(t, OptionalType):
        t = t.elem
    if isinstance(t, BaseType):
        # Types the stubs have no alias for (DimVector, SymBool...) print as nothing.
        hint = hints.scalar if t.name is BaseTy.Scalar else _BASE_TYPES.get(t.name, "")
    elif isinstance(t, ListType):
        hint, optional_elems = _list_type_str(t, hints)
        optional = optional or optional_elems
    else:
        raise ValueError(f"no type hint for '{t}'")
    return or_none(hint) if optional else hint


def _list_type_str(t: ListType, hints: Hints) -> tuple[str, bool]:
    """The hint of a list type, and whether the list may also be None."""
    elem = str(t.elem)
    if elem == "int":
        return ("_int | _size" if t.size is not None else "_size"), False
    if t.elem.is_tensor_like():
        optional_elems = isinstance(t.elem, OptionalType) and hints.exact_tensor_lists
        elem_hint = "Tensor | None" if optional_elems else "Tensor"
        sequences = f"tuple[{elem_hint}, ...] | list[{elem_hint}]"
        hint = f"Tensor | {sequences}" if t.size is not None else sequences
        return hint, optional_elems or not hints.exact_tensor_lists
    if elem == "float":
        return "Sequence[_float]", False
    elem_hint = argument_type_str(t.elem, hints)
    if elem == "SymInt" and t.size is not None:
        return f"{elem_hint} | Sequence[{elem_hint}]", False
    return f"Sequence[{elem_hint}]", False


def return_type_str(t: Type, hints: Hints) -> str:
    """The hint of a returned value: the concrete type, not everything accepted."""
    if isinstance(t, OptionalType):
        return or_none(return_type_str(t.elem, hints))
    if isinstance(t, BaseType) and t.name is BaseTy.Device:
        return "_device"
    if isinstance(t, BaseType) and t.name is BaseTy.Dimname:
        return "str | None"  # a returned name is never `...`
    if isinstance(t, ListType):
        return f"tuple[{return_type_str(t.elem, hints)}, ...]"
    return argument_type_str(t, hints)


def structseq_fieldnames(returns: Sequence[Return]) -> list[str]:
    """The field names of a structseq return, or [] if the returns are not one.

    Several returns make a structseq when all are named. Some but not all named
    is an error: the bindings cannot make a structseq with unnamed fields.
    """
    if len(returns) <= 1 or all(r.name is None for r in returns):
        return []
    names = [r.name for r in returns]
    if None in names:
        raise ValueError("a structseq needs a name for every return, or for none")
    return [str(n) for n in names]


def structseq_key(func: FunctionSchema, fields: Sequence[str]) -> str:
    """What identifies a structseq of `func` with `fields`: PyTorch joins the C++ name
    and the field names with `_`, so `a_b(c)` and `a(b, c)` are one structseq."""
    return "_".join((cpp.name(func), *fields))


def returns_str(name: str, returns: Sequence[Return], hints: Hints) -> str:
    """The return annotation of a function named `name` with these returns."""
    hint = returns_hint(returns, hints)
    return structseq_name(name) if hint is None else hint


def returns_hint(returns: Sequence[Return], words: Hints) -> str | None:
    """The return annotation, whatever the function's name; None for a structseq."""
    if structseq_fieldnames(returns):
        return None
    hints = [return_type_str(r.type, words) for r in returns]
    if not hints:
        return "None"
    if len(hints) == 1:
        return hints[0]
    return f"tuple[{', '.join(hints)}]"


def structseq_name(name: str) -> str:
    """The annotation of a structseq return: the class named after the function."""
    return f"torch.return_types.{name}"


def returns_structseq(name: str, returns: Sequence[Return], words: Hints) -> tuple[str, str] | None:
    """The structseq class `torch.return_types.<name>` as the stubs define it, if any."""
    fields = structseq_fieldnames(returns)
    if not fields:
        return None
    hints = [return_type_str(r.type, words) for r in returns]
    sequence = f"tuple[{', '.join(hints)}]"
    lines = [f"class {name}({sequence}):  # fmt: skip"]
    for field, hint in zip(fields, hints, strict=True):
        lines += ["    @property", f"    def {field}(self) -> {hint}: ..."]
    count = len(fields)
    lines += [
        "    def __new__(",
        "        cls,",
        f"        sequence: {sequence},",
        "    ) -> Self:  # fmt: skip",
        "        ...",
        f"    n_fields: Final[_int] = {count}",
        f"    n_sequence_fields: Final[_int] = {count}",
        "    n_unnamed_fields: Final[_int] = 0",
        "    def __init_subclass__(cls) -> NoReturn: ...  # prohibit subclassing",
        "",
    ]
    return name, "\n".join(lines)


def format_function_signature(
    name: str, parameters: Sequence[str] = (), return_type: str | None = None
) -> str:
    """`def name(params) -> ret: ...`, one parameter per line when too long.

    If even the split form has a line over the limit, the body moves to its
    own line under `# fmt: skip` (ruff cannot format such compound statements).
    """
    arrow = "" if return_type is None else f" -> {return_type}"
    # The one-line form's length (`def `, `(`, the `, `-joined parameters, `)`,
    # the arrow, `: ...`), without building it: most definitions are longer.
    joined = sum(map(len, parameters)) + 2 * (len(parameters) - 1)
    length = 4 + len(name) + 1 + joined + 1 + len(arrow) + 5
    if length <= MAX_LINE or not parameters or tuple(parameters) == ("self",):
        return f"def {name}({', '.join(parameters)}){arrow}: ..."
    lines = [f"def {name}(", *[f"    {p}," for p in parameters], f"){arrow}: ..."]
    if max(map(len, lines)) <= MAX_LINE:
        return "\n".join(lines)
    lines[-1] = f"){arrow}:  # fmt: skip"
    return "\n".join(lines) + "\n    ..."
