"""The types and default values of MLX operators, in the three ways a spec writes them.

An operator's model is a `FunctionSchema` of opgen's spec language, so every
type and default ends up written the schema's way; the MLX dialect writes
them in C++ (`const std::optional<array>& bias = std::nullopt`) or Python
(`bias: array | None = None`), and this module turns both into schema text:

    spec type    C++                                      Python
    Tensor       array                                    array
    Tensor?      std::optional<array>                     array | None, Optional[array]
    Tensor[]     std::vector<array>                       list[array], Sequence[array]
    int          int, int32_t, int64_t                    int
    float        float, double                            float
    bool, str    bool, std::string                        bool, str
    int?         std::optional<int> (float?, bool? alike) int | None
    int[]        Shape, std::vector<int>                  Sequence[int], list[int], tuple[int, ...]
    int[]?       std::optional<Shape>, std::optional<std::vector<int>>, and Sequence[int] | None
    ScalarType   Dtype                                    Dtype
    ScalarType?  std::optional<Dtype>                     Dtype | None

(C++ types may be written with `mlx::core::`, `const` and `&`; Python types
with `mx.` or `mlx.core.`.)

Returns: `array` (`-> Tensor`), `std::vector<array>` / `list[array]`
(`-> Tensor[]`), `std::pair<array, array>` / `std::tuple<array, ...>` /
`tuple[array, array]` (`-> (Tensor, Tensor)`).

Defaults, as the schema writes them: integers (`-1`), floats (`1e-5`, `0.5`,
an integer), `True`/`False`, double-quoted strings without escapes
(`"mean"`), integer lists (`[]`, `[0,1]`), `None` for an optional type, and
MLX dtype names for `ScalarType` (`float32`). Arrays take no default but
`None` (`Tensor?`). C++ writes them `-1`, `1e-5f`, `true`, `"mean"`,
`{0, 1}`, `std::nullopt` / `{}`, `float32` / `mlx::core::float32`; Python
`-1`, `1e-5`, `True`, `'mean'`, `[0, 1]` / `(0, 1)`, `None`, `mx.float32`.
Each conversion returns None when the text does not fit the type, and the
caller reports it where it was written.
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping
from struct import pack

from opgen.spec.types import ListType, OptionalType, Type, annotated_str

# MLX's dtypes (mlx/dtype.h), the values a ScalarType default may name.
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
        "float32",
        "float64",
        "bfloat16",
        "complex64",
    }
)

# The spec types whose arguments can have gradients.
ARRAY_TYPES = frozenset({"Tensor", "Tensor?", "Tensor[]"})
_SCALARS = ("int", "float", "bool")
# Every argument type with an MLX meaning, as the schema prints it.
MLX_TYPES = frozenset(
    {
        *ARRAY_TYPES,
        *_SCALARS,
        *(f"{t}?" for t in _SCALARS),
        "str",
        "int[]",
        "int[]?",
        "SymInt[]",
        "SymInt[]?",
        "ScalarType",
        "ScalarType?",
    }
)
MLX_TYPE_LIST = (
    "an MLX operator's types are Tensor, Tensor?, Tensor[], int, float, bool, str, int?, "
    "float?, bool?, int[], int[]?, ScalarType and ScalarType?"
)
# What to write instead of a type that has no MLX meaning, where there is an obvious choice.
_INSTEAD: Mapping[str, str] = {
    "Scalar": "float, or Tensor for an array",
    "Scalar?": "float?",
    "SymInt": "int",
    "SymInt?": "int?",
    "str?": "str with a default",
    "float[]": "Tensor",
    "Tensor?[]": "Tensor[]",
}

# C++ spellings, after `mlx::core::`, `const` and `&` are taken off.
_CPP_INTS = ("int", "int32_t", "int64_t", "std::int32_t", "std::int64_t")
_CPP_FLOATS = ("float", "double")
_CPP_SHAPES = ("Shape", "std::vector<int>", "std::vector<int32_t>", "std::vector<int64_t>")
_CPP_TYPES: Mapping[str, str] = {
    "array": "Tensor",
    "std::optional<array>": "Tensor?",
    "std::vector<array>": "Tensor[]",
    **{t: "int" for t in _CPP_INTS},
    **{f"std::optional<{t}>": "int?" for t in _CPP_INTS},
    **{t: "float" for t in _CPP_FLOATS},
    **{f"std::optional<{t}>": "float?" for t in _CPP_FLOATS},
    "bool": "bool",
    "std::optional<bool>": "bool?",
    "std::string": "str",
    **{t: "int[]" for t in _CPP_SHAPES},
    **{f"std::optional<{t}>": "int[]?" for t in _CPP_SHAPES},
    "Dtype": "ScalarType",
    "std::optional<Dtype>": "ScalarType?",
}
STREAM_TYPE = "StreamOrDevice"  # the stream parameter every MLX operation ends with
_CPP_TOKEN = re.compile(r"(?:::)?[A-Za-z_]\w*(?:::[A-Za-z_]\w*)*|[<>,&*]|\S")
_QUALIFIERS = frozenset({"const", "volatile"})

# Python spellings, after `mx.`, `mlx.core.`, `typing.` and spaces are taken off.
_PY_SEQUENCES = ("list[{}]", "List[{}]", "Sequence[{}]")
_PY_TYPES: Mapping[str, str] = {
    "array": "Tensor",
    **{s.format("array"): "Tensor[]" for s in _PY_SEQUENCES},
    **{t: t for t in (*_SCALARS, "str")},
    **{s.format("int"): "int[]" for s in _PY_SEQUENCES},
    "tuple[int,...]": "int[]",
    "Tuple[int,...]": "int[]",
    "Dtype": "ScalarType",
}
_PY_PREFIX = re.compile(r"\b(?:mlx\.core|mx|typing)\.")

_INT = re.compile(r"[-+]?\d+")
_FLOAT = re.compile(r"[-+]?(?:\d+\.?\d*|\.\d+)(?:[eE][-+]?\d+)?|-?inf|nan")
_STRING = re.compile(r'"(?:\\.|[^"\\])*"|\'(?:\\.|[^\'\\])*\'')
_INT_LIST = re.compile(r"\[(?:-?\d+(?:,-?\d+)*)?\]")


def type_problem(type: Type) -> str | None:
    """Why a schema type has no MLX meaning; None if it has one."""
    text = str(type)
    if text in MLX_TYPES:
        return None
    if isinstance(type, ListType) and type.size is not None:
        return f"a list type has no size in an MLX operator: write '{type.elem!s}[]'"
    elem = type.elem if isinstance(type, OptionalType) else None
    if isinstance(elem, ListType) and elem.size is not None:
        return f"a list type has no size in an MLX operator: write '{elem.elem!s}[]?'"
    instead = _INSTEAD.get(text)
    hint = f": write {instead}" if instead else ""
    return f"type '{text}' has no MLX meaning{hint} ({MLX_TYPE_LIST})"


def annotation_problem(type: Type, written: str) -> str:
    """The error for an alias annotation (`Tensor(a!)`), which MLX's immutable arrays have not."""
    return (
        f"'{written}': MLX arrays are immutable, so an operator neither mutates nor returns "
        f"aliases of its inputs; write '{annotated_str(type, None)}'"
    )


