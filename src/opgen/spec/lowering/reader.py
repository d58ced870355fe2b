"""Reading lowering specs against a release's spec, every mistake a located error.

A lowering file is a list of entries:

    - module: aten_mlx          # optional, first: the Python package generated

    - op: add                   # a base name: every overload and variant of `add`
      call: add(self, multiply(other, alpha))
    - op: sum.dim_IntList       # one overload, with its in-place and out= variants
      call: sum(self, axes, keepdim)
      integral_to_long: true
    - op: silu
      compose: mul.Tensor(self, sigmoid(self))
    - left_out: _fft_c2r
      reason: MLX's irfftn takes the output's size, ...

`call:` is a C++ expression over `mlx::core` (names unqualified) and the runtime's
helpers, `code:` C++ statements (a function body), `compose:` an expression over other
lowered operators (`opgen.spec.lowering.compose`). A body names the schema's arguments;
for an elementwise (`pointwise`) operator its promoted arguments are arrays in the
dtype it computes in (`promotion:` chooses the kind, `promote:` which arguments take
part: by default every Tensor and Scalar but `alpha`), and a reduction (`reduction`) has
`axes`, its `dim` as MLX's axes. `op` is the operator's name, for `refuse(op, ...)`.

Several files may be read together (a spec split by kind of operator); an overload
named twice, a name the release does not have, an argument the schema does not have, a
name no one declares and a composition of an operator nobody lowers are errors, each at
its place.
"""

from __future__ import annotations

import difflib
import re
from collections.abc import Iterable, Mapping, Sequence
from types import MappingProxyType

from opgen.api.aten_mlx import RUNTIME_NAMES, UnsupportedType, parameters, return_type
from opgen.diagnostics import Diagnostic, Location, SpecError
from opgen.frozen import frozen
from opgen.spec.groups import NativeFunctionsGroup
from opgen.spec.keys import SchemaKind
from opgen.spec.lowering.compose import (
    Call,
    ComposeError,
    Expression,
    ListOf,
    Literal,
    Name,
    Output,
    TupleOf,
    parse_composition,
)
from opgen.spec.lowering.model import (
    Body,
    BodyKind,
    LeftOut,
    Lowering,
    LoweringSpec,
    Promotion,
)
from opgen.spec.mlx.formulas import Scope, check_formula
from opgen.spec.model import Spec
from opgen.spec.native import NativeFunction
from opgen.spec.types import BaseTy
from opgen.spec.yaml.load import YamlList, YamlMap, load_yaml
from opgen.spec.yaml.located import WrittenText, written

OP_KEYS = ("op", "call", "code", "compose", "promotion", "promote", "integral_to_long")
LEFT_OUT_KEYS = ("left_out", "reason")
SETTINGS_KEYS = ("module",)
BODY_KEYS = ("call", "code", "compose")
# Dtype names a composition may pass for a ScalarType.
DTYPE_NAMES = frozenset(
    {
        "bool_",
        "uint8",
        "uint16",
        "uint32",
        "uint64",
        "int8",
        "int16",
        "int32",
        "int64",
        "float16",
        "bfloat16",
        "float32",
        "float64",
        "complex64",
    }
)
# Names every body has besides the arguments.
BODY_NAMES = frozenset({"op", "promote"})
# The statements' words a `code:` body may use besides an expression's.
STATEMENT_WORDS = frozenset(
    {
        "return",
        "if",
        "else",
        "for",
        "while",
        "do",
        "switch",
        "case",
        "default",
        "break",
        "continue",
        "throw",
        "try",
        "catch",
        "this",
        "mutable",
        "constexpr",
        "static",
        "inline",
        "using",
        "namespace",
    }
)
_MAX_ERRORS = 20
# Declarations in a `code:` body: `auto x =`, `const array& y =`, `int i;`, `for (int k`.
_DECLARED = re.compile(
    r"(?:\b(?:auto|bool|int|double|float|size_t|std::size_t|std::int64_t|int64_t|"
    r"array|mlx::core::\w+|[A-Z]\w*)\b|>)"
    r"\s*(?:const\s*)?[&*]?\s*(?P<name>[A-Za-z_]\w*)\s*(?:[=;({\[:,)]|$)"
)
_BINDINGS = re.compile(r"\[\s*(?P<names>[A-Za-z_]\w*(?:\s*,\s*[A-Za-z_]\w*)*)\s*\]\s*=")


