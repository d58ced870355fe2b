"""Where a program's flatbuffer is in its file: the identifier, the extended header, the
segments after it, and bundled programs.

A `.pte` file is a flatbuffer: its root table's offset at byte 0, its file identifier
("ET12", `program.fbs`'s `file_identifier`) at byte 4. ExecuTorch's serializer may put
an *extended header* at byte 8, inside the padding that the root offset skips (layout
from ExecuTorch's `schema/extended_header.h`): the magic "eh00", the header's length
(u32, at least 24: newer fields may follow), the flatbuffer's size (u64) and the offset
of the first segment (u64), all little-endian. The *segments* (constant tensors,
delegate blobs) follow the flatbuffer; segment i starts at that base offset plus
`Program.segments[i].offset`. Without the header, as ExecuTorch's loader reads it, the
whole file is the flatbuffer and there are no segments.

So only the flatbuffer is read, not the segments, which hold a model's weights and make
up most of a large file; their extents are checked against the file's size, so a
truncated file is an error even when its flatbuffer is whole. A *bundled program*
(identifier "BP08", a program with test inputs) holds a program's bytes in its
`program` field, read the same way, as ExecuTorch's selective build reads it.
"""

from __future__ import annotations

import io
import os
import struct
from typing import BinaryIO

from opgen.pte.flatbuffer import Buffer, PteError
from opgen.pte.schema import (
    BUNDLED_PROGRAM_IDENTIFIER,
    PROGRAM_IDENTIFIER,
    BundledProgram,
    Program,
)

EXTENDED_HEADER_MAGIC = b"eh00"
EXTENDED_HEADER_OFFSET = 8
# magic, length (u32), program size (u64), segment base offset (u64)
_EXTENDED_HEADER = struct.Struct("<4sIQQ")
_HEAD_BYTES = EXTENDED_HEADER_OFFSET + _EXTENDED_HEADER.size


def load_program(file: BinaryIO, *, bundled_allowed: bool = True) -> Program:
    """The program a `.pte` (or a bundled program) file holds, from its start."""
    file_size = file.seek(0, os.SEEK_END)
    file.seek(0)
    head = file.read(_HEAD_BYTES)
    identifier = head[4:8]
    if len(head) < 8:
        raise PteError(
            f"not an ExecuTorch program: the file has {len(head)} bytes, fewer than the "
            "8 of a flatbuffer's root offset and file identifier"
        )
    if identifier == BUNDLED_PROGRAM_IDENTIFIER and bundled_allowed:
        return _bundled(head + file.read())
    if identifier != PROGRAM_IDENTIFIER:
        raise PteError(_not_a_program(identifier))
    if head[EXTENDED_HEADER_OFFSET : EXTENDED_HEADER_OFFSET + 4] != EXTENDED_HEADER_MAGIC:
        return Program(Buffer(head + file.read()).root("program"))
    program_size, segment_base = _extended_header(head, file_size)
    data = head[:program_size] + file.read(max(0, program_size - len(head)))
    program = Program(Buffer(data).root("program"))
    if segment_base:
        _check_segments(program, segment_base, file_size)
    return program


def _not_a_program(identifier: bytes) -> str:
    expected = PROGRAM_IDENTIFIER.decode()
    if identifier.startswith(b"ET"):
        return (
            f"an ExecuTorch program of another schema version: file identifier "
            f"'{identifier.decode('ascii', 'replace')}' at byte 4, where opgen reads "
            f"'{expected}' programs"
        )
    return (
        f"not an ExecuTorch program: the file identifier at byte 4 is {identifier!r}, not "
        f"'{expected}' (a .pte) or '{BUNDLED_PROGRAM_IDENTIFIER.decode()}' (a bundled program)"
    )


def _extended_header(head: bytes, file_size: int) -> tuple[int, int]:
    """The program size and segment base offset the extended header gives."""
    if len(head) < _HEAD_BYTES:
        raise PteError(
            f"truncated: the file has {len(head)} bytes, and its extended header needs "
            f"{_HEAD_BYTES}"
        )
    _, length, program_size, segment_base = _EXTENDED_HEADER.unpack_from(
        head, EXTENDED_HEADER_OFFSET
    )
    if length < _EXTENDED_HEADER.size:
        raise PteError(
            f"corrupt: the extended header's length is {length} bytes, fewer than the "
            f"{_EXTENDED_HEADER.size} of its fields"
        )
    if program_size < _HEAD_BYTES:
        raise PteError(
            f"corrupt: the extended header gives the program {program_size} bytes, fewer "
            "than the header itself"
        )
    if program_size > file_size:
        raise PteError(
            f"truncated: the extended header gives the program {program_size} bytes, and "
            f"the file has {file_size}"
        )
    if segment_base and segment_base < program_size:
        raise PteError(
            f"corrupt: the extended header puts the segments at byte {segment_base}, inside "
            f"the program's {program_size} bytes"
        )
    return program_size, segment_base


def _check_segments(program: Program, segment_base: int, file_size: int) -> None:
    for i, segment in enumerate(program.segments()):
        start = segment_base + segment.offset()
        end = start + segment.size()
        if end > file_size:
            raise PteError(
                f"truncated: segment {i} (bytes {start} to {end}) ends past the end of the "
                f"{file_size}-byte file"
            )


def _bundled(data: bytes) -> Program:
    """The program inside a bundled program."""
    inner = BundledProgram(Buffer(data).root("bundled program")).program()
    if inner is None or len(inner) == 0:
        raise PteError("corrupt: the bundled program holds no program")
    start = inner.start
    program = data[start : start + len(inner)]
    try:
        return load_program(io.BytesIO(program), bundled_allowed=False)
    except PteError as e:
        raise PteError(f"in the program of a bundled program (bytes {start} on): {e}") from None
