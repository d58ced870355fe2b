"""The methods of `array` a bound entry of the MLX dialect declares.

A function entry becomes a method of the same name as well with `variants`, as
PyTorch's spec says it (`function` and `method`, either or both); its first
parameter is then the array (`self`):

    - name: sum
      python_signature: "sum(a: array, /, axis: ... = None, keepdims: bool = False,
        *, stream: StreamOrDevice = None) -> array"
      variants: [function, method]          # mx.sum(a) and a.sum()

A method of a signature of its own, a property or an operator is an entry of its
own, named `array.<name>`, whose signature takes `self` first, unannotated:

    - name: array.astype
      python_signature: "astype(self, dtype: Dtype, stream: StreamOrDevice = None) -> array"
    - name: array.shape
      python_signature: "shape(self) -> tuple[int, ...]"
      property: true                        # read as `a.shape`
      code: nb::tuple(nb::cast(self.shape()))
    - name: array.__sub__
      python_signature: "__sub__(self, other: scalar | array) -> array"
      call: subtract(self, other)
      promote: [self, other]                # MLX's weak scalars: the array's dtype
      operation: subtraction                # a list operand: "Cannot perform subtraction
                                            # on an mlx.core.array and list"
      reflected: __rsub__                   # 1 - a: subtract(other, self)
      inplace: __isub__                     # a -= 1: a's contents replaced, a returned

`a.at[index]` is a property returning `ArrayAt`, which opgen makes (no `call:` or
`code:`), and its update methods are entries named `array.at.<name>`, whose code
has the array as `self` and the index as `index` (an `Index`, `opgen.api.mlx_python`):

    - name: array.at
      python_signature: "at(self) -> ArrayAt"
      property: true
    - name: array.at.add
      python_signature: "add(self, value: scalar | array) -> array"
      code: index.add(self, value)
      promote: [self, value]

`inplace: true` makes the entry's own method in-place. `incomparable: false`
returns False (or True) instead of raising for an operand that is no number and
no array (`__eq__`, `__ne__`). The generated module returns the methods from
`array_methods()`, to be set on `mlx.core.array`.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from opgen.diagnostics import SpecError, did_you_mean
from opgen.frozen import replace
from opgen.spec.mlx.model import (
    BoundAs,
    BoundOverload,
    CallArgument,
    MlxFunction,
    ParameterKind,
)
from opgen.spec.mlx.operators import ReadOperator
from opgen.spec.mlx.python_types import Leaf, PyType
from opgen.spec.yaml.load import YamlList, YamlMap

ARRAY = "array"  # the name that puts an entry on `array` (`array.sum`)
AT_PREFIX = "array.at."  # the name that makes an entry a method of `a.at[index]`
AT_RETURNS = "ArrayAt"  # what the property `at` returns
SELF = "self"
INDEX = "index"  # the index of `a.at[index]`, in an update method's code
VARIANTS_KEY = "variants"  # of any entry, as PyTorch's spec has it
# The keys of a method of its own (`array.<name>`), which make an entry a bound function.
METHOD_KEYS = ("property", "inplace", "reflected", "operation", "incomparable")
VARIANTS = ("function", "method")
_DUNDER = re.compile(r"__[a-z]\w*__\Z")
_ARRAY_TYPE = PyType((Leaf.ARRAY,), optional=False)
_RECEIVER_TYPES = ((Leaf.ARRAY,), (Leaf.ARRAY_LIKE,))  # what a function's array may be
_NOT_FIRST = (ParameterKind.VARIADIC, ParameterKind.KEYWORD_ONLY)


def variants(entry: YamlMap, function: MlxFunction) -> list[MlxFunction]:
    """The function entry's function and method, as `variants:` says (default: the
    function alone)."""
    for key in METHOD_KEYS:
        if key in entry:
            raise SpecError(
                f"'{key}:' is for a method of its own, an entry named "
                f"'array.{function.python_name}'",
                entry.key_location(key),
            )
    if VARIANTS_KEY not in entry:
        return [function]
    items = _variants(entry)
    at = entry.value_location(VARIANTS_KEY)
    if function.submodule and "method" in items:
        raise SpecError(f"a function of the submodule '{function.submodule}' is no method", at)
    out = [function] if "function" in items else []
    if "method" in items:
        out.append(_as_method(function))
    return out


def operator_variants(entry: YamlMap, op: ReadOperator) -> ReadOperator:
    """An operator entry's `variants:`: a function, and a method too if it says so."""
    if VARIANTS_KEY not in entry:
        return op
    items = _variants(entry)
    at = entry.value_location(VARIANTS_KEY)
    if "function" not in items:
        raise SpecError(
            "an operator is a function of the module: 'variants: [function, method]' makes "
            "it a method too",
            at,
        )
    arguments = op.func.arguments.flat_all
    if "method" in items and (not arguments or str(arguments[0].type) != "Tensor"):
        raise SpecError("a method takes the array first: the first argument is 'Tensor'", at)
    return replace(op, method="method" in items)


