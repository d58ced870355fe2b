"""The runtime of an ATen-on-MLX package: PyTorch's values as MLX's, operators called by
name, and exported programs loaded and run.

    program = load(exported_program)     # torch.export's ExportedProgram
    outputs = program(*inputs)           # torch tensors or mx.arrays in; a tuple of mx.arrays
    grads = mx.grad(loss)(program.parameters)  # loss(p) calls program.run(p, ...)

`load` refuses a program it cannot run, naming every operator the package does not lower
at once; it converts the program's parameters, buffers and constants to MLX once and
writes the graph as one Python function (`MlxProgram.source`) that checks the inputs
against the shapes and dtypes the program was traced with (symbolic sizes within their
ranges) and then calls the package's functions in the graph's order, so that running it
costs what the same calls written by hand would. torch is imported only by `load`, by
`call`, and to convert torch tensors.
"""

from __future__ import annotations

import math
import operator
from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from typing import Any

import mlx.core as mx

from ._operators import OPERATORS  # type: ignore[import-not-found]  # generated beside it

# PyTorch's dtypes by name, as MLX's (those MLX has).
DTYPES: Mapping[str, mx.Dtype] = {
    "bool": mx.bool_,
    "uint8": mx.uint8,
    "uint16": mx.uint16,
    "uint32": mx.uint32,
    "uint64": mx.uint64,
    "int8": mx.int8,
    "int16": mx.int16,
    "int32": mx.int32,
    "int64": mx.int64,
    "float16": mx.float16,
    "bfloat16": mx.bfloat16,
    "float32": mx.float32,
    "float64": mx.float64,
    "complex64": mx.complex64,
}

# Functions on sizes (SymInts) that exported graphs call besides ATen operators.
SIZE_FUNCTIONS: Mapping[str, Callable[..., Any]] = {
    "_operator.add": operator.add,
    "_operator.sub": operator.sub,
    "_operator.mul": operator.mul,
    "_operator.floordiv": operator.floordiv,
    "_operator.truediv": operator.truediv,
    "_operator.mod": operator.mod,
    "_operator.pow": operator.pow,
    "_operator.neg": operator.neg,
    "_operator.eq": operator.eq,
    "_operator.ne": operator.ne,
    "_operator.lt": operator.lt,
    "_operator.le": operator.le,
    "_operator.gt": operator.gt,
    "_operator.ge": operator.ge,
    "_operator.and_": operator.and_,
    "_operator.or_": operator.or_,
    "_operator.not_": operator.not_,
    "math.ceil": math.ceil,
    "math.floor": math.floor,
    "math.sqrt": math.sqrt,
    "torch.sym_max": max,
    "torch.sym_min": min,
    "torch.sym_float": float,
    "torch.sym_int": int,
    "torch.sym_not": operator.not_,
    "torch.sym_sqrt": math.sqrt,
    "torch._sym_sqrt": math.sqrt,
    "torch.sym_ite": lambda condition, a, b: a if condition else b,
}


def operator_key(target: object) -> str:
    """`aten::add.Tensor` (`aten::abs` for a default overload) of a PyTorch operator: an
    OpOverload, or its name as `aten.add.Tensor` or `aten::add.Tensor`."""
    schema = getattr(target, "_schema", None)
    if schema is not None:
        overload = schema.overload_name
        return f"{schema.name}.{overload}" if overload else str(schema.name)
    text = str(target)
    if "::" not in text:
        namespace, _, rest = text.partition(".")
        text = f"{namespace}::{rest}"
    return text.removesuffix(".default")


def dtype(value: Any) -> mx.Dtype:
    """The MLX dtype of a PyTorch dtype (or of its name)."""
    name = str(value).removeprefix("torch.")
    found = DTYPES.get(name)
    if found is None:
        raise TypeError(f"MLX has no dtype for torch.{name}")
    return found


