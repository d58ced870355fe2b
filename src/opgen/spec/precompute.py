"""The two small sub-languages of an entry: `precomputed:` and `ufunc_inner_loop:`.

`precomputed` (structured kernels only) lists values the meta function computes
for the impl function, one line per kernel argument they replace:

    precomputed:
    - dim -> int dim, bool keepdim
    - int extra_a, int extra_b        # optional last line: added, replacing nothing

`ufunc_inner_loop` names the scalar/vector loop a ufunc kernel is built from,
with the dtypes it supports: `add (AllAndComplex, BFloat16, Half)`.
"""

from __future__ import annotations

from collections.abc import Mapping

from opgen.frozen import frozen
from opgen.spec.arguments import Argument
from opgen.spec.keys import DTYPE_CLASSES, ScalarType, UfuncKey
from opgen.spec.syntax import SchemaError

_REPLACES = " -> "


@frozen
class Precompute:
    replace: Mapping[str, tuple[Argument, ...]]  # kernel argument -> what replaces it
    add: tuple[Argument, ...]  # added without replacing anything

    @staticmethod
    def parse(lines: list[str]) -> Precompute:
        """Parse the lines; a SchemaError's `item` says which line is wrong."""
        add: tuple[Argument, ...] = ()
        if _REPLACES not in lines[-1]:
            add = _parse_line_arguments(lines[-1], 0, ",", len(lines) - 1)
            lines = lines[:-1]
        replace: dict[str, tuple[Argument, ...]] = {}
        for index, line in enumerate(lines):
            if _REPLACES not in line:
                raise SchemaError(
                    "only the last precomputed line may omit 'kernel_arg -> ...'",
                    0,
                    len(line),
                    index,
                )
            name, _, declarations = line.partition(_REPLACES)
            if " " in name or not name:
                raise SchemaError(
                    f"invalid kernel argument name '{name}'", 0, max(len(name), 1), index
                )
            if name in replace:
                raise SchemaError(
                    f"kernel argument '{name}' is replaced twice", 0, len(name), index
                )
            at = len(name) + len(_REPLACES)
            replace[name] = _parse_line_arguments(declarations, at, ", ", index)
            printed = f"{name}{_REPLACES}{', '.join(map(str, replace[name]))}"
            if printed != line:
                raise SchemaError(f"write this line as '{printed}'", 0, len(line), index)
        return Precompute(replace, add)

    def to_list(self) -> list[str]:
        lines = [f"{k}{_REPLACES}{', '.join(map(str, v))}" for k, v in self.replace.items()]
        if self.add:
            lines.append(", ".join(map(str, self.add)))
        return lines


def _parse_line_arguments(
    text: str, offset: int, separator: str, line: int
) -> tuple[Argument, ...]:
    args: list[Argument] = []
    start = offset
    for piece in text.split(separator):
        lead = len(piece) - len(piece.lstrip())
        try:
            arg = Argument.parse(piece.strip(), start + lead)
        except SchemaError as e:
            e.item = line
            raise
        # Generated code uses the upper-cased names as template parameters.
        if arg.name.upper() == arg.name:
            raise SchemaError(
                f"precomputed name '{arg.name}' must not be all upper case",
                start + lead,
                len(piece.strip()),
                line,
            )
        args.append(arg)
        start += len(piece) + len(separator)
    return tuple(args)


@frozen
class UfuncInnerLoop:
    name: str  # the C++ function computing one element (or one vector of elements)
    supported_dtypes: tuple[ScalarType, ...]  # in spec order, no repeats
    ufunc_key: UfuncKey  # the loops it serves: CPU scalar or vector, CUDA functors, or several

    @staticmethod
    def parse(text: str, key: UfuncKey) -> UfuncInnerLoop:
        name, space, dtypes = text.partition(" ")
        if not space or not dtypes.startswith("(") or not dtypes.endswith(")"):
            raise SchemaError(
                f"expected 'loop_name (Dtype, ...)', got '{text}'", 0, max(len(text), 1)
            )
        supported: dict[ScalarType, None] = {}
        at = len(name) + 2
        for dtype in dtypes[1:-1].split(", "):
            for scalar_type in _dtypes(dtype, at):
                supported[scalar_type] = None
            at += len(dtype) + 2
        return UfuncInnerLoop(name, tuple(supported), key)


def _dtypes(name: str, offset: int) -> tuple[ScalarType, ...]:
    if name in DTYPE_CLASSES:
        return DTYPE_CLASSES[name]
    try:
        return (ScalarType(name),)
    except ValueError:
        raise SchemaError(f"unknown dtype '{name}'", offset, max(len(name), 1)) from None
