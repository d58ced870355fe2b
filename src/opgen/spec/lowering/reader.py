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
part: by default every Tensor and Scalar but `alpha`; with `promotion: none` they are
operands, a tensor or a number, that the body promotes itself), and a reduction
(`reduction`) has `axes`, its `dim` as MLX's axes. `op` is the operator's name, for
`refuse(op, ...)`.

Several files may be read together (a spec split by kind of operator); an overload
named twice, a name the release does not have, an argument the schema does not have, a
name no one declares and a composition of an operator nobody lowers are errors, each at
its place.
"""

from __future__ import annotations

import difflib
from collections.abc import Iterable, Sequence
from types import MappingProxyType

from opgen.api.aten_mlx import NoMlxValue, parameters, return_type
from opgen.diagnostics import Diagnostic, Location, SpecError, did_you_mean
from opgen.frozen import frozen
from opgen.spec.groups import NativeFunctionsGroup
from opgen.spec.keys import SchemaKind
from opgen.spec.lowering.bodies import IDENTIFIER, body_problems, unused_arguments
from opgen.spec.lowering.compose import ComposeError, parse_composition
from opgen.spec.lowering.model import (
    Body,
    BodyKind,
    LeftOut,
    Lowering,
    LoweringSpec,
    Promotion,
)
from opgen.spec.model import Spec
from opgen.spec.native import NativeFunction
from opgen.spec.types import BaseTy
from opgen.spec.yaml.load import YamlList, YamlMap, load_yaml
from opgen.spec.yaml.located import WrittenText, written

OP_KEYS = ("op", "call", "code", "compose", "promotion", "promote", "integral_to_long")
LEFT_OUT_KEYS = ("left_out", "reason")
SETTINGS_KEYS = ("module",)
BODY_KEYS = ("call", "code", "compose")
# What each body holds, for the message of an empty one.
BODY_TEXT = {
    "call": "a C++ expression",
    "code": "C++ statements, a function's body",
    "compose": "an expression over lowered operators",
}
_MAX_ERRORS = 20


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
        self.paths: tuple[str, ...] = ()
        # Arguments explicit entries' bodies never read: (entry, overload, names), reported
        # once the bodies are checked (a typo of an argument is reported as the typo).
        self.unread: list[tuple[_Entry, NativeFunction, list[str]]] = []
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
            raise self._failure()

    def _failure(self) -> SpecError:
        """Every error, in the order of the files, then of their lines and columns."""
        order = {path: i for i, path in enumerate(self.paths)}

        def place(d: Diagnostic) -> tuple[int, int, int]:
            where = d.location
            if where is None:
                return (-1, 0, 0)
            return (order.get(where.file, len(order)), where.line, where.col or 0)

        return SpecError.of(sorted(self.errors, key=place))

    def read(self, paths: Sequence[str]) -> LoweringSpec:
        entries: list[_Entry] = []
        left_out: list[LeftOut] = []
        self.paths = tuple(paths)
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
                    self.error(
                        item.location,
                        "an entry lowers an operator (op:), leaves one out (left_out:) or "
                        "names the package (module:)",
                    )
        lowerings = self._lowerings(entries, left_out)
        by_name = {lowering.name: lowering for lowering in lowerings}
        unknown: dict[int, frozenset[str]] = {}
        for entry in entries:
            variants = [v for f in entry.functions for v in self._variants(f)]
            checked = body_problems(entry.op, entry.functions, variants, entry.body,
                                    entry.written_body, by_name, self.mlx,
                                    self._released)  # fmt: skip
            unknown[id(entry)] = checked.unknown
            for diagnostic in checked.diagnostics:
                self.error(diagnostic.location, diagnostic.message)
        for entry, f, names in self.unread:
            typos = unknown.get(id(entry), frozenset())
            unread = [n for n in names if not any(_close(typo, n) for typo in typos)]
            if unread:
                listed = ", ".join(f"'{name}'" for name in unread)
                self.error(
                    entry.written_body.location,
                    f"the lowering of '{f.func.name}' never reads {listed}: a value it cannot "
                    "honour must be refused, not ignored (refuse(op, ...) names it)",
                )
        if self.errors:
            raise self._failure()
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
            self.error(
                Location(path, 0),
                "the file holds no entries: a lowering spec is a list of them (`- op: ...`)",
            )
            return []
        if not isinstance(value, YamlList):
            mapping = isinstance(value, YamlMap)
            self.error(
                value.location if isinstance(value, YamlMap) else doc.location,
                "a lowering spec is a list of entries (`- op: ...`), not a "
                + ("mapping" if mapping else "single value"),
            )
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
            self.error(
                item.value_location("module"),
                f"module: '{module}' is not a Python package's name (an identifier)"
                if isinstance(module, str)
                else "module: the Python package's name",
            )
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
                hint = did_you_mean(str(key), allowed)
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
            # `name.default` is the default overload, which the spec names `name`.
            found = self.by_name.get(name.removesuffix(".default"))
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

    def _released(self, name: str) -> bool:
        """Whether the release has the operator `name` (`add.Tensor`, or a base name)."""
        return name in self.by_name or name in self.by_base

    def _unknown(self, name: str) -> str:
        known = [*self.by_name, *self.by_base]
        hint = did_you_mean(name, known)
        return f"the release's spec has no operator '{name}'{hint}"

    def _entry(self, item: YamlMap) -> _Entry | None:
        good = self._check_keys(item, OP_KEYS, "op")
        operator = self._operator(item, "op")
        bodies = [key for key in BODY_KEYS if key in item]
        if not bodies:
            self.error(
                item.key_location("op"),
                "the entry has no body: give it one of call:, code: and compose:",
            )
            return None
        if len(bodies) > 1:
            listed = ", ".join(f"{key}:" for key in bodies)
            self.error(
                item.key_location(bodies[1]),
                f"the entry has {len(bodies)} bodies ({listed}): keep one of them",
            )
            return None
        kind = bodies[0]
        text = item[kind]
        if text is None or (isinstance(text, str) and not text.strip()):
            self.error(item.key_location(kind), f"{kind}: is empty; it holds {BODY_TEXT[kind]}")
            return None
        if not isinstance(text, str):
            self.error(item.value_location(kind), f"{kind}: holds {BODY_TEXT[kind]}, as text")
            return None
        promotion = self._promotion(item)
        promote = self._promote(item)
        integral = item.get("integral_to_long", False)
        if not isinstance(integral, bool):
            self.error(item.value_location("integral_to_long"), "integral_to_long: true or false")
            integral = False
        if operator is None or not good:
            return None
        # Mistakes there are reported, and the entry is kept: the operator is still
        # lowered for the compositions that call it, which are not wrong.
        self._check_options(item, operator[1], promotion, promote, kind, integral)
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
            tuple(name for name, _ in promote) if promote is not None else None,
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

    def _promote(self, item: YamlMap) -> tuple[tuple[str, Location], ...] | None:
        """The arguments promote: names, each with where it is written."""
        if "promote" not in item:
            return None
        value = item["promote"]
        if not isinstance(value, YamlList) or not all(isinstance(v, str) for v in value):
            self.error(item.value_location("promote"), "promote: a list of argument names")
            return None
        return tuple((str(v), value.item_locations[i]) for i, v in enumerate(value))

    def _check_options(
        self,
        item: YamlMap,
        functions: Sequence[NativeFunction],
        promotion: Promotion | None,
        promote: tuple[tuple[str, Location], ...] | None,
        kind: str,
        integral: bool,
    ) -> None:
        """Reports a promote: or integral_to_long: that names what the overloads lack,
        each mistake once for the entry, at what is wrong."""
        tags = [self._tags(f) for f in functions]
        if promote is not None:
            pointwise = any("pointwise" in t for t in tags) and kind != "compose"
            if promotion is None and not pointwise:
                self.error(
                    item.key_location("promote"),
                    f"promote: chooses the arguments a promotion promotes, and "
                    f"'{functions[0].func.name}' has none (it is not pointwise; promotion: "
                    "would give it one)",
                )
            for name, where in promote:
                for f in functions:
                    arguments = {a.name: a for a in f.func.arguments.flat_non_out}
                    argument = arguments.get(name)
                    if argument is None:
                        hint = did_you_mean(name, arguments)
                        message = f"promote: '{f.func.name}' has no argument '{name}'{hint}"
                        self.error(where, message)
                    elif argument.type.base_ty not in (BaseTy.Tensor, BaseTy.Scalar):
                        self.error(
                            where,
                            f"promote: '{name}' of '{f.func.name}' is of type "
                            f"'{argument.type}': only Tensors and Scalars are promoted",
                        )
                    else:
                        continue
                    break
        if integral and not any("reduction" in t for t in tags):
            self.error(
                item.key_location("integral_to_long"),
                f"integral_to_long: '{functions[0].func.name}' is no reduction (it has no "
                "`reduction` tag), and only a reduction's input is taken in int64",
            )

    def _tags(self, f: NativeFunction) -> frozenset[str]:
        """An overload's tags and, for a variant, its functional overload's."""
        group = self.groups.get(id(f))
        return f.tags | (group.functional.tags if group is not None else frozenset())

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
        name, functions, exact = operator
        if exact:
            functions = [functions[0], *self._variants(functions[0])]
        return LeftOut(name, reason, item.value_location("left_out"), tuple(functions))

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
            lowered = [chosen[id(f)] for f in out.functions if id(f) in chosen]
            if lowered:
                self.error(
                    out.location,
                    f"'{out.op}' is left out, and lowered at {lowered[0].entry}",
                )
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
        tags = self._tags(f)
        if group is not None and group.functional is not f and not explicit:
            own = {a.name for a in f.func.arguments.flat_all}
            lacking = {a.name for a in group.functional.func.arguments.flat_all} - own
            if lacking & set(IDENTIFIER.findall(entry.body.text)):
                return None  # a variant without an argument the body reads (full.out: dtype)
        try:
            parameters(f.func)
            return_type(f.func.returns)
        except NoMlxValue as e:
            if explicit:
                self.error(entry.location, f"'{f.func.name}' cannot be lowered: {e}")
            return None
        unused = unused_arguments(entry.body, f, tags)
        if unused:
            if explicit:
                self.unread.append((entry, f, unused))
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
        if promotion is Promotion.NONE and entry.promote is None:
            return ()
        arguments = {a.name: a for a in f.func.arguments.flat_non_out}
        promotable = (BaseTy.Tensor, BaseTy.Scalar)
        if entry.promote is not None:  # checked by _check_options
            return tuple(
                name
                for name in entry.promote
                if name in arguments and arguments[name].type.base_ty in promotable
            )
        return tuple(
            a.name
            for a in f.func.arguments.flat_non_out
            if a.type.base_ty in promotable and a.name != "alpha"
        )


def _first_line(text: WrittenText) -> int:
    if text.lines:
        return text.lines[0][1]
    return text.location.line


def _close(typo: str, argument: str) -> bool:
    """Whether a name nothing declares is the argument misspelt (the hint a diagnostic of
    the typo gives)."""
    return bool(difflib.get_close_matches(typo, [argument], n=1))
