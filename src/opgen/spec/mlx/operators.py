"""From what an operator's entry says, in either dialect, to its `MlxFunction`: the shared
keys and checks.

Each dialect's entry reader (`spec_language`, `mlx_dialect`) turns its way of
writing the signature into a `FunctionSchema` and the location of each
argument; the keys both dialects share (`python_name`, `doc`, `grad`,
`dispatch`, `shape`) are read here (`read_shared_keys`), and so are the
checks that need only the operator (`operator_problems`): argument names a
binding or a formula cannot use, a positional argument without a default
after one with a default (Python would reject the binding), `grad:` keys
that are not array inputs, a `dispatch:` without `cpu:`, a `shape:` without
`dispatch:`, a primitive that has no array input to take its output shape
from. The formulas themselves are checked by `formula_problems`, which needs
the names of the whole library.
"""

from __future__ import annotations

import keyword
from collections.abc import Iterator, Mapping
from typing import TYPE_CHECKING

from opgen.diagnostics import Diagnostic, Location, SpecError, did_you_mean
from opgen.frozen import frozen, replace
from opgen.spec.mlx.formulas import MULTI_OUTPUT_NAMES, Scope, check_formula
from opgen.spec.mlx.model import BoundAs, GradFormula, MlxFunction, MlxOperator
from opgen.spec.mlx.type_mapping import ARRAY_TYPES
from opgen.spec.schema import FunctionSchema
from opgen.spec.syntax import IDENTIFIER
from opgen.spec.yaml.load import YamlMap
from opgen.spec.yaml.located import WrittenText, written

if TYPE_CHECKING:  # read only where a spec has formulas
    from opgen.spec.derivatives.entry import Formula

SHARED_KEYS = ("python_name", "doc", "grad", "dispatch", "shape")
DISPATCH_KEYS = ("cpu", "gpu")
# The names a gradient formula has besides the arguments.
FORMULA_NAMES = ("grad", "cotangent", "result", "output", "s")
# Names the generated operators, lambdas and Primitive methods declare.
_GENERATED_CODE_NAMES = (
    "primals",
    "cotangents",
    "argnums",
    "vjps",
    "traced",
    "forward",
    "backward",
)
# Argument names that would shadow a formula's names, the stream keyword or the generated
# code's own names.
RESERVED_NAMES = frozenset(
    {*FORMULA_NAMES, *MULTI_OUTPUT_NAMES, "stream", "inputs", *_GENERATED_CODE_NAMES}
)
# C++20's keywords and alternative tokens: no function or argument can be named so.
_CPP_KEYWORD_TEXT = """
alignas alignof and and_eq asm auto bitand bitor bool break case catch char char8_t char16_t
char32_t class compl concept const consteval constexpr constinit const_cast continue co_await
co_return co_yield decltype default delete do double dynamic_cast else enum explicit export
extern false float for friend goto if inline int long mutable namespace new noexcept not not_eq
nullptr operator or or_eq private protected public register reinterpret_cast requires return
short signed sizeof static static_assert static_cast struct switch template this thread_local
throw true try typedef typeid typename union unsigned using virtual void volatile wchar_t while
xor xor_eq
"""
CPP_KEYWORDS = frozenset(_CPP_KEYWORD_TEXT.split())
# Names the generated code derives from an array argument's name (`x`: `has_x`, ...).
_DERIVED_NAMES = ("has_{}", "{}_size", "{}_grads")
# Names an operator's stub imports, which its Python name would hide.
STUB_NAMES = frozenset({"array", "Dtype", "Sequence", "StreamOrDevice"})


@frozen
class SharedKeys:
    """The keys both dialects write alike."""

    python_name: str | None
    python_name_location: Location | None
    doc: str
    grads: tuple[Formula, ...]
    grad_location: Location | None
    dispatch: Mapping[str, str]
    dispatch_location: Location | None
    shape: WrittenText | None


@frozen
class ReadOperator:
    """One entry, read in its dialect, before the checks that need the whole library."""

    name: str
    name_location: Location
    python_name: str
    python_name_location: Location
    func: FunctionSchema
    argument_locations: Mapping[str, Location]  # each argument's declaration
    keys: SharedKeys
    grads: tuple[Formula, ...]  # inline, or from derivatives.yaml
    location: Location  # the entry
    method: bool = False  # a method of `array` too (`variants:`)
    namespace: str = ""  # the library's, once the whole spec is read


def name_problem(name: str) -> str | None:
    """Why `name` cannot be a C++ function (or argument) name; None if it can."""
    if not IDENTIFIER.match(name):
        return f"'{name}' is not a C++ name"
    if name in CPP_KEYWORDS:
        return f"'{name}' is a C++ keyword"
    return None