@frozen
class _Entry:
    """An `op:` entry, read."""

    op: str
    functions: tuple[NativeFunction, ...]  # the overloads it names (a base name: several)
    exact: bool  # it names one overload (with its variants), not a base name
    body: Body
    written_body: WrittenText
    promotion: Promotion | None  # as written
    promote: tuple[str, ...] | None
    integral_to_long: bool
    location: Location


def read_lowering(
    paths: Sequence[str],
    spec: Spec,
    *,
    mlx: frozenset[str] | None,
    module: str | None = None,
) -> LoweringSpec:
    """The lowering specs at `paths`, read against `spec`; raises SpecError with every
    diagnostic. `mlx`: the names `mlx::core` declares, for checking bodies (None: not
    checked); `module`: the package name, which wins over the files'."""
    return _Reader(spec, mlx, module).read(paths)


class _Reader:
    def __init__(self, spec: Spec, mlx: frozenset[str] | None, module: str | None) -> None:
        self.spec = spec
        self.mlx = mlx
        self.module = module
        self.file_module: tuple[str, Location] | None = None
        self.errors: list[Diagnostic] = []
        self.by_name: dict[str, NativeFunction] = {}
        self.by_base: dict[str, list[NativeFunction]] = {}
        for f in spec.functions:
            if f.namespace != "aten":
                continue
            self.by_name[str(f.func.name)] = f
            name = f.func.name.name
            if not name.dunder_method and not name.functional_overload:
                self.by_base.setdefault(name.base, []).append(f)
        self.groups: dict[int, NativeFunctionsGroup] = {}
        for group in spec.groups:
            for f in group.functions():
                self.groups[id(f)] = group

    def error(self, location: Location | None, message: str) -> None:
        self.errors.append(Diagnostic(location, message))
        if len(self.errors) >= _MAX_ERRORS:
            raise SpecError.of(self.errors)

    def read(self, paths: Sequence[str]) -> LoweringSpec:
        entries: list[_Entry] = []
        left_out: list[LeftOut] = []
        for path in paths:
            for item in self._items(path):
                if "left_out" in item:
                    found = self._left_out(item)
                    if found is not None:
                        left_out.append(found)
                elif "op" in item:
                    entry = self._entry(item)
                    if entry is not None:
                        entries.append(entry)
                elif set(item) & set(SETTINGS_KEYS):
                    self._settings(item)
                else:
                    self.error(item.location, "an entry has `op:` (or `left_out:`)")
        lowerings = self._lowerings(entries, left_out)
        by_name = {lowering.name: lowering for lowering in lowerings}
        for entry in entries:
            self._check_body(entry, by_name)
        if self.errors:
            raise SpecError.of(self.errors)
        module = self.module or (self.file_module[0] if self.file_module else "aten_mlx")
        return LoweringSpec(
            module=module,
            lowerings=tuple(lowerings),
            left_out=tuple(left_out),
            files=tuple(paths),
            by_name=MappingProxyType(by_name),
        )

    # Files and entries.

    def _items(self, path: str) -> Iterable[YamlMap]:
        doc = load_yaml(path)
        value = doc.root
        if value is None:
            return []
        if not isinstance(value, YamlList):
            self.error(Location(path, 1), "a lowering spec is a list of entries")
            return []
        items = []
        for i, item in enumerate(value):
            if isinstance(item, YamlMap):
                items.append(item)
            else:
                self.error(value.item_locations[i], "an entry is a mapping (`op: ...`)")
        return items

    def _settings(self, item: YamlMap) -> None:
        self._check_keys(item, SETTINGS_KEYS, "settings")
        module = item.get("module")
        if not isinstance(module, str) or not module.isidentifier():
            self.error(item.value_location("module"), "module: a Python package name")
            return
        where = item.value_location("module")
        if self.file_module is not None and self.file_module[0] != module:
            self.error(where, f"module '{module}' differs from '{self.file_module[0]}' at "
                       f"{self.file_module[1]}")  # fmt: skip
        self.file_module = (module, where)

    def _check_keys(self, item: YamlMap, allowed: Sequence[str], what: str) -> bool:
        good = True
        for key in item:
            if key not in allowed:
                close = difflib.get_close_matches(str(key), allowed, n=1)
                hint = f"; did you mean '{close[0]}'?" if close else ""
                self.error(
                    item.key_location(key),
                    f"unknown key '{key}' in {what} entry (valid: {', '.join(allowed)}){hint}",
                )
                good = False
        return good

    def _operator(self, item: YamlMap, key: str) -> tuple[str, list[NativeFunction], bool] | None:
        """(name, the overloads it names, whether it names one overload)."""
        text = item.get(key)
        where = item.value_location(key)
        if not isinstance(text, str) or not text:
            self.error(where, f"{key}: an operator name, as `add.Tensor` or `add`")
            return None
        name = text.removeprefix("aten::")
        if "::" in name:
            self.error(where, f"'{text}' is not an ATen operator: only aten:: is lowered")
            return None
        if "." in name:
            found = self.by_name.get(name)
            if found is None:
                self.error(where, self._unknown(name))
                return None
            return name, [found], True
        overloads = self.by_base.get(name)
        if overloads is None:
            self.error(where, self._unknown(name))
            return None
        exact = len(overloads) == 1
        return name, overloads, exact

    def _unknown(self, name: str) -> str:
        known = [*self.by_name, *self.by_base]
        close = difflib.get_close_matches(name, known, n=1)
        hint = f"; did you mean '{close[0]}'?" if close else ""
        return f"the release's spec has no operator '{name}'{hint}"

    def _entry(self, item: YamlMap) -> _Entry | None:
        good = self._check_keys(item, OP_KEYS, "op")
        operator = self._operator(item, "op")
        bodies = [key for key in BODY_KEYS if key in item]
        if len(bodies) != 1:
            message = "an entry has one of call:, code: and compose:"
            self.error(
                item.key_location("op"),
                message + (f" (it has {', '.join(bodies)})" if bodies else ""),
            )
            return None
        kind = bodies[0]
        text = item[kind]
        if not isinstance(text, str) or not text.strip():
            self.error(item.value_location(kind), f"{kind}: a non-empty string")
            return None
        promotion = self._promotion(item)
        promote = self._promote(item)
        integral = item.get("integral_to_long", False)
        if not isinstance(integral, bool):
            self.error(item.value_location("integral_to_long"), "integral_to_long: true or false")
            integral = False
        if operator is None or not good:
            return None
        body_text = written(item, kind)
        where = item.value_location(kind)
        composition = None
        if kind == "compose":
            try:
                composition = parse_composition(text)
            except ComposeError as e:
                self.error(body_text.at(e.offset, e.length), e.message)
                return None
        body = Body(BodyKind(kind), text, where, _first_line(body_text), composition)
        name, functions, exact = operator
        return _Entry(
            name,
            tuple(functions),
            exact,
            body,
            body_text,
            promotion,
            promote,
            integral,
            item.value_location("op"),
        )

    def _promotion(self, item: YamlMap) -> Promotion | None:
        if "promotion" not in item:
            return None
        value = item["promotion"]
        try:
            return Promotion(value)
        except ValueError:
            kinds = ", ".join(p.value for p in Promotion)
            self.error(item.value_location("promotion"), f"promotion: one of {kinds}")
            return None

    def _promote(self, item: YamlMap) -> tuple[str, ...] | None:
        if "promote" not in item:
            return None
        value = item["promote"]
        if not isinstance(value, YamlList) or not all(isinstance(v, str) for v in value):
            self.error(item.value_location("promote"), "promote: a list of argument names")
            return None
        return tuple(str(v) for v in value)

    def _left_out(self, item: YamlMap) -> LeftOut | None:
        if not self._check_keys(item, LEFT_OUT_KEYS, "left_out"):
            return None
        operator = self._operator(item, "left_out")
        reason = item.get("reason")
        if not isinstance(reason, str) or not reason.strip():
            self.error(item.key_location("left_out"), "a left_out entry says why, in reason:")
            return None
        if operator is None:
            return None
        return LeftOut(operator[0], reason, item.value_location("left_out"))

    # From entries to lowerings.

    def _lowerings(self, entries: list[_Entry], left_out: list[LeftOut]) -> list[Lowering]:
        chosen: dict[int, Lowering] = {}
        named: dict[str, _Entry] = {}
        exact = [e for e in entries if e.exact]
        general = [e for e in entries if not e.exact]
        for entry in exact:
            f = entry.functions[0]
            earlier = named.get(str(f.func.name))
            if earlier is not None:
                self.error(
                    entry.location, f"'{entry.op}' is lowered twice (first at {earlier.location})"
                )
                continue
            named[str(f.func.name)] = entry
            lowering = self._lowering(entry, f, None, explicit=True)
            if lowering is not None:
                chosen[id(f)] = lowering
        for entry in exact:
            f = entry.functions[0]
            for variant in self._variants(f):
                if id(variant) not in chosen and str(variant.func.name) not in named:
                    lowering = self._lowering(entry, variant, f, explicit=False)
                    if lowering is not None:
                        chosen[id(variant)] = lowering
        bases: dict[str, _Entry] = {}
        for entry in general:
            earlier = bases.get(entry.op)
            if earlier is not None:
                self.error(
                    entry.location, f"'{entry.op}' is lowered twice (first at {earlier.location})"
                )
                continue
            bases[entry.op] = entry
            for f in entry.functions:
                if id(f) not in chosen:
                    lowering = self._lowering(entry, f, f, explicit=False)
                    if lowering is not None:
                        chosen[id(f)] = lowering
        for out in left_out:
            lowered = [
                f
                for f in (
                    self.by_base.get(out.op, []) if "." not in out.op else [self.by_name[out.op]]
                )
                if id(f) in chosen
            ]
            if lowered:
                self.error(out.location, f"'{out.op}' is lowered and left out")
        return [chosen[id(f)] for f in self.spec.functions if id(f) in chosen]

    def _variants(self, f: NativeFunction) -> list[NativeFunction]:
        """The in-place and out= variants of a functional overload, from its group."""
        group = self.groups.get(id(f))
        if group is None or group.functional is not f:
            return []
        return [v for v in (group.inplace, group.out) if v is not None]

    def _lowering(
        self, entry: _Entry, f: NativeFunction, body_of: NativeFunction | None, *, explicit: bool
    ) -> Lowering | None:
        group = self.groups.get(id(f))
        tags = f.tags | (group.functional.tags if group is not None else frozenset())
        if group is not None and group.functional is not f and not explicit:
            own = {a.name for a in f.func.arguments.flat_all}
            lacking = {a.name for a in group.functional.func.arguments.flat_all} - own
            if lacking & set(_IDENTIFIER.findall(entry.body.text)):
                return None  # a variant without an argument the body reads (full.out: dtype)
        unused = unused_arguments(entry.body, f, tags)
        if unused:
            if explicit:
                listed = ", ".join(f"'{name}'" for name in unused)
                self.error(
                    entry.written_body.location,
                    f"the lowering of '{f.func.name}' never reads {listed}: a value it cannot "
                    "honour must be refused, not ignored (refuse(op, ...) names it)",
                )
            return None
        pointwise = "pointwise" in tags
        promotion = entry.promotion
        if promotion is None:
            default = pointwise and entry.body.kind is not BodyKind.COMPOSE
            promotion = Promotion.DEFAULT if default else Promotion.NONE
        promoted = self._promoted(entry, f, promotion)
        kind = f.func.kind
        if kind is SchemaKind.mutable and not explicit:
            return None  # a mutable variant writes arguments no functional body returns
        try:
            parameters(f.func, frozenset(promoted))
            return_type(f.func.returns)
        except UnsupportedType as e:
            if explicit:
                self.error(entry.location, f"'{f.func.name}' cannot be lowered: {e}")
            return None
        variant_of = None if body_of is f else body_of
        return Lowering(
            function=f,
            body=entry.body,
            promotion=promotion,
            promoted=promoted,
            integral_to_long=entry.integral_to_long,
            entry=entry.location,
            tags=tags,
            variant_of=variant_of,
        )

    def _promoted(self, entry: _Entry, f: NativeFunction, promotion: Promotion) -> tuple[str, ...]:
        if promotion is Promotion.NONE:
            return ()
        arguments = {a.name: a for a in f.func.arguments.flat_non_out}
        if entry.promote is not None:
            names = []
            for name in entry.promote:
                argument = arguments.get(name)
                if argument is None:
                    self.error(entry.location, f"promote: '{f.func.name}' has no argument '{name}'")
                elif argument.type.base_ty not in (BaseTy.Tensor, BaseTy.Scalar):
                    self.error(entry.location, f"promote: '{name}' is no Tensor or Scalar")
                else:
                    names.append(name)
            return tuple(names)
        return tuple(
            a.name
            for a in f.func.arguments.flat_non_out
            if a.type.base_ty in (BaseTy.Tensor, BaseTy.Scalar) and a.name != "alpha"
        )

    # Bodies.

    def _check_body(self, entry: _Entry, by_name: Mapping[str, Lowering]) -> None:
        names: set[str] = set()
        for f in entry.functions:
            names.update(a.name for a in f.func.arguments.flat_all)
            if "reduction" in f.tags or any("reduction" in v.tags for v in self._variants(f)):
                names.add("axes")
        if entry.body.kind is BodyKind.COMPOSE:
            assert entry.body.composition is not None
            for f in entry.functions:
                own = {a.name for a in f.func.arguments.flat_all}
                self._check_composition(entry, entry.body.composition, own, by_name)
            return
        if self.mlx is None:
            return
        if entry.body.kind is BodyKind.CODE:
            names.update(_declared_names(entry.body.text))
            names.update(STATEMENT_WORDS)
        scope = Scope(
            frozenset(names | BODY_NAMES | RUNTIME_NAMES),
            self.mlx,
            "aten_mlx",
            frozenset(),
            None,
        )
        for problem in check_formula(entry.body.text, scope, f"the lowering of '{entry.op}'"):
            self.error(entry.written_body.at(problem.offset, problem.length), problem.message)

    def _check_composition(
        self,
        entry: _Entry,
        expression: Expression,
        own: set[str],
        by_name: Mapping[str, Lowering],
    ) -> None:
        at = entry.written_body.at
        if isinstance(expression, Name):
            if expression.text not in own and expression.text not in DTYPE_NAMES:
                close = difflib.get_close_matches(expression.text, sorted(own), n=1)
                hint = f"; did you mean '{close[0]}'?" if close else ""
                self.error(
                    at(expression.offset, expression.length),
                    f"'{expression.text}' is no argument of '{entry.op}'{hint}",
                )
            return
        if isinstance(expression, Literal):
            return
        if isinstance(expression, ListOf | TupleOf):
            for item in expression.items:
                self._check_composition(entry, item, own, by_name)
            return
        if isinstance(expression, Output):
            self._check_composition(entry, expression.of, own, by_name)
            return
        assert isinstance(expression, Call)
        callee = composed_operator(expression.op, by_name)
        where = at(expression.offset, len(expression.op))
        if isinstance(callee, str):
            self.error(where, callee)
        else:
            schema = callee.function.func
            arguments = [a.name for a in schema.arguments.flat_all]
            if len(expression.positional) > len(arguments):
                self.error(where, f"'{callee.name}' takes {len(arguments)} arguments, not "
                           f"{len(expression.positional)}")  # fmt: skip
            given = set(arguments[: len(expression.positional)])
            for keyword, _ in expression.keywords:
                if keyword not in arguments:
                    self.error(where, f"'{callee.name}' has no argument '{keyword}'")
                given.add(keyword)
            missing = [
                a.name
                for a in schema.arguments.flat_all
                if a.default is None and a.name not in given and not a.is_write
            ]
            if missing:
                self.error(where, f"'{callee.name}' needs {', '.join(repr(m) for m in missing)}")
        for argument in (*expression.positional, *(e for _, e in expression.keywords)):
            self._check_composition(entry, argument, own, by_name)