def cpp_type(text: str) -> tuple[str, str | None]:
    """The canonical spelling of a C++ parameter type, and its spec type (None: no meaning).

    A non-const reference is reported by the caller (`is_mutable_reference`).
    """
    canonical = canonical_cpp(text)
    return canonical, _CPP_TYPES.get(canonical)


def canonical_cpp(text: str) -> str:
    """`const mlx::core::array&` -> `array`: no qualifiers, references or namespaces."""
    tokens = [t for t in _CPP_TOKEN.findall(text) if t not in _QUALIFIERS and t != "&"]
    names = [t.removeprefix("::").removeprefix("mlx::core::") for t in tokens]
    return "".join(names)


def is_mutable_reference(text: str) -> bool:
    """`array&`: a reference without `const` (MLX operators never write their arguments)."""
    tokens = _CPP_TOKEN.findall(text)
    return "&" in tokens and "const" not in tokens


def cpp_returns(text: str) -> str | None:
    """The schema returns of a C++ return type (`-> Tensor`, `(Tensor, Tensor)`); None if
    it is none of MLX's."""
    canonical = canonical_cpp(text)
    if "&" in _CPP_TOKEN.findall(text) or "const" in text.split():
        return None
    if canonical == "array":
        return "Tensor"
    if canonical == "std::vector<array>":
        return "Tensor[]"
    for tuple_type in ("std::pair<", "std::tuple<"):
        if canonical.startswith(tuple_type) and canonical.endswith(">"):
            items = canonical[len(tuple_type) : -1].split(",")
            if len(items) >= 2 and all(item == "array" for item in items):
                if tuple_type == "std::pair<" and len(items) != 2:
                    return None
                return "(" + ", ".join("Tensor" for _ in items) + ")"
    return None


