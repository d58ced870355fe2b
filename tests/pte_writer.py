"""ExecuTorch programs (`.pte` flatbuffers) written for tests, with `flatbuffers.Builder`.

Every field goes in the slot `program.fbs` declares it in, numbered here independently
of opgen's reader (`opgen.pte`), so a reader that reads a wrong slot fails. Used by the
reader's unit tests and by the `executorch-oplist` conformance tests.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import flatbuffers

# union KernelTypes and union InstructionArguments, as program.fbs numbers them.
NULL, INT, DOUBLE, TENSOR, TENSOR_LIST, OPTIONAL_TENSOR_LIST = 1, 2, 4, 5, 10, 11
KERNEL_CALL, DELEGATE_CALL, MOVE_CALL = 1, 2, 3


class VtablesByFieldOffsets(dict[tuple[int, ...], int]):
    """A builder's table of vtables that, as flatbuffers' before 24.12, matches a vtable by
    its field offsets alone: the last element of the builder's key, the table's size, is
    left out, so tables of different sizes share a vtable that records one of them."""

    def get(self, key: tuple[int, ...], default: Any = None) -> Any:
        return super().get(key[:-1], default)

    def __setitem__(self, key: tuple[int, ...], value: int) -> None:
        super().__setitem__(key[:-1], value)


class Writer:
    """One flatbuffer under construction; each table given as (field index, kind, value)."""

    def __init__(self, *, shared_vtables: bool = False) -> None:
        self.b = flatbuffers.Builder(0)
        if shared_vtables:
            self.b.vtables = VtablesByFieldOffsets()

    def string(self, text: str) -> int:
        return int(self.b.CreateString(text))

    def table(self, *fields: tuple[int, str, float]) -> int:
        b = self.b
        prepend = {
            "offset": b.PrependUOffsetTRelativeSlot,
            "uint8": b.PrependUint8Slot,
            "int8": b.PrependInt8Slot,
            "int32": b.PrependInt32Slot,
            "int64": b.PrependInt64Slot,
            "uint64": b.PrependUint64Slot,
            "float64": b.PrependFloat64Slot,
        }
        b.StartObject(1 + max((f[0] for f in fields), default=0))
        for index, kind, value in fields:
            prepend[kind](index, value, 0)
        return int(b.EndObject())

    def offsets(self, items: Sequence[int]) -> int:
        self.b.StartVector(4, len(items), 4)
        for item in reversed(items):
            self.b.PrependUOffsetTRelative(item)
        return int(self.b.EndVector())

    def int32s(self, items: Sequence[int]) -> int:
        self.b.StartVector(4, len(items), 4)
        for item in reversed(items):
            self.b.PrependInt32(item)
        return int(self.b.EndVector())

    def bytes_(self, items: Sequence[int]) -> int:
        return int(self.b.CreateByteVector(bytes(items)))

    def finish(self, root: int, identifier: bytes = b"ET12") -> bytes:
        self.b.Finish(root, file_identifier=identifier)
        return bytes(self.b.Output())

    # The tables of program.fbs, fields numbered as declared.

    def operator(self, name: str | None, overload: str | None = None) -> int:
        fields = []
        if name is not None:
            fields.append((0, "offset", self.string(name)))
        if overload is not None:
            fields.append((1, "offset", self.string(overload)))
        return self.table(*fields)

    def tensor(self, scalar_type: int, dim_order: Sequence[int] | None) -> int:
        fields = [(0, "int8", scalar_type)]  # scalar_type
        if dim_order is not None:
            fields.append((3, "offset", self.bytes_(dim_order)))  # dim_order
        return self.evalue(TENSOR, self.table(*fields))

    def int_value(self, value: int) -> int:
        return self.evalue(INT, self.table((0, "int64", value)))

    def double_value(self, value: float) -> int:
        return self.evalue(DOUBLE, self.table((0, "float64", value)))

    def tensor_list(self, kind: int, items: Sequence[int]) -> int:
        return self.evalue(kind, self.table((0, "offset", self.int32s(items))))

    def evalue(self, tag: int, table: int | None = None) -> int:
        fields = [(0, "uint8", tag)]
        if table is not None:
            fields.append((1, "offset", table))
        return self.table(*fields)

    def kernel_call(self, op_index: int, args: Sequence[int]) -> int:
        call = self.table((0, "int32", op_index), (1, "offset", self.int32s(args)))
        return self.table((0, "uint8", KERNEL_CALL), (1, "offset", call))

    def delegate_call(self, args: Sequence[int]) -> int:
        call = self.table((0, "int32", 0), (1, "offset", self.int32s(args)))
        return self.table((0, "uint8", DELEGATE_CALL), (1, "offset", call))

    def move_call(self, source: int, destination: int) -> int:
        move = self.table((0, "int32", source), (1, "int32", destination))
        return self.table((0, "uint8", MOVE_CALL), (1, "offset", move))

    def plan(
        self,
        name: str,
        operators: Sequence[int] = (),
        values: Sequence[int] = (),
        chains: Sequence[Sequence[int]] = (),
    ) -> int:
        chain_tables = [self.table((2, "offset", self.offsets(c))) for c in chains]
        return self.table(
            (0, "offset", self.string(name)),
            (2, "offset", self.offsets(values)),
            (5, "offset", self.offsets(chain_tables)),
            (6, "offset", self.offsets(operators)),
        )

    def program(self, plans: Sequence[int], segments: Sequence[tuple[int, int]] = ()) -> bytes:
        fields = [(1, "offset", self.offsets(plans))]
        if segments:
            tables = [self.table((0, "uint64", o), (1, "uint64", s)) for o, s in segments]
            fields.append((4, "offset", self.offsets(tables)))
        return self.finish(self.table(*fields))
