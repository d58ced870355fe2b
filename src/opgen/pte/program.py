"""What a program says about its operators: their names, and how its kernels are called.

This is what ExecuTorch's selective build (`codegen/tools/selective_build.cpp`, the
extension `gen_oplist` calls) reads from a `.pte`:

- the operators of every execution plan's operator table, in order, each named
  `name.overload` (just `name` for an empty overload), whether a kernel calls it or not;
- for each operator, the distinct argument lists of the KernelCall instructions of every
  chain of every plan: per argument its value's type tag (`KernelTypes`) and, for a
  tensor, its dtype and dim order. A TensorList counts as its first tensor, an
  OptionalTensorList as its first non-None tensor, and either without one as Null.

Upstream reads the flatbuffer without checking it, and crashes on an offset or index out
of range; here the same facts come with every offset and index checked (`flatbuffer`),
and a bad file is a `SpecError` naming the file. Upstream also dereferences absent
fields; here an absent field reads as flatbuffers defines it (an absent overload is
empty, an absent vector has no elements), except an operator without a name, or a
tensor value without its table, which are errors.
"""

from __future__ import annotations

from collections.abc import Mapping
from types import MappingProxyType
from typing import BinaryIO

from opgen.counts import counted
from opgen.diagnostics import Location, SpecError
from opgen.frozen import frozen
from opgen.pte.flatbuffer import PteError, Table
from opgen.pte.header import load_program
from opgen.pte.schema import (
    KERNEL_TYPE_NULL,
    KERNEL_TYPE_OPTIONAL_TENSOR_LIST,
    KERNEL_TYPE_TENSOR,
    KERNEL_TYPE_TENSOR_LIST,
    ExecutionPlan,
    Operator,
    Tensor,
    TensorList,
)


@frozen
class ArgumentMeta:
    """One argument of a kernel call, as the selective build sees it."""

    kernel_type: int  # the value's KernelTypes tag (Tensor for a list read as its tensor)
    dtype: int | None = None  # a tensor's ScalarType
    dim_order: tuple[int, ...] | None = None  # a tensor's dim order

    @property
    def is_tensor(self) -> bool:
        return self.dtype is not None


@frozen
class ProgramOperators:
    """The operators of a program, and the argument lists their kernels are called with."""

    names: tuple[str, ...]  # every plan's operator table, in order (repeats kept)
    # By operator: the distinct argument lists of its kernel calls, over every plan.
    kernel_calls: Mapping[str, frozenset[tuple[ArgumentMeta, ...]]]


def read_program(path: str) -> ProgramOperators:
    """The operators of the program (or bundled program) at `path`; a SpecError if the file
    cannot be read or is not a well-formed program."""
    where = Location(path, 0)  # the whole file: a binary has no line to quote
    try:
        with open(path, "rb") as file:
            return program_operators(file)
    except FileNotFoundError:
        raise SpecError("no such file", where) from None
    except IsADirectoryError:
        raise SpecError("is a directory, not a file", where) from None
    except OSError as e:
        raise SpecError(f"cannot read file: {e.strerror}", where) from None
    except PteError as e:
        raise SpecError(str(e), where) from None


def program_operators(file: BinaryIO) -> ProgramOperators:
    """The operators of the program in an open binary file; a PteError if it is bad."""
    program = load_program(file)
    names: list[str] = []
    calls: dict[str, set[tuple[ArgumentMeta, ...]]] = {}
    for plan in program.execution_plan():
        _read_plan(plan, names, calls)
    return ProgramOperators(
        names=tuple(names),
        kernel_calls=MappingProxyType({op: frozenset(c) for op, c in calls.items()}),
    )


def operator_name(op: Operator) -> str:
    name = op.name()
    if name is None:
        raise PteError(f"corrupt: {op.table.what} has no name")
    overload = op.overload()
    return f"{name}.{overload}" if overload else name


def _read_plan(
    plan: ExecutionPlan, names: list[str], calls: dict[str, set[tuple[ArgumentMeta, ...]]]
) -> None:
    operators = [operator_name(op) for op in plan.operators()]
    names.extend(operators)
    arguments = _Arguments(plan)
    for chain in plan.chains():
        for instruction in chain.instructions():
            call = instruction.kernel_call()
            if call is None:
                continue
            index = call.op_index()
            if not 0 <= index < len(operators):
                raise PteError(
                    f"corrupt: {call.table.what}.op_index is {index}, and the plan has "
                    f"{counted(len(operators), 'operator')}"
                )
            args = tuple(arguments.of(value, call.table.what) for value in call.args())
            calls.setdefault(operators[index], set()).add(args)


class _Arguments:
    """The argument metadata of a plan's values, each read once."""

    def __init__(self, plan: ExecutionPlan) -> None:
        self.plan = plan
        self.count = plan.values_length()
        self.known: dict[int, ArgumentMeta] = {}

    def of(self, index: int, user: str) -> ArgumentMeta:
        found = self.known.get(index)
        if found is None:
            found = self.known[index] = self._read(self._checked(index, user))
        return found

    def _checked(self, index: int, user: str) -> int:
        if not 0 <= index < self.count:
            raise PteError(
                f"corrupt: {user} refers to value {index}, and the plan has {self.count} values"
            )
        return index

    def _tensor(self, index: int) -> ArgumentMeta | None:
        """The tensor value `index` holds, or None if it holds another kind of value."""
        value = self.plan.values(index)
        tag, table = value.val()
        return _tensor_meta(value.table.what, table) if tag == KERNEL_TYPE_TENSOR else None

    def _read(self, index: int) -> ArgumentMeta:
        value = self.plan.values(index)
        tag, table = value.val()
        if tag == KERNEL_TYPE_TENSOR:
            return _tensor_meta(value.table.what, table)
        if tag not in (KERNEL_TYPE_TENSOR_LIST, KERNEL_TYPE_OPTIONAL_TENSOR_LIST):
            return ArgumentMeta(tag)
        if table is None:
            raise PteError(f"corrupt: {value.table.what} is a tensor list without its table")
        items = TensorList(table).items()
        what = f"{table.what}.items"
        if tag == KERNEL_TYPE_TENSOR_LIST:
            if not items:  # nothing to read the metadata from
                return ArgumentMeta(KERNEL_TYPE_NULL)
            first = self._tensor(self._checked(items[0], what))
            if first is None:
                raise PteError(f"corrupt: {what}[0] (value {items[0]}) is not a Tensor")
            return first
        for item in items:  # an OptionalTensorList: its first tensor, if any
            if item != -1:
                tensor = self._tensor(self._checked(item, what))
                if tensor is not None:
                    return tensor
        return ArgumentMeta(KERNEL_TYPE_NULL)


def _tensor_meta(what: str, table: Table | None) -> ArgumentMeta:
    if table is None:
        raise PteError(f"corrupt: {what} is a Tensor without its table")
    tensor = Tensor(table)
    return ArgumentMeta(KERNEL_TYPE_TENSOR, tensor.scalar_type(), tensor.dim_order())
