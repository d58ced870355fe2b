"""The runtime of an ATen-on-MLX package: PyTorch's values as MLX's, operators called by
name, and exported programs loaded and run.

    program = load(exported_program)     # torch.export's ExportedProgram
    outputs = program(*inputs)           # torch tensors or mx.arrays in; a tuple of mx.arrays
    grads = mx.grad(loss)(program.parameters)  # loss(p) calls program.run(p, ...)

`load` converts the program's parameters, buffers and constants to MLX once, refuses a
program that uses operators the package does not lower (naming all of them), and turns
the graph into one Python function that calls the package's functions in order, so that
running it costs what the same calls written by hand would. torch is imported only by
`load` and `call`, which take PyTorch's values.
"""

from __future__ import annotations

import math
import operator
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


def missing_operators(program: Any) -> dict[str, int]:
    """The operators a program calls that the package does not lower, with how often."""
    missing: dict[str, int] = {}
    for node in program.graph.nodes:
        if node.op != "call_function":
            continue
        key = _callable_key(node.target)
        if key is None:
            name = getattr(node.target, "__name__", str(node.target))
            missing[name] = missing.get(name, 0) + 1
    return missing


def _callable_key(target: object) -> str | None:
    """The key of a node's target in OPERATORS or SIZE_FUNCTIONS; None for neither."""
    if target is operator.getitem:
        return "getitem"
    name = f"{getattr(target, '__module__', '')}.{getattr(target, '__name__', '')}"
    if name in SIZE_FUNCTIONS:
        return name
    if hasattr(target, "_schema"):
        key = operator_key(target)
        return key if key in OPERATORS else None
    return None


def load(program: Any, *, decompose: bool = True) -> MlxProgram:
    """An ExportedProgram, ready to run on MLX. A program with operators the package does
    not lower is decomposed to the Core ATen opset first (`decompose`), then refused with
    every operator it still lacks."""
    missing = missing_operators(program)
    if missing and decompose:
        program = program.run_decompositions()
        missing = missing_operators(program)
    if missing:
        listed = ", ".join(f"{name} ({count})" for name, count in sorted(missing.items()))
        raise NotImplementedError(
            f"the program calls {len(missing)} operators that this package does not lower "
            f"to MLX: {listed}"
        )
    return MlxProgram(program)


class MlxProgram:
    """An exported program on MLX: its state converted once, its graph one function."""

    def __init__(self, program: Any) -> None:
        from torch.export.graph_signature import ConstantArgument, InputKind, OutputKind

        signature = program.graph_signature
        state = program.state_dict
        constants = program.constants
        self.parameters: dict[str, mx.array] = {}
        self.buffers: dict[str, mx.array] = {}
        self.constants: dict[str, mx.array] = {}
        self.fixed: dict[str, Any] = {}  # user inputs the program was traced with as constants
        placeholders = [n for n in program.graph.nodes if n.op == "placeholder"]
        self._inputs: list[tuple[str, str]] = []  # (where the value comes from, its key)
        for node, spec in zip(placeholders, signature.input_specs, strict=True):
            kind = spec.kind
            if kind == InputKind.PARAMETER:
                self.parameters[spec.target] = tensor_to_mlx(state[spec.target])
                self._inputs.append(("parameters", spec.target))
            elif kind == InputKind.BUFFER:
                source = state if spec.target in state else constants
                self.buffers[spec.target] = tensor_to_mlx(source[spec.target])
                self._inputs.append(("buffers", spec.target))
            elif kind == InputKind.CONSTANT_TENSOR:
                self.constants[spec.target] = tensor_to_mlx(constants[spec.target])
                self._inputs.append(("constants", spec.target))
            elif kind == InputKind.USER_INPUT and isinstance(spec.arg, ConstantArgument):
                self._inputs.append(("fixed", node.name))  # traced as a constant
                self.fixed[node.name] = spec.arg.value
            elif kind == InputKind.USER_INPUT:
                self._inputs.append(("user", node.name))
            else:
                raise NotImplementedError(f"MLX cannot take a program input of kind {kind.name}")
        self.user_inputs = [key for where, key in self._inputs if where == "user"]
        # The program's user inputs (constants too) in the order of its call's flattened
        # (args, kwargs): a call as the exported module was called is read through it.
        self._in_spec = program.call_spec.in_spec
        self._all_user = [key for where, key in self._inputs if where in ("user", "fixed")]
        self._outputs: list[tuple[str, str | None]] = []
        for spec in signature.output_specs:
            if spec.kind in (OutputKind.USER_OUTPUT, OutputKind.LOSS_OUTPUT):
                self._outputs.append(("user", None))
            elif spec.kind == OutputKind.BUFFER_MUTATION:
                self._outputs.append(("buffer", spec.target))
            else:
                raise NotImplementedError(
                    f"MLX cannot honour a program output of kind {spec.kind.name}: its arrays "
                    "are never written in place"
                )
        self._function = _compile_graph(program.graph, placeholders)

    def run(self, parameters: Mapping[str, mx.array], *args: Any, **kwargs: Any) -> tuple[Any, ...]:
        """The program's user outputs for its inputs, with `parameters` for its own: a
        pure function, which mx.grad and mx.value_and_grad differentiate."""
        return self._run(parameters, self._user_values(args, kwargs))[0]

    def __call__(self, *args: Any, **kwargs: Any) -> tuple[Any, ...]:
        """The user outputs for the inputs (the program's tensor inputs in order, or the
        arguments the exported module took); buffers the program mutates are updated."""
        outputs, mutated = self._run(self.parameters, self._user_values(args, kwargs))
        self.buffers.update(mutated)
        return outputs

    def _user_values(self, args: Sequence[Any], kwargs: Mapping[str, Any]) -> list[Any]:
        if not kwargs and len(args) == len(self.user_inputs):
            return list(args)
        from torch.utils._pytree import tree_flatten

        leaves, spec = tree_flatten((tuple(args), dict(kwargs)))
        if spec != self._in_spec or len(leaves) != len(self._all_user):
            raise TypeError(
                f"the program takes its {len(self.user_inputs)} inputs "
                f"({', '.join(self.user_inputs)}) in order, or the arguments the exported "
                "module took"
            )
        values = []
        for key, leaf in zip(self._all_user, leaves, strict=True):
            if key in self.user_inputs:
                values.append(leaf)
            elif leaf != self.fixed[key]:
                raise ValueError(
                    f"the program was exported with {key}={self.fixed[key]!r}; it cannot "
                    f"run with {key}={leaf!r}"
                )
        return values

    def _run(
        self, parameters: Mapping[str, mx.array], inputs: Sequence[Any]
    ) -> tuple[tuple[Any, ...], dict[str, mx.array]]:
        if len(inputs) != len(self.user_inputs):
            raise TypeError(
                f"the program takes {len(self.user_inputs)} inputs "
                f"({', '.join(self.user_inputs)}), not {len(inputs)}"
            )
        given = iter(inputs)
        values: list[Any] = []
        for where, key in self._inputs:
            if where == "user":
                value = next(given)
                values.append(value if isinstance(value, mx.array) else to_mlx(value))
            elif where == "fixed":
                values.append(self.fixed[key])
            elif where == "parameters":
                values.append(parameters[key])
            elif where == "buffers":
                values.append(self.buffers[key])
            else:
                values.append(self.constants[key])
        results = self._function(*values)
        outputs = tuple(
            r for r, (kind, _) in zip(results, self._outputs, strict=True) if kind == "user"
        )
        mutated = {
            target: r
            for r, (kind, target) in zip(results, self._outputs, strict=True)
            if kind == "buffer" and target is not None
        }
        return outputs, mutated


