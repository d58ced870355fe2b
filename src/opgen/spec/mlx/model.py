"""The model of an MLX extension spec, whichever dialect it was written in.

Every entry is an `MlxFunction`: what Python sees (a function of the module or
of a submodule, a method or property of `array`) and what it runs, either an
operator the extension defines (`MlxOperator`) or existing C++ functions (its
`overloads`, Python signatures bound as `opgen.api.mlx_python` says).

An operator is a C++ function in the library's namespace. Its arguments and
returns are a `FunctionSchema` of the spec model; the MLX meaning of each type
is `opgen.api.nanobind`'s:

- `Tensor`: `const mlx::core::array&` (Python `array`); `Tensor?`:
  `const std::optional<mlx::core::array>&` (`array | None`); `Tensor[]`:
  `const std::vector<mlx::core::array>&` (`list[array]`);
- `int`, `float`, `bool`, `str`: `int`, `float`, `bool`, `const std::string&`;
  `int?`, `float?`, `bool?`: `std::optional<...>` (`... | None`);
- `int[]` (or `SymInt[]`): `const std::vector<int>&`, for shapes and axes alike
  (Python `Sequence[int]`; MLX's own `Shape` is a small-vector type that
  converts from it); `int[]?`: `const std::optional<std::vector<int>>&`;
- `ScalarType`, `ScalarType?`: `mlx::core::Dtype`, `std::optional<mlx::core::Dtype>`.

Any other type (`Scalar`, `Generator`, `Layout`, `Device`, `MemoryFormat`,
`Dimname`, ...) has no MLX meaning and is a located error when the spec is
read. Returns are `Tensor` (one `array`), `Tensor[]` (`std::vector<array>`)
or several `Tensor`s (`std::tuple<array, ...>` in C++, a tuple in Python).
Every operator also takes MLX's keyword-only `stream` argument
(`mlx::core::StreamOrDevice s = {}`), which the schema does not list.

How an operator is computed:
- *composite* (no `dispatch:`): the library author writes the C++ function
  `<name>_impl` with the operator's C++ signature, built from `mlx::core`
  operations; opgen generates `<name>`, which calls it and, when the operator
  has gradient formulas, attaches them with `mlx::core::custom_vjp` (an array
  input without a formula then gets MLX's own gradient of `<name>_impl`);
- *primitive* (`dispatch: {cpu: kernel, gpu: kernel}`): opgen generates an
  `mlx::core::Primitive` subclass whose `eval_cpu`/`eval_gpu` call the named
  kernels (`void kernel(const std::vector<array>& inputs,
  std::vector<array>& outputs, <the non-array arguments>)`, a GPU kernel with
  a trailing `const mlx::core::Stream& stream`; the inputs are the array
  arguments in order, contiguous, one flat list), and whose `vjp` applies the
  formulas (a gradient asked of an input without one is an error naming it);
  the output shapes come from `shape:` (a C++ expression giving a `Shape`, or
  one per output) or are those of the first array input, the dtype that of
  the first array input. Without a `gpu:` kernel, `eval_gpu` raises an error
  naming the operator.

A gradient formula is a C++ expression over `mlx::core` operations giving the
gradient of one array input. In scope: `grad` (alias `cotangent`; `grads[i]`
for the i-th output of a multi-output operator), the arguments by name,
`result` (alias `output`; `results[i]`), and `s` (the stream). A formula that
names anything else is a located error when the spec is read.
"""

from __future__ import annotations

import enum
from collections.abc import Mapping

from opgen.cached import cached
from opgen.counts import counted
from opgen.diagnostics import Location
from opgen.frozen import frozen
from opgen.spec.mlx.python_types import PyDefault, PyType
from opgen.spec.schema import FunctionSchema


@frozen
class GradFormula:
    """The gradient of one array input, as a C++ expression."""

    input: str  # the argument's name
    formula: str  # the C++ expression of the argument's gradient
    location: Location  # the formula's text


@frozen
class MlxOperator:
    """A C++ operator the extension defines, bound to Python by the `MlxFunction` that
    names it."""

    name: str  # the C++ function, in the library's namespace
    func: FunctionSchema  # arguments and returns, in the spec language
    grads: tuple[GradFormula, ...]  # in argument order; empty: not differentiable
    dispatch: Mapping[str, str]  # "cpu"/"gpu" to kernel names; empty: composite
    shape: str | None  # the output shapes of a primitive, as a C++ expression
    location: Location  # the entry

    @property
    def is_primitive(self) -> bool:
        return bool(self.dispatch)


class ParameterKind(enum.Enum):
    POSITIONAL_ONLY = "positional-only"  # before `/`
    POSITIONAL = "positional or keyword"
    KEYWORD_ONLY = "keyword-only"  # after `*` or `*args`
    VARIADIC = "variadic"  # `*args`