def python_type(text: str) -> str | None:
    """The spec type of a Python annotation; None if it has no MLX meaning."""
    canonical = _canonical_python(text)
    optional = False
    for pattern in (r"Optional\[(.*)\]", r"(.*)\|None", r"None\|(.*)"):
        m = re.fullmatch(pattern, canonical)
        if m is not None:
            canonical, optional = m.group(1), True
            break
    spec = _PY_TYPES.get(canonical)
    if spec is None or (optional and spec == "Tensor[]"):
        return None
    return f"{spec}?" if optional else spec


def python_returns(text: str) -> str | None:
    """The schema returns of a Python return annotation; None if it is none of MLX's."""
    canonical = _canonical_python(text)
    if canonical == "array":
        return "Tensor"
    if canonical in (s.format("array") for s in _PY_SEQUENCES):
        return "Tensor[]"
    m = re.fullmatch(r"(?:tuple|Tuple)\[(.*)\]", canonical)
    if m is not None:
        items = m.group(1).split(",")
        if len(items) >= 2 and all(item == "array" for item in items):
            return "(" + ", ".join("Tensor" for _ in items) + ")"
    return None


def _canonical_python(text: str) -> str:
    return _PY_PREFIX.sub("", "".join(text.split()))


def default_problem(type_text: str, default: str) -> str | None:
    """Why a schema default does not fit its type (`type_text` as the schema prints it)."""
    if _fits(type_text, default):
        return float_range_problem(type_text, default)
    if type_text == "Tensor?":
        return "an optional array's only default is None"
    if type_text in ARRAY_TYPES:
        hint = "; make it optional ('Tensor?') with default None" if type_text == "Tensor" else ""
        return f"an argument of type '{type_text}' takes no default{hint}"
    base = type_text.removesuffix("?")
    return f"default '{default}' does not fit type '{type_text}' ({_EXPECTED[_base(base)]})"


def float_range_problem(type_text: str, default: str, written: str = "") -> str | None:
    """Why a float default the schema writes (`1e39`) is no C++ float: it is out of range
    (the message shows it as `written`, if given)."""
    base = _base(type_text.removesuffix("?"))
    if base != "float" or default in ("None", *_SCHEMA_SPECIAL_FLOATS):
        return None
    value = float(default)
    try:
        pack("<f", value)  # what nanobind does with the double a Python call passes
    except OverflowError:
        value = math.inf
    if math.isfinite(value):
        return None
    return f"default '{written or default}' is out of the range of float"


_EXPECTED: Mapping[str, str] = {
    "int": "an integer",
    "float": "a number",
    "bool": "True or False",
    "str": 'a quoted string, "like this"',
    "int[]": "a list of integers, [] or [0,1]",
    "ScalarType": "an MLX dtype: " + ", ".join(sorted(DTYPE_NAMES)),
}


