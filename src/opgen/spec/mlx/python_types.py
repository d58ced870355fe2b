"""The Python types and defaults of bound MLX functions: `scalar | array`, unions, `None`.

A bound function (`mlx_dialect`) is written with its Python signature only,
and its parameters may take what MLX's own bindings take: unions of
alternatives, tried in the order written. Each alternative is a `Leaf`:

    written                                     leaf
    array                                       ARRAY
    scalar                                      SCALAR (a Python bool, int or float)
    scalar | array (in either order)            ARRAY_LIKE (one alternative: converted to an array)
    int, float, bool, str, Dtype                INT, FLOAT, BOOL, STR, DTYPE
    uint64                                      UINT64 (an int of 0 to 2**64 - 1, shown as int)
    Shape                                       SHAPE (mlx::core::Shape, checked into int32)
    int | Shape (in either order)               SHAPE (a lone int is a one-dimensional shape)
    Sequence[int], list[int], tuple[int, ...]   INT_LIST
    Sequence[array], list[array], ...           ARRAY_LIST
    tuple[int, int]                             INT_PAIR
    Sequence[tuple[int, int]], ...              INT_PAIR_LIST
    Sequence[Sequence[int]], ...                INT_LIST_LIST
    Index                                       INDEX (a Python index of an array: an int, a
                                                slice, None, Ellipsis, an array or a list, or
                                                a tuple of them; shown as `object | None`)
    None                                        (the type is optional)

`Optional[X]` is `X | None`. Names may be written with `mx.` or `mlx.core.`.
Returns are one of `RETURNS`. A default is a Python literal (`ast.literal_eval`)
or an MLX dtype (`float32`, `mx.float32`), and must fit one alternative.
Errors are `SchemaError`s at offsets into the annotation text.
"""

from __future__ import annotations

import ast
import enum
import math
import re

from opgen.frozen import frozen
from opgen.spec.mlx.type_mapping import DTYPE_NAMES
from opgen.spec.syntax import SchemaError


class Leaf(enum.Enum):
    ARRAY = "array"
    ARRAY_LIKE = "scalar | array"
    SCALAR = "scalar"
    INT = "int"
    UINT64 = "uint64"
    FLOAT = "float"
    BOOL = "bool"
    STR = "str"
    DTYPE = "Dtype"
    SHAPE = "Shape"
    INT_OR_SHAPE = "int | Shape"
    STREAM = "StreamOrDevice"
    INT_LIST = "Sequence[int]"
    ARRAY_LIST = "Sequence[array]"
    INT_PAIR = "tuple[int, int]"
    INT_TRIPLE = "tuple[int, int, int]"
    INT_PAIR_LIST = "Sequence[tuple[int, int]]"
    INT_LIST_LIST = "Sequence[Sequence[int]]"
    INDEX = "Index"


_NAMES = {
    "array": Leaf.ARRAY,
    "scalar": Leaf.SCALAR,
    "int": Leaf.INT,
    "uint64": Leaf.UINT64,
    "float": Leaf.FLOAT,
    "bool": Leaf.BOOL,
    "str": Leaf.STR,
    "Dtype": Leaf.DTYPE,
    "Shape": Leaf.SHAPE,
    "StreamOrDevice": Leaf.STREAM,
    "Index": Leaf.INDEX,
    "tuple[int,int]": Leaf.INT_PAIR,
    "Tuple[int,int]": Leaf.INT_PAIR,
    "tuple[int,int,int]": Leaf.INT_TRIPLE,
    "Tuple[int,int,int]": Leaf.INT_TRIPLE,
}
# A sequence of an element type: the leaf of the sequence.
_SEQUENCE_OF = {
    Leaf.INT: Leaf.INT_LIST,
    Leaf.ARRAY: Leaf.ARRAY_LIST,
    Leaf.INT_PAIR: Leaf.INT_PAIR_LIST,
    Leaf.INT_LIST: Leaf.INT_LIST_LIST,
}
_SEQUENCE = re.compile(r"(?:Sequence|list|List)\[(.*)\]|(?:tuple|Tuple)\[(.*),\.\.\.\]")
_PREFIX = re.compile(r"\b(?:mlx\.core|mx|typing|collections\.abc)\.")
# How the stub shows a leaf, where it is not as written.
STUB_TEXT = {
    Leaf.SHAPE: "Sequence[int]",
    Leaf.INT_OR_SHAPE: "int | Sequence[int]",
    Leaf.UINT64: "int",
    Leaf.INDEX: "object | None",
}
TYPE_LIST = (
    "array, scalar, scalar | array, int, uint64, float, bool, str, Dtype, Shape, int | Shape, "
    "Sequence[int], Sequence[array], tuple[int, int], tuple[int, int, int], "
    "Sequence[tuple[int, int]], "
    "Sequence[Sequence[int]], Index, unions of these, and '| None'"
)
# Python's spellings of the floats no literal writes: `inf`, `math.nan`, `float('-inf')`.
_SPECIAL_FLOAT = re.compile(r"""(?:math\.)?(inf|nan)|float\((['"])(-?)(inf|nan)\2\)""")
# What a bound function may return, as the stub writes it.
RETURNS = frozenset(
    {
        "array",
        "list[array]",
        "tuple[array, ...]",
        "array | list[array]",
        "array | bool",
        "bool",
        "int",
        "Dtype",
        "tuple[int, ...]",
        "None",
        "ArrayAt",
        "scalar",
        "float",
        "complex",
        "object",
        *(f"tuple[{', '.join(['array'] * n)}]" for n in range(2, 9)),
    }
)