def _variants(entry: YamlMap) -> list[str]:
    written_variants = entry[VARIANTS_KEY]
    items = (
        [str(v) for v in written_variants]
        if isinstance(written_variants, YamlList)
        else [v.strip() for v in str(written_variants).split(",")]
    )
    unknown = next((v for v in items if v not in VARIANTS), None)
    if not items or unknown is not None or len(set(items)) < len(items):
        hint = "" if unknown is None else f" ('{unknown}'{did_you_mean(unknown, VARIANTS)})"
        raise SpecError(
            f"'variants:' lists 'function', 'method' or both{hint}",
            entry.value_location(VARIANTS_KEY),
        )
    return items


def _as_method(function: MlxFunction) -> MlxFunction:
    overloads = []
    for overload in function.overloads:
        first = overload.parameters[0] if overload.parameters else None
        takes_array = first is not None and first.type.alternatives in _RECEIVER_TYPES
        if first is None or not takes_array or first.type.optional or first.kind in _NOT_FIRST:
            raise SpecError(
                "a method takes the array first: the first parameter is 'array' or "
                "'scalar | array'",
                overload.location,
            )
        receiver = replace(first, type=_ARRAY_TYPE, kind=ParameterKind.POSITIONAL)
        overloads.append(replace(overload, parameters=(receiver, *overload.parameters[1:])))
    return replace(function, overloads=tuple(overloads), bound_as=BoundAs.METHOD)


def methods(entry: YamlMap, function: MlxFunction, at: bool = False) -> list[MlxFunction]:
    """The method an `array.<name>` entry declares, and the ones it derives (`reflected:`,
    `inplace:`); with `at`, the update method an `array.at.<name>` entry declares."""
    if VARIANTS_KEY in entry:
        raise SpecError(
            "an entry named 'array.<name>' is a method; 'variants:' is for a function entry",
            entry.key_location(VARIANTS_KEY),
        )
    for overload in function.overloads:
        first = overload.parameters[0] if overload.parameters else None
        if first is None or first.name != SELF or first.kind is not ParameterKind.POSITIONAL:
            raise SpecError(
                f"a method of 'array' takes the array first, as 'self': "
                f"'{function.python_name}(self, ...)'",
                overload.location,
            )
    for overload in function.overloads:
        if (overload.returns == AT_RETURNS) != (function.python_name == "at" and not at):
            raise SpecError(
                f"the property 'at' returns '{AT_RETURNS}', and only it", overload.location
            )
    if function.python_name == "at" and not at and _flag(entry, "property") is not True:
        raise SpecError("'at' is a property: write 'property: true'", entry.location)
    if at:
        return [_at_method(entry, function)]
    if len(function.overloads) > 1:
        derived = next((key for key in METHOD_KEYS if key in entry), None)
        if derived is not None:
            raise SpecError(
                f"'{derived}:' is for a method of one signature", entry.key_location(derived)
            )
        return [replace(function, bound_as=BoundAs.METHOD)]
    overload = function.overloads[0]
    operation = _string(entry, "operation")
    incomparable = _flag(entry, "incomparable")
    if incomparable is not None and overload.returns != "array | bool":
        raise SpecError(
            "'incomparable:' returns a bool where the array would be: the signature returns "
            "'array | bool'",
            entry.key_location("incomparable"),
        )
    if _flag(entry, "property"):
        return [_property(entry, function, overload)]
    method = replace(
        function, bound_as=BoundAs.METHOD, operation=operation, incomparable=incomparable
    )
    inplace = entry.get("inplace")
    if isinstance(inplace, bool) or inplace is None:
        out = [replace(method, inplace=bool(inplace))]
    else:
        derived_name = _dunder(entry, "inplace", "__i")
        in_place = f"inplace {operation}" if operation else ""
        out = [method, replace(method, python_name=derived_name, inplace=True, operation=in_place)]
    if "reflected" in entry:
        out.append(_reflected(entry, method, overload))
    return out