@frozen
class PyParameter:
    """A parameter of a bound function's Python signature (the stream is one, of its own type)."""

    name: str  # as callers pass it by keyword
    type: PyType  # its type: one or several alternatives, tried in order
    default: PyDefault | None  # its default; None: required
    kind: ParameterKind  # how it may be passed: by position, by keyword, or several (`*args`)
    location: Location  # its name


@frozen
class CallArgument:
    """An argument of a `call:`: a parameter, left out of the call when it is None if `omit`."""

    name: str  # the parameter passed
    omit_if_none: bool  # written `name?`: not passed when it is None


@frozen
class BoundOverload:
    """One Python signature of a bound function and the C++ it runs.

    Either `function` and `arguments` (a call of an existing C++ function, the
    stream appended; a union parameter branches, one call per alternative) or
    `code` (a C++ expression, or statements with `return`, over the parameters
    and the stream `s`).
    """

    parameters: tuple[PyParameter, ...]  # as written, the stream included
    returns: str  # the return annotation, as the stub writes it
    function: str | None  # the C++ function, qualified as written
    arguments: tuple[CallArgument, ...]  # what `function` is called with, in order
    code: str | None  # the C++ of a `code:`, instead of a call
    code_location: Location | None  # where `code:` is written
    promote: tuple[str, ...]  # parameters converted together, MLX's weak scalars
    location: Location  # the signature
    function_location: Location | None = None  # where `function` is written, if it is


class BoundAs(enum.Enum):
    """What a bound function is in Python."""

    FUNCTION = "function"  # of the module, or of a submodule
    METHOD = "method"  # of `array`: its first parameter is the array (`self`)
    PROPERTY = "property"  # of `array`: a method of `self` alone, read as an attribute
    # Of `a.at[index]`: its first parameter is the array (`self`), and its code has the
    # index as `index` (an `Index`).
    AT = "update"


@frozen
class MlxFunction:
    """An entry of the spec: what Python sees, a function of the module or of a submodule,
    or a method or property of `array`, and the C++ it runs: an operator the extension
    defines (`operator`), or existing C++ functions (`overloads`, tried in order), which
    MLX differentiates."""

    python_name: str  # the name in the Python module (in `submodule`, if any), or on `array`
    overloads: tuple[BoundOverload, ...]  # tried in this order; () for an operator's
    doc: str  # the Python docstring ("" if none)
    location: Location  # the entry
    submodule: str = ""  # the submodule it is in (`linalg`); "": the module itself
    bound_as: BoundAs = BoundAs.FUNCTION
    # A method whose result replaces the array's own contents (`__iadd__`); it returns the
    # array itself.
    inplace: bool = False
    # A method's words for an operation in MLX's error when an operand is no number and no
    # array ("Cannot perform addition on an mlx.core.array and str"); "": no check.
    operation: str = ""
    # What a method returns instead of raising that error (`__eq__`: False); None: it raises.
    incomparable: bool | None = None
    # The operator the extension defines and binds as it is (its arguments the schema's,
    # the first one the array of a method); None: the function binds `overloads`.
    operator: MlxOperator | None = None

    @property
    def qualified_name(self) -> str:
        """`norm`, `linalg.norm` in a submodule, or `array.sum` on `array`."""
        if self.bound_as is BoundAs.AT:
            return f"array.at.{self.python_name}"
        if self.bound_as is not BoundAs.FUNCTION:
            return f"array.{self.python_name}"
        return f"{self.submodule}.{self.python_name}" if self.submodule else self.python_name


@frozen
class MlxLibrary:
    namespace: str  # the C++ namespace of the operators (`mlxlib`)
    module: str  # the Python extension module's name (default: the namespace)
    functions: tuple[MlxFunction, ...]  # the operators' functions first, in spec order
    path: str  # the spec file

    @cached
    def operators(self) -> tuple[MlxOperator, ...]:
        """The operators the library defines, in spec order."""
        return tuple(
            f.operator
            for f in self.functions
            if f.operator is not None and f.bound_as is BoundAs.FUNCTION
        )

    @cached
    def bound(self) -> tuple[MlxFunction, ...]:
        """The functions, methods and properties that bind existing C++."""
        return tuple(f for f in self.functions if f.operator is None)


def bound_counts(library: MlxLibrary) -> str:
    """What a summary says of the library's bound functions and methods: `, 258 bound
    functions, 100 methods of array, 6 of array.at` ("" for none)."""
    kinds = [f.bound_as for f in library.functions]
    on_array = sum(kind not in (BoundAs.FUNCTION, BoundAs.AT) for kind in kinds)
    functions = sum(f.bound_as is BoundAs.FUNCTION for f in library.bound)
    text = f", {counted(functions, 'bound function')}" if functions else ""
    text += f", {counted(on_array, 'method')} of array" if on_array else ""
    return text + (f", {kinds.count(BoundAs.AT)} of array.at" if BoundAs.AT in kinds else "")
