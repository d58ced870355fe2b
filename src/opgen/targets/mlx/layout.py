"""How an operator's arrays travel in one `std::vector<array>`, and what formulas see.

MLX hands a Primitive its inputs, and `custom_vjp` its primals, as one vector
of arrays. The generated code packs the operator's array arguments into it in
argument order: an array is one element, an optional array one element when
present, a list of arrays its elements. When every array argument is a plain
array, each has a fixed index (the *static* layout). Otherwise the positions
depend on the call, and the layout records, next to the vector, whether each
optional array is present (`has_<name>`) and each list's length
(`<name>_size`); a Primitive keeps them as members (`has_bias_`), the
`custom_vjp` lambdas capture them.

`unpack` declares arguments by name from such a vector, which is how formulas
(and `shape:` rules) see them; `scope` declares the other names a formula may
use: `grad`/`cotangent`, `grads`, `result`/`output`, `results`.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence

from opgen.api.nanobind import ARRAY, ArrayKind, NbArgument
from opgen.frozen import frozen

VECTOR = f"std::vector<{ARRAY}>"
OPTIONAL = f"std::optional<{ARRAY}>"
# Formulas name MLX's operations bare (`exp(x)`) or qualified; the library's
# own names, found first, hide MLX's.
USING_MLX = "using namespace mlx::core;"
# The names `scope` declares from a VJP's `cotangents`, and from its `outputs`.
COTANGENT_NAMES = frozenset({"grad", "cotangent", "grads"})
OUTPUT_NAMES = frozenset({"result", "output", "results", "outputs"})


@frozen
class LayoutValue:
    """`has_<name>` or `<name>_size`: what a dynamic layout records per argument."""

    name: str
    type: str  # `bool` or `int`
    init: str  # its value, from the argument


@frozen
class Span:
    """Where one array argument's arrays sit in the vector."""

    argument: NbArgument
    offset: str  # a C++ expression
    count: str  # a C++ expression; "1" for a plain array


@frozen
class ArrayLayout:
    arrays: tuple[NbArgument, ...]

    @property
    def static(self) -> bool:
        return all(a.type.array is ArrayKind.ONE for a in self.arrays)

    def values(self) -> list[LayoutValue]:
        out: list[LayoutValue] = []
        for a in self.arrays:
            if a.type.array is ArrayKind.OPTIONAL:
                out.append(LayoutValue(f"has_{a.name}", "bool", f"{a.name}.has_value()"))
            elif a.type.array is ArrayKind.LIST:
                size = f"static_cast<int>({a.name}.size())"  # int, as argnums are
                out.append(LayoutValue(f"{a.name}_size", "int", size))
        return out

    def spans(self, suffix: str = "") -> list[Span]:
        """Each argument's span; layout values are named with `suffix` (`_` for members)."""
        spans: list[Span] = []
        fixed = 0
        terms: list[str] = []
        for a in self.arrays:
            offset = " + ".join([*terms, str(fixed)] if fixed or not terms else terms)
            if a.type.array is ArrayKind.ONE:
                count = "1"
                fixed += 1
            elif a.type.array is ArrayKind.OPTIONAL:
                count = f"(has_{a.name}{suffix} ? 1 : 0)"
                terms.append(count)
            else:
                count = f"{a.name}_size{suffix}"
                terms.append(count)
            spans.append(Span(a, offset, count))
        return spans

    def pack(self, element: Callable[[str], str] = lambda a: a) -> list[str]:
        """Statements declaring `inputs`: the arrays, each passed through `element`."""
        if self.static:
            items = ", ".join(element(a.name) for a in self.arrays)
            return [f"const {VECTOR} inputs{{{items}}};"]
        lines = [f"{VECTOR} inputs;"]
        for a in self.arrays:
            if a.type.array is ArrayKind.ONE:
                lines.append(f"inputs.push_back({element(a.name)});")
            elif a.type.array is ArrayKind.OPTIONAL:
                lines.append(f"if ({a.name}) {{")
                lines.append(f"  inputs.push_back({element('*' + a.name)});")
                lines.append("}")
            else:
                lines.append(f"for (const {ARRAY}& a : {a.name}) {{")
                lines.append(f"  inputs.push_back({element('a')});")
                lines.append("}")
        return lines

    def unpack(self, vector: str, names: Iterable[str], suffix: str = "") -> list[str]:
        """Declarations of the array arguments among `names`, read from `vector`."""
        wanted = set(names)
        lines: list[str] = []
        for span in self.spans(suffix):
            a = span.argument
            if a.name not in wanted:
                continue
            at = f"{vector}[{span.offset}]"
            if a.type.array is ArrayKind.ONE:
                lines.append(f"const {ARRAY}& {a.name} = {at};")
            elif a.type.array is ArrayKind.OPTIONAL:
                lines.append(
                    f"const {OPTIONAL} {a.name} = has_{a.name}{suffix} ? {OPTIONAL}({at}) "
                    ": std::nullopt;"
                )
            else:
                begin = f"{vector}.begin()" + ("" if span.offset == "0" else f" + {span.offset}")
                lines.append(f"const {VECTOR} {a.name}({begin}, {begin} + {span.count});")
        return lines


def scope(names: Iterable[str]) -> list[str]:
    """Declarations of the gradient names among `names`, inside a VJP.

    The VJP's parameters are `cotangents` and `outputs` (a formula may name
    the latter); `grad` and `result` are the first output's (the only one,
    unless the operator has several).
    """
    wanted = set(names)
    lines: list[str] = []
    for name in ("grad", "cotangent"):
        if name in wanted:
            lines.append(f"const {ARRAY}& {name} = cotangents[0];")
    if "grads" in wanted:
        lines.append(f"const {VECTOR}& grads = cotangents;")
    for name in ("result", "output"):
        if name in wanted:
            lines.append(f"const {ARRAY}& {name} = outputs[0];")
    if "results" in wanted:
        lines.append(f"const {VECTOR}& results = outputs;")
    return lines


def indent(lines: Sequence[str], by: str = "  ") -> list[str]:
    return [by + line if line else line for line in lines]
