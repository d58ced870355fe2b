"""What a bound function runs, in either dialect: `call:`, `code:` and `promote:`.

`call: f(p, q?, r)` calls the C++ function `f` (in the library's namespace,
or the submodule's, unless qualified) with those parameters, each once, and
the stream: `q?` leaves `q` out when it is None (the overload without it), and
a union parameter branches, one call per alternative, so that C++ overload
resolution picks each one's function. Without `call:` or `code:`, the function
of the entry's name is called with every parameter. `code:` is a C++
expression (or statements with `return`) for what a call cannot say.
`promote: [a, b]` converts `scalar | array` parameters together, to the dtype
of the first of them that has one (MLX's weak scalars).
"""

from __future__ import annotations

import re

from opgen.diagnostics import Location, SpecError
from opgen.spec.mlx.declarations import split_top_level
from opgen.spec.mlx.model import BoundOverload, CallArgument, PyParameter
from opgen.spec.mlx.python_types import Leaf
from opgen.spec.yaml.load import YamlList, YamlMap
from opgen.spec.yaml.located import WrittenText, written

STREAM = "stream"
_CALL = re.compile(
    r"\s*(?P<function>(?:::)?[A-Za-z_]\w*(?:::[A-Za-z_]\w*)*)\s*\((?P<args>.*)\)\s*\Z"
)


def code_of(entry: YamlMap) -> tuple[str | None, Location | None]:
    """The `code:` of an entry and where it is; (None, None) without one."""
    if "code" not in entry:
        return None, None
    if "call" in entry:
        raise SpecError(
            "'call:' and 'code:' are two ways to say what runs; keep one",
            entry.key_location("code"),
        )
    code_text = text_of(entry, "code")
    if not code_text.text.strip():
        raise SpecError("'code:' is empty", code_text.location)
    return code_text.text.strip(), code_text.location


def call_of(
    entry: YamlMap, name: str, parameters: tuple[PyParameter, ...], promote: tuple[str, ...]
) -> tuple[str, tuple[CallArgument, ...], Location | None]:
    """The C++ function, what it is passed and where `call:` names it; a parameter that only
    lends its dtype to `promote:` need not be passed."""
    values = [p for p in parameters if p.name != STREAM]
    if "call" not in entry:
        for value in values:
            _check_passed(value, False, value.location)
        named = entry.value_location("name") if "name" in entry else None  # the MLX dialect
        return name, tuple(CallArgument(value.name, False) for value in values), named
    text = text_of(entry, "call")
    m = _CALL.fullmatch(text.text)
    if m is None:
        raise SpecError(
            "'call:' is a C++ call of parameters, 'function(a, b?, c)'; write 'code:' for "
            "anything else",
            text.location,
        )
    function = m.group("function")
    by_name = {p.name: p for p in values}
    arguments: list[CallArgument] = []
    args_offset = m.start("args")
    inside = m.group("args")
    pieces = split_top_level(inside, args_offset, ",", angles=True) if inside.strip() else []
    for piece, offset in pieces:
        omit = piece.endswith("?")
        argument = piece.removesuffix("?").strip()
        at = text.at(offset, max(len(piece), 1))
        passed = by_name.get(argument)
        if passed is None:
            if argument == STREAM or argument == "s":
                message = "the stream is passed last by itself; leave it out of 'call:'"
            else:
                message = f"'{argument}' is no parameter; write 'code:' for a C++ expression"
            raise SpecError(message, at)
        if any(a.name == argument for a in arguments):
            raise SpecError(f"'{argument}' is passed twice", at)
        if omit and not passed.type.optional:
            raise SpecError(f"'{argument}?' leaves out a None, and '{argument}' cannot be None", at)
        _check_passed(passed, omit, at)
        arguments.append(CallArgument(argument, omit))
    for value in values:
        if value.name not in promote and not any(a.name == value.name for a in arguments):
            raise SpecError(f"'call:' does not pass the parameter '{value.name}'", text.location)
    return function, tuple(arguments), text.at(m.start("function"), len(function))


def _check_passed(p: PyParameter, omit: bool, at: Location) -> None:
    if p.type.optional and p.type.is_union and not omit:
        raise SpecError(
            f"'{p.name}' is a union that may be None: write '{p.name}?' in 'call:' to leave it "
            "out when it is None, or say what happens in 'code:'",
            at,
        )


def promoted(entry: YamlMap, by_name: dict[str, PyParameter]) -> tuple[str, ...]:
    """The parameters `promote:` lists, checked."""
    if "promote" not in entry:
        return ()
    listed = entry["promote"]
    at = entry.value_location("promote")
    if not isinstance(listed, YamlList) or len(listed) < 2:
        raise SpecError("'promote:' lists two or more parameters: [a, b]", at)
    names: list[str] = []
    for i, item in enumerate(listed):
        item_at = listed.item_locations[i]
        p = by_name.get(str(item))
        if p is None:
            raise SpecError(f"'promote:' names '{item}', which is no parameter", item_at)
        leaf = p.type.alternatives[0]
        if p.type.is_union or leaf not in (Leaf.ARRAY_LIKE, Leaf.ARRAY, Leaf.DTYPE):
            raise SpecError(
                f"'{item}' is '{p.type.text}'; 'promote:' converts 'scalar | array' parameters "
                "to the dtype of the first of its parameters that has one (an mlx array, or a "
                "'Dtype' given)",
                item_at,
            )
        if str(item) in names:
            raise SpecError(f"'{item}' is listed twice", item_at)
        names.append(str(item))
    if not any(by_name[n].type.alternatives[0] is Leaf.ARRAY_LIKE for n in names):
        raise SpecError("'promote:' converts at least one 'scalar | array' parameter", at)
    return tuple(names)


def overload_of(
    entry: YamlMap,
    name: str,
    parameters: tuple[PyParameter, ...],
    returns: str,
    at: Location,
    made: bool = False,
) -> BoundOverload:
    """The overload of `parameters` and what it runs (nothing, if opgen `made` it)."""
    promote = promoted(entry, {p.name: p for p in parameters})
    code, code_at = code_of(entry)
    function, arguments, function_at = (
        (None, (), None) if code is not None or made else call_of(entry, name, parameters, promote)
    )
    function_at = function_at or (at if function is not None else None)
    return BoundOverload(
        parameters, returns, function, arguments, code, code_at, promote, at, function_at
    )


def text_of(entry: YamlMap, key: str) -> WrittenText:
    if not isinstance(entry[key], str):
        raise SpecError(f"'{key}:' must be a string", entry.value_location(key))
    return written(entry, key)