def to_mlx(value: Any) -> Any:
    """A PyTorch value as the package's functions take it: a tensor as an mx.array, a
    dtype as an mx.Dtype, a layout, device or memory format as its name, a symbolic size
    as its number; lists and tuples item by item; anything else as it is."""
    import torch

    if isinstance(value, torch.Tensor):
        return tensor_to_mlx(value)
    if isinstance(value, torch.dtype):
        return dtype(value)
    if isinstance(value, (torch.layout, torch.memory_format)):
        return str(value).removeprefix("torch.")
    if isinstance(value, torch.device):
        return str(value)
    if isinstance(value, torch.SymInt):
        return int(value)
    if isinstance(value, torch.SymFloat):
        return float(value)
    if isinstance(value, torch.SymBool):
        return bool(value)
    if isinstance(value, (list, tuple)):
        return type(value)(to_mlx(item) for item in value)
    return value


def tensor_to_mlx(tensor: Any) -> mx.array:
    """A PyTorch tensor's values as an mx.array of the same dtype (copied)."""
    import torch

    t = tensor.detach().resolve_conj().resolve_neg()
    if t.device.type != "cpu":
        t = t.cpu()
    if t.dtype == torch.bfloat16:
        return mx.array(t.view(torch.int16).numpy()).view(mx.bfloat16)
    # The dtype given: MLX makes float32 of float64 values otherwise.
    return mx.array(t.numpy(), dtype=dtype(t.dtype))


def call(name: Any, *args: Any, **kwargs: Any) -> Any:
    """The operator `name` (`"aten::add.Tensor"`, `"aten.add.Tensor"`, or the OpOverload)
    on PyTorch's values, converted as `to_mlx` converts them."""
    key = operator_key(name)
    function = OPERATORS.get(key)
    if function is None:
        raise NotImplementedError(f"{key} is not lowered to MLX by this package")
    return function(*to_mlx(args), **{k: to_mlx(v) for k, v in kwargs.items()})


def _target_function(target: object) -> Callable[..., Any] | None:
    """What runs a graph node's target: getitem, a function of OPERATORS or of
    SIZE_FUNCTIONS; None for a target the package cannot run."""
    if target is operator.getitem:
        return operator.getitem
    if hasattr(target, "_schema"):
        function: Callable[..., Any] | None = OPERATORS.get(operator_key(target))
        return function
    return SIZE_FUNCTIONS.get(_target_name(target))


def _target_name(target: object) -> str:
    if hasattr(target, "_schema"):
        return operator_key(target)
    name = getattr(target, "__name__", None)
    return f"{getattr(target, '__module__', '')}.{name}" if name else str(target)


def missing_operators(program: Any) -> dict[str, int]:
    """The operators a program calls that the package cannot run, with how often."""
    missing: dict[str, int] = {}
    for node in program.graph.nodes:
        if node.op == "call_function" and _target_function(node.target) is None:
            name = _target_name(node.target)
            missing[name] = missing.get(name, 0) + 1
    return missing


def unsupported(program: Any) -> list[str]:
    """What keeps a program from running on MLX, besides operators: graph nodes other
    than calls of functions, and inputs or outputs MLX cannot honour (a mutated user
    input, for one: an mx.array is never written in place)."""
    from torch.export.graph_signature import InputKind, OutputKind

    inputs = (
        InputKind.USER_INPUT,
        InputKind.PARAMETER,
        InputKind.BUFFER,
        InputKind.CONSTANT_TENSOR,
    )
    outputs = (OutputKind.USER_OUTPUT, OutputKind.LOSS_OUTPUT, OutputKind.BUFFER_MUTATION)
    signature = program.graph_signature
    found = Counter(
        [
            *(
                f"graph nodes of kind {node.op}"
                for node in program.graph.nodes
                if node.op not in ("placeholder", "call_function", "output")
            ),
            *(
                f"inputs of kind {s.kind.name}"
                for s in signature.input_specs
                if s.kind not in inputs
            ),
            *(
                f"outputs of kind {s.kind.name}"
                for s in signature.output_specs
                if s.kind not in outputs
            ),
        ]
    )
    return [f"{what} ({count})" for what, count in found.items()]