# Arguments the generated function itself honours or refuses, whatever the body reads.
HANDLED = frozenset({"layout", "device", "pin_memory", "memory_format", "generator"})
_IDENTIFIER = re.compile(r"[A-Za-z_]\w*")


def unused_arguments(body: Body, f: NativeFunction, tags: frozenset[str]) -> list[str]:
    """The arguments of `f` that `body` never names and the generated function does not
    handle itself (its out= arguments, an in-place `self`, a reduction's `dtype`, the
    placement arguments, a generator); a reduction's `dim` is read as `axes`."""
    names = set(_IDENTIFIER.findall(body.text))
    if "axes" in names and "reduction" in tags:
        names.add("dim")
    if "reduction" in tags:
        names.add("dtype")
    func = f.func
    handled = {a.name for a in func.arguments.out}
    if func.kind is SchemaKind.inplace:
        handled.add("self")
    return [
        a.name
        for a in func.arguments.flat_all
        if a.name not in names and a.name not in handled and a.name not in HANDLED
    ]


def composed_operator(op: str, by_name: Mapping[str, Lowering]) -> Lowering | str:
    """The lowering a composition's call names, or why there is none."""
    name = op.removeprefix("aten::")
    found = by_name.get(f"aten::{name}")
    if found is not None:
        return found
    if "." not in name:
        overloads = [
            lowering for key, lowering in by_name.items() if key.startswith(f"aten::{name}.")
        ]
        if len(overloads) == 1:
            return overloads[0]
        if overloads:
            names = ", ".join(sorted(str(o.function.func.name) for o in overloads))
            return f"'{name}' has several lowered overloads ({names}): name one"
    close = difflib.get_close_matches(f"aten::{name}", list(by_name), n=1)
    hint = f"; did you mean '{close[0].removeprefix('aten::')}'?" if close else ""
    return f"no lowering computes '{name}'{hint}"


def _declared_names(code: str) -> set[str]:
    found = {m.group("name") for m in _DECLARED.finditer(code)}
    for m in _BINDINGS.finditer(code):
        found.update(n.strip() for n in m.group("names").split(","))
    return found


def _first_line(text: WrittenText) -> int:
    if text.lines:
        return text.lines[0][1]
    return text.location.line