def python_name_problem(name: object) -> str | None:
    if not isinstance(name, str) or not IDENTIFIER.match(name):
        return f"'{name}' is not a Python name"
    if keyword.iskeyword(name):
        return f"'{name}' is a Python keyword"
    return None


def read_shared_keys(entry: YamlMap) -> SharedKeys:
    errors: list[Diagnostic] = []
    python_name = entry.get("python_name")
    if python_name is not None:
        problem = python_name_problem(python_name)
        if problem is not None:
            errors.append(Diagnostic(entry.value_location("python_name"), problem))
    doc = entry.get("doc", "")
    if not isinstance(doc, str):
        errors.append(Diagnostic(entry.value_location("doc"), "'doc:' must be a string"))
    grads: tuple[Formula, ...] = ()
    grad = entry.get("grad")
    if "grad" in entry and not isinstance(grad, YamlMap):
        errors.append(
            Diagnostic(
                entry.value_location("grad"),
                "'grad:' maps array inputs to their gradient formulas ('x: multiply(grad, y)')",
            )
        )
    elif isinstance(grad, YamlMap):
        try:
            from opgen.spec.derivatives.reader import mlx_formulas  # only when there are any

            grads = mlx_formulas(grad)
        except SpecError as e:
            errors.extend(e.diagnostics)
    dispatch = _dispatch(entry, errors)
    shape = entry.get("shape")
    if shape is not None and not isinstance(shape, str):
        errors.append(
            Diagnostic(entry.value_location("shape"), "'shape:' must be a C++ expression")
        )
    if errors:
        raise SpecError.of(errors)
    return SharedKeys(
        python_name=python_name if isinstance(python_name, str) else None,
        python_name_location=entry.value_location("python_name") if python_name else None,
        doc=doc.strip() if isinstance(doc, str) else "",
        grads=grads,
        grad_location=entry.key_location("grad") if "grad" in entry else None,
        dispatch=dispatch,
        dispatch_location=entry.key_location("dispatch") if "dispatch" in entry else None,
        shape=written(entry, "shape") if isinstance(shape, str) else None,
    )


def _dispatch(entry: YamlMap, errors: list[Diagnostic]) -> dict[str, str]:
    if "dispatch" not in entry:
        return {}
    table = entry["dispatch"]
    if not isinstance(table, YamlMap) or not table:
        errors.append(
            Diagnostic(
                entry.value_location("dispatch"),
                "'dispatch:' names the device kernels: {cpu: <kernel>, gpu: <kernel>}",
            )
        )
        return {}
    kernels: dict[str, str] = {}
    for key, kernel in table.items():
        if key not in DISPATCH_KEYS:
            hint = did_you_mean(str(key), DISPATCH_KEYS)
            errors.append(
                Diagnostic(
                    table.key_location(key),
                    f"unknown dispatch key '{key}': MLX kernels are for 'cpu' and 'gpu'{hint}",
                )
            )
        elif not isinstance(kernel, str) or not all(
            IDENTIFIER.match(part) for part in kernel.split("::")
        ):
            errors.append(
                Diagnostic(
                    table.value_location(key),
                    f"the '{key}' kernel must be a C++ function name ('add_{key}' or "
                    f"'ns::add_{key}')",
                )
            )
        else:
            kernels[str(key)] = kernel
    if not errors and "cpu" not in kernels:
        errors.append(
            Diagnostic(
                entry.value_location("dispatch"),
                "a primitive needs a 'cpu:' kernel (MLX evaluates on the CPU whenever no GPU "
                "is there)",
            )
        )
    return kernels


def operator_problems(op: ReadOperator) -> Iterator[Diagnostic]:
    """What is wrong with the operator alone (formulas aside)."""
    func, keys = op.func, op.keys
    positional_default: str | None = None
    if op.python_name in STUB_NAMES:
        yield Diagnostic(
            op.python_name_location,
            f"'{op.python_name}' would hide a name the operators' stub imports "
            f"({', '.join(sorted(STUB_NAMES))})",
        )
    arrays = [a.name for a in func.arguments.flat_all if str(a.type) in ARRAY_TYPES]
    derived = {pattern.format(name): name for name in arrays for pattern in _DERIVED_NAMES}
    for argument in func.arguments.flat_all:
        at = op.argument_locations[argument.name]
        problem = _argument_name_problem(argument.name)
        if problem is None and argument.name in derived:
            problem = (
                f"an argument cannot be named '{argument.name}': the generated code gives "
                f"that name to what it derives from '{derived[argument.name]}'"
            )
        if problem is not None:
            yield Diagnostic(at, problem)
        if argument in func.arguments.flat_positional:
            if argument.default is not None:
                positional_default = argument.name
            elif positional_default is not None:
                yield Diagnostic(
                    at,
                    f"'{argument.name}' has no default and follows '{positional_default}', "
                    "which has one: Python requires defaults of positional arguments to come "
                    "last (make it keyword-only, or give it a default)",
                )
    yield from grad_problems(op)
    if keys.shape is not None and not keys.dispatch:
        yield Diagnostic(
            keys.shape.location,
            "'shape:' gives a primitive's output shapes, and this operator has no 'dispatch:' "
            "(a composite's shapes are those its C++ function computes)",
        )
    if keys.dispatch_location is not None:
        yield from _primitive_problems(op, keys.dispatch_location)