def load(program: Any, *, decompose: bool = True) -> MlxProgram:
    """An ExportedProgram, ready to run on MLX. A program with operators the package does
    not lower is decomposed to the Core ATen opset first (`decompose`), then refused with
    every operator it still lacks, and anything else MLX cannot honour, named at once."""
    missing = missing_operators(program)
    if missing and decompose:
        program = program.run_decompositions()
        missing = missing_operators(program)
    problems = unsupported(program)
    if missing or problems:
        reasons = []
        if missing:
            listed = ", ".join(f"{name} ({count})" for name, count in sorted(missing.items()))
            reasons.append(
                f"it calls {len(missing)} operator{'s' if len(missing) > 1 else ''} that this "
                f"package does not lower to MLX: "
                f"{listed}"
            )
        if problems:
            reasons.append(f"MLX cannot honour its {', '.join(problems)}")
        raise NotImplementedError(f"the program cannot run on MLX: {'; and '.join(reasons)}")
    return MlxProgram(program)


class MlxProgram:
    """An exported program on MLX: its state converted once, its graph one function.

    `parameters`, `buffers` and `constants` hold the program's state as mx.arrays by their
    names in the program (tied weights once, under the first name, as named_parameters()
    holds them); `user_inputs` names the inputs it takes; `source` is the function the
    graph became."""

    def __init__(self, program: Any) -> None:
        from torch.export.graph_signature import ConstantArgument, InputKind, OutputKind

        signature = program.graph_signature
        state = program.state_dict
        constants = program.constants
        self.parameters: dict[str, mx.array] = {}
        self.buffers: dict[str, mx.array] = {}
        self.constants: dict[str, mx.array] = {}
        self._fixed: dict[str, Any] = {}  # user inputs the program was traced with as constants
        placeholders = [n for n in program.graph.nodes if n.op == "placeholder"]
        inputs: list[tuple[str, Any]] = []  # (where each placeholder's value comes from, its key)
        held: dict[str, dict[str, mx.array]] = {
            "parameters": self.parameters,
            "buffers": self.buffers,
            "constants": self.constants,
        }
        state_kinds = {
            InputKind.PARAMETER: "parameters",
            InputKind.BUFFER: "buffers",
            InputKind.CONSTANT_TENSOR: "constants",
        }
        first: dict[tuple[Any, ...], tuple[str, str]] = {}  # a tensor's memory -> its input
        for node, spec in zip(placeholders, signature.input_specs, strict=True):
            where = state_kinds.get(spec.kind)
            if where is not None:
                tensor = state[spec.target] if spec.target in state else constants[spec.target]
                # Tied weights (an embedding and the output projection) are one tensor
                # under two names: held once, under the first, as named_parameters() does,
                # so that a gradient sums over both uses.
                memory = (where, *_memory(tensor))
                if memory in first:
                    inputs.append(first[memory])
                    continue
                if memory[1]:
                    first[memory] = (where, spec.target)
                held[where][spec.target] = tensor_to_mlx(tensor)
                inputs.append((where, spec.target))
            elif isinstance(spec.arg, ConstantArgument):
                self._fixed[node.name] = spec.arg.value  # traced as a constant
                inputs.append(("fixed", spec.arg.value))
            else:
                inputs.append(("user", node.name))
        self.user_inputs: tuple[str, ...] = tuple(k for where, k in inputs if where == "user")
        # The user inputs, constants too, in the order of the flattened (args, kwargs) the
        # exported module took: a call written as the module was called is read through it.
        self._in_spec = program.call_spec.in_spec
        self._all_user = [
            node.name
            for node, (where, _) in zip(placeholders, inputs, strict=True)
            if where in ("user", "fixed")
        ]
        outputs = [
            "user" if spec.kind != OutputKind.BUFFER_MUTATION else "buffer"
            for spec in signature.output_specs
        ]
        self._mutated = tuple(
            spec.target
            for spec in signature.output_specs
            if spec.kind == OutputKind.BUFFER_MUTATION
        )
        self.source, self._function = _compile_graph(
            program.graph, placeholders, inputs, outputs, program.range_constraints
        )

    def run(self, parameters: Mapping[str, mx.array], *args: Any, **kwargs: Any) -> tuple[Any, ...]:
        """The program's user outputs for its inputs, with `parameters` (all of the
        program's, or some, the rest its own) for its parameters: a pure function, which
        mx.grad and mx.value_and_grad differentiate."""
        if len(parameters) != len(self.parameters):
            parameters = {**self.parameters, **parameters}
        values = self._user_values(args, kwargs)
        outputs: tuple[Any, ...] = self._function(
            parameters, self.buffers, self.constants, *values
        )[0]
        return outputs

    def __call__(self, *args: Any, **kwargs: Any) -> tuple[Any, ...]:
        """The user outputs, in the program's order, for the inputs (the program's user
        inputs in order, or the arguments the exported module took); buffers the program
        mutates (BatchNorm's running statistics in training) are updated."""
        values = self._user_values(args, kwargs)
        outputs: tuple[Any, ...]
        outputs, mutated = self._function(self.parameters, self.buffers, self.constants, *values)
        if mutated:
            self.buffers.update(zip(self._mutated, mutated, strict=True))
        return outputs

    def _user_values(self, args: Sequence[Any], kwargs: Mapping[str, Any]) -> Sequence[Any]:
        if not kwargs and len(args) == len(self.user_inputs):
            return args
        from torch.utils._pytree import tree_flatten

        expected = self._in_spec.child(1).context
        if set(kwargs) == set(expected):
            kwargs = {name: kwargs[name] for name in expected}
        leaves, spec = tree_flatten((tuple(args), dict(kwargs)))
        if spec != self._in_spec or len(leaves) != len(self._all_user):
            raise TypeError(
                f"the program takes its {len(self.user_inputs)} inputs "
                f"({', '.join(self.user_inputs)}) in order, or the arguments the exported "
                "module took"
            )
        values = []
        for name, leaf in zip(self._all_user, leaves, strict=True):
            if name not in self._fixed:
                values.append(leaf)
            elif leaf != self._fixed[name]:
                raise ValueError(
                    f"the program was exported with {name}={self._fixed[name]!r}; it cannot "
                    f"run with {name}={leaf!r}"
                )
        return values