def _compile_graph(graph: Any, placeholders: Sequence[Any]) -> Callable[..., tuple[Any, ...]]:
    """The graph as one Python function of its placeholders, calling the functions of
    OPERATORS (and SIZE_FUNCTIONS) in the graph's order; constants converted once."""
    names: dict[Any, str] = {}
    scope: dict[str, Any] = {}
    lines: list[str] = []

    def bind(value: Any, prefix: str) -> str:
        name = f"{prefix}{len(scope)}"
        scope[name] = value
        return name

    def expression(value: Any) -> str:
        if hasattr(value, "op") and value in names:
            return names[value]
        if isinstance(value, (list, tuple)):
            items = ", ".join(expression(item) for item in value)
            return (
                f"[{items}]"
                if isinstance(value, list)
                else f"({items}{',' if len(value) == 1 else ''})"
            )
        converted = to_mlx(value)
        if converted is None or isinstance(converted, (bool, int, str)):
            return repr(converted)
        if isinstance(converted, float):
            return repr(converted) if math.isfinite(converted) else bind(converted, "_c")
        return bind(converted, "_c")

    for i, node in enumerate(placeholders):
        names[node] = f"_{i}"
    parameters = ", ".join(names[node] for node in placeholders)
    output = None
    for node in graph.nodes:
        if node.op == "call_function":
            name = f"v{len(names)}"
            names[node] = name
            key = _callable_key(node.target)
            if key == "getitem":
                source, index = node.args
                lines.append(f"    {name} = {expression(source)}[{index}]")
                continue
            assert key is not None  # load refused programs with other calls
            called = OPERATORS[key] if key in OPERATORS else SIZE_FUNCTIONS[key]
            arguments = [expression(a) for a in node.args]
            arguments += [f"{k}={expression(v)}" for k, v in node.kwargs.items()]
            lines.append(f"    {name} = {bind(called, '_f')}({', '.join(arguments)})")
        elif node.op == "output":
            output = node.args[0]
        elif node.op != "placeholder":
            raise NotImplementedError(f"MLX cannot run a graph node of kind {node.op}")
    results = [expression(v) for v in output] if output is not None else []
    returned = ", ".join(results) + ("," if len(results) == 1 else "")
    body = "\n".join([*lines, f"    return ({returned})"])
    source = f"def _program({parameters}):\n{body}\n"
    namespace: dict[str, Any] = dict(scope)
    exec(compile(source, "<aten_mlx program>", "exec"), namespace)
    function: Callable[..., tuple[Any, ...]] = namespace["_program"]
    return function
