"""Typed accessors for the tables of ExecuTorch's program schema that opgen reads.

Hand-written as flatc's Python would generate them from `schema/program.fbs` (namespace
`executorch_flatbuffer`, file identifier "ET12") and, for bundled programs,
`devtools/bundled_program/schema/bundled_program_schema.fbs` ("BP08"): one class per
table, one method per field, named as the schema names it. A field's vtable slot is
4 + 2 x its index in the table's declaration; a union takes two slots, its type tag
then its value. Only the fields opgen needs are here; the others are skipped by their
slots. Every read goes through `flatbuffer`'s checks.

An absent field reads as flatbuffers defines it: a scalar as its default, a vector as
empty, a string or table as None.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from flatbuffers import number_types as flags  # type: ignore[import-untyped]

from opgen.pte.flatbuffer import Table, Vector

PROGRAM_IDENTIFIER = b"ET12"
BUNDLED_PROGRAM_IDENTIFIER = b"BP08"

# union KernelTypes (EValue.val): the type tags opgen tells apart.
KERNEL_TYPE_NONE = 0
KERNEL_TYPE_NULL = 1
KERNEL_TYPE_TENSOR = 5
KERNEL_TYPE_TENSOR_LIST = 10
KERNEL_TYPE_OPTIONAL_TENSOR_LIST = 11

# union InstructionArguments (Instruction.instr_args)
INSTRUCTION_KERNEL_CALL = 1

_OFFSET = flags.UOffsetTFlags.bytewidth


def _tables(vector: Vector | None) -> Iterator[Table]:
    for i in range(0 if vector is None else len(vector)):
        assert vector is not None
        yield vector.table(i)


def _scalars(vector: Vector | None, kind: Any) -> tuple[int, ...]:
    return () if vector is None else vector.scalars(kind)


class Program:
    """table Program (root_type): version, execution_plan, constant_buffer,
    backend_delegate_data, segments, ..."""

    __slots__ = ("table",)

    def __init__(self, table: Table) -> None:
        self.table = table

    def execution_plan(self) -> list[ExecutionPlan]:
        return [ExecutionPlan(t) for t in _tables(self.table.vector(6, _OFFSET, "execution_plan"))]

    def segments(self) -> list[DataSegment]:
        return [DataSegment(t) for t in _tables(self.table.vector(12, _OFFSET, "segments"))]


class ExecutionPlan:
    """table ExecutionPlan: name, container_meta_type, values, inputs, outputs, chains,
    operators, delegates, non_const_buffer_sizes, non_const_buffer_device."""

    __slots__ = ("_values", "table")

    def __init__(self, table: Table) -> None:
        self.table = table
        self._values = table.vector(8, _OFFSET, "values")

    def name(self) -> str | None:
        return self.table.string(4, "name")

    def values_length(self) -> int:
        return 0 if self._values is None else len(self._values)

    def values(self, index: int) -> EValue:
        assert self._values is not None
        return EValue(self._values.table(index))

    def chains(self) -> list[Chain]:
        return [Chain(t) for t in _tables(self.table.vector(14, _OFFSET, "chains"))]

    def operators(self) -> list[Operator]:
        return [Operator(t) for t in _tables(self.table.vector(16, _OFFSET, "operators"))]


class Operator:
    """table Operator: name, overload."""

    __slots__ = ("table",)

    def __init__(self, table: Table) -> None:
        self.table = table

    def name(self) -> str | None:
        return self.table.string(4, "name")

    def overload(self) -> str | None:
        return self.table.string(6, "overload")


class Chain:
    """table Chain: inputs, outputs, instructions, stacktrace."""

    __slots__ = ("table",)

    def __init__(self, table: Table) -> None:
        self.table = table

    def instructions(self) -> list[Instruction]:
        return [Instruction(t) for t in _tables(self.table.vector(8, _OFFSET, "instructions"))]


class Instruction:
    """table Instruction: instr_args (union InstructionArguments)."""

    __slots__ = ("table",)

    def __init__(self, table: Table) -> None:
        self.table = table

    def instr_args(self) -> tuple[int, Table | None]:
        return self.table.union(4, 6, "instr_args")

    def kernel_call(self) -> KernelCall | None:
        """The instruction's KernelCall, if it is one."""
        tag, args = self.instr_args()
        return KernelCall(args) if tag == INSTRUCTION_KERNEL_CALL and args is not None else None


class KernelCall:
    """table KernelCall: op_index, args."""

    __slots__ = ("table",)

    def __init__(self, table: Table) -> None:
        self.table = table

    def op_index(self) -> int:
        return self.table.scalar(4, flags.Int32Flags, 0, "op_index")

    def args(self) -> tuple[int, ...]:
        return _scalars(self.table.vector(6, 4, "args"), flags.Int32Flags)


class EValue:
    """table EValue: val (union KernelTypes)."""

    __slots__ = ("table",)

    def __init__(self, table: Table) -> None:
        self.table = table

    def val(self) -> tuple[int, Table | None]:
        return self.table.union(4, 6, "val")


class Tensor:
    """table Tensor: scalar_type, storage_offset, sizes, dim_order, ..."""

    __slots__ = ("table",)

    def __init__(self, table: Table) -> None:
        self.table = table

    def scalar_type(self) -> int:
        # enum ScalarType : byte, so signed, as the runtime reads it.
        return self.table.scalar(4, flags.Int8Flags, 0, "scalar_type")

    def dim_order(self) -> tuple[int, ...]:
        return _scalars(self.table.vector(10, 1, "dim_order"), flags.Uint8Flags)


class TensorList:
    """table TensorList and table OptionalTensorList: items (EValue indices; in an
    OptionalTensorList, -1 for None)."""

    __slots__ = ("table",)

    def __init__(self, table: Table) -> None:
        self.table = table

    def items(self) -> tuple[int, ...]:
        return _scalars(self.table.vector(4, 4, "items"), flags.Int32Flags)


class DataSegment:
    """table DataSegment: offset, size (relative to the extended header's segment base)."""

    __slots__ = ("table",)

    def __init__(self, table: Table) -> None:
        self.table = table

    def offset(self) -> int:
        return self.table.scalar(4, flags.Uint64Flags, 0, "offset")

    def size(self) -> int:
        return self.table.scalar(6, flags.Uint64Flags, 0, "size")


class BundledProgram:
    """table BundledProgram (root_type of a bundled program): version,
    method_test_suites, program (the serialized program's bytes)."""

    __slots__ = ("table",)

    def __init__(self, table: Table) -> None:
        self.table = table

    def program(self) -> Vector | None:
        return self.table.vector(8, 1, "program")
