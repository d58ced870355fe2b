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

A formula's value goes through `SUM_TO_INPUT` (`summed`): a gradient whose
shape is its input's broadcast is summed back to the input's shape, as
PyTorch's autograd engine does; any other shape is an error at call time. The
formula itself stands on lines of its own behind a `#line` directive naming its
place in the spec, at its column there (`formula_lines`), so that a compiler
error in it points at the YAML; the directive back to the generated file needs
the line it lands on, which only the rendered file knows (`opgen.targets.line_directives`,
shared with `opgen torch-library`). These lines are
`Verbatim`: `indent` leaves them as they are.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence

from opgen.api.nanobind import ARRAY, ArrayKind, NbArgument
from opgen.frozen import frozen
from opgen.spec.mlx.model import GradFormula
from opgen.targets.line_directives import placed_lines
from opgen.targets.mlx.cpp import string_literal

VECTOR = f"std::vector<{ARRAY}>"
OPTIONAL = f"std::optional<{ARRAY}>"
# Formulas name MLX's operations bare (`exp(x)`) or qualified; the library's
# own names, found first, hide MLX's.
USING_MLX = "using namespace mlx::core;"
# The names `scope` declares from a VJP's `cotangents`, and from its `outputs`.
COTANGENT_NAMES = frozenset({"grad", "cotangent", "grads"})
OUTPUT_NAMES = frozenset({"result", "output", "results", "outputs"})
SUM_TO_INPUT_NAME = "opgen_sum_to_input"

# Emitted once, first in the library's namespace, when an operator has formulas
# (`operators.source`); `static`: internal linkage.
SUM_TO_INPUT = f"""\
// A gradient formula's value for an input. Where it has the shape the input broadcasts
// to, it is summed back to the input's shape (over the leading dimensions the input
// lacks, and over those where the input has size 1), as PyTorch's autograd engine does;
// any other shape is an error naming the operator and the input (`what`).
static {ARRAY} {SUM_TO_INPUT_NAME}(
    const {ARRAY}& gradient,
    const {ARRAY}& input,
    const char* what,
    const mlx::core::Stream& s) {{
  if (gradient.shape() == input.shape()) {{
    return gradient;
  }}
  const int lead = static_cast<int>(gradient.ndim()) - static_cast<int>(input.ndim());
  bool broadcast = lead >= 0;
  std::vector<int> axes;
  for (int i = 0; broadcast && i < static_cast<int>(gradient.ndim()); ++i) {{
    if (i < lead || (input.shape(i - lead) == 1 && gradient.shape(i) != 1)) {{
      axes.push_back(i);
    }} else if (input.shape(i - lead) != gradient.shape(i)) {{
      broadcast = false;
    }}
  }}
  if (!broadcast) {{
    auto text = [](const mlx::core::Shape& shape) {{
      std::string out = "(";
      for (std::size_t i = 0; i < shape.size(); ++i) {{
        out += (i > 0 ? ", " : "") + std::to_string(shape[i]);
      }}
      return out + (shape.size() == 1 ? ",)" : ")");
    }};
    throw std::invalid_argument(
        std::string(what) + " gives shape " + text(gradient.shape()) +
        ", which is neither the input's shape " + text(input.shape()) +
        " nor a broadcast of it");
  }}
  return mlx::core::reshape(mlx::core::sum(gradient, axes, true, s), input.shape(), s);
}}
"""


class Verbatim(str):
    """A line emitted as it is, never indented: a `#line` directive, or a formula's line at
    its column in the spec."""

    __slots__ = ()


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
    return [by + line if line and not isinstance(line, Verbatim) else line for line in lines]


def formula_lines(formula: GradFormula, suffix: str) -> list[str]:
    """The formula, then `suffix`, behind a `#line` to its place in the spec, and back.

    A one-line formula written as it is read (a plain scalar on its key's line) starts
    at its column; one over several lines (a `|` block scalar) on the line after the
    key, where its text starts; a folded or wrapped one, whose line breaks are gone, on
    its first line, as `opgen torch-library` places them.
    """
    text = formula.formula.rstrip()
    as_written = formula.location.length == len(text)  # a plain scalar on its key's line
    return [Verbatim(line) for line in placed_lines(text, formula.location, as_written, suffix)]


def summed(operator: str, formula: GradFormula, primal: str, before: str, after: str) -> list[str]:
    """`before`, the formula's value summed to the shape of `primal` (SUM_TO_INPUT), `after`.

    The stream `s` is in scope.
    """
    return [
        f"{before}{SUM_TO_INPUT_NAME}(",
        *formula_lines(formula, ","),
        f"    {sum_to_input_arguments(operator, formula.input, primal)}){after}",
    ]


def sum_to_input_arguments(operator: str, argument: str, primal: str) -> str:
    """SUM_TO_INPUT's arguments after the gradient: the input, what the error names, `s`."""
    what = f"{operator}: the gradient formula for '{argument}'"
    return f"{primal}, {string_literal(what)}, s"
