"""The MLX dialect: entries written with C++ and Python signatures.

An entry is an operator the extension defines, or a bound function: a Python
signature bound straight to existing C++.

An operator:

    - name: add                                      # the C++ function
      signature: "array add(const array& a, const array& b, float alpha = 1.0)"
      keyword_only: [alpha]                          # optional
      python_name: add                               # optional; default: name
      doc: Element-wise addition.
      grad: {a: grad, b: multiply(grad, array(alpha))}
      dispatch: {cpu: add_cpu, gpu: add_metal}       # optional: a primitive
      shape: a.shape()                               # optional, with dispatch

The one-`signature` form is a C++ declaration whose function is named
`name:`; its parameter names and C++ default arguments are the Python ones.
Every argument is positional-or-keyword, unless `keyword_only:` lists it:
those must be the last parameters of the declaration (Python keeps
keyword-only arguments after the others, and the C++ call keeps the
declaration's order), and become the schema's arguments after `*`.

The split form gives the two sides apart: `cpp_signature: "array(const
array&, const array&)"` (parameter names optional; no defaults) and
`python_signature: "add(a: array, b: array, *, alpha: float = 1.0) ->
array"`, which gives the names, the keyword-only `*`, the defaults and the
Python name. The two must have as many parameters (the stream aside) and,
where the Python side writes a type, the same types, or it is an error
naming the argument. `keyword_only:` does not go with it (the `*` says it).

Either way the entry becomes the schema an entry of opgen's spec language
would have written (`add(Tensor a, Tensor b, *, float alpha=1.0) -> Tensor`).

A bound function has `call:`, `code:` or `overloads:`, or a `python_signature:`
without `cpp_signature:`:

    - name: sum
      python_signature: "sum(a: array, /, axis: int | Sequence[int] | None = None,
        keepdims: bool = False, *, stream: StreamOrDevice = None) -> array"
      call: sum(a, axis?, keepdims)      # or code: "C++", or neither: sum(a, axis, keepdims)
      promote: [a, b]                    # scalar | array parameters converted together
      doc: ...

Its signature is Python's (`bound_signature`), and what it runs is a `call:` or
`code:` (`calls`); `overloads:` lists several `{python_signature, call | code,
promote}` under one Python name, tried in order. A bound function has no
`grad:`, `dispatch:` or `shape:`: MLX differentiates the functions it calls.

A dotted name, `name: linalg.norm`, puts a bound function in a submodule of the
extension (`linalg`, made with nanobind's `def_submodule`), and its C++
functions in the namespace of that name inside the library's
(`mlx::core::linalg`): that is where `call:` looks `norm` up and what `code:`
sees beside the library's namespace. The signature names the function
itself, `norm(...)`. An entry named `array.<name>` is a method (`methods`).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import TypeVar

from opgen.diagnostics import Location, SpecError, did_you_mean
from opgen.frozen import frozen
from opgen.spec.mlx.bound_signature import bound_signature
from opgen.spec.mlx.calls import overload_of, text_of
from opgen.spec.mlx.cpp_signature import MlxCppSignature, parse_cpp_signature
from opgen.spec.mlx.declarations import Parameter
from opgen.spec.mlx.methods import (
    ARRAY,
    AT_PREFIX,
    AT_RETURNS,
    METHOD_KEYS,
    VARIANTS_KEY,
    methods,
    variants,
)
from opgen.spec.mlx.model import BoundOverload, MlxFunction
from opgen.spec.mlx.operators import ReadOperator, SharedKeys, name_problem
from opgen.spec.mlx.python_signature import MlxPythonSignature, parse_python_signature
from opgen.spec.mlx.type_mapping import cpp_default, float_range_problem, python_default
from opgen.spec.schema import FunctionSchema, OperatorName
from opgen.spec.syntax import SchemaError
from opgen.spec.yaml.load import YamlList, YamlMap
from opgen.spec.yaml.located import WrittenText

T = TypeVar("T")
BOUND_KEYS = ("call", "code", "promote", "overloads")
OVERLOAD_KEYS = ("python_signature", "call", "code", "promote")
NAME = "name"
MLX_KEYS = (
    "name",
    "signature",
    "cpp_signature",
    "python_signature",
    "keyword_only",
    *BOUND_KEYS,
    *METHOD_KEYS,
    VARIANTS_KEY,
)
_CPP_EXPECTED: Mapping[str, str] = {
    "int": "an integer",
    "float": "a number",
    "bool": "true or false",
    "str": 'a string literal, "like this"',
    "int[]": "a braced list of integers, {} or {0, 1}",
    "ScalarType": "an MLX dtype, such as float32",
}
_PYTHON_EXPECTED: Mapping[str, str] = {
    **_CPP_EXPECTED,
    "bool": "True or False",
    "int[]": "a list of integers, [] or [0, 1]",
    "ScalarType": "an MLX dtype, such as mx.float32",
}


@frozen
class _Argument:
    name: str
    spec_type: str
    default: str | None  # as the schema writes it
    keyword_only: bool
    location: Location  # of the name


def read_mlx_entry(entry: YamlMap, keys: SharedKeys) -> ReadOperator:
    name, name_at = entry_name(entry)
    if "signature" in entry:
        for other in ("cpp_signature", "python_signature"):
            if other in entry:
                raise SpecError(
                    f"'signature:' and '{other}:' are two ways to give the signature; keep one",
                    entry.key_location(other),
                )
        arguments, returns, python_name = _one_signature(entry, name, keys)
    elif "cpp_signature" in entry and "python_signature" in entry:
        if "keyword_only" in entry:
            raise SpecError(
                "'keyword_only:' is for the one-'signature' form; in 'python_signature:' a "
                "'*' marks the keyword-only arguments",
                entry.key_location("keyword_only"),
            )
        arguments, returns, python_name = _split_signatures(entry, name, keys)
    else:
        given = [k for k in ("cpp_signature", "python_signature") if k in entry]
        if given:
            missing = "python_signature" if given[0] == "cpp_signature" else "cpp_signature"
            raise SpecError(f"'{given[0]}:' needs '{missing}:'", entry.key_location(given[0]))
        raise SpecError(
            f"'{name}' needs 'signature:' (a C++ declaration) or 'cpp_signature:' and "
            "'python_signature:'",
            entry.location,
        )
    func = _schema(name, arguments, returns, name_at)
    return ReadOperator(
        name=name,
        name_location=name_at,
        python_name=python_name,
        python_name_location=keys.python_name_location or name_at,
        func=func,
        argument_locations={a.name: a.location for a in arguments},
        keys=keys,
        grads=keys.grads,
        location=entry.location,
    )


def entry_name(entry: YamlMap) -> tuple[str, Location]:
    name = entry[NAME]
    at = entry.value_location(NAME)
    if not isinstance(name, str):
        raise SpecError("'name:' must be the operator's C++ name, a string", at)
    problem = name_problem(name)
    if problem is None and name.endswith("_"):
        problem = f"'{name}' ends in '_', which means an inplace operator"
    if problem is None:
        try:
            OperatorName.parse(name)
        except SchemaError as error:
            problem = error.message
    if problem is not None:
        raise SpecError(problem, at)
    return name, at


def _one_signature(entry: YamlMap, name: str, keys: SharedKeys) -> tuple[list[_Argument], str, str]:
    text = text_of(entry, "signature")
    cpp = _parse(text, lambda t: parse_cpp_signature(t, named=True))
    if cpp.name != name:
        raise SpecError(
            f"the C++ function is named '{cpp.name}' and the entry '{name}': they must be the same",
            text.at(cpp.name_offset, len(cpp.name or "")),
        )
    keyword_only = _keyword_only(entry, [p.parameter.name or "" for p in cpp.parameters])
    arguments: list[_Argument] = []
    for i, p in enumerate(cpp.parameters):
        parameter = p.parameter
        if parameter.name is None:
            raise SpecError(
                f"parameter {i + 1} needs a name: the C++ names are the Python names",
                text.at(parameter.offset, parameter.length),
            )
        default = _default(parameter, p.spec_type, text, cpp=True)
        at = text.at(parameter.name_offset, len(parameter.name))
        arguments.append(_Argument(parameter.name, p.spec_type, default, i >= keyword_only, at))
    return arguments, cpp.returns, keys.python_name or name


def _keyword_only(entry: YamlMap, names: list[str]) -> int:
    """The index of the first keyword-only parameter (`len(names)`: none)."""
    listed = entry.get("keyword_only", [])
    at = entry.value_location("keyword_only")
    if not isinstance(listed, YamlList) and listed != []:
        raise SpecError("'keyword_only:' lists argument names: [alpha, beta]", at)
    first = len(names)
    indices: dict[int, Location] = {}
    for i, item in enumerate(listed):
        item_at = listed.item_locations[i] if isinstance(listed, YamlList) else at
        if not isinstance(item, str) or item not in names:
            hint = did_you_mean(str(item), names)
            raise SpecError(f"'keyword_only:' names '{item}', which is no argument{hint}", item_at)
        indices[names.index(item)] = item_at
    if indices:
        first = min(indices)
        for index in range(first, len(names)):
            if index not in indices:
                raise SpecError(
                    f"keyword-only arguments come last in the C++ signature, and "
                    f"'{names[first]}' is followed by '{names[index]}', which is not "
                    "keyword-only: move it before, or list it too",
                    indices[first],
                )
    return first


def _split_signatures(
    entry: YamlMap, name: str, keys: SharedKeys
) -> tuple[list[_Argument], str, str]:
    cpp_text = text_of(entry, "cpp_signature")
    python_text = text_of(entry, "python_signature")
    cpp = _parse(cpp_text, lambda t: parse_cpp_signature(t, named=False))
    python = _parse(python_text, parse_python_signature)
    if cpp.name is not None and cpp.name != name:
        raise SpecError(
            f"the C++ function is named '{cpp.name}' and the entry '{name}': they must be the same",
            cpp_text.at(cpp.name_offset, len(cpp.name)),
        )
    if keys.python_name is not None and keys.python_name != python.name:
        assert keys.python_name_location is not None
        raise SpecError(
            f"'python_name:' says '{keys.python_name}' and 'python_signature:' '{python.name}'; "
            "drop one",
            keys.python_name_location,
        )
    _check_counts(cpp, cpp_text, python, python_text)
    arguments = [
        _pair(c.parameter, c.spec_type, p.parameter, p.spec_type, cpp_text, python_text)
        for c, p in zip(cpp.parameters, python.parameters, strict=True)
    ]
    if python.returns is not None and python.returns != cpp.returns:
        raise SpecError(
            f"the Python return type ({python.returns}) is not the C++ one ({cpp.returns})",
            python_text.at(python.returns_offset, python.returns_length),
        )
    return arguments, cpp.returns, python.name


def _check_counts(
    cpp: MlxCppSignature,
    cpp_text: WrittenText,
    python: MlxPythonSignature,
    python_text: WrittenText,
) -> None:
    ours, theirs = len(python.parameters), len(cpp.parameters)
    if ours > theirs:
        extra = python.parameters[theirs].parameter
        raise SpecError(
            f"'{extra.name}' has no counterpart in 'cpp_signature:', which has {theirs} "
            "parameter(s) besides the stream",
            python_text.at(extra.offset, extra.length),
        )
    if theirs > ours:
        extra = cpp.parameters[ours].parameter
        raise SpecError(
            f"C++ parameter {ours + 1} ('{extra.type_text}') has no counterpart in "
            f"'python_signature:', which has {ours} parameter(s) besides the stream",
            cpp_text.at(extra.offset, extra.length),
        )


def _pair(
    cpp: Parameter,
    cpp_type: str,
    python: Parameter,
    python_type: str | None,
    cpp_text: WrittenText,
    python_text: WrittenText,
) -> _Argument:
    assert python.name is not None
    if cpp.name is not None and cpp.name != python.name:
        raise SpecError(
            f"the C++ parameter '{cpp.name}' is '{python.name}' in 'python_signature:'; name it "
            "the same, or leave it unnamed",
            cpp_text.at(cpp.name_offset, len(cpp.name)),
        )
    if cpp.default is not None:
        raise SpecError(
            f"'{python.name}': defaults belong in 'python_signature:'",
            cpp_text.at(cpp.default_offset, len(cpp.default)),
        )
    if python_type is not None and python_type != cpp_type:
        assert python.type_text is not None
        raise SpecError(
            f"argument '{python.name}': Python type '{python.type_text}' ({python_type}) does "
            f"not match C++ type '{cpp.type_text}' ({cpp_type})",
            python_text.at(python.type_offset, len(python.type_text)),
        )
    shown = python.type_text or cpp.type_text  # the type as the user wrote it
    default = _default(python, cpp_type, python_text, cpp=False, shown=shown)
    at = python_text.at(python.name_offset, len(python.name))
    return _Argument(python.name, cpp_type, default, python.keyword_only, at)


def _default(
    parameter: Parameter,
    spec_type: str,
    text: WrittenText,
    *,
    cpp: bool,
    shown: str | None = None,
) -> str | None:
    """The schema's default of a parameter, if it has one; an error if it does not fit."""
    if parameter.default is None:
        return None
    convert = cpp_default if cpp else python_default
    converted = convert(spec_type, parameter.default) if parameter.default else None
    at = text.at(parameter.default_offset, max(len(parameter.default), 1))
    if converted is not None:
        problem = float_range_problem(spec_type, converted, parameter.default)
        if problem is not None:
            raise SpecError(problem, at)
        return converted
    null = "std::nullopt" if cpp else "None"
    shown = shown or parameter.type_text or spec_type
    base = spec_type.removesuffix("?").replace("SymInt", "int")
    if not parameter.default:
        message = f"'{parameter.name}' has an empty default"
    elif spec_type == "Tensor?":
        message = f"an argument of type '{shown}' takes only {null} as default"
    elif base in ("Tensor", "Tensor[]"):
        message = f"an argument of type '{shown}' takes no default"
    else:
        expected = (_CPP_EXPECTED if cpp else _PYTHON_EXPECTED)[base]
        if spec_type.endswith("?"):
            expected += f", or {null}"
        message = f"default '{parameter.default}' does not fit type '{shown}' ({expected})"
    raise SpecError(message, at)