def _base(type_text: str) -> str:
    return "int[]" if type_text == "SymInt[]" else type_text


def _fits(type_text: str, default: str) -> bool:
    if type_text.endswith("?") and default == "None":
        return type_text != "Tensor[]?"
    base = _base(type_text.removesuffix("?"))
    if base == "int":
        return _INT.fullmatch(default) is not None
    if base == "float":
        return _FLOAT.fullmatch(default) is not None
    if base == "bool":
        return default in ("True", "False")
    if base == "str":
        return _STRING.fullmatch(default) is not None
    if base == "int[]":
        return _INT_LIST.fullmatch(default) is not None
    if base == "ScalarType":
        return default in DTYPE_NAMES
    return False


def _special_floats(infinity: tuple[str, ...], nan: tuple[str, ...]) -> dict[str, str]:
    spelled = {"inf": infinity, "nan": nan}
    table = {text: value for value, texts in spelled.items() for text in texts}
    return {**table, **{f"-{text}": "-inf" for text in infinity}}


_SCHEMA_SPECIAL_FLOATS = ("inf", "-inf", "nan")
# How C++ and Python write the floats that are not numbers; the schema writes inf and nan.
_CPP_SPECIAL_FLOATS = _special_floats(
    (
        "INFINITY",
        "std::numeric_limits<float>::infinity()",
        "std::numeric_limits<double>::infinity()",
    ),
    (
        "NAN",
        "std::numeric_limits<float>::quiet_NaN()",
        "std::numeric_limits<double>::quiet_NaN()",
    ),
)
_PYTHON_SPECIAL_FLOATS = _special_floats(
    ("math.inf", "float('inf')", 'float("inf")'), ("math.nan", "float('nan')", 'float("nan")')
)


def cpp_default(spec_type: str, text: str) -> str | None:
    """A C++ default argument as the schema writes it; None if it does not fit `spec_type`."""
    text = text.strip()
    if spec_type.endswith("?") and text in ("std::nullopt", "nullopt", "{}"):
        return "None"
    base = _base(spec_type.removesuffix("?"))
    if base == "float":
        if text in _SCHEMA_SPECIAL_FLOATS:  # not C++
            return None
        special = _CPP_SPECIAL_FLOATS.get("".join(text.split()))
        if special is not None:
            text = special
        elif "." in text or "e" in text:
            text = text.removesuffix("f").removesuffix("F")
    elif base == "bool":
        text = {"true": "True", "false": "False"}.get(text, "")
    elif base == "int[]":
        m = re.fullmatch(r"(?:[\w:<>]+\s*)?\{(.*)\}", text, re.DOTALL)
        text = "[" + "".join(m.group(1).split()) + "]" if m else ""
    elif base == "ScalarType":
        text = text.removeprefix("::").removeprefix("mlx::core::")
    return text if text and _fits(base, text) else None


def python_default(spec_type: str, text: str) -> str | None:
    """A Python default as the schema writes it; None if it does not fit `spec_type`."""
    text = text.strip()
    if spec_type.endswith("?") and text == "None":
        return "None"
    base = _base(spec_type.removesuffix("?"))
    if base == "float":
        if text in _SCHEMA_SPECIAL_FLOATS:  # not Python
            return None
        text = _PYTHON_SPECIAL_FLOATS.get("".join(text.split()), text)
    elif base == "str" and re.fullmatch(r"'[^'\\\"]*'", text):
        text = f'"{text[1:-1]}"'
    elif base == "int[]":
        m = re.fullmatch(r"[\[(](.*)[\])]", text, re.DOTALL)
        items = "".join(m.group(1).split()).rstrip(",") if m else None
        text = "" if items is None else f"[{items}]"
    elif base == "ScalarType":
        text = _PY_PREFIX.sub("", text)
    return text if text and _fits(base, text) else None
