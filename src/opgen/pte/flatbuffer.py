"""Bounds-checked reading of one flatbuffer, over the `flatbuffers` runtime.

The runtime's `flatbuffers.table.Table` reads wherever an offset points, as flatc's
generated code does: it trusts its input. A position past the end raises `struct.error`
or yields a short slice, and a negative one reads from the end of the buffer. A `.pte`
comes from disk, so here every position is checked before the runtime reads it, as
flatbuffers' C++ `Verifier` checks a buffer, but only along the paths a reader follows:
a vtable inside the buffer and at least as long as its header, a field inside the
buffer, a vector or string (with its terminating NUL) inside the buffer. A failed check
is a `PteError` that names what was being read by its path in the schema
(`execution_plan[0].values[3].val`), never a wrong answer or a traceback.

A vector of tables is read element by element (`Vector.table(i)`), so a program's large
`values` vector costs only the elements a reader asks for.
"""

from __future__ import annotations

from typing import Any

from flatbuffers import number_types as flags  # type: ignore[import-untyped]
from flatbuffers.table import Table as RuntimeTable  # type: ignore[import-untyped]

UOFFSET = flags.UOffsetTFlags
SOFFSET = flags.SOffsetTFlags
VOFFSET = flags.VOffsetTFlags


class PteError(Exception):
    """The file is not the program it should be: truncated, corrupt, or not a program."""


class Buffer:
    """The bytes of one flatbuffer, and the check every read goes through."""

    __slots__ = ("_reader", "data", "size")

    def __init__(self, data: bytes) -> None:
        self.data = data
        self.size = len(data)
        # A runtime table whose position is moved around to read any scalar.
        self._reader = RuntimeTable(data, 0)

    def check(self, pos: int, width: int, what: str) -> None:
        if pos < 0 or pos + width > self.size:
            raise PteError(
                f"truncated or corrupt: {what} (bytes {pos} to {pos + width}) lies outside "
                f"the {self.size}-byte flatbuffer"
            )

    def get(self, kind: Any, pos: int, what: str) -> int:
        """The scalar of type `kind` (a `flatbuffers.number_types` class) at `pos`."""
        self.check(pos, kind.bytewidth, what)
        value: int = self._reader.Get(kind, pos)
        return value

    def root(self, what: str) -> Table:
        """The root table, whose offset the buffer's first four bytes hold."""
        return Table(self, self.get(UOFFSET, 0, "the root table's offset"), what)


class Table:
    """One table: its fields by vtable slot (4, 6, 8, ...: field n is at slot 4 + 2n)."""

    __slots__ = ("_runtime", "buffer", "what")

    def __init__(self, buffer: Buffer, pos: int, what: str) -> None:
        self.buffer = buffer
        self.what = what
        vtable = pos - buffer.get(SOFFSET, pos, what)
        buffer.check(vtable, 4, f"the vtable of {what}")
        vtable_size = buffer.get(VOFFSET, vtable, f"the vtable of {what}")
        if vtable_size < 4 or vtable_size % 2:
            raise PteError(
                f"corrupt: the vtable of {what} at byte {vtable} gives its own size as "
                f"{vtable_size} bytes"
            )
        buffer.check(vtable, vtable_size, f"the vtable of {what}")
        self._runtime = RuntimeTable(buffer.data, pos)

    def _field(self, slot: int, width: int, name: str) -> int:
        """The position of the field in `slot`, or 0 if the table leaves it out.

        A field is checked against the buffer, not against the table size its vtable
        records, as flatbuffers' own Verifier checks it: that size is not reliable.
        flatbuffers' Python builder before 24.12 shared a vtable between tables whose
        fields sit at the same offsets whatever their sizes, so a DataSegment whose
        `offset` is left at its default (its `size` 4 bytes in) can point to the
        vtable of an 8-byte KernelCall, as ExecuTorch's programs written then do.
        """
        offset: int = self._runtime.Offset(slot)
        if offset == 0:
            return 0
        pos: int = self._runtime.Pos + offset
        self.buffer.check(pos, width, f"{self.what}.{name} (at offset {offset} of its table)")
        return pos

    def scalar(self, slot: int, kind: Any, default: int, name: str) -> int:
        pos = self._field(slot, kind.bytewidth, name)
        if not pos:
            return default
        value: int = self._runtime.Get(kind, pos)
        return value

    def _target(self, slot: int, name: str) -> int | None:
        """Where the table, vector or string the field in `slot` refers to starts."""
        pos = self._field(slot, UOFFSET.bytewidth, name)
        if not pos:
            return None
        target: int = self._runtime.Indirect(pos)
        return target

    def table(self, slot: int, name: str) -> Table | None:
        target = self._target(slot, name)
        return None if target is None else Table(self.buffer, target, f"{self.what}.{name}")

    def vector(self, slot: int, width: int, name: str) -> Vector | None:
        target = self._target(slot, name)
        if target is None:
            return None
        return Vector(self.buffer, target, width, f"{self.what}.{name}")

    def string(self, slot: int, name: str) -> str | None:
        pos = self._field(slot, UOFFSET.bytewidth, name)
        if not pos:
            return None
        what = f"{self.what}.{name}"
        target: int = self._runtime.Indirect(pos)
        length = self.buffer.get(UOFFSET, target, what)
        self.buffer.check(target + 4, length + 1, what)  # and its terminating NUL
        data: bytes = self._runtime.String(pos)
        try:
            return data.decode("utf-8")
        except UnicodeDecodeError:
            raise PteError(f"corrupt: {what} is not valid UTF-8: {data!r}") from None

    def union(self, type_slot: int, value_slot: int, name: str) -> tuple[int, Table | None]:
        """A union field: its type tag (0: none) and its table."""
        tag = self.scalar(type_slot, flags.Uint8Flags, 0, f"{name}_type")
        return tag, (self.table(value_slot, name) if tag else None)


class Vector:
    """A vector: its length, and its elements read on demand."""

    __slots__ = ("buffer", "length", "start", "what", "width")

    def __init__(self, buffer: Buffer, pos: int, width: int, what: str) -> None:
        self.buffer = buffer
        self.what = what
        self.length = buffer.get(UOFFSET, pos, what)
        self.start = pos + UOFFSET.bytewidth
        self.width = width
        buffer.check(self.start, self.length * width, what)

    def __len__(self) -> int:
        return self.length

    def scalars(self, kind: Any) -> tuple[int, ...]:
        """Every element, as numbers of type `kind` (its width is the vector's)."""
        assert kind.bytewidth == self.width, "a vector is read with the width it was made for"
        get, data = self.buffer.get, self.start
        return tuple(get(kind, data + i * self.width, self.what) for i in range(self.length))

    def table(self, index: int) -> Table:
        """Element `index` of a vector of tables (each element an offset to its table)."""
        assert self.width == UOFFSET.bytewidth and 0 <= index < self.length
        pos = self.start + index * UOFFSET.bytewidth
        target = pos + self.buffer.get(UOFFSET, pos, self.what)
        return Table(self.buffer, target, f"{self.what}[{index}]")