@frozen
class PyType:
    """A parameter's type: its alternatives in the order written, and whether None is one."""

    alternatives: tuple[Leaf, ...]  # the types it may be, in the order written
    optional: bool  # None is one of them
    none_first: bool = False  # `None | int`: where the stub shows None

    @property
    def is_union(self) -> bool:
        """Whether the call branches on which alternative a value is."""
        return len(self.alternatives) > 1

    @property
    def text(self) -> str:
        """As the stub and the signature show it."""
        shown = [STUB_TEXT.get(leaf, leaf.value) for leaf in self.alternatives]
        if self.optional:
            shown.insert(0 if self.none_first else len(shown), "None")
        return " | ".join(shown)


def parse_type(text: str) -> PyType:
    """The type an annotation writes; SchemaError (offset into `text`) if it has no meaning."""
    canonical = _PREFIX.sub("", "".join(text.split()))
    m = re.fullmatch(r"Optional\[(.*)\]", canonical)
    if m is not None:
        canonical = m.group(1) + "|None"
    pieces = _top_level_union(canonical)
    optional = "None" in pieces
    none_first = bool(pieces) and pieces[0] == "None"
    leaves: list[Leaf] = []
    for piece in pieces:
        if piece == "None":
            continue
        leaf = _leaf(piece)
        if leaf is None:
            raise SchemaError(
                f"Python type '{piece}' has no meaning in a bound MLX function ({TYPE_LIST})",
                0,
                max(len(text), 1),
            )
        if leaf in leaves:
            raise SchemaError(f"'{piece}' is written twice in one union", 0, max(len(text), 1))
        leaves.append(leaf)
    if not leaves:
        raise SchemaError("a type needs an alternative besides None", 0, max(len(text), 1))
    if optional and Leaf.INDEX in leaves:
        raise SchemaError("an 'Index' takes None itself (a new axis): write 'Index'", 0, len(text))
    return PyType(_merged(leaves), optional, none_first)


def _leaf(piece: str) -> Leaf | None:
    if piece in _NAMES:
        return _NAMES[piece]
    m = _SEQUENCE.fullmatch(piece)
    if m is None:
        return None
    element = _leaf(m.group(1) or m.group(2))
    return None if element is None else _SEQUENCE_OF.get(element)


def _top_level_union(text: str) -> list[str]:
    pieces, depth, start = [], 0, 0
    for i, c in enumerate(text):
        if c == "[":
            depth += 1
        elif c == "]":
            depth -= 1
        elif c == "|" and depth == 0:
            pieces.append(text[start:i])
            start = i + 1
    pieces.append(text[start:])
    return pieces


def _merged(leaves: list[Leaf]) -> tuple[Leaf, ...]:
    """`scalar | array` is one alternative (an array-like), and so is `int | Shape` (a shape)."""
    pairs = ((Leaf.SCALAR, Leaf.ARRAY, Leaf.ARRAY_LIKE), (Leaf.INT, Leaf.SHAPE, Leaf.INT_OR_SHAPE))
    for one, other, merged in pairs:
        if one in leaves and other in leaves:
            at = min(leaves.index(one), leaves.index(other))
            leaves = [leaf for leaf in leaves if leaf not in (one, other)]
            leaves.insert(at, merged)
    converted = {Leaf.ARRAY_LIKE, Leaf.SHAPE, Leaf.INT_OR_SHAPE, Leaf.STREAM, Leaf.INDEX} & set(
        leaves
    )
    if converted and len(leaves) > 1:
        leaf = converted.pop()
        raise SchemaError(f"'{leaf.value}' cannot be one alternative of several in a union", 0, 1)
    return tuple(leaves)