def _at_method(entry: YamlMap, function: MlxFunction) -> MlxFunction:
    for key in METHOD_KEYS:
        if key in entry:
            raise SpecError(
                f"an update method of 'a.at[index]' has no '{key}:'", entry.key_location(key)
            )
    for overload in function.overloads:
        if overload.code is None:
            raise SpecError(
                f"an update method of 'a.at[index]' says what it runs in 'code:', with the "
                f"array as '{SELF}' and the index as '{INDEX}'",
                overload.location,
            )
        named = next((p for p in overload.parameters if p.name == INDEX), None)
        if named is not None:
            raise SpecError(
                f"'{INDEX}' is the index of 'a.at[index]' in the code: rename the parameter",
                named.location,
            )
    return replace(function, bound_as=BoundAs.AT)


def _property(entry: YamlMap, function: MlxFunction, overload: BoundOverload) -> MlxFunction:
    for key in ("inplace", "reflected", "operation", "incomparable"):
        if key in entry:
            raise SpecError(f"a property has no '{key}:'", entry.key_location(key))
    if len(overload.parameters) != 1:
        raise SpecError(
            f"a property takes 'self' alone: '{function.python_name}(self) -> ...'",
            overload.parameters[1].location,
        )
    if overload.returns == AT_RETURNS and (overload.code is not None or "call" in entry):
        raise SpecError(
            f"the property 'at' is the '{AT_RETURNS}' opgen makes: it has no 'call:' or 'code:'",
            overload.location,
        )
    return replace(function, bound_as=BoundAs.PROPERTY)


def _reflected(entry: YamlMap, method: MlxFunction, overload: BoundOverload) -> MlxFunction:
    name = _dunder(entry, "reflected", "__r")
    at = entry.value_location("reflected")
    others = [p for p in overload.parameters[1:] if p.name != "stream"]
    if overload.function is None or len(others) != 1:
        raise SpecError(
            "'reflected:' swaps 'self' and the one other operand in 'call:'; write the "
            "reflected method as an entry of its own",
            at,
        )
    other = others[0].name

    def swapped(argument: CallArgument) -> CallArgument:
        swap = {SELF: other, other: SELF}.get(argument.name, argument.name)
        return replace(argument, name=swap)

    arguments = tuple(swapped(a) for a in overload.arguments)
    return replace(
        method,
        python_name=name,
        overloads=(replace(overload, arguments=arguments),),
        inplace=False,
    )


def _dunder(entry: YamlMap, key: str, prefix: str) -> str:
    value = entry[key]
    if not isinstance(value, str) or not _DUNDER.match(value) or not value.startswith(prefix):
        raise SpecError(
            f"'{key}:' names the method it derives, '{prefix}add__' and the like",
            entry.value_location(key),
        )
    return value


def _string(entry: YamlMap, key: str) -> str:
    if key not in entry:
        return ""
    value = entry[key]
    if not isinstance(value, str) or not value.strip():
        raise SpecError(f"'{key}:' is words, as MLX's message says them", entry.value_location(key))
    return value.strip()


def _flag(entry: YamlMap, key: str) -> bool | None:
    if key not in entry:
        return None
    value = entry[key]
    if not isinstance(value, bool):
        raise SpecError(f"'{key}:' is true or false", entry.value_location(key))
    return value


def at_problem(functions: Sequence[MlxFunction]) -> SpecError | None:
    """The error of update methods of `a.at[index]` without the property `at`."""
    updates = [f for f in functions if f.bound_as is BoundAs.AT]
    if not updates or any(
        f.bound_as is BoundAs.PROPERTY and f.python_name == "at" for f in functions
    ):
        return None
    return SpecError(
        f"'{updates[0].qualified_name}' is a method of 'a.at[index]', and no entry "
        f"'array.at' makes the property: 'at(self) -> {AT_RETURNS}', 'property: true'",
        updates[0].location,
    )