def _memory(tensor: Any) -> tuple[Any, ...]:
    """Where a tensor's values are (0 first when it has no memory of its own to share)."""
    return (
        tensor.untyped_storage().data_ptr() if tensor.numel() else 0,
        tensor.storage_offset(),
        tuple(tensor.shape),
        tuple(tensor.stride()),
        tensor.dtype,
    )


def _as_array(value: Any) -> mx.array:
    """A user input as an mx.array: a torch tensor converted, anything else as mx.array
    takes it (a NumPy array, a number)."""
    if type(value).__module__.startswith("torch"):
        return tensor_to_mlx(value)
    return mx.array(value)


def _input_error(name: str, value: Any, expected: str) -> ValueError:
    given = str(value.dtype).removeprefix("mlx.core.")
    return ValueError(
        f"the program's input {name} must be {expected}, not {given} of shape {value.shape}"
    )


def _bound(value: Any) -> int | None:
    """A bound of a range constraint as an int; None for an infinite one."""
    return int(value) if getattr(value, "is_Integer", False) else None


def _input_check(
    local: str,
    name: str,
    value: Any,
    ranges: Mapping[Any, Any],
    symbols: dict[Any, str],
    bind: Callable[[Any, str], str],
) -> list[str]:
    """The lines that convert a user input to an mx.array and check its dtype and shape
    against what the program was traced with (`value`, its FakeTensor): each static size
    equal, each symbolic size within its range and equal wherever the symbol recurs."""
    import torch

    if not isinstance(value, torch.Tensor):
        return []
    conditions = [f"{local}.dtype != {bind(dtype(value.dtype), '_c')}"]
    sizes = [d if isinstance(d, int) else d.node.expr for d in value.shape]
    notes: list[str] = []
    if all(isinstance(d, int) for d in sizes):
        conditions.append(f"{local}.shape != {tuple(sizes)!r}")
    else:
        conditions.append(f"len(_shape := {local}.shape) != {len(sizes)}")
        for i, size in enumerate(sizes):
            if isinstance(size, int):
                conditions.append(f"_shape[{i}] != {size}")
            elif size in symbols:
                conditions.append(f"_shape[{i}] != {symbols[size]}")
            elif getattr(size, "is_Symbol", False):
                symbol = symbols[size] = f"_size{len(symbols)}"
                bounds = ranges.get(size)
                low = (_bound(bounds.lower) if bounds else None) or 0
                high = _bound(bounds.upper) if bounds else None
                conditions.append(f"({symbol} := _shape[{i}]) < {low}")  # binds the symbol
                if high is not None:
                    conditions.append(f"{symbol} > {high}")
                notes.append(f"{low} <= {size}" + ("" if high is None else f" <= {high}"))
            # A size that is an expression of symbols is left to the graph's own checks.
    shape = f"({', '.join(str(s) for s in sizes)}{',' if len(sizes) == 1 else ''})"
    expected = f"{str(value.dtype).removeprefix('torch.')} of shape {shape}"
    if notes:
        expected += f" with {', '.join(notes)}"
    return [
        f"    if type({local}) is not _array:",
        f"        {local} = _as_array({local})",
        f"    if {' or '.join(conditions)}:",
        f"        raise _input_error({name!r}, {local}, {expected!r})",
    ]