def parse_returns(text: str) -> str:
    """The return annotation in the stub's spelling; SchemaError if it is none of `RETURNS`."""
    canonical = _PREFIX.sub("", "".join(text.split()))
    canonical = canonical.replace("List[", "list[").replace("Tuple[", "tuple[")
    shown = canonical.replace(",", ", ").replace("|", " | ")
    if shown not in RETURNS:
        raise SchemaError(
            f"return type '{text}' is not one a bound MLX function has (array, list[array], "
            "array | list[array], a tuple of 2 to 8 arrays, tuple[array, ...], array | bool, bool, "
            "int, float, complex, scalar, object, Dtype, tuple[int, ...], None, ArrayAt)",
            0,
            max(len(text), 1),
        )
    return shown


# -- defaults ------------------------------------------------------------------------


@frozen
class PyDefault:
    """A default value: how the stub shows it and the Python object nanobind is given."""

    shown: str  # as the stub and the signature show it
    value: object  # the literal's value; a dtype name for a dtype


def parse_default(text: str, type: PyType) -> PyDefault:
    """The default written `text` for `type`; SchemaError (offset 0) if it does not fit."""
    written = text.strip()
    dtype = _PREFIX.sub("", written)
    if dtype in DTYPE_NAMES:
        if Leaf.DTYPE not in type.alternatives:
            raise SchemaError(f"default '{written}' is a dtype, and the type is '{type.text}'", 0)
        return PyDefault(f"{dtype}", _Dtype(dtype))
    value = _special_float(written)
    if value is None:
        try:
            value = ast.literal_eval(written)
        except (ValueError, SyntaxError):
            raise SchemaError(
                f"default '{written}' is not a Python literal or an MLX dtype", 0, len(written)
            ) from None
    if not _fits(value, type):
        raise SchemaError(
            f"default '{written}' does not fit type '{type.text}'", 0, max(len(written), 1)
        )
    if isinstance(value, float) and not math.isfinite(value):  # shown as `math` names it
        return PyDefault("nan" if math.isnan(value) else f"{'-' if value < 0 else ''}inf", value)
    tuples = (Leaf.INT_PAIR, Leaf.INT_TRIPLE)
    if isinstance(value, list) and all(
        leaf in tuples for leaf in type.alternatives if _fits_leaf(value, leaf)
    ):  # `[1, 2]` is no `tuple[int, int]`
        return PyDefault(repr(tuple(value)), tuple(value))
    return PyDefault(written, value)


def _special_float(text: str) -> float | None:
    """The float `inf`, `-math.inf`, `float('nan')` and the like write, which no literal
    does."""
    compact = "".join(text.split())
    negative = compact.startswith("-")
    found = _SPECIAL_FLOAT.fullmatch(compact[negative:])
    if found is None:
        return None
    value = float(found.group(1) or found.group(4))
    return -value if negative != bool(found.group(3)) else value


@frozen
class _Dtype:
    name: str


def dtype_name(value: object) -> str | None:
    """The dtype a default names, if it names one."""
    return value.name if isinstance(value, _Dtype) else None


def _fits(value: object, type: PyType) -> bool:
    if value is None:  # MLX's StreamOrDevice takes None for the default stream
        return type.optional or Leaf.STREAM in type.alternatives
    return any(_fits_leaf(value, leaf) for leaf in type.alternatives)


def _fits_leaf(value: object, leaf: Leaf) -> bool:
    if isinstance(value, bool):
        return leaf in (Leaf.BOOL, Leaf.SCALAR, Leaf.ARRAY_LIKE)
    if isinstance(value, int):
        if leaf is Leaf.INT:  # a C++ int
            return -(2**31) <= value < 2**31
        if leaf is Leaf.UINT64:
            return 0 <= value < 2**64
        return leaf in (Leaf.FLOAT, Leaf.SCALAR, Leaf.ARRAY_LIKE, Leaf.INT_OR_SHAPE)
    if isinstance(value, float):
        return leaf in (Leaf.FLOAT, Leaf.SCALAR, Leaf.ARRAY_LIKE)
    if isinstance(value, str):
        return leaf is Leaf.STR
    if isinstance(value, (tuple, list)):
        if leaf in (Leaf.INT_LIST, Leaf.SHAPE, Leaf.INT_OR_SHAPE):
            return all(isinstance(v, int) and not isinstance(v, bool) for v in value)
        if leaf in (Leaf.INT_PAIR, Leaf.INT_TRIPLE):
            size = 2 if leaf is Leaf.INT_PAIR else 3
            return len(value) == size and all(isinstance(v, int) for v in value)
    return False