def _primitive_problems(op: ReadOperator, at: Location) -> Iterator[Diagnostic]:
    func = op.func
    if not any(str(a.type) in ARRAY_TYPES for a in func.arguments.flat_all):
        yield Diagnostic(
            at,
            f"'{op.name}' is a primitive without array inputs: a primitive's outputs take the "
            "dtype of its first array input",
        )
    if len(func.returns) == 1 and str(func.returns[0].type) == "Tensor[]" and not op.keys.shape:
        yield Diagnostic(
            at,
            f"'{op.name}' is a primitive returning 'Tensor[]': give the number and shapes of "
            "its outputs with 'shape:'",
        )


def _argument_name_problem(name: str) -> str | None:
    if name in RESERVED_NAMES:
        return (
            f"an argument cannot be named '{name}': formulas and bindings use that name "
            f"({', '.join(sorted(RESERVED_NAMES))})"
        )
    if keyword.iskeyword(name):
        return f"'{name}' is a Python keyword: Python callers could not pass it by name"
    if name in CPP_KEYWORDS:
        return f"'{name}' is a C++ keyword"
    return None


def grad_problems(op: ReadOperator) -> Iterator[Diagnostic]:
    types = {a.name: str(a.type) for a in op.func.arguments.flat_all}
    for formula in op.grads:
        kind = types.get(formula.key)
        if kind is None:
            hint = did_you_mean(formula.key, types)
            yield Diagnostic(
                formula.key_location, f"'{op.name}' has no argument '{formula.key}'{hint}"
            )
        elif kind not in ARRAY_TYPES:
            yield Diagnostic(
                formula.key_location,
                f"'{formula.key}' is not an array ({kind}): only array inputs have gradients",
            )


def formula_problems(
    op: ReadOperator, mlx: frozenset[str], namespace: str, operators: frozenset[str]
) -> Iterator[Diagnostic]:
    """Every unknown name and unbalanced bracket in the operator's formulas and shape."""
    arguments = {a.name for a in op.func.arguments.flat_all}
    returns = op.func.returns
    several = len(returns) > 1 or str(returns[0].type) == "Tensor[]"
    outputs = None if not several or len(returns) == 1 else len(returns)
    names = {*arguments, *FORMULA_NAMES, *(MULTI_OUTPUT_NAMES if several else ())}
    scope = Scope(frozenset(names), mlx, namespace, operators, outputs)
    for formula in op.grads:
        what = f"the gradient formula of '{formula.key}'"
        for p in check_formula(formula.text, scope, what):
            yield Diagnostic(formula.span(p.offset, p.length), p.message)
    shape = op.keys.shape
    if shape is not None:
        shape_scope = Scope(frozenset({*arguments, "inputs"}), mlx, namespace, operators, None)
        for p in check_formula(shape.text, shape_scope, f"the shape of '{op.name}'"):
            yield Diagnostic(shape.at(p.offset, p.length), p.message)


def build_functions(op: ReadOperator) -> list[MlxFunction]:
    """The model of a checked operator: its function, and its method if `variants:` says
    so; its formulas in argument order."""
    order = {a.name: i for i, a in enumerate(op.func.arguments.flat_all)}
    grads = sorted(op.grads, key=lambda f: order[f.key])
    operator = MlxOperator(
        name=op.name,
        func=op.func,
        grads=tuple(GradFormula(f.key, f.text, f.location) for f in grads),
        dispatch=dict(op.keys.dispatch),
        shape=None if op.keys.shape is None else op.keys.shape.text,
        location=op.location,
    )
    function = MlxFunction(op.python_name, (), op.keys.doc, op.location, operator=operator)
    return [function, replace(function, bound_as=BoundAs.METHOD)] if op.method else [function]