def _compile_graph(
    graph: Any,
    placeholders: Sequence[Any],
    inputs: Sequence[tuple[str, Any]],
    outputs: Sequence[str],
    ranges: Mapping[Any, Any],
) -> tuple[str, Callable[..., tuple[tuple[Any, ...], tuple[Any, ...]]]]:
    """The graph as one Python function `(parameters, buffers, constants, *user_inputs)
    -> (user outputs, mutated buffers)`, calling the functions that run its nodes in the
    graph's order; constants converted once. Returns its source too."""
    names: dict[Any, str] = {}
    scope: dict[str, Any] = {
        "_array": mx.array,
        "_as_array": _as_array,
        "_input_error": _input_error,
    }
    bound: dict[int, str] = {}  # id of each function bound, to bind it once
    lines: list[str] = []

    def bind(value: Any, prefix: str) -> str:
        if prefix == "_f" and id(value) in bound:
            return bound[id(value)]
        name = f"{prefix}{len(scope)}"
        scope[name] = value
        if prefix == "_f":
            bound[id(value)] = name
        return name

    def expression(value: Any) -> str:
        if hasattr(value, "op") and value in names:
            return names[value]
        if isinstance(value, (list, tuple)):
            # A tuple either way: the functions take any sequence, and a tuple of
            # numbers is one constant of the code, built once.
            items = ", ".join(expression(item) for item in value)
            return f"({items}{',' if len(value) == 1 else ''})"
        converted = to_mlx(value)
        if converted is None or isinstance(converted, (bool, int, str)):
            return repr(converted)
        if isinstance(converted, float):
            return repr(converted) if math.isfinite(converted) else bind(converted, "_c")
        return bind(converted, "_c")

    user: list[str] = []
    symbols: dict[Any, str] = {}
    checks: list[str] = []
    for i, (node, (where, key)) in enumerate(zip(placeholders, inputs, strict=True)):
        local = names[node] = f"_{i}"
        if where == "user":
            user.append(local)
            checks += _input_check(local, key, node.meta.get("val"), ranges, symbols, bind)
        elif where == "fixed":
            lines.append(f"    {local} = {expression(key)}")
        else:
            lines.append(f"    {local} = {where}[{key!r}]")
    lines = checks + lines
    output: Sequence[Any] = ()
    for node in graph.nodes:
        if node.op == "call_function":
            name = names[node] = f"v{len(names)}"
            function = _target_function(node.target)
            if function is operator.getitem:
                source, index = node.args
                lines.append(f"    {name} = {expression(source)}[{index}]")
                continue
            assert function is not None  # load refused programs with other calls
            arguments = [expression(a) for a in node.args]
            arguments += [f"{k}={expression(v)}" for k, v in node.kwargs.items()]
            lines.append(f"    {name} = {bind(function, '_f')}({', '.join(arguments)})")
        elif node.op == "output":
            output = node.args[0]
        elif node.op != "placeholder":
            raise NotImplementedError(f"MLX cannot run a graph node of kind {node.op}")

    def returned(kind: str) -> str:
        items = [expression(v) for v, k in zip(output, outputs, strict=True) if k == kind]
        return f"({', '.join(items)}{',' if len(items) == 1 else ''})"

    parameters = ", ".join(["parameters", "buffers", "constants", *user])
    body = "\n".join([*lines, f"    return {returned('user')}, {returned('buffer')}"])
    source = f"def _program({parameters}):\n{body}\n"
    namespace: dict[str, Any] = dict(scope)
    exec(compile(source, "<aten_mlx program>", "exec"), namespace)
    return source, namespace["_program"]