def _parse(text: WrittenText, parse: Callable[[str], T]) -> T:
    try:
        return parse(text.text)
    except SchemaError as error:
        raise text.place(error) from None


def _schema(name: str, arguments: list[_Argument], returns: str, at: Location) -> FunctionSchema:
    seen: set[str] = set()
    for a in arguments:
        if a.name in seen:
            raise SpecError(f"a second argument named '{a.name}'", a.location)
        seen.add(a.name)
    pieces = [_piece(a) for a in arguments if not a.keyword_only]
    keyword_only = [_piece(a) for a in arguments if a.keyword_only]
    if keyword_only:
        pieces += ["*", *keyword_only]
    try:
        return FunctionSchema.parse(f"{name}({', '.join(pieces)}) -> {returns}", library=True)
    except SchemaError as error:
        raise SpecError(error.message, at) from None


def _piece(a: _Argument) -> str:
    return f"{a.spec_type} {a.name}" + ("" if a.default is None else f"={a.default}")


def is_bound(entry: YamlMap) -> bool:
    if any(key in entry for key in (*BOUND_KEYS, *METHOD_KEYS)):
        return True
    return "python_signature" in entry and "cpp_signature" not in entry


def read_bound_entry(
    entry: YamlMap, name: str, keys: SharedKeys, submodule: str = ""
) -> list[MlxFunction]:
    """The entry's function, or its methods of `array` (submodule `array`), and the
    methods it derives (`spec.mlx.methods`)."""
    at = submodule == AT_PREFIX[:-1]
    on_array = submodule == ARRAY or at
    for key in ("grad", "dispatch", "shape", "signature", "cpp_signature", "keyword_only"):
        if key in entry:
            raise SpecError(
                f"'{key}:' is not for a bound function (one with 'call:', 'code:', 'overloads:' "
                "or only a 'python_signature:'): it runs existing C++ functions, which MLX "
                "differentiates",
                entry.key_location(key),
            )
    python_name = keys.python_name or name
    if "overloads" in entry:
        for key in OVERLOAD_KEYS:
            if key in entry:
                raise SpecError(
                    f"'{key}:' goes in each item of 'overloads:'", entry.key_location(key)
                )
        items = entry["overloads"]
        if not isinstance(items, YamlList) or not items:
            raise SpecError(
                "'overloads:' lists {python_signature, call or code, promote} mappings",
                entry.value_location("overloads"),
            )
        overloads = []
        for i, item in enumerate(items):
            if not isinstance(item, YamlMap):
                raise SpecError("an overload is a mapping", items.item_locations[i])
            for written_key in item:
                if written_key not in OVERLOAD_KEYS:
                    raise SpecError(
                        f"unknown key '{written_key}' in an overload, which has "
                        f"{', '.join(OVERLOAD_KEYS)}",
                        item.key_location(written_key),
                    )
            overloads.append(_overload(item, name, python_name, on_array))
    else:
        overloads = [_overload(entry, name, python_name, on_array)]
    if on_array:
        function = MlxFunction(python_name, tuple(overloads), keys.doc, entry.location)
        return methods(entry, function, at)
    function = MlxFunction(python_name, tuple(overloads), keys.doc, entry.location, submodule)
    return variants(entry, function)


def _overload(entry: YamlMap, name: str, python_name: str, method: bool) -> BoundOverload:
    if "python_signature" not in entry:
        raise SpecError("a bound function needs 'python_signature:'", entry.location)
    text = text_of(entry, "python_signature")
    parameters, returns = bound_signature(text, python_name, method)
    made = returns == AT_RETURNS  # `a.at`, which opgen makes
    if made and not method:
        raise SpecError(
            f"'{AT_RETURNS}' is what the property 'array.at' returns, and no function",
            text.location,
        )
    return overload_of(entry, name, parameters, returns, text.location, made)
